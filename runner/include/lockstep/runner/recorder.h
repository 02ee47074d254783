// The Recorder appends to a run's history. Its clock is the world's notion of true time
// (the scheduler in the simulator, the monotonic clock live), never a process's own
// possibly-skewed clock, so events from all processes share one timeline.
#pragma once

#include <cstdint>
#include <algorithm>
#include <functional>
#include <string>

#include "lockstep/checker/history.h"
#include "lockstep/runner/history_stream.h"

namespace lockstep::runner {

class Recorder {
 public:
  // The history starts with room for as many events as the largest one this thread
  // recorded before: a campaign of similar runs then grows no event vector, where each
  // growth moved every event recorded so far (a fast path, lockstep/fast_paths.h).
  explicit Recorder(std::function<int64_t()> clock) : clock_(std::move(clock)) {
    if constexpr (kFastPaths) history_.events.reserve(size_hint());
  }

  // `thread`: a process that runs again after a crash (an external client's next
  // incarnation) records on a thread of its own, so what its dead self left pending stays
  // pending rather than overlapping its new operations.
  void op(checker::EventType type, int64_t process, const std::string& f, const std::string& key,
          nlohmann::json value = nullptr, int64_t thread = 0);
  void truth(const std::string& f, int64_t process, const std::string& key, nlohmann::json value = nullptr,
             int64_t node = -1, nlohmann::json extra = nullptr);

  // An event built elsewhere (a library's background renewal), recorded as is.
  void record(checker::Event e);

  // Every event recorded from now on is also handed to `stream` (null: none), which
  // must have been built over history().events.
  void stream_to(HistoryStream* stream) { stream_ = stream; }

  // Sees every truth record as it is written (the runner raises critical-section events
  // for event-triggered faults from it).
  std::function<void(const checker::Event&)> on_truth;

  const checker::History& history() const { return history_; }
  // Changing events already recorded is for a recorder that streams to nobody (the live
  // runner places late truth records among them).
  checker::History& history() { return history_; }
  int64_t now() const { return clock_(); }

 private:
  static size_t& size_hint() {
    static thread_local size_t n = 0;
    return n;
  }
  checker::Event& next_event();
  void recorded() {
    if (history_.events.size() > size_hint()) size_hint() = std::min(history_.events.size(), kHintMax);
    if (stream_) stream_->appended(history_.events.size());
  }
  static constexpr size_t kHintMax = size_t{1} << 20;

  std::function<int64_t()> clock_;
  checker::History history_;
  HistoryStream* stream_ = nullptr;
};

}  // namespace lockstep::runner
