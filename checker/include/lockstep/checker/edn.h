// A reader for EDN (extensible data notation), the format Jepsen and Knossos write
// histories in. It reads the whole notation that such files use and turns it into JSON:
//
//   nil true false          null, true, false
//   42  -7  +3  42N         integers (an integer beyond 64 bits becomes a double)
//   1.5  1e3  1.5M          doubles
//   "a\"b\n\u00e9"          strings, with EDN's escapes
//   \a \newline \u00e9      characters, as one-character strings
//   :invoke  :a/b           keywords: their name without the colon ("invoke", "a/b")
//   foo  jepsen.core/run    symbols: their name ("foo")
//   [1 2]  (1 2)  #{1 2}    vectors, lists and sets: arrays, in the order written
//   {:a 1, "b" 2}           maps: objects; keyword and string keys by name, others by
//                           their JSON text
//   #inst "2024-01-01"      tagged values: the value that follows the tag, so #inst and
//   #jepsen.history.Op{…}   #uuid are their strings and a record is its map
//   ##Inf ##NaN             symbolic values: the strings "##Inf", "##NaN"
//
// Commas are whitespace, `;` starts a comment to the end of the line, and `#_` discards
// the form after it. Errors say where, as "line:column: why" (both from 1; columns count
// bytes), and nesting is bounded so no input can exhaust the stack.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace lockstep::checker {

// Reads EDN forms one after another from a text, for callers that walk a sequence of
// forms themselves (a history written as many top-level maps, or one vector of them).
class EdnReader {
 public:
  // Reads `text` from byte `offset`. `first_line` is the line number of the text's first
  // line in its file, for a reader given one line of a larger file.
  explicit EdnReader(std::string_view text, size_t offset = 0, size_t first_line = 1)
      : t_(text), i_(offset), first_line_(first_line) {}

  // Skips whitespace, commas, comments and discarded (#_) forms. Fails only when a
  // discarded form is itself malformed.
  bool skip(std::string& error);
  bool at_end() const { return i_ >= t_.size(); }
  // The next character, or '\0' at the end.
  char peek() const { return at_end() ? '\0' : t_[i_]; }
  // Consumes the next character (an opening or closing bracket the caller handles).
  void advance() { ++i_; }
  size_t offset() const { return i_; }

  // Reads one form at the cursor (after skipping what precedes it).
  bool read(nlohmann::json& out, std::string& error);

  // "line:column" of a byte offset in the text.
  std::string where(size_t offset) const;

 private:
  bool fail(std::string why, size_t at);
  bool fail(std::string why) { return fail(std::move(why), i_); }
  bool skip_space(int depth);
  bool value(nlohmann::json& out, int depth);
  bool dispatch(nlohmann::json& out, int depth);
  bool collection(nlohmann::json& out, int depth, char close, const char* what);
  bool map(nlohmann::json& out, int depth);
  bool string(nlohmann::json& out);
  bool character(nlohmann::json& out);
  bool number(nlohmann::json& out);
  bool symbol(nlohmann::json& out);
  std::string_view token();

  std::string_view t_;
  size_t i_ = 0;
  size_t first_line_ = 1;
  std::string error_;  // set by fail, with its position
};

// Parses exactly one EDN value from `text` (whitespace, commas and comments around it are
// allowed). On failure returns false and sets `error` to "line:column: why".
bool parse_edn(std::string_view text, nlohmann::json& out, std::string& error);

}  // namespace lockstep::checker
