#include "lockstep/cluster_slot.h"

#include <array>
#include <cmath>

namespace lockstep {
namespace {

// Every key of every simulated command is hashed, so the table is built once, at compile time.
constexpr std::array<uint16_t, 256> make_table() {
  std::array<uint16_t, 256> t{};
  for (unsigned i = 0; i < 256; ++i) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    t[i] = crc;
  }
  return t;
}

constexpr std::array<uint16_t, 256> kTable = make_table();

}  // namespace

uint16_t crc16_xmodem(std::string_view bytes) {
  uint16_t crc = 0;
  for (unsigned char c : bytes) {
    crc = static_cast<uint16_t>((crc << 8) ^ kTable[((crc >> 8) ^ c) & 0xff]);
  }
  return crc;
}

int key_hash_slot(std::string_view key) {
  // An empty tag ("{}") or an unclosed '{' hashes the whole key: Redis's keyHashSlot.
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return crc16_xmodem(key) & (kClusterSlots - 1);
}

}  // namespace lockstep

namespace lockstep {
namespace {

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char x = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (x != b[i]) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string_view> routing_key(const std::vector<std::string>& argv) {
  if (argv.size() < 2) return std::nullopt;
  const std::string_view name = argv[0];
  if (iequal(name, "eval") || iequal(name, "evalsha") || iequal(name, "eval_ro") || iequal(name, "evalsha_ro")) {
    if (argv.size() < 4 || argv[2] == "0") return std::nullopt;
    return std::string_view(argv[3]);
  }
  static constexpr std::string_view kNoKeys[] = {"ping", "echo", "wait", "multi", "exec", "discard", "unwatch",
                                                 "script", "publish", "subscribe", "unsubscribe", "cluster",
                                                 "info", "config", "dbsize", "flushall", "flushdb", "asking"};
  for (auto k : kNoKeys) {
    if (iequal(name, k)) return std::nullopt;
  }
  return std::string_view(argv[1]);
}

std::optional<Redirect> parse_redirect(std::string_view error) {
  Redirect r;
  if (error.starts_with("MOVED ")) error.remove_prefix(6);
  else if (error.starts_with("ASK ")) {
    r.ask = true;
    error.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const size_t space = error.find(' ');
  const size_t colon = error.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) return std::nullopt;
  int slot = 0, port = 0;
  for (char c : error.substr(0, space)) {
    if (c < '0' || c > '9' || slot > kClusterSlots) return std::nullopt;
    slot = slot * 10 + (c - '0');
  }
  for (char c : error.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535) return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (slot >= kClusterSlots || space == 0 || colon + 1 == error.size()) return std::nullopt;
  r.slot = slot;
  r.host = std::string(error.substr(space + 1, colon - space - 1));
  r.port = port;
  return r;
}

}  // namespace lockstep

namespace lockstep {

void split_slots(int masters, std::vector<int>& first, std::vector<int>& last) {
  const double per = static_cast<double>(kClusterSlots) / masters;
  double cursor = 0.0;
  int next = 0;
  for (int i = 0; i < masters; ++i) {
    int end = static_cast<int>(std::lround(cursor + per - 1));
    if (end > kClusterSlots - 1 || i == masters - 1) end = kClusterSlots - 1;
    if (end < next) end = next;
    first.push_back(next);
    last.push_back(end);
    next = end + 1;
    cursor += per;
  }
}

int slot_master(int masters, int slot) {
  std::vector<int> first, last;
  split_slots(masters, first, last);
  int m = 0;
  while (m + 1 < masters && slot > last[static_cast<size_t>(m)]) ++m;
  return m;
}

}  // namespace lockstep
