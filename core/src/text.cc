#include "lockstep/text.h"

#include <algorithm>
#include <cstdio>

namespace lockstep {

std::string format_duration(int64_t ns) {
  char buf[48];
  const double ms = static_cast<double>(ns) / 1e6;
  if (ns != 0 && ns % 1'000'000'000 == 0) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(ns / 1'000'000'000));
  } else if (ns >= 1'000'000'000 || ns <= -1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.3gs", ms / 1e3);
  } else if (ns % 1'000'000 == 0) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(ns / 1'000'000));
  } else {
    std::snprintf(buf, sizeof buf, "%.3gms", ms);
  }
  return buf;
}

}  // namespace lockstep

namespace lockstep {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_name(const std::string& s, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_d = 3;
  for (const auto& c : candidates) {
    size_t d = edit_distance(s, c);
    if (d < best_d) best = &c, best_d = d;
  }
  return best ? *best : "";
}

}  // namespace lockstep
