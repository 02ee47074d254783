// Test helper: builds a checker history event by event, for the hand-written cases.
#pragma once

#include <cstdint>
#include <string>

#include "lockstep/checker/history.h"

namespace lockstep::checker {

// Builds a history event by event; times are in milliseconds for readable sentences.
class Builder {
 public:
  Builder& at(int64_t ms) {
    ms_ = ms;
    return *this;
  }
  Builder& invoke(int64_t p, const std::string& f, nlohmann::json v = nullptr, const std::string& key = "") {
    return add(EventType::Invoke, p, f, std::move(v), key);
  }
  Builder& ok(int64_t p, const std::string& f, nlohmann::json v = nullptr, const std::string& key = "") {
    return add(EventType::Ok, p, f, std::move(v), key);
  }
  Builder& fail(int64_t p, const std::string& f, const std::string& key = "") {
    return add(EventType::Fail, p, f, nullptr, key);
  }
  Builder& info(int64_t p, const std::string& f, const std::string& key = "") {
    return add(EventType::Info, p, f, nullptr, key);
  }
  // An invoke immediately followed by its ok completion.
  Builder& op(int64_t p, const std::string& f, nlohmann::json in = nullptr, nlohmann::json out = nullptr,
              const std::string& key = "") {
    invoke(p, f, in, key);
    return ok(p, f, out.is_null() ? in : out, key);
  }
  Builder& truth(const std::string& f) { return add(EventType::Truth, -1, f, nullptr, ""); }
  const History& history() const { return h_; }

 private:
  Builder& add(EventType t, int64_t p, const std::string& f, nlohmann::json v, const std::string& key) {
    Event e;
    e.type = t;
    e.process = p;
    e.f = f;
    e.key = key;
    e.value = std::move(v);
    e.time_ns = (ms_ += 10) * 1000000;
    h_.events.push_back(std::move(e));
    return *this;
  }
  History h_;
  int64_t ms_ = 0;
};

}  // namespace lockstep::checker
