// Reading a JSON document against a fixed format, for files users write by hand: every
// mistake is a Failure naming the JSON path, what was expected there and what was found,
// with a did-you-mean for a near miss. The scenario reader is built from these pieces.
//
// Failure is thrown inside a reader only; the reader's entry point catches it and turns
// it into its own error value, so nothing outside ever sees an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/text.h"

namespace lockstep::runner::json_reader {

using json = nlohmann::json;

// Thrown inside the reader only; parse_scenario turns it into a ScenarioError.
struct Failure {
  std::string path, expected, found;
};

[[noreturn]] inline void fail(std::string path, std::string expected, std::string found) {
  throw Failure{std::move(path), std::move(expected), std::move(found)};
}

bool contains(const std::vector<std::string>& v, const std::string& s);
using lockstep::join;
// A string as JSON writes it, quotes and escapes included.
std::string quote(const std::string& s);
// " (did you mean "x"?)" for the closest candidate within two edits, else "".
std::string did_you_mean(const std::string& s, const std::vector<std::string>& candidates);
// What was found, short enough for a one-line message.
std::string describe(const json& v);
// The path of a child: $.a.b, $["odd key"], $.faults[2].
std::string child(const std::string& path, const std::string& key);
std::string child(const std::string& path, size_t index);
// "a positive integer", "an integer from 1 to 9", ...
std::string int_expected(int64_t lo, int64_t hi, bool too_big);
int64_t read_int(const json& v, const std::string& path, int64_t lo, int64_t hi);
double read_number(const json& v, const std::string& path, double lo, double hi, const std::string& expected);
std::string read_choice(const json& v, const std::string& path, const std::vector<std::string>& options);

// A JSON object at a known path whose keys have all been checked against the format.
class Obj {
 public:
  Obj(const json& j, std::string path, const std::vector<std::string>& keys) : j_(j), path_(std::move(path)) {
    if (!j.is_object()) fail(path_, "an object", describe(j));
    for (const auto& [k, v] : j.items()) {
      if (contains(keys, k)) continue;
      std::string hint = did_you_mean(k, keys);
      fail(child(path_, k), hint.empty() ? "one of the keys " + join(keys) : "a known key" + hint,
           "unknown key " + quote(k));
    }
  }

  std::string at(const std::string& key) const { return child(path_, key); }
  const json* find(const std::string& key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const json& need(const std::string& key, const std::string& expected) const {
    const json* v = find(key);
    if (!v) fail(at(key), expected, "nothing");
    return *v;
  }

  int64_t integer(const std::string& key, int64_t lo, int64_t hi, std::optional<int64_t> def) const {
    const json* v = find(key);
    if (!v && def) return *def;
    if (!v) fail(at(key), int_expected(lo, hi, false), "nothing");
    return read_int(*v, at(key), lo, hi);
  }
  double number(const std::string& key, double lo, double hi, const std::string& expected,
                std::optional<double> def) const {
    const json* v = find(key);
    if (!v && def) return *def;
    return read_number(need(key, expected), at(key), lo, hi, expected);
  }
  std::string string(const std::string& key, const std::string& def, bool nonempty = true) const {
    const json* v = find(key);
    if (!v) return def;
    std::string expected = nonempty ? "a non-empty string" : "a string";
    if (!v->is_string() || (nonempty && v->get<std::string>().empty())) fail(at(key), expected, describe(*v));
    return v->get<std::string>();
  }
  std::string choice(const std::string& key, const std::vector<std::string>& options,
                     std::optional<std::string> def) const {
    const json* v = find(key);
    if (!v && def) return *def;
    return read_choice(need(key, "one of " + join(options)), at(key), options);
  }
  bool boolean(const std::string& key, bool def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_boolean()) fail(at(key), "true or false", describe(*v));
    return v->get<bool>();
  }
  const json& array(const std::string& key, const std::string& expected) const {
    const json& v = need(key, expected);
    if (!v.is_array()) fail(at(key), expected, describe(v));
    return v;
  }
  // Keys outside `allowed` are rejected with a note of what `what` does take.
  void only(const std::vector<std::string>& allowed, const std::string& what) const {
    for (const auto& [k, v] : j_.items())
      if (!contains(allowed, k)) fail(at(k), "no " + k + " in " + what + " (it takes " + join(allowed) + ")", describe(v));
  }

 private:
  const json& j_;
  std::string path_;
};

}  // namespace lockstep::runner::json_reader
