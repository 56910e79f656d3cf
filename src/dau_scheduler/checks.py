"""Argument checks shared by the Session and the sizing layer: a bad count, size, share or
budget is an error that names the argument and the value, raised before anything runs."""

from __future__ import annotations

import math
from typing import Any

from dau_scheduler.errors import DauError, SizingError, SqlError
from dau_scheduler.posture import POSTURES

#: The smallest memory budget a Session accepts.
MIN_BUDGET_MB = 16


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


def budget(mem_budget_mb: Any) -> None:
    """A Session's memory budget: None, or a finite number of MB of at least MIN_BUDGET_MB."""
    if mem_budget_mb is None:
        return
    if positive("mem_budget_mb", mem_budget_mb, SqlError) < MIN_BUDGET_MB:
        raise SqlError(
            f"mem_budget_mb={mem_budget_mb:g} is below {MIN_BUDGET_MB} MB: DuckDB, which gets half "
            "the budget, cannot run its own catalog queries in less"
        )


def chunk_rows(rows: Any, mem_budget_mb: Any) -> None:
    """A Session's chunk cap: None, or a positive int under a memory budget."""
    if rows is None:
        return
    count("chunk_rows", rows, 1, SqlError)
    if mem_budget_mb is None:
        raise SqlError(f"chunk_rows={rows} needs a memory budget (mem_budget_mb)")


def share(device_share: Any) -> None:
    """A device share: None, or a finite number in [0, 1]."""
    if device_share is None:
        return
    if isinstance(device_share, bool) or not isinstance(device_share, (int, float)):
        raise SqlError(f"device_share must be a number in [0, 1], got {device_share!r}")
    if not math.isfinite(device_share) or not 0.0 <= device_share <= 1.0:
        raise SqlError(f"device_share must be a finite number in [0, 1], got {device_share!r}")


def query(sql: Any, split_table: Any = None, strict: Any = False) -> None:
    """A query's text (a str), its split table (None or a table's name) and ``strict`` (a
    bool: ``strict="no"`` would otherwise read as true)."""
    if not isinstance(sql, str):
        raise SqlError(f"the query must be SQL text (a str), got {type(sql).__name__}")
    if split_table is not None and not isinstance(split_table, str):
        raise SqlError(f"split_table must be a table's name (a str) or None, got {split_table!r}")
    if not isinstance(strict, bool):
        raise SqlError(f"strict must be True or False, got {strict!r}")


def options(posture: Any, profile: Any) -> None:
    """A query's posture (one of ``POSTURES``) and profile mode (``cached`` or ``auto``)."""
    if posture not in POSTURES:
        raise SqlError(f"unknown posture {posture!r}; expected one of {', '.join(POSTURES)}")
    if profile not in ("cached", "auto"):
        raise SqlError(f"unknown profile mode {profile!r}; expected 'cached' or 'auto'")


__all__ = ["MIN_BUDGET_MB", "budget", "count", "options", "positive", "query", "share"]
