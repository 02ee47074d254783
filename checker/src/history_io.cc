// Reading history files: format names, detection, lockstep's JSON lines, and dispatch to
// the Jepsen readers (history_edn.cc, history_log.cc).
#include "lockstep/checker/history_io.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "history_readers.h"
#include "text_util.h"

namespace lockstep::checker {

const char* to_string(Format f) {
  switch (f) {
    case Format::Auto: return "auto";
    case Format::Json: return "json";
    case Format::Edn: return "edn";
    case Format::JepsenLog: return "jepsen-log";
  }
  return "?";
}

bool parse_format(const std::string& s, Format& out) {
  static const std::pair<const char*, Format> kNames[] = {{"auto", Format::Auto}, {"json", Format::Json},
                                                          {"jsonl", Format::Json}, {"edn", Format::Edn},
                                                          {"jepsen-log", Format::JepsenLog},
                                                          {"log", Format::JepsenLog}};
  for (const auto& [n, f] : kNames) {
    if (s == n) {
      out = f;
      return true;
    }
  }
  return false;
}

namespace detail {
namespace {

// The JSON library reads any depth but writes (and so compares) values recursively, so
// a hostile line nested a million deep would overflow the stack later. Lines are checked
// first, as EDN is, against the same bound. Returns the column of the first bracket past
// it, or 0.
constexpr int kMaxJsonDepth = 64;
size_t too_deep(std::string_view line) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return 0;
}

}  // namespace

bool read_json_lines(std::string_view text, const std::string& name, History& out, std::string& error) {
  History h;
  size_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (trim(line).empty()) continue;
    auto fail = [&](size_t column, const std::string& why) {
      error = name + ":" + std::to_string(line_no) + ":" + std::to_string(column) + ": " + why;
      return false;
    };
    if (size_t at = too_deep(line)) return fail(at, "nesting deeper than " + std::to_string(kMaxJsonDepth));
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      // what() is "[json.exception.parse_error.101] parse error at line 1, column 9: why".
      std::string what = e.what();
      size_t colon = what.find(": ", what.find("column"));
      return fail(e.byte == 0 ? 1 : e.byte, "not valid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)));
    } catch (const nlohmann::json::out_of_range& e) {
      // A number beyond a double (1e309): nlohmann says which, but not where.
      std::string what = e.what();
      const size_t quote = what.find('\'');
      const std::string number = quote == std::string::npos ? "" : what.substr(quote + 1, what.size() - quote - 2);
      const size_t at = number.empty() ? std::string_view::npos : line.find(number);
      return fail(at == std::string_view::npos ? 1 : at + 1,
                  "not valid JSON: a number too large for a double" + (number.empty() ? "" : " (" + number + ")"));
    }
    Event ev;
    std::string why;
    if (!from_json(j, ev, why)) return fail(1, why);
    h.events.push_back(std::move(ev));
  }
  out = std::move(h);
  return true;
}

}  // namespace detail

// Skips whitespace and ';' comment lines, so an EDN file that opens with a comment is
// still recognised by its first form.
Format detect_format(std::string_view text) {
  size_t i = 0;
  for (;;) {
    while (i < text.size() && std::string_view(" \t\r\n").find(text[i]) != std::string_view::npos) ++i;
    if (i < text.size() && text[i] == ';') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    break;
  }
  if (i >= text.size()) return Format::Json;
  size_t eol = text.find('\n', i);
  std::string_view line = text.substr(i, eol == std::string_view::npos ? std::string_view::npos : eol - i);
  char c = text[i];
  if (c == '{') {
    size_t j = text.find_first_not_of(" \t\r\n", i + 1);
    return j != std::string_view::npos && (text[j] == '"' || text[j] == '}') ? Format::Json : Format::Edn;
  }
  // A log line may open with a bracketed thread name; it still names jepsen.util.
  if ((c == '[' || c == '(' || c == '#') && line.find("jepsen.util - ") == std::string_view::npos) return Format::Edn;
  return Format::JepsenLog;
}

bool parse_history_text(std::string_view text, const std::string& name, Format fmt, History& out,
                        std::string& error) {
  if (fmt == Format::Auto) fmt = detect_format(text);
  bool ok = false;
  switch (fmt) {
    case Format::Json: ok = detail::read_json_lines(text, name, out, error); break;
    case Format::Edn: ok = detail::read_edn_history(text, name, out, error); break;
    default: ok = detail::read_jepsen_log(text, name, out, error); break;
  }
  // The readers quote what they stopped at, which may be any bytes at all.
  if (!ok) error = printable_utf8(error);
  return ok;
}

bool read_history(const std::string& path, Format fmt, History& out, std::string& error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory, not a history file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open file";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = path + ": cannot read file";
    return false;
  }
  return parse_history_text(ss.str(), path, fmt, out, error);
}

}  // namespace lockstep::checker
