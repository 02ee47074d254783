// The cache of redis.call's argument objects (lua_args.h), after luaArgsToRedisArgv and
// freeLuaRedisArgv of Redis 7.0.
#include "lua_args.h"

#include <algorithm>
#include <limits>

namespace lockstep::sim {

namespace {

constexpr int64_t kEmbstrMax = 44;    // OBJ_ENCODING_EMBSTR_SIZE_LIMIT
constexpr int64_t kCachedLenMax = 64;  // LUA_CMD_OBJCACHE_MAX_LEN

// createStringObject: an embstr holds exactly its bytes; a raw sds as much as its
// allocation leaves room for (at most 255 bytes with the 3-byte header).
ArgObject made_for(int64_t len) {
  if (len <= kEmbstrMax) return ArgObject{true, len};
  const int header = sds_header(len);
  const int64_t room = sds_bytes(len) - header - 1;
  return ArgObject{false, header == 3 ? std::min<int64_t>(room, 255) : room};
}

}  // namespace

void ArgCache::take(const Args& args, size_t n, ScriptArgs& out) {
  out.encoded = out.stored = 0;
  out.rewritten = false;
  out.propagated = false;
  for (size_t j = 0; j < std::min(n, ScriptArgs::kCached); ++j) {
    const auto len = static_cast<int64_t>(args[j].size());
    Slot& slot = slots_[j];
    if (slot.present && slot.object.alloc >= len) {
      out.objects[j] = slot.object;
      slot.present = false;
    } else {
      out.objects[j] = made_for(len);
    }
  }
}

void ArgCache::keep(const Args& args, size_t n, const ScriptArgs& used) {
  if (used.propagated) return;
  const size_t count = used.rewritten ? used.layout.size() : n;
  for (size_t i = 0; i < std::min(count, ScriptArgs::kCached); ++i) {
    const int from = used.rewritten ? used.layout[i] : static_cast<int>(i);
    if (from < 0 || static_cast<size_t>(from) >= std::min(n, ScriptArgs::kCached)) continue;
    const auto p = static_cast<size_t>(from);
    if (used.stored & (1u << p)) continue;  // a key's value now, no longer the call's alone
    ArgObject object = used.objects[p];
    const auto len = static_cast<int64_t>(args[p].size());
    if (used.encoded & (1u << p)) {
      // tryObjectEncoding: an integer is no string object any more; a short raw string
      // becomes a new embstr of its length; a long one sheds spare room over a tenth.
      int64_t v = 0;
      if (len <= 20 && string_to_ll(args[p], v)) continue;
      if (len <= kEmbstrMax && !object.embstr) object = ArgObject{true, len};
      else if (!object.embstr && object.alloc - len > len / 10) object.alloc = len;
    }
    if (len > kCachedLenMax) continue;
    slots_[i] = Slot{true, object};
  }
}

}  // namespace lockstep::sim
