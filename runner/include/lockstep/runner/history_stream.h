// Writes a history as JSON lines, and hashes them, on a second thread while the run that
// records it is still going. Writing and hashing a long history took as long as judging
// it; done alongside the simulation instead, only the last few events are left to write
// when the run ends, and the judgment has the second core to itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/checker/history.h"
#include "lockstep/fast_paths.h"
#include "lockstep/digest.h"

namespace lockstep::runner {

// Below this many events a history is written, hashed or judged in less time than a
// thread takes to start (tens of microseconds).
inline constexpr size_t kEventsWorthAThread = 4096;

class HistoryStream {
 public:
  // `events` is the vector a Recorder appends to. No thread starts until it holds
  // `start_at` events: a short history is written by take() instead, as is any history
  // when the system refuses a thread.
  explicit HistoryStream(const std::vector<checker::Event>& events, size_t start_at = kEventsWorthAThread);
  // Stops the writer without finishing, as when the run threw.
  ~HistoryStream();
  HistoryStream(const HistoryStream&) = delete;
  HistoryStream& operator=(const HistoryStream&) = delete;

  // The first `n` events are complete and will not change again.
  void appended(size_t n);
  // Held by the recorder while an append moves the events to a larger buffer, so the
  // writer is never reading them as they move.
  std::unique_lock<std::mutex> hold_events() { return std::unique_lock<std::mutex>(moving_); }
  // No more events. The vector itself may be moved afterwards (a moved vector keeps its
  // elements where they are), but its elements must outlive take().
  void close();

  // After close(): waits for the writer. Rethrows what it threw.
  void finish();

  struct Written {
    std::string jsonl;   // exactly checker::to_jsonl of the history
    std::string sha256;  // of jsonl, as reports::sha256_hex gives it
  };
  // Once, after close(): finish(), then what was written.
  Written take();

 private:
  // state_ holds the count of complete events and these flags; the writer sleeps on it,
  // so closing and abandoning change it even when no event was added.
  static constexpr uint64_t kClosed = uint64_t{1} << 62;
  static constexpr uint64_t kAbandoned = uint64_t{1} << 63;
  static constexpr uint64_t kCount = kClosed - 1;
  // The writer is woken once per this many events: each wake is a system call.
  static constexpr size_t kWakeEvery = 256;
  // At most this many events are written per hold of moving_, so a growth of the
  // history waits at most that long.
  static constexpr size_t kBatchMax = 2048;

  void write();
  void write_lines(const checker::Event* base, size_t from, size_t to);

  const std::vector<checker::Event>* events_;  // null once closed
  size_t start_at_;
  const checker::Event* closed_base_ = nullptr;
  size_t closed_count_ = 0;
  size_t told_ = 0;  // the count the writer was last woken for
  std::atomic<uint64_t> state_{0};
  bool finished_ = false;
  std::mutex moving_;
  std::thread writer_;
  std::exception_ptr error_;
  std::string jsonl_;
  DigestStream digest_{"SHA256"};
};

}  // namespace lockstep::runner
