#include "scenario/json_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "lockstep/text.h"

namespace lockstep::runner::json_reader {
namespace {

// Above this, a range is better described by its kind ("a positive integer") than by
// its bounds.
constexpr int64_t kWideRange = 1000;

}  // namespace

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string quote(const std::string& s) {
  return json(s).dump(-1, ' ', true, json::error_handler_t::replace);
}

// " (did you mean "x"?)" for the closest candidate within two edits, else "".
std::string did_you_mean(const std::string& s, const std::vector<std::string>& candidates) {
  std::string best = nearest_name(s, candidates);
  return best.empty() ? "" : " (did you mean " + quote(best) + "?)";
}

// What was found, short enough for a one-line message.
std::string describe(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string d = v.dump(-1, ' ', true, json::error_handler_t::replace);
  constexpr size_t kMax = 48;
  if (d.size() > kMax) d = d.substr(0, kMax - 4) + (v.is_string() ? "...\"" : "...");
  return d;
}

std::string child(const std::string& path, const std::string& key) {
  bool plain = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0])) &&
               std::all_of(key.begin(), key.end(), [](char c) {
                 return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
               });
  return plain ? path + "." + key : path + "[" + quote(key) + "]";
}

std::string child(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string int_expected(int64_t lo, int64_t hi, bool too_big) {
  if (hi - lo < kWideRange) return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (too_big) return "an integer at most " + std::to_string(hi);
  if (lo == 0) return "a non-negative integer";
  if (lo == 1) return "a positive integer";
  if (lo == -hi) return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  return "an integer at least " + std::to_string(lo);
}

int64_t read_int(const json& v, const std::string& path, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) fail(path, int_expected(lo, hi, false), describe(v));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    fail(path, int_expected(lo, hi, true), describe(v));
  int64_t x = v.get<int64_t>();
  if (x < lo) fail(path, int_expected(lo, hi, false), describe(v));
  if (x > hi) fail(path, int_expected(lo, hi, true), describe(v));
  return x;
}

double read_number(const json& v, const std::string& path, double lo, double hi, const std::string& expected) {
  if (!v.is_number()) fail(path, expected, describe(v));
  double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) fail(path, expected, describe(v));
  return x;
}

std::string read_choice(const json& v, const std::string& path, const std::vector<std::string>& options) {
  std::string expected = "one of " + join(options);
  if (!v.is_string()) fail(path, expected, describe(v));
  auto s = v.get<std::string>();
  if (!contains(options, s)) fail(path, expected + did_you_mean(s, options), describe(v));
  return s;
}


}  // namespace lockstep::runner::json_reader
