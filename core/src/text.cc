#include "lockstep/text.h"

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
