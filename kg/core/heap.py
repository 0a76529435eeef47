"""The process heap, on glibc (Linux); elsewhere every call here is a no-op.

A model run allocates and frees large buffers (attention, layer outputs). glibc's allocator raises
its mmap threshold each time such a buffer is freed, so later ones come from the heap, which keeps
their pages: a service's RSS then holds its worst batch for good. Two remedies, both measured on the
int8 embedder over 2000 turns: `give_back()` after a batch returns the freed pages (+70 MB kept
without it); `bound_heap()`, which a service's process calls once at start, keeps large buffers on
mmap so they never stay (peak 320 MB instead of 425, for about 10% more CPU on embedding). A library
user's process keeps its allocator as it is: only our doors (`kg serve`, its worker, `kg mcp`, the
API app factory) call `bound_heap`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h)
MMAP_THRESHOLD = 256 * 1024  # fixed: setting it turns off glibc's dynamic raise

_libc: Any = None  # libc once looked up; False where there is none (not glibc, not Linux)


def _lib() -> Any:
    global _libc
    if _libc is None:
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc = lib if hasattr(lib, "malloc_trim") and hasattr(lib, "mallopt") else False
        except OSError:
            _libc = False
    return _libc


def give_back() -> None:
    """Return the heap's free pages to the system (`malloc_trim`)."""
    lib = _lib()
    if lib:
        lib.malloc_trim(0)


def bound_heap() -> None:
    """Large allocations stay on mmap for the life of the process (a fixed `M_MMAP_THRESHOLD`)."""
    lib = _lib()
    if lib:
        lib.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
