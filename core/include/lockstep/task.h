// Task<T> is a lazy, move-only coroutine: nothing runs until it is awaited (or started
// by a scheduler through Task::handle()). When it finishes it resumes whoever awaited it
// by symmetric transfer, so long chains of awaits never grow the native stack.
//
// Errors travel as values (see Reply); an exception escaping a coroutine body is a bug
// and terminates the program rather than crossing a coroutine boundary.
//
// Ownership: a Task owns its coroutine frame. Destroying a suspended Task destroys the
// frame and, through its locals, every Task it was awaiting: that is how a crashed
// simulated process loses all of its in-flight work at once.
//
// when_all(tasks) runs several tasks at once and resumes its awaiter when the last one
// has finished, with nothing in between: no polling, no extra events, in either world.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "lockstep/fast_paths.h"

namespace lockstep {

template <typename T>
class Task;

namespace detail {

// Coroutine frames are made and destroyed by the million in a simulation (every command,
// sleep and lock step is one), in a handful of sizes. A per-thread free list for each
// 64-byte size class up to 1 KiB serves them without going to malloc (a fast path:
// lockstep/fast_paths.h). Larger frames go to the heap. Memory is only ever reused for
// frames of the same class; each list keeps at most kFramesKept, so it is bounded by the
// peak of live frames. A kept frame is poisoned under AddressSanitizer but for the moment
// its link is read.
class FramePool {
 public:
  static void* allocate(std::size_t n) {
    if (const std::size_t c = size_class(n); kFastPaths && c < kClasses) {
      Lists& l = lists();
      if (Free* f = l.head[c]) {
        pool_hands_out(f, (c + 1) * kStep);
        l.head[c] = f->next;
        --l.count[c];
        return f;
      }
      return ::operator new((c + 1) * kStep);
    }
    return ::operator new(n);
  }

  static void release(void* p, std::size_t n) noexcept {
    if (const std::size_t c = size_class(n); kFastPaths && c < kClasses) {
      Lists& l = lists();
      if (l.count[c] < kFramesKept) {
        l.head[c] = ::new (p) Free{l.head[c]};
        ++l.count[c];
        pool_keeps(p, (c + 1) * kStep);
        return;
      }
      ::operator delete(p, (c + 1) * kStep);
      return;
    }
    ::operator delete(p, n);
  }

 private:
  static constexpr std::size_t kStep = 64;
  static constexpr std::size_t kClasses = 16;
  static constexpr std::size_t kFramesKept = 4096;

  struct Free {
    Free* next;
  };
  struct Lists {
    Free* head[kClasses] = {};
    std::size_t count[kClasses] = {};
    Lists() = default;
    Lists(const Lists&) = delete;
    Lists& operator=(const Lists&) = delete;
    ~Lists() {
      for (std::size_t c = 0; c < kClasses; ++c) {
        while (Free* f = head[c]) {
          pool_hands_out(f, (c + 1) * kStep);
          head[c] = f->next;
          ::operator delete(f, (c + 1) * kStep);
        }
      }
    }
  };

  static std::size_t size_class(std::size_t n) { return (n + kStep - 1) / kStep - 1; }
  static Lists& lists() {
    static thread_local Lists l;
    return l;
  }
};

struct PromiseBase {
  std::coroutine_handle<> continuation = std::noop_coroutine();

  static void* operator new(std::size_t n) { return FramePool::allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { FramePool::release(p, n); }

  struct FinalAwaiter {
    bool await_ready() const noexcept { return false; }
    template <typename P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) const noexcept {
      return h.promise().continuation;
    }
    void await_resume() const noexcept {}
  };

  std::suspend_always initial_suspend() const noexcept { return {}; }
  FinalAwaiter final_suspend() const noexcept { return {}; }
  [[noreturn]] void unhandled_exception() const noexcept {
    std::fputs("lockstep: exception escaped a coroutine; errors must be values\n", stderr);
    std::terminate();
  }
};

template <typename T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <typename U>
  void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
  T take() { return std::move(*value); }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() const noexcept {}
  void take() const noexcept {}
};

}  // namespace detail

template <typename T = void>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() noexcept = default;
  explicit Task(Handle h) noexcept : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  bool valid() const noexcept { return static_cast<bool>(h_); }
  bool done() const noexcept { return h_ && h_.done(); }
  // For schedulers that start a top-level task; the Task keeps ownership.
  Handle handle() const noexcept { return h_; }
  // The result of a finished top-level task.
  T result() { return h_.promise().take(); }

  auto operator co_await() && noexcept {
    struct Awaiter {
      Handle h;
      bool await_ready() const noexcept { return !h || h.done(); }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
        h.promise().continuation = awaiting;
        return h;
      }
      T await_resume() { return h.promise().take(); }
    };
    return Awaiter{h_};
  }

 private:
  void reset() noexcept {
    if (h_) h_.destroy();
    h_ = {};
  }
  Handle h_{};
};

namespace detail {
template <typename T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>{std::coroutine_handle<Promise<T>>::from_promise(*this)};
}
inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>{std::coroutine_handle<Promise<void>>::from_promise(*this)};
}
}  // namespace detail

namespace detail {

// The rendezvous of a when_all: how many of its tasks are still running (plus one for the
// awaiter until it has started them all), and who to resume when none is.
struct Join {
  std::size_t pending = 0;
  std::coroutine_handle<> waiter;
};

// Runs one task of a when_all; its end hands control to the awaiter when it was the last.
class JoinTask {
 public:
  struct promise_type {
    Join* join = nullptr;

    static void* operator new(std::size_t n) { return FramePool::allocate(n); }
    static void operator delete(void* p, std::size_t n) noexcept { FramePool::release(p, n); }

    JoinTask get_return_object() noexcept {
      return JoinTask{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    struct Final {
      bool await_ready() const noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) const noexcept {
        Join& j = *h.promise().join;
        return --j.pending == 0 ? j.waiter : std::noop_coroutine();
      }
      void await_resume() const noexcept {}
    };
    Final final_suspend() const noexcept { return {}; }
    void return_void() const noexcept {}
    [[noreturn]] void unhandled_exception() const noexcept {
      std::fputs("lockstep: exception escaped a coroutine; errors must be values\n", stderr);
      std::terminate();
    }
  };
  using Handle = std::coroutine_handle<promise_type>;

  explicit JoinTask(Handle h) noexcept : h_(h) {}
  JoinTask(JoinTask&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  JoinTask& operator=(JoinTask&&) = delete;
  JoinTask(const JoinTask&) = delete;
  ~JoinTask() {
    if (h_) h_.destroy();
  }
  void start(Join& join) {
    h_.promise().join = &join;
    h_.resume();
  }

 private:
  Handle h_;
};

template <typename T>
JoinTask join_one(Task<T> task, std::optional<T>& out) {
  out.emplace(co_await std::move(task));
}

// Starts every task in order (each runs until its first suspension) and suspends the
// awaiter unless they all finished on the spot.
struct JoinAwaiter {
  std::vector<JoinTask>& tasks;
  Join& join;
  bool await_ready() const noexcept { return tasks.empty(); }
  bool await_suspend(std::coroutine_handle<> awaiting) {
    join.pending = tasks.size() + 1;
    join.waiter = awaiting;
    for (JoinTask& t : tasks) t.start(join);
    return --join.pending != 0;
  }
  void await_resume() const noexcept {}
};

}  // namespace detail

// Runs `tasks` concurrently and completes when the last of them has, with their results
// in the tasks' order. The tasks start in order, each running until its first
// suspension, so their first effects (the commands they send) happen in that order.
// Destroying a suspended when_all destroys the tasks it runs.
template <typename T>
Task<std::vector<T>> when_all(std::vector<Task<T>> tasks) {
  std::vector<std::optional<T>> results(tasks.size());
  std::vector<detail::JoinTask> joins;
  joins.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) joins.push_back(detail::join_one(std::move(tasks[i]), results[i]));
  detail::Join join;
  co_await detail::JoinAwaiter{joins, join};
  std::vector<T> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(std::move(*r));
  co_return out;
}

}  // namespace lockstep
