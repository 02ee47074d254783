// A Gate is a point one coroutine waits at until another opens it: an extension in
// flight that an unlock waits for, a library's callback that ends its user's work. The
// opener resumes the waiter at once, on its own stack; both belong to one process (one
// Env), so nothing else runs between. Opening an open gate, or one nobody waits at, does
// nothing more than leave it open; a gate once open stays open.
#pragma once

#include <coroutine>
#include <utility>

namespace lockstep {

class Gate {
 public:
  bool is_open() const { return open_; }
  void open() {
    open_ = true;
    if (auto h = std::exchange(waiter_, {})) h.resume();
  }
  auto wait() {
    struct Awaiter {
      Gate& g;
      bool await_ready() const noexcept { return g.open_; }
      void await_suspend(std::coroutine_handle<> h) noexcept { g.waiter_ = h; }
      void await_resume() const noexcept {}
    };
    return Awaiter{*this};
  }

 private:
  bool open_ = false;
  std::coroutine_handle<> waiter_;
};

}  // namespace lockstep
