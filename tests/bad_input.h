// Bad inputs for the readers' fuzz tests (bad_input_test.cc): a seeded mutator that
// turns good inputs into the ways real files go wrong — a flipped or lost byte, a cut,
// a splice of another file, nesting ten thousand deep, a number past 64 bits, a value of
// the wrong type, a key nobody knows, broken UTF-8, a NUL, a line of 100,000 bytes.
// Everything is drawn from one seed, so an input is named by (seed, index) and the long
// run (scripts/fuzz-inputs) can hand back the exact one that failed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockstep::bad_input {

// splitmix64: tiny, seedable, and the same on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  bool chance(int percent) { return below(100) < static_cast<size_t>(percent); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  uint64_t s_;
};

// The seed of input `index` of a run seeded `seed`: each input stands alone, so the long
// run can replay one without the ones before it.
inline uint64_t input_seed(uint64_t seed, uint64_t index) {
  Rng r(seed * 0x100000001b3ULL ^ index);
  r.next();
  return r.next();
}

// Tokens a mutation may drop in: the odd corners of the formats the readers take.
inline const std::vector<std::string>& nasty_tokens() {
  static const std::vector<std::string> v = {
      "null", "true", "false", "0", "-0", "-1", "1e999", "-1e999", "1.5", "1e-400", "0.0000001",
      "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
      "99999999999999999999999999999", "NaN", "Infinity", "\"\"", "\"x\"", "[]", "{}", "[[]]",
      "{\"\":{}}", "\"\\u0000\"", "\"\\ud800\"", "\"\\udc00\\ud800\"", "\"\\uffff\"", "\"\\\"", "\\",
      ",", ":", "{", "}", "[", "]", "(", ")", "#", "#_", "#{", "##NaN", "##Inf", "##-Inf", "#inst",
      "#uuid", "#jepsen.history.Op", ";", ":nemesis", ":invoke", ":ok", ":fail", ":info", "nil",
      "\\newline", "\\u", "\\u12", "\\o777", "42N", "1.5M", "0x10", "017", "+", "-", "1/2", "'",
      "`", "~@", "^", "\"unterminated", "jepsen.util - ", "INFO  jepsen.util - 0 :invoke :read nil",
      "\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", std::string(1, '\0'),
      "\r", "\r\n", "\t", "\x0b", "\x7f", "\xc2\xa0", "\xef\xbb\xbf", "\"a\":1", "\"zz_unknown\": 1"};
  return v;
}

// One random edit of `s`; `corpus` gives pieces to splice in. The result is at most
// `size_max` bytes.
inline void mutate_once(std::string& s, const std::vector<std::string>& corpus, Rng& r, size_t size_max) {
  auto pos = [&] { return s.empty() ? size_t{0} : r.below(s.size() + 1); };
  auto span = [&](size_t at) {
    const size_t left = s.size() - at;
    return left == 0 ? size_t{0} : 1 + r.below(r.chance(80) ? std::min<size_t>(left, 16) : left);
  };
  switch (r.below(14)) {
    case 0:  // flip a byte
      if (!s.empty()) s[r.below(s.size())] = static_cast<char>(r.next());
      break;
    case 1:  // flip one bit
      if (!s.empty()) s[r.below(s.size())] ^= static_cast<char>(1 << r.below(8));
      break;
    case 2: {  // lose a stretch
      const size_t at = pos();
      s.erase(at, span(at));
      break;
    }
    case 3: {  // say a stretch twice
      const size_t at = pos();
      s.insert(at, s.substr(at, span(at)));
      break;
    }
    case 4:  // cut short
      s.resize(s.empty() ? 0 : r.below(s.size()));
      break;
    case 5: {  // a piece of another input
      const std::string& other = r.pick(corpus);
      if (other.empty()) break;
      const size_t from = r.below(other.size());
      const size_t n = 1 + r.below(std::min<size_t>(other.size() - from, 512));
      s.insert(pos(), other.substr(from, n));
      break;
    }
    case 6: {  // a suffix of another input after a prefix of this one
      const std::string& other = r.pick(corpus);
      s = s.substr(0, pos()) + other.substr(other.empty() ? 0 : r.below(other.size()));
      break;
    }
    case 7:
    case 8:  // an odd token
      s.insert(pos(), r.pick(nasty_tokens()));
      break;
    case 9: {  // a token in place of a stretch
      const size_t at = pos();
      s.replace(at, span(at), r.pick(nasty_tokens()));
      break;
    }
    case 10: {  // deep nesting, closed or not
      static const std::vector<std::string> opens = {"[", "{\"a\":", "(", "{:a ", "#{", "#_", "[{\"k\":"};
      const std::string& open = r.pick(opens);
      const size_t depth = r.chance(50) ? 1 + r.below(300) : 1000 + r.below(20000);
      std::string nest;
      for (size_t i = 0; i < depth && nest.size() < size_max; ++i) nest += open;
      if (r.chance(50)) {
        const char close = open[0] == '(' ? ')' : open[0] == '[' ? ']' : '}';
        nest += "1" + std::string(depth, close);
      }
      s.insert(pos(), nest);
      break;
    }
    case 11: {  // a very long run of one thing
      static const std::vector<std::string> units = {"a", "9", " ", "\\", "\"", ",", "\n", "\xff", "é", "\\u00e9"};
      const std::string& u = r.pick(units);
      const size_t n = r.chance(70) ? 1 + r.below(64) : 10'000 + r.below(100'000);
      std::string run;
      for (size_t i = 0; i < n && run.size() < size_max; ++i) run += u;
      s.insert(pos(), run);
      break;
    }
    case 12: {  // a number made huge, negative or fractional
      size_t at = s.find_first_of("0123456789", pos());
      if (at == std::string::npos) at = s.find_first_of("0123456789");
      if (at == std::string::npos) break;
      size_t end = at;
      while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
      static const std::vector<std::string> numbers = {
          "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551615",
          "1e308",  "1e309", "-0", "0.5", "-1", "4294967296", "2147483648", "00", "1e2", "170141183460469231731687303715884105728"};
      s.replace(at, end - at, r.pick(numbers));
      break;
    }
    default: {  // swap two stretches
      if (s.size() < 4) break;
      const size_t a = r.below(s.size() / 2), b = s.size() / 2 + r.below(s.size() / 2);
      const size_t n = std::min<size_t>({1 + r.below(32), b - a, s.size() - b});
      std::swap_ranges(s.begin() + a, s.begin() + a + n, s.begin() + b);
      break;
    }
  }
  if (s.size() > size_max) s.resize(size_max);
}

// 1 to 4 edits, most often 1.
inline std::string mutate(std::string s, const std::vector<std::string>& corpus, Rng& r, size_t size_max) {
  const size_t edits = r.chance(60) ? 1 : 2 + r.below(3);
  for (size_t i = 0; i < edits; ++i) mutate_once(s, corpus, r, size_max);
  return s;
}

// A JSON value of a random type and size, including the ones readers trip on.
inline nlohmann::json random_json(Rng& r, int depth = 0) {
  switch (r.below(depth > 2 ? 8 : 10)) {
    case 0: return nullptr;
    case 1: return r.chance(50);
    case 2: return static_cast<int64_t>(r.next());
    case 3: return r.below(1000);
    case 4: return -static_cast<int64_t>(r.below(1000));
    case 5: return static_cast<double>(r.below(1000)) / 7.0;
    case 6: return r.next();  // beyond int64 half the time
    case 7: {
      static const std::vector<std::string> words = {"", "x", "pause", "crash", "node-1", "client-2", "$", "é",
                                                     "set-px-lua", "redlock", "acquire", "read", "invoke", "ok"};
      return r.pick(words);
    }
    case 8: {
      nlohmann::json a = nlohmann::json::array();
      for (size_t i = 0, n = r.below(4); i < n; ++i) a.push_back(random_json(r, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (size_t i = 0, n = r.below(4); i < n; ++i) o["k" + std::to_string(r.below(5))] = random_json(r, depth + 1);
      return o;
    }
  }
}

// A structural edit somewhere in a JSON document: a value replaced by one of another
// type, a key removed, renamed or added, an array element doubled or dropped.
inline void mutate_json(nlohmann::ordered_json& doc, Rng& r) {
  nlohmann::ordered_json* at = &doc;
  // Walk down a random path, stopping at random or at a leaf.
  for (int step = 0; step < 8 && (at->is_object() || at->is_array()) && !at->empty() && r.chance(75); ++step) {
    if (at->is_array()) {
      at = &(*at)[r.below(at->size())];
    } else {
      auto it = at->begin();
      std::advance(it, static_cast<std::ptrdiff_t>(r.below(at->size())));
      at = &it.value();
    }
  }
  switch (r.below(6)) {
    case 0:
    case 1:
      *at = nlohmann::ordered_json(random_json(r));
      break;
    case 2:
      if (at->is_object() && !at->empty()) {
        auto it = at->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(r.below(at->size())));
        at->erase(it);
      } else if (at->is_array() && !at->empty()) {
        at->erase(at->begin() + static_cast<std::ptrdiff_t>(r.below(at->size())));
      }
      break;
    case 3:
      if (at->is_object() && !at->empty()) {
        auto it = at->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(r.below(at->size())));
        std::string key = it.key();
        nlohmann::ordered_json v = it.value();
        at->erase(it);
        key.insert(r.below(key.size() + 1), 1, "_xe"[r.below(3)]);
        (*at)[key] = v;
      }
      break;
    case 4:
      if (at->is_object()) (*at)["zz_unknown_" + std::to_string(r.below(3))] = nlohmann::ordered_json(random_json(r));
      break;
    default:
      if (at->is_array() && !at->empty()) at->push_back((*at)[r.below(at->size())]);
      break;
  }
}

}  // namespace lockstep::bad_input
