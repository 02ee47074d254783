#include "lockstep/checker/edn.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace lockstep::checker {
namespace {

// Nesting is bounded so a hostile file cannot overflow the stack.
constexpr int kMaxDepth = 64;

class EdnReader {
 public:
  explicit EdnReader(std::string_view t) : t_(t) {}

  bool read_all(nlohmann::json& out, std::string& error) {
    if (!value(out, 0)) return fail_out(error);
    skip();
    if (i_ != t_.size()) {
      why_ = "unexpected text after the value";
      return fail_out(error);
    }
    return true;
  }

 private:
  bool fail_out(std::string& error) {
    error = "column " + std::to_string(i_ + 1) + ": " + why_;
    return false;
  }
  bool fail(std::string why) {
    why_ = std::move(why);
    return false;
  }
  void skip() {
    while (i_ < t_.size()) {
      char c = t_[i_];
      if (c == ';') {  // comment to end of line
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
        ++i_;
      } else {
        return;
      }
    }
  }
  static bool symbol_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("*+!-_?<>=./:#$%&'").find(c) != std::string_view::npos;
  }
  std::string_view token() {
    size_t start = i_;
    while (i_ < t_.size() && symbol_char(t_[i_])) ++i_;
    return t_.substr(start, i_ - start);
  }

  bool value(nlohmann::json& out, int depth) {
    skip();
    if (i_ >= t_.size()) return fail("unexpected end of input, expected a value");
    if (depth > kMaxDepth) return fail("nesting deeper than 64");
    char c = t_[i_];
    if (c == '{') return map(out, depth);
    if (c == '[' || c == '(') return seq(out, depth, c == '[' ? ']' : ')');
    if (c == '"') return string(out);
    if (c == ':') return keyword(out);
    if (c == '#') return fail("sets and tagged values (#...) are not supported");
    if (std::isdigit(static_cast<unsigned char>(c)) || ((c == '-' || c == '+') && i_ + 1 < t_.size() &&
                                                         std::isdigit(static_cast<unsigned char>(t_[i_ + 1])))) {
      return number(out);
    }
    if (!symbol_char(c)) return fail(std::string("unexpected character '") + c + "'");
    size_t start = i_;
    std::string_view s = token();
    if (s == "nil") out = nullptr;
    else if (s == "true") out = true;
    else if (s == "false") out = false;
    else {
      i_ = start;
      return fail("unsupported symbol '" + std::string(s) + "' (expected nil, true, false)");
    }
    return true;
  }

  bool keyword(nlohmann::json& out) {
    ++i_;
    std::string_view s = token();
    if (s.empty()) return fail("empty keyword");
    out = std::string(s);
    return true;
  }

  bool number(nlohmann::json& out) {
    size_t start = i_;
    if (t_[i_] == '+' || t_[i_] == '-') ++i_;
    while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.')) ++i_;
    std::string s(t_.substr(start, i_ - start));
    if (!s.empty() && s[0] == '+') s.erase(0, 1);
    if (!s.empty() && s.back() == 'N') s.pop_back();  // EDN bigint suffix
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) {
      out = v;
      return true;
    }
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || s.empty()) {
      i_ = start;
      return fail("malformed number '" + s + "'");
    }
    out = d;
    return true;
  }

  bool string(nlohmann::json& out) {
    ++i_;
    std::string s;
    while (i_ < t_.size() && t_[i_] != '"') {
      char c = t_[i_++];
      if (c != '\\') {
        s += c;
        continue;
      }
      if (i_ >= t_.size()) break;
      char e = t_[i_++];
      switch (e) {
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'r': s += '\r'; break;
        case '"': s += '"'; break;
        case '\\': s += '\\'; break;
        default: --i_; return fail(std::string("unknown string escape '\\") + e + "'");
      }
    }
    if (i_ >= t_.size()) return fail("unterminated string");
    ++i_;
    out = std::move(s);
    return true;
  }

  bool seq(nlohmann::json& out, int depth, char close) {
    ++i_;
    out = nlohmann::json::array();
    for (;;) {
      skip();
      if (i_ >= t_.size()) return fail(std::string("unterminated sequence, expected '") + close + "'");
      if (t_[i_] == close) {
        ++i_;
        return true;
      }
      nlohmann::json v;
      if (!value(v, depth + 1)) return false;
      out.push_back(std::move(v));
    }
  }

  bool map(nlohmann::json& out, int depth) {
    ++i_;
    out = nlohmann::json::object();
    for (;;) {
      skip();
      if (i_ >= t_.size()) return fail("unterminated map, expected '}'");
      if (t_[i_] == '}') {
        ++i_;
        return true;
      }
      nlohmann::json k, v;
      if (!value(k, depth + 1)) return false;
      skip();
      if (i_ < t_.size() && t_[i_] == '}') return fail("map has a key without a value");
      if (!value(v, depth + 1)) return false;
      out[k.is_string() ? k.get<std::string>() : k.dump()] = std::move(v);
    }
  }

  std::string_view t_;
  size_t i_ = 0;
  std::string why_;
};

}  // namespace

bool parse_edn(std::string_view text, nlohmann::json& out, std::string& error) {
  return EdnReader(text).read_all(out, error);
}

}  // namespace lockstep::checker
