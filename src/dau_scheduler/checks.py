"""Argument checks the sizing layer shares: a bad count or size is an error that names the
argument and the value, raised before anything runs."""

from __future__ import annotations

import math
from typing import Any

from dau_scheduler.errors import DauError, SizingError


def count(what: str, value: Any, least: int = 0, error: type[DauError] = SizingError) -> int:
    """``value`` as an int of at least ``least`` (booleans are not counts)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        kind = {0: "a non-negative int", 1: "a positive int"}.get(least, f"an int >= {least}")
        raise error(f"{what} must be {kind}, got {value!r}")
    return value


def positive(what: str, value: Any, error: type[DauError] = SizingError) -> float:
    """``value`` as a finite number above zero."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise error(f"{what} must be a finite positive number, got {value!r}")
    return float(value)


__all__ = ["count", "positive"]
