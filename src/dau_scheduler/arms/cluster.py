"""The cluster arm: the host's share of a split run over a cluster's workers.

It stands where the host arm's partial would run: ``run_partial(compiled, start, stop)`` places
rows ``[start, stop)`` over the workers and returns their partials folded into one (on the
workers, in a tree). The Session's own DuckDB still binds, plans and runs the final query; the
device arm, if any, keeps its share. The backend (``planner.dask_backend``) holds the tables on
the cluster and runs the tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from dau_scheduler.rewrite.planner import PLACEHOLDER, CompiledSplit

if TYPE_CHECKING:
    from dau_scheduler.arms.duckdb import DuckDBArm
    from dau_scheduler.planner.wire import ClusterPartial, WorkerRun


class ClusterArm:
    """Runs DuckDB's partial over a cluster (``tables``: ``DaskTables`` or ``SparkTables``),
    with the SQL of ``host``."""

    shares_host_cores = False
    resident = True

    def __init__(self, tables: Any, host: DuckDBArm, name: str = "cluster") -> None:
        self.tables = tables
        self.host = host
        self.name = name
        #: Every shard task this arm ran (see :meth:`for_query`): worker, rows, seconds.
        self.runs: list[WorkerRun] = []
        self.fold_seconds = 0.0

    def for_query(self) -> ClusterArm:
        """This arm for one query: the same cluster and tables, its own record of the shard
        tasks (queries from several threads each report their own workers)."""
        return ClusterArm(self.tables, self.host, self.name)

    def load(self, tables: dict[str, pa.Table]) -> None:  # the cluster holds its own
        return None

    def refusal(self, compiled: CompiledSplit) -> str | None:
        """The workers run DuckDB's own partial; a backend may still refuse what it cannot
        carry (Spark: a column type it has no form for)."""
        ask = getattr(self.tables, "refusal", None)
        return ask(compiled) if callable(ask) else None

    def run_partial(self, compiled: CompiledSplit, start: int, stop: int) -> pa.Table:
        got: ClusterPartial = self.tables.run_partial(
            compiled, self.host.sql_for(compiled), PLACEHOLDER, start, stop
        )
        self.runs.extend(got.runs)
        self.fold_seconds += got.fold_seconds
        return got.table

    def workers(self) -> tuple[tuple[str, int, float], ...]:
        """Rows and seconds per worker over this arm's runs."""
        totals: dict[str, list[Any]] = {}
        for run in self.runs:
            entry = totals.setdefault(run.worker, [0, 0.0])
            entry[0] += run.stop - run.start
            entry[1] += run.seconds
        return tuple((w, int(r), float(s)) for w, (r, s) in sorted(totals.items()))

    def close(self) -> None:
        self.tables.close()


__all__ = ["ClusterArm"]
