"""A service's collector (kg.core.heap.calm_collector): start-up's objects frozen out of every full
collection, young collections less often, and garbage made later still collected. In a process of
its own, so the test run's collector is untouched."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import gc, json, weakref
from kg.core.heap import GC_YOUNG, calm_collector
before = gc.get_freeze_count()
calm_collector()
frozen = gc.get_freeze_count()

class Node:
    pass

a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after the freeze: garbage once dropped
probe = weakref.ref(a)
del a, b
gc.collect()
print(json.dumps({"before": before, "frozen": frozen, "young": gc.get_threshold()[0], "limit": GC_YOUNG,
                  "cycle_freed": probe() is None}))
"""


def test_calm_collector_freezes_start_up_and_still_frees_later_cycles() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=120)
    seen = json.loads(out.stdout)
    assert seen["before"] == 0 and seen["frozen"] > 1000  # the modules' objects, out of the collector's sight
    assert seen["young"] == seen["limit"] > 700  # Python's default young threshold is 700
    assert seen["cycle_freed"]
