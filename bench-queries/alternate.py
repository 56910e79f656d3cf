"""Two ways of answering one query, timed in turns so drift on a shared machine falls on both
alike (the benchmarks here report their ratio, never one absolute time)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def alternate(
    runs: int, plain: Callable[[], Any], split: Callable[[], Any]
) -> tuple[list[float], list[float], list[Any]]:
    """Seconds of ``plain()`` and of ``split()``, called in turns ``runs`` times, and what
    each ``split()`` returned (for the caller to check)."""
    plain_s: list[float] = []
    split_s: list[float] = []
    results: list[Any] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        plain()
        plain_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        results.append(split())
        split_s.append(time.perf_counter() - t0)
    return plain_s, split_s, results
