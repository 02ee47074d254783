#include "lockstep/runner/recorder.h"

namespace lockstep::runner {

// Events are built in place at the end of the history rather than built and moved in.
void Recorder::op(checker::EventType type, int64_t process, const std::string& f, const std::string& key,
                  nlohmann::json value, int64_t thread) {
  checker::Event& e = history_.events.emplace_back();
  e.type = type;
  e.process = process;
  e.thread = thread;
  e.f = f;
  e.key = key;
  e.value = std::move(value);
  e.time_ns = clock_();
  note_size();
}

void Recorder::truth(const std::string& f, int64_t process, const std::string& key, nlohmann::json value,
                     int64_t node, nlohmann::json extra) {
  checker::Event& e = history_.events.emplace_back();
  e.type = checker::EventType::Truth;
  e.process = process;
  e.f = f;
  e.key = key;
  e.value = std::move(value);
  e.time_ns = clock_();
  e.node = node;
  e.extra = std::move(extra);
  note_size();
  if (on_truth) on_truth(history_.events.back());
}

}  // namespace lockstep::runner
