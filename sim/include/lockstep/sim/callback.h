// Callback is a move-only `void()` function object for scheduler events. It exists
// because every simulated message is a few events: std::function allocates for any
// capture over 16 bytes and must be copyable, and that allocation was a large share of
// the simulator's cost per message. A Callback keeps captures of up to kInlineBytes in
// place (a shared_ptr plus a few ids, the usual event) and puts larger ones on the heap.
//
// Invariants: an empty Callback must not be called; a moved-from Callback is empty.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace lockstep::sim {

class Callback {
 public:
  static constexpr size_t kInlineBytes = 56;

  Callback() noexcept = default;

  template <typename F>
    requires(!std::is_same_v<std::decay_t<F>, Callback> && std::is_invocable_r_v<void, std::decay_t<F>&>)
  Callback(F&& f) {  // NOLINT(google-explicit-constructor): lambdas convert, as to std::function
    construct(std::forward<F>(f));
  }

  // Replaces what this holds with f, built in place: a scheduler fills its slots this
  // way, so an event's lambda is constructed once rather than built and then relocated.
  template <typename F>
    requires(std::is_invocable_r_v<void, std::decay_t<F>&>)
  void assign(F&& f) {
    if constexpr (std::is_same_v<std::decay_t<F>, Callback>) {
      *this = std::forward<F>(f);
    } else {
      reset();
      construct(std::forward<F>(f));
    }
  }

  Callback(Callback&& o) noexcept : ops_(o.ops_) {
    if (ops_) ops_->relocate(buf_, o.buf_);
    o.ops_ = nullptr;
  }
  Callback& operator=(Callback&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = o.ops_;
      if (ops_) ops_->relocate(buf_, o.buf_);
      o.ops_ = nullptr;
    }
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  void operator()() { ops_->call(buf_); }

 private:
  struct Ops {
    void (*call)(void* self);
    // Moves the callable from `from` into the raw storage `to` and destroys the source.
    void (*relocate)(void* to, void* from) noexcept;
    void (*destroy)(void* self) noexcept;
  };

  template <typename T>
  static constexpr bool fits_inline() {
    return sizeof(T) <= kInlineBytes && alignof(T) <= alignof(std::max_align_t) &&
           std::is_nothrow_move_constructible_v<T>;
  }

  template <typename T>
  static constexpr Ops kInlineOps = {
      [](void* self) { (*std::launder(static_cast<T*>(self)))(); },
      [](void* to, void* from) noexcept {
        T* src = std::launder(static_cast<T*>(from));
        ::new (to) T(std::move(*src));
        src->~T();
      },
      [](void* self) noexcept { std::launder(static_cast<T*>(self))->~T(); },
  };

  template <typename T>
  static constexpr Ops kHeapOps = {
      [](void* self) { (**std::launder(static_cast<T**>(self)))(); },
      [](void* to, void* from) noexcept { ::new (to) T*(*std::launder(static_cast<T**>(from))); },
      [](void* self) noexcept { delete *std::launder(static_cast<T**>(self)); },
  };

  template <typename F>
  void construct(F&& f) {
    using T = std::decay_t<F>;
    if constexpr (fits_inline<T>()) {
      ::new (static_cast<void*>(buf_)) T(std::forward<F>(f));
      ops_ = &kInlineOps<T>;
    } else {
      ::new (static_cast<void*>(buf_)) T*(new T(std::forward<F>(f)));
      ops_ = &kHeapOps<T>;
    }
  }

  void reset() noexcept {
    if (ops_) ops_->destroy(buf_);
    ops_ = nullptr;
  }

  alignas(std::max_align_t) unsigned char buf_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace lockstep::sim
