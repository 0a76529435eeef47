"""The process heap: glibc's allocator (Linux; elsewhere those calls are no-ops) and Python's
cyclic garbage collector, for a service's process.

A model run allocates and frees large buffers (attention, layer outputs). glibc's allocator raises
its mmap threshold each time such a buffer is freed, so later ones come from the heap, which keeps
their pages: a service's RSS then holds its worst batch for good. Two remedies, both measured on the
int8 embedder over 2000 turns: `give_back()` after a batch returns the freed pages (+70 MB kept
without it); `bound_heap()`, which a service's process calls once at start, keeps large buffers on
mmap so they never stay (peak 320 MB instead of 425, for about 10% more CPU on embedding). A library
user's process keeps its allocator as it is: only our doors (`kg serve`, its worker, `kg mcp`, the
API app factory) call `bound_heap`.

The collector: a full collection walks every tracked object and holds the event loop meanwhile. In
`kg serve`'s API under overload (`bench.load`) one ran every 8 s and took 85-133 ms on a saturated
2-core machine, the whole tail of a refusal's answer time. `calm_collector()`, which the same doors
call once the model is loaded, moves what exists then out of the collector's
sight (`gc.freeze`: modules, the model, the driver; never garbage) and lets the young generation
grow to `GC_YOUNG` objects before a collection, so full collections come about 14 times less often.
Reference counting still frees everything at once; only cycles wait longer.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from typing import Any

GC_YOUNG = 10_000  # allocations (net) before a young collection; Python's default is 700
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


def calm_collector() -> None:
    """Freeze what exists now (`gc.freeze`) and collect young objects less often (`GC_YOUNG`)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
