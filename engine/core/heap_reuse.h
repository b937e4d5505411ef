#pragma once
// A forward frees and allocates again its large matrices at every block (a GPT-2-small prefill of
// 512 tokens: about 50 MB per block, 103 MB of logits). glibc returns blocks above its mmap
// threshold to the kernel on free, so each new one is page-faulted and zeroed again: 167 k page
// faults per prefill, a fifth of its CPU time, on one thread while the others wait. Called once at
// the start of a program, this keeps freed blocks up to 256 MiB in the heap, where the next
// allocation of the same size reuses them (test_heap_reuse counts the faults).
namespace attnlab {

// Returns false where the C library offers no such setting (then nothing changes).
bool keepFreedBlocksForReuse();

}  // namespace attnlab
