// LuaHeap is the memory allocator of one node's Lua interpreter. Every EVAL creates its
// KEYS and ARGV tables and strings and leaves them to the collector, so a lock workload
// makes and frees a handful of small blocks per script; through malloc that was a fifth
// of the script's cost. Blocks up to kPooledMax bytes come from free lists by 16-byte
// size class, larger ones from malloc. Memory is only reused for blocks of the same
// class, so the heap is bounded by the interpreter's peak; it is handed back when the
// interpreter closes (SCRIPT FLUSH, restart) and the heap is destroyed.
//
// The pool is a fast path (lockstep/fast_paths.h): built out, every block comes from
// malloc. Under AddressSanitizer what the pool keeps or has not yet handed out is
// poisoned, so a use after free inside the interpreter is still caught.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "lockstep/fast_paths.h"

namespace lockstep::sim {

class LuaHeap {
 public:
  LuaHeap() = default;
  LuaHeap(const LuaHeap&) = delete;
  LuaHeap& operator=(const LuaHeap&) = delete;
  ~LuaHeap() {
    for (void* chunk : chunks_) {
      pool_hands_out(chunk, kChunkBytes);
      std::free(chunk);
    }
  }

  // The lua_Alloc contract: nsize 0 frees, a null block allocates, otherwise resize.
  // Lua passes the true old size of every block, which is what lets a pool serve it.
  static void* alloc(void* ud, void* block, size_t osize, size_t nsize) {
    if constexpr (!kFastPaths) {
      if (nsize == 0) {
        std::free(block);
        return nullptr;
      }
      return std::realloc(block, nsize);
    }
    auto& heap = *static_cast<LuaHeap*>(ud);
    if (block == nullptr) osize = 0;
    if (nsize == 0) {
      heap.release(block, osize);
      return nullptr;
    }
    if (block != nullptr && size_class(osize) == size_class(nsize) && nsize <= kPooledMax) return block;
    if (block != nullptr && osize > kPooledMax && nsize > kPooledMax) return std::realloc(block, nsize);
    void* fresh = heap.take(nsize);
    if (fresh == nullptr) return nullptr;  // Lua raises its memory error; `block` stays
    if (block != nullptr) {
      std::memcpy(fresh, block, osize < nsize ? osize : nsize);
      heap.release(block, osize);
    }
    return fresh;
  }

 private:
  static constexpr size_t kStep = 16;
  static constexpr size_t kPooledMax = 512;
  static constexpr size_t kClasses = kPooledMax / kStep;
  static constexpr size_t kChunkBytes = 64 * 1024;

  struct Free {
    Free* next;
  };

  static size_t size_class(size_t n) { return (n + kStep - 1) / kStep - 1; }

  void* take(size_t n) {
    if (n > kPooledMax) return std::malloc(n);
    const size_t c = size_class(n);
    if (Free* f = head_[c]) {
      pool_hands_out(f, (c + 1) * kStep);
      head_[c] = f->next;
      return f;
    }
    return carve((c + 1) * kStep);
  }

  void release(void* block, size_t n) {
    if (block == nullptr) return;
    if (n > kPooledMax) {
      std::free(block);
      return;
    }
    const size_t c = size_class(n);
    head_[c] = ::new (block) Free{head_[c]};
    pool_keeps(block, (c + 1) * kStep);
  }

  // New small blocks are cut from 64 KiB chunks: one malloc for hundreds of blocks.
  void* carve(size_t bytes) {
    if (chunk_left_ < bytes) {
      void* chunk = std::malloc(kChunkBytes);
      if (chunk == nullptr) return nullptr;
      chunks_.push_back(chunk);
      pool_keeps(chunk, kChunkBytes);
      chunk_next_ = static_cast<char*>(chunk);
      chunk_left_ = kChunkBytes;
    }
    void* out = chunk_next_;
    pool_hands_out(out, bytes);
    chunk_next_ += bytes;
    chunk_left_ -= bytes;
    return out;
  }

  Free* head_[kClasses] = {};
  std::vector<void*> chunks_;
  char* chunk_next_ = nullptr;
  size_t chunk_left_ = 0;
};

}  // namespace lockstep::sim
