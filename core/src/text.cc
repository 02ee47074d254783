#include "lockstep/text.h"

#include <algorithm>
#include <cstdio>

namespace lockstep {

std::string format_duration(int64_t ns) {
  char buf[48];
  const double ms = static_cast<double>(ns) / 1e6;
  if (ns != 0 && ns % 1'000'000'000 == 0) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(ns / 1'000'000'000));
  } else if (ns >= 1'000'000'000 || ns <= -1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.3gs", ms / 1e3);
  } else if (ns % 1'000'000 == 0) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(ns / 1'000'000));
  } else {
    std::snprintf(buf, sizeof buf, "%.3gms", ms);
  }
  return buf;
}

}  // namespace lockstep

namespace lockstep {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> wrap_words(std::string_view text, size_t width) {
  std::vector<std::string> lines(1);
  size_t at = 0;
  while (at < text.size()) {
    const size_t space = text.find(' ', at);
    const std::string_view word = text.substr(at, space == std::string_view::npos ? std::string_view::npos : space - at);
    at = space == std::string_view::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    std::string& line = lines.back();
    if (!line.empty() && line.size() + 1 + word.size() > width) lines.emplace_back();
    if (!lines.back().empty()) lines.back() += ' ';
    lines.back() += word;
  }
  return lines;
}

std::string nearest_name(const std::string& s, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_d = 3;
  for (const auto& c : candidates) {
    size_t d = edit_distance(s, c);
    if (d < best_d) best = &c, best_d = d;
  }
  return best ? *best : "";
}

namespace {

// Bytes of the well-formed UTF-8 sequence at s[i]; 0 when none begins there (a stray
// continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  const size_t n = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
  if (n <= 1 || i + n > s.size()) return i + n > s.size() ? 0 : n;
  const unsigned char c1 = b(i + 1);
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90))
    return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string printable_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (const size_t n = utf8_sequence(s, i); n > 0) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(static_cast<unsigned char>(s[i])));
    out += buf;
    ++i;
  }
  return out;
}

}  // namespace lockstep
