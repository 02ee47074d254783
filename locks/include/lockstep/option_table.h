// One declared option of a lock: its name as a scenario spells it in `lock.options`, its
// type, range and default, and one line of meaning. Lockstep's own algorithms and the
// library profiles each carry a table of these; the scenario reader checks every option a
// file gives against its lock's table, and the lock reads its options through the same
// table, so an option the reader accepts is one the lock uses.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockstep {

struct LockOption {
  enum class Type {
    Integer,  // a JSON integer in [min, max]
    Number,   // any JSON number in [min, max]
    Boolean,
    Choice,   // one of `choices`
    NumberOrNull,  // a number in [min, max], or null where the library takes None/undefined
  };
  std::string name;
  Type type = Type::Integer;
  nlohmann::json default_value;  // null: no fixed default (the library's None, or derived, as `meaning` says)
  double min = 0;
  double max = 0;
  std::vector<std::string> choices;
  // The option is a duration the fuzzer may scale with the lease; how many of its units
  // make a millisecond is `ms_per_unit` (1 for milliseconds, 1000 for seconds).
  bool duration = false;
  double ms_per_unit = 1;
  std::string meaning;  // one line, for `lockstep profiles --options`
  // The values of the lock's own `kind` option this option applies to; empty: every kind.
  // Beside another kind the lock would ignore it, so the scenario reader refuses it.
  std::vector<std::string> kinds = {};
};

inline bool applies_to_kind(const LockOption& o, const std::string& kind) {
  return o.kinds.empty() || std::find(o.kinds.begin(), o.kinds.end(), kind) != o.kinds.end();
}

// An integer option in [min, max] with a fixed default: what most locks take.
LockOption integer_option(std::string name, int64_t default_value, int64_t min, int64_t max, std::string meaning);

}  // namespace lockstep
