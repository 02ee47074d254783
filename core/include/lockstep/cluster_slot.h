// Redis Cluster's key-to-slot mapping: 16384 hash slots, CRC16 (XMODEM) of the key, or of
// its hash tag — the bytes between the first '{' and the next '}' when that span is not
// empty — so that keys such as "{user1000}.following" and "{user1000}.followers" land in
// one slot and a multi-key command or script may use them together.
//
// Both worlds need it: the simulated node to answer MOVED/CROSSSLOT, and every cluster
// client (SimEnv and LiveEnv connections) to pick the node before sending, as real
// cluster clients do.
#pragma once

#include <cstdint>
#include <string_view>

namespace lockstep {

inline constexpr int kClusterSlots = 16384;

// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, no reflection — the variant
// redis-server's crc16.c computes.
uint16_t crc16_xmodem(std::string_view bytes);

// The slot of `key`, in [0, kClusterSlots).
int key_hash_slot(std::string_view key);

}  // namespace lockstep

#include <optional>
#include <string>
#include <vector>

namespace lockstep {

// The key a cluster client routes a command by: EVAL/EVALSHA's first declared key, none
// for commands without keys (PING, WAIT, MULTI, EXEC, SCRIPT, PUBLISH, CLUSTER, ...),
// argv[1] otherwise. A client sends a key-less command where its last keyed one went,
// which keeps WAIT and transactions on the node that took the write.
std::optional<std::string_view> routing_key(const std::vector<std::string>& argv);

// A redirection in an error reply: "MOVED 3999 127.0.0.1:6381" or "ASK 3999 ...".
struct Redirect {
  bool ask = false;
  int slot = 0;
  std::string host;
  int port = 0;
};
std::optional<Redirect> parse_redirect(std::string_view error);

// The slots each of `masters` masters serves, as redis-cli --cluster create splits them
// (shares rounded to the nearest slot): master i serves first[i]..last[i]. Both worlds
// split alike, so node-N serves the same slots in each.
void split_slots(int masters, std::vector<int>& first, std::vector<int>& last);
// Which of `masters` masters serves `slot` under that split.
int slot_master(int masters, int slot);

}  // namespace lockstep
