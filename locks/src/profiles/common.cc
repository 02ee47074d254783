#include "common.h"

#include <algorithm>

namespace lockstep::profiles {
namespace {

Task<void> ask(Env& env, Caller caller, Argv argv, Nanos timeout, std::shared_ptr<Round> round, int i) {
  Reply r = co_await caller(env, i, std::move(argv), timeout);
  round->replies[i] = std::move(r);
  ++round->answered;
  if (!round->gate.is_open() && (round->decided ? round->decided(*round) : round->all_in())) round->gate.open();
}

}  // namespace

Task<Reply> plain_call(Env& env, int node, Argv argv, Nanos timeout) {
  co_return co_await env.node(node).call(std::move(argv), timeout);
}

Task<Reply> goredis_call(Env& env, int node, Argv argv, Nanos timeout) {
  constexpr int kMaxRetries = 3;
  for (int retry = 0;; ++retry) {
    Argv copy = argv;
    Reply r = co_await env.node(node).call(std::move(copy), timeout);
    if (r.type != Reply::Type::IoError || retry == kMaxRetries) co_return r;
    // internal.RetryBackoff: min + rand(min << retry), at most 512 ms.
    const int64_t span = int64_t{8} << retry;
    co_await env.sleep(Millis(std::min<int64_t>(512, 8 + random_between(env, 0, span - 1))));
  }
}

Task<Reply> ioredis_call(Env& env, int node, Argv argv, Nanos timeout) {
  constexpr int kMaxRetriesPerRequest = 20;
  for (int attempt = 1;; ++attempt) {
    Argv copy = argv;
    Reply r = co_await env.node(node).call(std::move(copy), timeout);
    if (r.type != Reply::Type::IoError || attempt > kMaxRetriesPerRequest) co_return r;
    co_await env.sleep(Millis(std::min<int64_t>(50 * attempt, 2000)));
  }
}

Task<std::shared_ptr<Round>> on_all_nodes(Env& env, std::vector<Argv> argvs, Nanos timeout,
                                          std::function<bool(const Round&)> decided, Caller caller) {
  auto round = std::make_shared<Round>();
  round->replies.resize(argvs.size());
  if (!decided) {
    // A round that waits for every reply is a join: when_all resumes this coroutine
    // the moment the last reply is in, without a spawned activity per node.
    std::vector<Task<Reply>> calls;
    calls.reserve(argvs.size());
    for (size_t i = 0; i < argvs.size(); ++i) {
      calls.push_back(caller(env, static_cast<int>(i), std::move(argvs[i]), timeout));
    }
    std::vector<Reply> replies = co_await when_all(std::move(calls));
    for (size_t i = 0; i < replies.size(); ++i) round->replies[i] = std::move(replies[i]);
    round->answered = static_cast<int>(replies.size());
    round->gate.open();
    co_return round;
  }
  // A round decided early (a quorum either way) cannot be a join: its waiter goes on
  // while the other replies are still coming, and they must still land in the round.
  round->decided = std::move(decided);
  for (size_t i = 0; i < argvs.size(); ++i) {
    env.spawn(ask(env, caller, std::move(argvs[i]), timeout, round, static_cast<int>(i)));
  }
  if (argvs.empty()) round->gate.open();
  co_await round->gate.wait();
  co_return round;
}

std::vector<Argv> same_for_all(Env& env, const Argv& argv) {
  return std::vector<Argv>(static_cast<size_t>(env.node_count()), argv);
}

std::string random_hex(Env& env, int bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < bytes; ++i) {
    const auto b = static_cast<unsigned>(env.random() & 0xff);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::string random_base64(Env& env, int bytes) {
  static const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned> in;
  for (int i = 0; i < bytes; ++i) in.push_back(static_cast<unsigned>(env.random() & 0xff));
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    const unsigned n = (in[i] << 16) | ((i + 1 < in.size() ? in[i + 1] : 0) << 8) | (i + 2 < in.size() ? in[i + 2] : 0);
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    out += i + 1 < in.size() ? kB64[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kB64[n & 63] : '=';
  }
  return out;
}

std::string random_alnum(Env& env, int n) {
  static const char* kChars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string out;
  for (int i = 0; i < n; ++i) out += kChars[env.random() % 62];
  return out;
}

}  // namespace lockstep::profiles
