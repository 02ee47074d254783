// Internal: small text helpers shared by the history readers. Every string a reader
// keeps must be valid UTF-8, because nlohmann::json refuses to serialize anything else
// (it throws), and the checker serializes values to compare and to report them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::checker {

// Bytes in the UTF-8 sequence that begins with `lead`; 0 when `lead` cannot begin one.
inline size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead < 0xE0) return 2;
  if (lead >= 0xE0 && lead < 0xF0) return 3;
  if (lead >= 0xF0 && lead < 0xF5) return 4;
  return 0;
}

// Whether `s` is well-formed UTF-8: no overlong forms, no surrogates, nothing past U+10FFFF.
inline bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_length(c);
    if (n == 0 || i + n > s.size()) return false;
    if (n == 1) {
      ++i;
      continue;
    }
    auto c1 = static_cast<unsigned char>(s[i + 1]);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) {
      return false;
    }
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

inline void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// `s` with every byte that is not part of well-formed UTF-8 written as \xNN: an error
// quotes the input it stopped at, and `lockstep check --json` prints errors as JSON.
// (core's lockstep::printable_utf8 does the same; the checker depends on nothing of ours.)
inline std::string printable_utf8(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(static_cast<unsigned char>(s[i]));
    if (n > 0 && i + n <= s.size() && valid_utf8(s.substr(i, n))) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    const auto b = static_cast<unsigned char>(s[i++]);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

// `s` without leading and trailing spaces, tabs and line ends.
inline std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace lockstep::checker
