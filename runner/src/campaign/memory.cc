#include "lockstep/runner/memory.h"

#include <malloc.h>

namespace lockstep::runner {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_TRIM_THRESHOLD, 256 << 20);  // give back only a top of heap over 256 MiB
  mallopt(M_MMAP_THRESHOLD, 32 << 20);   // the largest allowed: big buffers stay in the heap
#endif
}

}  // namespace lockstep::runner
