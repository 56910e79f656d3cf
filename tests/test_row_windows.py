"""Window functions in a block without aggregation run in the final query over every arm's rows
(rewrite/row_windows.py): the partial carries the columns they read and no window; the folds
whose last bits depend on the order of additions (SUM, AVG, ...) and named windows stay refused
by name. tests/slt/row_windows.test compares answers with DuckDB's on both devices."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_latest_rows_by_rank_split(events: duckdb.DuckDBPyConnection, device: str) -> None:
    sql = (
        "SELECT u, ts, v FROM ev WHERE v > 10 "
        "QUALIFY rank() OVER (PARTITION BY u ORDER BY ts DESC) = 1 ORDER BY u"
    )
    with Session(events, device=device) as session:
        plan = session.explain(sql)
        assert plan.refusal is None, plan.refusal
        assert "OVER" not in plan.partial_sql and "QUALIFY" not in plan.partial_sql
        assert "RANK() OVER" in plan.final_sql
        result = session.sql(sql, device_share=0.5)
        assert result.execution is not None and result.fallback is None
        assert compare_tables(result.table, events.sql(sql).to_arrow_table()) is None


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT u, sum(v) OVER (PARTITION BY u) FROM ev", "sum() OVER"),
        ("SELECT u, rank() OVER w FROM ev WINDOW w AS (ORDER BY ts)", "names its windows"),
        ("SELECT u, rank() OVER (ORDER BY (SELECT 1) + ts) FROM ev", "subquery"),
        # A LIMIT without ORDER BY takes rows in the window's order, not the scan's.
        ("SELECT u, rank() OVER (PARTITION BY u ORDER BY ts) FROM ev LIMIT 5", "LIMIT 5"),
    ],
)
def test_other_windows_stay_refused(
    events: duckdb.DuckDBPyConnection, sql: str, named: str
) -> None:
    with Session(events, device="duckdb") as session:
        plan = session.explain(sql)
        assert plan.refusal is not None and named in plan.refusal, plan.refusal
