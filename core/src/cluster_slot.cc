#include "lockstep/cluster_slot.h"

#include <array>

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
