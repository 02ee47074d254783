#include "lockstep/checker/edn.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>

#include "text_util.h"

namespace lockstep::checker {
namespace {

// Nesting is bounded so a hostile file cannot overflow the stack: every recursion (a
// nested collection, a tag, a discarded form) goes one level deeper.
constexpr int kMaxDepth = 64;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == ',';
}

// Characters a symbol or keyword may contain; bytes of UTF-8 sequences count, so names in
// any script read (they are checked to be well-formed UTF-8 afterwards).
bool symbol_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || u >= 0x80 || std::string_view("*+!-_?<>=./:#$%&'|").find(c) != std::string_view::npos;
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string EdnReader::where(size_t offset) const {
  size_t line = first_line_, line_start = 0;
  for (size_t i = 0; i < offset && i < t_.size(); ++i) {
    if (t_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(offset - line_start + 1);
}

bool EdnReader::fail(std::string why, size_t at) {
  error_ = where(at) + ": " + why;
  return false;
}

bool EdnReader::skip(std::string& error) {
  if (skip_space(0)) return true;
  error = error_;
  return false;
}

bool EdnReader::read(nlohmann::json& out, std::string& error) {
  if (value(out, 0)) return true;
  error = error_;
  return false;
}

// Discards are counted rather than read recursively, so a long run of "#_" costs no
// stack; each discarded form is read one level deeper than where it stands.
bool EdnReader::skip_space(int depth) {
  size_t pending = 0;
  for (;;) {
    while (i_ < t_.size()) {
      if (is_space(t_[i_])) {
        ++i_;
      } else if (t_[i_] == ';') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
    if (i_ + 1 < t_.size() && t_[i_] == '#' && t_[i_ + 1] == '_') {
      i_ += 2;
      ++pending;
      continue;
    }
    if (pending == 0) return true;
    if (at_end()) return fail("#_ has no form to discard");
    nlohmann::json ignored;
    if (!dispatch(ignored, depth + 1)) return false;
    --pending;
  }
}

bool EdnReader::value(nlohmann::json& out, int depth) {
  if (!skip_space(depth)) return false;
  if (at_end()) return fail("unexpected end of input, expected a value");
  return dispatch(out, depth);
}

bool EdnReader::dispatch(nlohmann::json& out, int depth) {
  if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
  char c = t_[i_];
  switch (c) {
    case '{': return map(out, depth);
    case '[': return collection(out, depth, ']', "vector");
    case '(': return collection(out, depth, ')', "list");
    case '"': return string(out);
    case '\\': return character(out);
    case ')':
    case ']':
    case '}': return fail(std::string("unexpected '") + c + "' with nothing open to close");
    default: break;
  }
  if (c == '#') {
    size_t at = i_;
    char n = i_ + 1 < t_.size() ? t_[i_ + 1] : '\0';
    if (n == '{') {
      ++i_;
      return collection(out, depth, '}', "set");
    }
    if (n == '#') {  // ##Inf, ##-Inf, ##NaN: JSON has no such numbers
      i_ += 2;
      std::string_view name = token();
      if (name.empty()) return fail("'##' must be followed by Inf, -Inf or NaN", at);
      // Like every name the reader keeps: a history's values must print as JSON.
      if (!valid_utf8(name)) return fail("symbolic value is not valid UTF-8", at);
      out = "##" + std::string(name);
      return true;
    }
    if (!std::isalpha(static_cast<unsigned char>(n))) {
      return fail(std::string("unexpected character after '#'") + (n ? std::string(" '") + n + "'" : ""), at);
    }
    ++i_;
    std::string tag(token());
    if (!skip_space(depth + 1)) return false;
    if (at_end()) return fail("tag #" + tag + " has no value", at);
    return dispatch(out, depth + 1);  // the tag is dropped: #inst "…" reads as its string
  }
  if (is_digit(c) || ((c == '-' || c == '+') && i_ + 1 < t_.size() && is_digit(t_[i_ + 1]))) return number(out);
  if (c == ':') {
    size_t at = i_;
    while (i_ < t_.size() && t_[i_] == ':') ++i_;
    std::string_view name = token();
    if (name.empty()) return fail("empty keyword", at);
    if (!valid_utf8(name)) return fail("keyword is not valid UTF-8", at);
    out = std::string(name);
    return true;
  }
  if (symbol_char(c)) return symbol(out);
  if (static_cast<unsigned char>(c) < 0x20) return fail("unexpected control character " + std::to_string(int(c)));
  return fail(std::string("unexpected character '") + c + "'");
}

std::string_view EdnReader::token() {
  size_t start = i_;
  while (i_ < t_.size() && symbol_char(t_[i_])) ++i_;
  return t_.substr(start, i_ - start);
}

bool EdnReader::symbol(nlohmann::json& out) {
  size_t at = i_;
  std::string_view s = token();
  if (s == "nil") out = nullptr;
  else if (s == "true") out = true;
  else if (s == "false") out = false;
  else if (!valid_utf8(s)) return fail("symbol is not valid UTF-8", at);
  else out = std::string(s);
  return true;
}

bool EdnReader::number(nlohmann::json& out) {
  size_t start = i_;
  ++i_;  // a sign or the first digit
  while (i_ < t_.size()) {
    char c = t_[i_];
    bool exponent_sign = (c == '+' || c == '-') && (t_[i_ - 1] == 'e' || t_[i_ - 1] == 'E');
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '/' && !exponent_sign) break;
    ++i_;
  }
  std::string s(t_.substr(start, i_ - start));
  if (s.find('/') != std::string::npos) {  // a ratio such as 1/3: kept as written
    out = s;
    return true;
  }
  if (s[0] == '+') s.erase(0, 1);
  bool big_decimal = !s.empty() && s.back() == 'M';
  if (!s.empty() && (s.back() == 'N' || big_decimal)) s.pop_back();
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!big_decimal && ec == std::errc() && p == s.data() + s.size()) {
    out = v;
    return true;
  }
  char* end = nullptr;
  double d = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) return fail("malformed number '" + std::string(t_.substr(start, i_ - start)) + "'", start);
  out = d;
  return true;
}

bool EdnReader::string(nlohmann::json& out) {
  size_t open = i_++;
  std::string s;
  for (;;) {
    if (i_ >= t_.size()) return fail("unterminated string (opened at " + where(open) + ")");
    char c = t_[i_++];
    if (c == '"') break;
    if (c != '\\') {
      s += c;
      continue;
    }
    if (i_ >= t_.size()) return fail("unterminated string (opened at " + where(open) + ")");
    size_t esc = i_ - 1;
    char e = t_[i_++];
    switch (e) {
      case 'n': s += '\n'; break;
      case 't': s += '\t'; break;
      case 'r': s += '\r'; break;
      case 'b': s += '\b'; break;
      case 'f': s += '\f'; break;
      case '"': s += '"'; break;
      case '\\': s += '\\'; break;
      case 'u': {
        uint32_t cp = 0;
        for (int k = 0; k < 4; ++k) {
          int h = i_ < t_.size() ? hex_digit(t_[i_]) : -1;
          if (h < 0) return fail("\\u must be followed by four hex digits", esc);
          cp = cp * 16 + static_cast<uint32_t>(h);
          ++i_;
        }
        // A surrogate pair spells one code point beyond the first plane.
        if (cp >= 0xD800 && cp < 0xDC00 && i_ + 5 < t_.size() && t_[i_] == '\\' && t_[i_ + 1] == 'u') {
          uint32_t lo = 0;
          bool ok = true;
          for (int k = 0; k < 4 && ok; ++k) {
            int h = hex_digit(t_[i_ + 2 + static_cast<size_t>(k)]);
            ok = h >= 0;
            lo = lo * 16 + static_cast<uint32_t>(h);
          }
          if (ok && lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i_ += 6;
          }
        }
        if (cp >= 0xD800 && cp < 0xE000) return fail("\\u escape is a lone surrogate", esc);
        append_utf8(s, cp);
        break;
      }
      default: return fail(std::string("unknown string escape '\\") + e + "'", esc);
    }
  }
  if (!valid_utf8(s)) return fail("string is not valid UTF-8", open);
  out = std::move(s);
  return true;
}

bool EdnReader::character(nlohmann::json& out) {
  size_t at = i_++;
  if (at_end()) return fail("'\\' at the end of input", at);
  if (!std::isalpha(static_cast<unsigned char>(t_[i_]))) {
    // One character: a byte, or a whole UTF-8 sequence.
    size_t len = utf8_length(static_cast<unsigned char>(t_[i_]));
    std::string_view c = t_.substr(i_, len);
    if (len == 0 || c.size() != len || !valid_utf8(c)) return fail("character is not valid UTF-8", at);
    i_ += len;
    out = std::string(c);
    return true;
  }
  size_t start = i_;
  while (i_ < t_.size() && std::isalnum(static_cast<unsigned char>(t_[i_]))) ++i_;
  std::string_view name = t_.substr(start, i_ - start);
  static const std::pair<std::string_view, const char*> kNamed[] = {
      {"newline", "\n"}, {"space", " "}, {"tab", "\t"}, {"return", "\r"}, {"backspace", "\b"}, {"formfeed", "\f"}};
  if (name.size() == 1) {
    out = std::string(name);
    return true;
  }
  for (const auto& [n, v] : kNamed) {
    if (name == n) {
      out = v;
      return true;
    }
  }
  if (name.size() == 5 && name[0] == 'u') {
    uint32_t cp = 0;
    for (size_t k = 1; k < 5 && cp != UINT32_MAX; ++k) {
      int h = hex_digit(name[k]);
      cp = h < 0 ? UINT32_MAX : cp * 16 + static_cast<uint32_t>(h);
    }
    if (cp != UINT32_MAX && (cp < 0xD800 || cp >= 0xE000)) {
      std::string s;
      append_utf8(s, cp);
      out = std::move(s);
      return true;
    }
  }
  return fail("unknown character name '\\" + std::string(name) + "'", at);
}

bool EdnReader::collection(nlohmann::json& out, int depth, char close, const char* what) {
  size_t open = i_++;
  out = nlohmann::json::array();
  for (;;) {
    if (!skip_space(depth + 1)) return false;
    if (at_end()) {
      return fail(std::string("unterminated ") + what + " (opened at " + where(open) + "), expected '" + close + "'");
    }
    char c = t_[i_];
    if (c == close) {
      ++i_;
      return true;
    }
    if (c == ')' || c == ']' || c == '}') {
      return fail(std::string("unexpected '") + c + "', expected '" + close + "' to close the " + what +
                  " opened at " + where(open));
    }
    nlohmann::json v;
    if (!dispatch(v, depth + 1)) return false;
    out.push_back(std::move(v));
  }
}

bool EdnReader::map(nlohmann::json& out, int depth) {
  size_t open = i_++;
  out = nlohmann::json::object();
  auto closes = [&](char c) -> int {  // 1: this map's '}', -1: a wrong bracket, 0: neither
    if (c == '}') return 1;
    return c == ')' || c == ']' ? -1 : 0;
  };
  auto unterminated = [&] { return fail("unterminated map (opened at " + where(open) + "), expected '}'"); };
  auto wrong_close = [&](char c) {
    return fail(std::string("unexpected '") + c + "', expected '}' to close the map opened at " + where(open));
  };
  for (;;) {
    if (!skip_space(depth + 1)) return false;
    if (at_end()) return unterminated();
    if (int k = closes(t_[i_]); k != 0) {
      if (k < 0) return wrong_close(t_[i_]);
      ++i_;
      return true;
    }
    size_t key_at = i_;
    nlohmann::json key, v;
    if (!dispatch(key, depth + 1) || !skip_space(depth + 1)) return false;
    if (at_end()) return unterminated();
    if (int k = closes(t_[i_]); k != 0) {
      if (k < 0) return wrong_close(t_[i_]);
      return fail("map key " + key.dump() + " has no value", key_at);
    }
    if (!dispatch(v, depth + 1)) return false;
    out[key.is_string() ? key.get<std::string>() : key.dump()] = std::move(v);
  }
}

bool parse_edn(std::string_view text, nlohmann::json& out, std::string& error) {
  EdnReader r(text);
  if (!r.read(out, error) || !r.skip(error)) return false;
  if (!r.at_end()) {
    error = r.where(r.offset()) + ": unexpected text after the value";
    return false;
  }
  return true;
}

}  // namespace lockstep::checker
