"""What ``Session.sql`` returns: the answer, and how it was produced."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from dau_scheduler.posture import WorkSplit
from dau_scheduler.rewrite.planner import SplitPlan
from dau_scheduler.split import SplitExecution
from dau_scheduler.strategies import MemoryPlan


@dataclass(frozen=True)
class SqlResult:
    """A query's answer and how it was produced.

    ``table`` has DuckDB's unsplit column names, Arrow types and rows. ``execution`` is None when
    the query ran unsplit; ``plan`` is empty (no split table) when the host alone was decided
    before any plan was made (``split.rationale`` says why). ``refusal`` says why it was not
    split, ``fallback`` why a device failure sent it back to the host. ``split`` is the work split
    chosen and why; ``profiled`` names the arms whose profiles were measured for this call.
    ``strategy`` is the memory plan the split ran with under a memory budget (``in_memory``,
    ``chunked``, ``streamed``), None for resident tables.
    """

    table: pa.Table
    execution: SplitExecution | None
    plan: SplitPlan
    refusal: str | None = None
    fallback: str | None = None
    split: WorkSplit | None = None
    profiled: tuple[str, ...] = ()
    strategy: MemoryPlan | None = None


__all__ = ["SqlResult"]
