#include "lockstep/live/resp_frame.h"

#include <charconv>
#include <cstdint>

namespace lockstep::live {
namespace {

// Nesting deeper than this is not something a Redis server sends; stopping there keeps a
// hostile stream from recursing without bound.
constexpr int kDepthMax = 64;

struct Cursor {
  std::string_view s;
  size_t pos = 0;
  bool incomplete = false;
  bool bad = false;

  // The line at pos (without its CRLF); moves past it.
  std::optional<std::string_view> line() {
    const size_t end = s.find("\r\n", pos);
    if (end == std::string_view::npos) {
      incomplete = true;
      return std::nullopt;
    }
    std::string_view l = s.substr(pos, end - pos);
    pos = end + 2;
    return l;
  }

  std::optional<int64_t> number() {
    auto l = line();
    if (!l) return std::nullopt;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(l->data(), l->data() + l->size(), v);
    if (ec != std::errc() || p != l->data() + l->size()) {
      bad = true;
      return std::nullopt;
    }
    return v;
  }

  std::optional<std::string_view> blob(int64_t len) {
    if (len < 0) return std::string_view();
    if (s.size() - pos < static_cast<size_t>(len) + 2) {
      incomplete = true;
      return std::nullopt;
    }
    std::string_view b = s.substr(pos, static_cast<size_t>(len));
    if (s.substr(pos + static_cast<size_t>(len), 2) != "\r\n") {
      bad = true;
      return std::nullopt;
    }
    pos += static_cast<size_t>(len) + 2;
    return b;
  }
};

// Reads one value; `out` (if given) receives it as a Reply.
bool read_value(Cursor& c, Reply* out, int depth) {
  if (depth > kDepthMax) {
    c.bad = true;
    return false;
  }
  if (c.pos >= c.s.size()) {
    c.incomplete = true;
    return false;
  }
  const char type = c.s[c.pos++];
  switch (type) {
    case '+':
    case '-':
    case ',':
    case '(':
    case '#':
    case '_': {
      auto l = c.line();
      if (!l) return false;
      if (!out) return true;
      if (type == '+') *out = Reply::status(std::string(*l));
      if (type == '-') *out = Reply::error(std::string(*l));
      if (type == ',' || type == '(') *out = Reply::bulk(std::string(*l));
      if (type == '#') *out = Reply::integer_of(*l == "t" ? 1 : 0);
      if (type == '_') *out = Reply::nil();
      return true;
    }
    case ':': {
      auto n = c.number();
      if (!n) return false;
      if (out) *out = Reply::integer_of(*n);
      return true;
    }
    case '$':
    case '!':
    case '=': {
      auto n = c.number();
      if (!n) return false;
      auto b = c.blob(*n);
      if (!b) return false;
      if (out) {
        if (*n < 0) {
          *out = Reply::nil();
        } else if (type == '!') {
          *out = Reply::error(std::string(*b));
        } else {
          *out = Reply::bulk(std::string(type == '=' && b->size() >= 4 ? b->substr(4) : *b));
        }
      }
      return true;
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      auto n = c.number();
      if (!n) return false;
      if (*n < 0) {
        if (out) *out = Reply::nil();
        return true;
      }
      const int64_t count = (type == '%' || type == '|') ? *n * 2 : *n;
      std::vector<Reply> elements;
      for (int64_t i = 0; i < count; ++i) {
        Reply e;
        if (!read_value(c, out ? &e : nullptr, depth + 1)) return false;
        if (out) elements.push_back(std::move(e));
      }
      // An attribute annotates the value that follows it; the value is the message.
      if (type == '|') return read_value(c, out, depth + 1);
      if (out) *out = Reply::array(std::move(elements));
      return true;
    }
    default:
      c.bad = true;
      return false;
  }
}

bool inline_command(std::string_view bytes) { return !bytes.empty() && bytes[0] != '*'; }

}  // namespace

std::optional<size_t> resp_message_length(std::string_view bytes) {
  if (inline_command(bytes) && (bytes[0] < '!' || bytes[0] > '~' || std::string_view("+-:$*,(#_!=~>%|").find(bytes[0]) == std::string_view::npos)) {
    // An inline command: one line.
    const size_t end = bytes.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    return end + 1;
  }
  Cursor c{bytes};
  if (read_value(c, nullptr, 0)) return c.pos;
  if (c.incomplete && !c.bad) return std::nullopt;
  return size_t{0};
}

std::vector<std::string> resp_command(std::string_view message) {
  std::vector<std::string> argv;
  if (inline_command(message)) {
    // redis-cli and telnet users send "PING\r\n": words separated by spaces.
    std::string_view line = message.substr(0, message.find("\r\n"));
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && line[i] == ' ') ++i;
      size_t j = i;
      while (j < line.size() && line[j] != ' ') ++j;
      if (j > i) argv.emplace_back(line.substr(i, j - i));
      i = j;
    }
    return argv;
  }
  Reply r = resp_reply(message);
  if (r.type != Reply::Type::Array) return {};
  for (auto& e : r.elements) {
    if (e.type != Reply::Type::Bulk) return {};
    argv.push_back(std::move(e.str));
  }
  return argv;
}

Reply resp_reply(std::string_view message) {
  Cursor c{message};
  Reply r;
  if (!read_value(c, &r, 0)) return Reply::error("LOCKSTEP unreadable reply");
  return r;
}

}  // namespace lockstep::live
