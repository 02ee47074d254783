// The line handling of `lockstep sim-shell` (shell.h).
#include "lockstep/sim/shell.h"

#include <cctype>
#include <charconv>

namespace lockstep::sim {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

bool parse_ms(const std::string& s, int64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

WorldOptions shell_options(uint64_t seed) {
  WorldOptions o;
  o.seed = seed;
  return o;
}

}  // namespace

std::optional<std::vector<std::string>> split_cli_args(std::string_view line) {
  std::vector<std::string> args;
  size_t i = 0;
  auto at = [&](size_t k) { return k < line.size() ? line[k] : '\0'; };
  while (true) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i >= line.size()) return args;
    std::string cur;
    bool dq = false, sq = false, done = false;
    while (!done) {
      const char c = at(i);
      if (dq) {
        if (c == '\0') return std::nullopt;
        if (c == '\\' && at(i + 1) == 'x' && hex_digit(at(i + 2)) >= 0 && hex_digit(at(i + 3)) >= 0) {
          cur += static_cast<char>(hex_digit(at(i + 2)) * 16 + hex_digit(at(i + 3)));
          i += 3;
        } else if (c == '\\' && at(i + 1) != '\0') {
          const char e = at(++i);
          cur += e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e == 'b' ? '\b' : e == 'a' ? '\a' : e;
        } else if (c == '"') {
          if (at(i + 1) != '\0' && !is_space(at(i + 1))) return std::nullopt;
          done = true;
        } else {
          cur += c;
        }
      } else if (sq) {
        if (c == '\0') return std::nullopt;
        if (c == '\\' && at(i + 1) == '\'') {
          cur += '\'';
          ++i;
        } else if (c == '\'') {
          if (at(i + 1) != '\0' && !is_space(at(i + 1))) return std::nullopt;
          done = true;
        } else {
          cur += c;
        }
      } else if (c == '\0' || is_space(c)) {
        done = true;
      } else if (c == '"') {
        dq = true;
      } else if (c == '\'') {
        sq = true;
      } else {
        cur += c;
      }
      if (i < line.size()) ++i;
    }
    args.push_back(std::move(cur));
  }
}

Shell::Shell(uint64_t seed, bool resp) : world_(shell_options(seed)), resp_(resp) {
  node_ = world_.add_node("node-1", Clock());
}

std::string Shell::line(std::string_view text) {
  auto args = split_cli_args(text);
  if (!args) return "Invalid argument(s)\n";
  if (args->empty()) return "";
  const std::string& cmd = (*args)[0];
  if (cmd == ".sleep" || cmd == ".jump") return meta(*args);
  Reply r = world_.redis(0).execute(client_, *args, world_.node_wall_ms(node_));
  return resp_ ? to_resp(r) : to_cli_text(r) + "\n";
}

std::string Shell::meta(const std::vector<std::string>& args) {
  const std::string& cmd = args[0];
  int64_t ms = 0;
  if (args.size() != 2 || !parse_ms(args[1], ms)) return "(error) usage: " + cmd + " MS\n";
  if (cmd == ".sleep") {
    const int64_t now_ms = world_.now() / 1'000'000;
    if (ms < 0 || ms > kSleepMsMax || now_ms + ms > kTimeMsMax)
      return "(error) .sleep takes 0 to " + std::to_string(kSleepMsMax) +
             " ms at a time, within a century of simulated time\n";
    world_.scheduler().run_until(world_.now() + ms * 1'000'000);
    return "";
  }
  // The wall clock may go back before its start (an NTP step can), but not before 1970.
  const int64_t wall_ms = world_.node_wall_ms(node_);
  const int64_t start_ms = Clock::kEpochNs / 1'000'000;
  if (ms < -wall_ms || ms > start_ms + kTimeMsMax - wall_ms)
    return "(error) .jump keeps the wall clock between 1970 and a century after the start\n";
  world_.process(node_).clock.jump_wall(ms * 1'000'000);
  return "";
}

}  // namespace lockstep::sim
