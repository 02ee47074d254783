#include "lockstep/runner/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lockstep::runner {
namespace {

constexpr int kBarWidth = 20;
constexpr size_t kDefaultColumns = 80;

// "0:42", "12:05", "1:02:03".
std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, std::floor(seconds)));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

size_t terminal_columns() {
  winsize w{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return kDefaultColumns;
}

}  // namespace

std::string format_progress(std::string_view command, uint64_t done, uint64_t total, std::string_view detail,
                            double elapsed_s, size_t width_max) {
  std::string line(command);
  const std::string elapsed = clock_text(elapsed_s);
  std::string timing = elapsed;
  if (total == 0) {
    line += "  " + std::to_string(done) + " runs";
  } else {
    done = std::min(done, total);
    const int filled = static_cast<int>(kBarWidth * done / total);
    line += "  [" + std::string(filled, '#') + std::string(kBarWidth - filled, ' ') + "] " + std::to_string(done) +
            "/" + std::to_string(total) + "  " + std::to_string(100 * done / total) + "%";
    // The rate so far is the best guess a batch of unlike runs allows.
    if (done > 0 && done < total)
      timing += ", ~" + clock_text(elapsed_s * static_cast<double>(total - done) / static_cast<double>(done)) + " left";
  }
  std::string tail = "  " + timing;
  if (!detail.empty()) {
    // The detail gives way first: the count and the timing say more than a name.
    const size_t room = width_max > line.size() + tail.size() + 2 ? width_max - line.size() - tail.size() - 2 : 0;
    if (room >= 4) line += "  " + std::string(detail.size() > room ? std::string(detail.substr(0, room - 3)) + "..." : detail);
  }
  line += tail;
  if (line.size() > width_max) line.resize(width_max);
  return line;
}

Progress::Progress(std::string command) : Progress(std::move(command), isatty(STDERR_FILENO) != 0) {}

Progress::Progress(std::string command, bool enabled) : command_(std::move(command)), enabled_(enabled) {}

void Progress::show(uint64_t done, uint64_t total, std::string_view detail) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_ < std::chrono::milliseconds(100) && (total == 0 || done < total)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // One column short of the width: a line filling the last column wraps on some terminals.
  const std::string line = format_progress(command_, done, total, detail, elapsed, terminal_columns() - 1);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace lockstep::runner
