// What redis-server 7.0.15 allocates for a key and its value, and MEMORY USAGE, which
// reports it (object.c objectComputeSize). The simulation has no allocator, so it works
// the figures out from the same rules the server's allocations follow:
//
// - jemalloc 5.3 (what Debian's redis-server links) hands out size classes: 8, then
//   multiples of 16 up to 128, then four classes per doubling (160, 192, 224, 256, 320…).
// - An sds string has a header whose size depends on its length when made (sdsReqType):
//   1 byte below 32 bytes (type 5, which cannot hold spare room), 3 below 256, 5 below
//   64 KiB, 9 below 4 GiB; an empty sds takes the 3-byte one. Key names are sds copies
//   made to their length, so a 5-byte key takes 1 + 5 + 1 = 7 bytes, class 8, where a
//   3-byte header would make it 9 and class 16.
// - A string value is an integer (the 16-byte robj alone), an embstr up to 44 bytes (robj,
//   3-byte header, bytes and NUL in one allocation) or a robj and a raw sds. APPEND turns
//   it into a raw sds and grows it greedily (twice what it needs below 1 MiB), so its
//   allocation is state, kept in the value (StrEnc::Raw).
// - Small hashes, sorted sets and lists are listpacks (one allocation: a 6-byte header,
//   the entries, an end byte), every insert or delete reallocating to the exact size. A
//   list's listpack hangs from a quicklist node. Sets are intsets (an 8-byte header and
//   2, 4 or 8 bytes per member) or hash tables.
//
// MEMORY USAGE counts the dictEntry as its 24 bytes; jemalloc's class for it is 32, which
// is what used_memory grows by. Hash tables and sampling follow objectComputeSize: the
// average of the first `samples` elements times their count.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "redis_impl.h"

namespace lockstep::sim {

int64_t alloc_size(int64_t n) {
  if (n <= 8) return 8;
  if (n <= 128) return (n + 15) / 16 * 16;
  const int shift = 63 - __builtin_clzll(static_cast<unsigned long long>(n - 1));
  const int64_t step = int64_t{1} << (shift - 2);
  return (n + step - 1) / step * step;
}

int sds_header(int64_t len) {
  if (len == 0) return 3;  // type 5 cannot grow, and an empty sds is made to be appended to
  if (len < 32) return 1;
  if (len < 256) return 3;
  if (len < 65536) return 5;
  return len < (int64_t{1} << 32) ? 9 : 17;
}

int64_t sds_bytes(int64_t len) { return alloc_size(sds_header(len) + len + 1); }

// A dict's table once rehashed: 4 buckets for its first key, doubled each time the keys
// reach the bucket count. (Its shrinking, which serverCron does, is taken as immediate.)
int64_t dict_buckets(size_t n) {
  if (n == 0) return 0;
  int64_t b = 4;
  while (b < static_cast<int64_t>(n)) b *= 2;
  return b;
}

namespace {
constexpr int64_t kRobj = 16;
constexpr int64_t kEmbstrMax = 44;
}  // namespace

int64_t string_object_bytes(int64_t len) {
  return len <= kEmbstrMax ? alloc_size(kRobj + 3 + len + 1) : kRobj + sds_bytes(len);
}

namespace {

constexpr int64_t kDictEntry = 24;
constexpr int64_t kDict = 56;
constexpr int64_t kQuicklist = 48;  // the quicklist and its node, as MEMORY USAGE adds them
constexpr int64_t kQuicklistNode = 32;
constexpr int64_t kSdsMaxPrealloc = 1024 * 1024;

// The most an sds of this header can say it holds (sdsTypeMaxSize).
int64_t sds_type_max(int header) {
  switch (header) {
    case 3: return 255;
    case 5: return 65535;
    case 9: return (int64_t{1} << 32) - 1;
    default: return std::numeric_limits<int64_t>::max();
  }
}

bool reads_as_integer(const std::string& s) {
  int64_t v = 0;
  return s.size() <= 20 && string_to_ll(s, v);
}

// One listpack entry: an integer in 1 to 9 bytes by its range, or a string after a 1, 2 or
// 5-byte length; then the entry's own length again, 1 to 5 bytes (listpack.c).
int64_t listpack_entry(const std::string& s) {
  int64_t v = 0;
  int64_t enc = 0;
  if (string_to_ll(s, v)) {
    if (v >= 0 && v <= 127) enc = 1;
    else if (v >= -4096 && v <= 4095) enc = 2;
    else if (v >= -32768 && v <= 32767) enc = 3;
    else if (v >= -8388608 && v <= 8388607) enc = 4;
    else if (v >= -2147483648LL && v <= 2147483647LL) enc = 5;
    else enc = 9;
  } else {
    const auto n = static_cast<int64_t>(s.size());
    enc = n < 64 ? 1 + n : n < 4096 ? 2 + n : 5 + n;
  }
  const int64_t back = enc <= 127 ? 1 : enc < 16383 ? 2 : enc < 2097151 ? 3 : enc < 268435455 ? 4 : 5;
  return enc + back;
}

constexpr int64_t kListpackEmpty = 7;

// A sorted set's listpack holds each score as d2string writes it.
std::string score_text(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  if (d >= -4611686018427387903.0 && d <= 4611686018427387903.0) {
    const auto ll = static_cast<long long>(d);
    if (static_cast<double>(ll) == d) return std::to_string(ll);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

int64_t string_usage(const Value& v) {
  if (v.enc == StrEnc::Raw) return kRobj + v.sds_bytes;
  if (v.enc == StrEnc::Embstr) return v.sds_bytes;
  if (v.enc == StrEnc::Encoded && reads_as_integer(v.str)) return kRobj;
  return string_object_bytes(static_cast<int64_t>(v.str.size()));
}

// A hash table is measured as objectComputeSize measures it: the average of its first
// `samples` elements times their count, in double as C computes it.
int64_t set_usage(const SetMembers& s, int64_t samples) {
  if (s.intset) return kRobj + alloc_size(8 + s.intset_width * static_cast<int64_t>(s.members.size()));
  std::vector<int64_t> elements;
  elements.reserve(std::min<size_t>(s.members.size(), static_cast<size_t>(std::max<int64_t>(samples, 0))));
  for (const std::string& m : s.members) {
    if (static_cast<int64_t>(elements.size()) >= samples) break;
    elements.push_back(kDictEntry + sds_bytes(static_cast<int64_t>(m.size())));
  }
  const auto n = static_cast<int64_t>(s.members.size());
  const int64_t base = kRobj + kDict + 8 * s.table_size;
  if (elements.empty()) return base;
  int64_t sum = 0;
  for (int64_t e : elements) sum += e;
  return static_cast<int64_t>(static_cast<double>(base) + static_cast<double>(sum) /
                                                              static_cast<double>(elements.size()) *
                                                              static_cast<double>(n));
}

}  // namespace

int64_t value_usage(const Value& v, int64_t samples) {
  switch (v.type) {
    case VType::String: return string_usage(v);
    case VType::Hash: {
      int64_t bytes = kListpackEmpty;
      for (const auto& [f, val] : v.hash) bytes += listpack_entry(f) + listpack_entry(val);
      return kRobj + alloc_size(bytes);
    }
    case VType::List: {
      int64_t bytes = kListpackEmpty;
      for (size_t i = 0; i < v.list.size(); ++i) bytes += listpack_entry(v.list[i]);
      return kRobj + kQuicklist + kQuicklistNode + alloc_size(bytes);
    }
    case VType::ZSet: {
      int64_t bytes = kListpackEmpty;
      for (const auto& [member, score] : v.zset.dict)
        bytes += listpack_entry(member) + listpack_entry(score_text(score));
      return kRobj + alloc_size(bytes);
    }
    case VType::Set: return set_usage(v.set, samples);
  }
  return kRobj;
}

int64_t key_usage(const std::string& key, const Value& v, int64_t samples, bool cluster) {
  // A cluster node keeps two more pointers with every dictEntry (its slot's key list).
  return kDictEntry + (cluster ? 16 : 0) + sds_bytes(static_cast<int64_t>(key.size())) + value_usage(v, samples);
}

int64_t key_used_memory(const std::string& key, const Entry& e, bool cluster) {
  const Value& v = e.v;
  const int64_t all = std::numeric_limits<int64_t>::max();
  const int64_t value = v.type == VType::String && v.shared_int ? 0 : value_usage(v, all);
  return alloc_size(kDictEntry + (cluster ? 16 : 0)) + sds_bytes(static_cast<int64_t>(key.size())) + value +
         (e.expire >= 0 ? alloc_size(kDictEntry) : 0);
}

// appendCommand: dbUnshareStringValue makes an integer or an embstr a raw sds of exactly
// its bytes (a raw one is used as it is), then sdsMakeRoomFor grows it when its spare room
// is short: to twice the new length below 1 MiB, 1 MiB more above, never with a type-5
// header, which cannot record spare room.
void grow_string(Value& v, size_t add) {
  const auto len = static_cast<int64_t>(v.str.size());
  if (v.enc != StrEnc::Raw) {
    v.enc = StrEnc::Raw;
    v.sds_header = static_cast<uint8_t>(sds_header(len));
    v.sds_bytes = sds_bytes(len);
  }
  const int header = v.sds_header;
  const int64_t room = header == 1 ? len : std::min(v.sds_bytes - header - 1, sds_type_max(header));
  if (room - len >= static_cast<int64_t>(add)) return;
  int64_t want = len + static_cast<int64_t>(add);
  want = want < kSdsMaxPrealloc ? want * 2 : want + kSdsMaxPrealloc;
  const int new_header = std::max(sds_header(want), 3);
  v.sds_header = static_cast<uint8_t>(new_header);
  v.sds_bytes = alloc_size(new_header + want + 1);
}

}  // namespace lockstep::sim
