#include "core/heap_reuse.h"

#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnlab {

bool keepFreedBlocksForReuse() {
#if defined(__GLIBC__)
  constexpr int kLargestReused = 256 << 20;
  // Both settings are needed: below the mmap threshold a block comes from the heap, and the trim
  // threshold stops free() from handing the heap's top back to the kernel at once.
  return mallopt(M_MMAP_THRESHOLD, kLargestReused) == 1 && mallopt(M_TRIM_THRESHOLD, kLargestReused) == 1;
#else
  return false;
#endif
}

}  // namespace attnlab
