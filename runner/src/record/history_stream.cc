#include "lockstep/runner/history_stream.h"

#include <algorithm>
#include <cassert>
#include <string_view>
#include <system_error>

namespace lockstep::runner {

HistoryStream::HistoryStream(const std::vector<checker::Event>& events, size_t start_at)
    : events_(&events), start_at_(kFastPaths ? std::max<size_t>(start_at, 1) : static_cast<size_t>(-1)) {}

HistoryStream::~HistoryStream() {
  if (!writer_.joinable()) return;
  state_.fetch_or(kAbandoned, std::memory_order_release);
  state_.notify_one();
  writer_.join();
}

void HistoryStream::appended(size_t n) {
  // Events are only ever added, and not after close(): the writer reads up to n.
  assert(events_ != nullptr && n >= told_ && n <= events_->size());
  if (!writer_.joinable()) {
    if (n < start_at_) return;
    told_ = n;
    state_.store(n, std::memory_order_release);
    try {
      writer_ = std::thread([this] { write(); });
    } catch (const std::system_error&) {
      start_at_ = static_cast<size_t>(-1);  // no thread to be had: take() writes it all
    }
    return;
  }
  if (n - told_ < kWakeEvery) return;
  told_ = n;
  state_.store(n, std::memory_order_release);
  state_.notify_one();
}

void HistoryStream::close() {
  assert(events_ != nullptr && "a history stream is closed once");
  {
    std::lock_guard<std::mutex> hold(moving_);
    closed_base_ = events_->data();
    closed_count_ = events_->size();
    events_ = nullptr;
  }
  if (!writer_.joinable()) return;
  state_.store(closed_count_ | kClosed, std::memory_order_release);
  state_.notify_one();
}

void HistoryStream::write_lines(const checker::Event* base, size_t from, size_t to) {
  const size_t start = jsonl_.size();
  for (size_t i = from; i < to; ++i) checker::append_jsonl(jsonl_, base[i]);
  digest_.update(std::string_view(jsonl_).substr(start));
}

void HistoryStream::write() {
  try {
    size_t done = 0;
    for (;;) {
      const uint64_t word = state_.load(std::memory_order_acquire);
      if (word & kAbandoned) return;  // only the destructor abandons: nobody waits
      const size_t n = word & kCount;
      if (n == done) {
        if (word & kClosed) break;
        state_.wait(word, std::memory_order_acquire);
        continue;
      }
      const size_t to = std::min(n, done + kBatchMax);
      std::lock_guard<std::mutex> hold(moving_);
      const checker::Event* base = events_ ? events_->data() : closed_base_;
      if (done == 0) jsonl_.reserve((events_ ? events_->capacity() : closed_count_) * 128);
      write_lines(base, done, to);
      done = to;
    }
  } catch (...) {
    error_ = std::current_exception();
  }
}

void HistoryStream::finish() {
  assert(events_ == nullptr && "finish() and take() come after close()");
  if (!finished_) {
    finished_ = true;
    if (writer_.joinable()) {
      writer_.join();
    } else {
      jsonl_.reserve(closed_count_ * 128);
      write_lines(closed_base_, 0, closed_count_);
    }
  }
  if (error_) std::rethrow_exception(error_);
}

HistoryStream::Written HistoryStream::take() {
  finish();
  Written w;
  w.jsonl = std::move(jsonl_);
  w.sha256 = digest_.hex();
  return w;
}

}  // namespace lockstep::runner
