#include "lockstep/runner/recorder.h"

namespace lockstep::runner {

checker::Event& Recorder::next_event() {
  auto& events = history_.events;
  if (stream_ && events.size() == events.capacity()) {
    auto hold = stream_->hold_events();
    return events.emplace_back();
  }
  return events.emplace_back();
}

void Recorder::record(checker::Event e) {
  next_event() = std::move(e);
  recorded();
}

// Events are built in place at the end of the history rather than built and moved in.
void Recorder::op(checker::EventType type, int64_t process, const std::string& f, const std::string& key,
                  nlohmann::json value, int64_t thread) {
  checker::Event& e = next_event();
  e.type = type;
  e.process = process;
  e.thread = thread;
  e.f = f;
  e.key = key;
  e.value = std::move(value);
  e.time_ns = clock_();
  recorded();
}

void Recorder::truth(const std::string& f, int64_t process, const std::string& key, nlohmann::json value,
                     int64_t node, nlohmann::json extra) {
  checker::Event& e = next_event();
  e.type = checker::EventType::Truth;
  e.process = process;
  e.f = f;
  e.key = key;
  e.value = std::move(value);
  e.time_ns = clock_();
  e.node = node;
  e.extra = std::move(extra);
  recorded();
  if (on_truth) on_truth(history_.events.back());
}

}  // namespace lockstep::runner
