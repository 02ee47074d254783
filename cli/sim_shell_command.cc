// `lockstep sim-shell`: a redis-cli-like shell on one simulated Redis node, for poking
// at the simulator and for tests that want to compare it with redis-cli by eye. Each
// stdin line is one command, quoted as redis-cli quotes it; meta-commands move
// simulated time (.sleep MS) or step the node's wall clock (.jump MS).
#include <charconv>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "lockstep/sim/world.h"

namespace lockstep::cli {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits a line the way redis-cli (sdssplitargs) does: whitespace separates arguments;
// "double quotes" know \n \r \t \b \a \\ \" and \xHH; 'single quotes' know only \'.
// A closing quote must be followed by a space or the end. nullopt on bad quoting.
std::optional<std::vector<std::string>> split_args(const std::string& line) {
  std::vector<std::string> args;
  size_t i = 0;
  auto at = [&](size_t k) { return k < line.size() ? line[k] : '\0'; };
  while (true) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
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
          if (at(i + 1) != '\0' && !std::isspace(static_cast<unsigned char>(at(i + 1)))) return std::nullopt;
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
          if (at(i + 1) != '\0' && !std::isspace(static_cast<unsigned char>(at(i + 1)))) return std::nullopt;
          done = true;
        } else {
          cur += c;
        }
      } else if (c == '\0' || std::isspace(static_cast<unsigned char>(c))) {
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

struct ShellArgs {
  bool resp = false;
  uint64_t seed = 1;
};

bool parse_ms(const std::string& s, int64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

int shell(const ShellArgs& a) {
  sim::WorldOptions o;
  o.seed = a.seed;
  sim::World world(o);
  const int node = world.add_node("node-1", sim::Clock());
  sim::ClientState client;
  std::string line;
  while (std::getline(std::cin, line)) {
    auto args = split_args(line);
    if (!args) {
      std::cout << "Invalid argument(s)\n";
      continue;
    }
    if (args->empty()) continue;
    const std::string& cmd = (*args)[0];
    if (cmd == ".sleep" || cmd == ".jump") {
      int64_t ms = 0;
      if (args->size() != 2 || !parse_ms((*args)[1], ms) || (cmd == ".sleep" && ms < 0)) {
        std::cout << "(error) usage: " << cmd << " MS\n";
        continue;
      }
      // .sleep lets simulated time pass (active expiry runs); .jump steps the node's
      // wall clock only, like an NTP step on the server.
      if (cmd == ".sleep") world.scheduler().run_until(world.now() + ms * 1'000'000);
      if (cmd == ".jump") world.process(node).clock.jump_wall(ms * 1'000'000);
      continue;
    }
    Reply r = world.redis(0).execute(client, *args, world.node_wall_ms(node));
    std::cout << (a.resp ? to_resp(r) : to_cli_text(r) + "\n");
    std::cout.flush();
  }
  return 0;
}

}  // namespace

CommandRunner add_sim_shell_command(CLI::App& app) {
  auto a = std::make_shared<ShellArgs>();
  auto* cmd = app.add_subcommand("sim-shell", "A redis-cli-like shell on one simulated Redis node (stdin lines)");
  cmd->add_flag("--resp", a->resp, "Print raw RESP2 replies instead of redis-cli's rendering");
  cmd->add_option("--seed", a->seed, "Seed of the node's random stream (active expiry sampling)");
  return [a] { return shell(*a); };
}

}  // namespace lockstep::cli
