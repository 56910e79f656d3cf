"""Which cells of a test's matrix the suite runs. ``make test`` keeps two cores' ten minutes by
running a covering sample of the larger matrices (each device and each path at least once);
``make test-full`` (``DAU_FULL_SUITE=1``) runs every cell."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

#: Whether every cell of every matrix runs (``make test-full``).
FULL = os.environ.get("DAU_FULL_SUITE") == "1"


def cells(every: Sequence[T], sample: Sequence[T]) -> list[T]:
    """``every`` under ``make test-full``; ``sample`` (a part of it) otherwise."""
    missing = [cell for cell in sample if cell not in every]
    if missing:
        raise ValueError(f"sampled cells not in the matrix: {missing}")
    return list(every if FULL else sample)
