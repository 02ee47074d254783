// Human forms shared by everything that prints: the CLI, the fault plan's sentences and
// the report writers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

// The strings of `names` in order with `sep` between them: "a, b, c".
template <typename Strings>
std::string join(const Strings& names, std::string_view sep = ", ") {
  std::string out;
  bool first = true;
  for (const auto& n : names) {
    if (!first) out += sep;
    out += n;
    first = false;
  }
  return out;
}

// `text` broken into lines of at most `width` columns at spaces (a word longer than that
// gets a line of its own); never empty.
std::vector<std::string> wrap_words(std::string_view text, size_t width);

// "1.5s", "250ms", "12.5ms": a duration or instant in the shortest honest form.
std::string format_duration(int64_t ns);

// The candidate closest to `s` within two edits (insert, delete, replace a character),
// the first of equals; "" when none is that close. The did-you-mean of every message
// about a misspelt name, in files and on the command line alike.
std::string nearest_name(const std::string& s, const std::vector<std::string>& candidates);

// `s` with every byte that is not part of well-formed UTF-8 written as \xNN. Messages
// quote bad input, and a message must still print in a JSON or XML report, which take
// UTF-8 only (nlohmann::json throws on anything else).
std::string printable_utf8(std::string_view s);

}  // namespace lockstep
