// Number parsing and formatting exactly as redis-server 7.0 does it (util.c, object.c,
// networking.c), plus the shared error replies whose texts clients match on.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "redis_impl.h"

namespace lockstep::sim {

// string2ll: strict, no leading '+', spaces or zeros, so "007" and "-0" are not
// integers (a value SET as "007" stays a string and INCR refuses it).
bool string_to_ll(const std::string& s, int64_t& out) {
  const size_t n = s.size();
  if (n == 0 || n >= 21) return false;
  if (n == 1 && s[0] == '0') {
    out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    if (++i == n) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = static_cast<uint64_t>(s[i++] - '0');
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (; i < n && s[i] >= '0' && s[i] <= '9'; ++i) {
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > kMax / 10) return false;
    v *= 10;
    if (v > kMax - d) return false;
    v += d;
  }
  if (i < n) return false;
  if (negative) {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return false;
    out = static_cast<int64_t>(0 - v);
  } else {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    out = static_cast<int64_t>(v);
  }
  return true;
}

// getDoubleFromObject: strtod over the whole string, no leading space, no NaN, and an
// overflow to infinity (ERANGE) is refused while a literal "inf" is accepted.
bool string_to_double(const std::string& s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (static_cast<size_t>(end - s.c_str()) != s.size()) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO))
    return false;
  if (std::isnan(v)) return false;
  out = v;
  return true;
}

// addReplyDouble in 7.0 prints %.17g (7.2 moved to the shortest round-trip form), so a
// score of 1.1 reads back as "1.1000000000000001".
std::string format_double(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

std::string to_lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ASCII only, as strcasecmp in the C locale that redis-server runs in.
bool iequals(const std::string& a, const char* b) {
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  size_t i = 0;
  for (; i < a.size() && b[i]; ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return i == a.size() && b[i] == '\0';
}

Reply err_syntax() { return Reply::error("ERR syntax error"); }
Reply err_not_integer() { return Reply::error("ERR value is not an integer or out of range"); }
Reply err_wrongtype() {
  return Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value");
}
Reply err_not_float() { return Reply::error("ERR value is not a valid float"); }
Reply err_arity(const std::string& name) {
  return Reply::error("ERR wrong number of arguments for '" + name + "' command");
}

}  // namespace lockstep::sim
