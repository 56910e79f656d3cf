"""Medians and quantiles split (decision 032): the arms filter and join their rows and pass the
columns the grouped block reads; the final query groups and aggregates them. Real DuckDB and
Polars over TPC-H SF 0.01 (``tests/slt/holistic_aggregates.test`` holds the shapes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables

MEDIANS = (
    "select l_shipmode, median(l_quantity) as med, quantile_disc(l_discount, 0.75) as p75, "
    "mad(l_extendedprice) as mad_price, count(*) as items, avg(l_tax) as tax from lineitem "
    "where l_commitdate < l_receiptdate group by l_shipmode order by l_shipmode"
)


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_the_arms_filter_and_the_final_query_takes_the_quantiles(
    tpch_dir: Path, device: str
) -> None:
    with Session(tpch_dir, device=device) as s:
        plan = s.explain(MEDIANS)
        assert plan.refusal is None
        partial, final = plan.partial_sql.upper(), plan.final_sql.upper()
        # Each arm filters its rows and passes columns; no grouping or aggregate is its.
        assert "WHERE" in partial and "GROUP BY" not in partial and "MEDIAN" not in partial
        assert "MEDIAN(" in final and "QUANTILE_DISC(" in final and "GROUP BY" in final
        expected = s.host.cursor().sql(MEDIANS).to_arrow_table()
        for share in (0.3, 0.5, 0.9):
            result = s.sql(MEDIANS, device_share=share)
            assert compare_tables(result.table, expected, ordered=True) is None, share
            ex = result.execution
            assert ex is not None and ex.device_rows > 0 and ex.host_rows > 0
            assert ex.device_rows + ex.host_rows == s.row_counts["lineitem"]


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        # A float avg that decides: its last bits follow the order of additions.
        (
            "select l_shipmode, median(l_quantity) from lineitem group by 1 "
            "having avg(l_discount) > 0.05",
            "median",
        ),
        (
            "select count(*) from (select l_shipmode, median(l_quantity) m, "
            "avg(l_discount) a from lineitem group by 1) where a > 0.05",
            "median",
        ),
        (
            "select l_shipmode, median(l_quantity), avg(l_tax) a from lineitem group by 1 "
            "order by a",
            "median",
        ),
        # Sketches and sums whose value follows arrival stay refused.
        (
            "select l_shipmode, median(l_quantity), entropy(l_quantity) from lineitem group by 1",
            "entropy|median",
        ),
        ("select approx_quantile(l_quantity, 0.5) from lineitem", "approx_quantile"),
    ],
)
def test_what_would_decide_on_arrival_stays_refused(tpch_dir: Path, sql: str, why: str) -> None:
    with Session(tpch_dir, device="polars") as s:
        result = s.sql(sql, device_share=0.5)
        assert result.refusal is not None and result.execution is None
        assert re.search(why, result.refusal)
        expected = s.host.cursor().sql(sql).to_arrow_table()
        assert compare_tables(result.table, expected, ordered="order by" in sql) is None
