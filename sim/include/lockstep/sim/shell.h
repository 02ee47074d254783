// A Shell is a redis-cli-like session on one simulated Redis node: each line is one
// command, quoted as redis-cli quotes it, and the answer is what redis-cli would print
// (or the raw RESP2 bytes). Two meta-commands move the simulator: `.sleep MS` lets
// simulated time pass (active expiry runs), `.jump MS` steps the node's wall clock only,
// like an NTP step on the server. `lockstep sim-shell` is this over stdin; tests drive
// it line by line in-process.
//
// Any line is answered, never a crash or a hang: bad quoting is "Invalid argument(s)"
// as in redis-cli, a bad meta-command says its usage and bounds, and a command gets the
// node's own reply. Time moves by bounded steps so neither clock can overflow and a
// `.sleep` never runs for long (active expiry fires ten times per simulated second).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/sim/world.h"

namespace lockstep::sim {

// Splits a line the way redis-cli (sdssplitargs) does: whitespace separates arguments;
// "double quotes" know \n \r \t \b \a \\ \" and \xHH; 'single quotes' know only \'.
// A closing quote must be followed by a space or the end. nullopt on bad quoting.
std::optional<std::vector<std::string>> split_cli_args(std::string_view line);

class Shell {
 public:
  // One .sleep moves simulated time by at most a day (864,000 expiry cycles).
  static constexpr int64_t kSleepMsMax = 86'400'000;
  // Simulated time and the node's wall clock stay within a century of their start,
  // far inside int64 nanoseconds.
  static constexpr int64_t kTimeMsMax = 100LL * 365 * 86'400'000;

  Shell(uint64_t seed, bool resp);

  // The answer to one line, with its trailing newline; "" for a blank line or a
  // meta-command that succeeded.
  std::string line(std::string_view text);

 private:
  std::string meta(const std::vector<std::string>& args);

  World world_;
  int node_ = 0;
  ClientState client_;
  bool resp_ = false;
};

}  // namespace lockstep::sim
