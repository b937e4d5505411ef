"""Heap settings for the PyTorch peers: the ones attnlab runs with (engine/core/heap_reuse.h).

glibc returns freed blocks above its mmap threshold to the kernel, so a program that frees its
activations every step faults the same memory in again on the next one; on a VM where page
faults are dear that dominates PyTorch's larger steps. attnlab keeps freed blocks up to 256 MiB
in its heap; this gives a peer the same, so the two sides can also be compared on equal terms."""
import ctypes
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def keep_freed_blocks_for_reuse(who):
    libc = ctypes.CDLL("libc.so.6")
    if not (libc.mallopt(M_MMAP_THRESHOLD, 256 << 20) == 1 and libc.mallopt(M_TRIM_THRESHOLD, 256 << 20) == 1):
        sys.exit(f"{who}: this C library refused the heap settings")
