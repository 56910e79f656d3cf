"""The protocol every arm implements, and the cast that makes arms' partials agree."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import pyarrow as pa

from dau_scheduler.errors import SplitError
from dau_scheduler.rewrite.planner import CompiledSplit


@runtime_checkable
class Arm(Protocol):
    """One engine that runs a compiled split's partial query over a row range of the split table.

    ``load`` receives every table once (the arm keeps them resident); ``refusal`` answers, before
    anything runs, why this arm cannot run a query (None when it can); ``run_partial`` returns the
    partial over rows ``[start, stop)`` of the split table as Arrow. ``shares_host_cores`` says the
    arm computes on the same CPU cores as the host arm, so running both adds no compute.
    """

    name: str
    shares_host_cores: bool

    def load(self, tables: dict[str, pa.Table]) -> None: ...

    def refusal(self, compiled: CompiledSplit) -> str | None: ...

    def run_partial(self, compiled: CompiledSplit, start: int, stop: int) -> pa.Table: ...


def cast_partial(table: pa.Table, schema: pa.Schema, arm: str) -> pa.Table:
    """An arm's partial in the host's partial schema, by name and type.

    The cast is safe: a value that does not fit the host's type exactly (a rounded decimal, an
    overflowing count) raises instead of becoming a plausible wrong answer.
    """
    if table.num_columns != len(schema):
        raise SplitError(
            f"{arm} arm returned {table.num_columns} partial columns, expected {len(schema)}"
        )
    table = table.rename_columns(schema.names)
    if table.schema.equals(schema, check_metadata=False):
        return table
    try:
        return table.cast(schema, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise SplitError(
            f"{arm} arm's partial does not fit the host's types exactly: {exc}"
        ) from exc


__all__ = ["Arm", "cast_partial"]
