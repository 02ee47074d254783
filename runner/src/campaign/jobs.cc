#include "lockstep/runner/jobs.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace lockstep::runner {
namespace {
constexpr unsigned kJobsMax = 1024;
}  // namespace

unsigned default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

std::string parse_jobs(const std::string& text, unsigned& out) {
  unsigned n = 0;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc() || at != end)
    return "--jobs: expected how many runs at once, a whole number from 1 up, found \"" + text + "\"";
  if (n == 0) return "--jobs: 0 runs at once would run nothing; give 1 or more (default: one per core)";
  // Each job is a thread with its own pools: more than this only costs memory.
  if (n > kJobsMax) return "--jobs: " + text + " is more than the " + std::to_string(kJobsMax) + " runs at once lockstep starts";
  out = n;
  return "";
}

}  // namespace lockstep::runner
