"""DISTINCT ON in a block without aggregation splits (rewrite/row_block.py): the arms pass their
rows with the keys and ORDER BY values, the final query keeps each key's first row. Where a
key's first rows tie on every ORDER BY value and differ in an output the final query raises and
the query is answered unsplit, by name. tests/slt/distinct_on_rows.test and
probes/distinct_on.py compare many more forms with DuckDB on both devices."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session, SplitError
from dau_scheduler.compare import compare_tables


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_latest_row_per_key_splits(events: duckdb.DuckDBPyConnection, device: str) -> None:
    sql = "SELECT DISTINCT ON (u) v, s FROM ev WHERE s <> 'x1' ORDER BY u, ts DESC LIMIT 9"
    with Session(events, device=device) as session:
        plan = session.explain(sql)
        assert plan.refusal is None, plan.refusal
        assert "DISTINCT ON" in plan.final_sql and "DISTINCT" not in plan.partial_sql
        result = session.sql(sql, device_share=0.5)
        assert result.execution is not None and result.fallback is None
        assert compare_tables(result.table, events.sql(sql).to_arrow_table()) is None


def test_rows_tied_on_every_order_value_are_answered_unsplit(
    events: duckdb.DuckDBPyConnection,
) -> None:
    # A u's rows with its least s tie on (u, s) and differ in v.
    sql = "SELECT DISTINCT ON (u) u, v FROM ev ORDER BY u, s"
    with Session(events, device="duckdb") as session:
        result = session.sql(sql, device_share=0.5)
        assert result.execution is None
        assert result.fallback is not None and "tie on every ORDER BY value" in result.fallback
        # DuckDB's own pick among the tied rows moves with its threads: the keys are compared.
        expected = events.sql(sql).to_arrow_table()
        assert result.table.column("u").to_pylist() == expected.column("u").to_pylist()
        with pytest.raises(SplitError, match="DISTINCT ON"):
            session.sql(sql, device_share=0.5, strict=True)


def test_distinct_on_over_groups_stays_refused(events: duckdb.DuckDBPyConnection) -> None:
    with Session(events, device="duckdb") as session:
        plan = session.explain(
            "SELECT DISTINCT ON (u % 3) u, count(*) FROM ev GROUP BY u ORDER BY u % 3, u"
        )
        assert plan.refusal is not None and "DISTINCT ON over its groups" in plan.refusal
