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


#: Beside a median, sums and means the final query computes over the arms' rows.
SPLIT_BESIDE = (
    # A decimal's sum and mean are exact in any order (DuckDB adds them in a HUGEINT): they may
    # decide, in a HAVING, an ORDER BY with later keys, a query around the block.
    "select l_shipmode, median(l_quantity) m from lineitem group by 1 "
    "having avg(l_discount) > 0.05 order by 1",
    "select count(*) from (select l_shipmode, median(l_quantity) m, avg(l_discount) a "
    "from lineitem group by 1) where a > 0.05",
    "select l_returnflag, l_linestatus, median(l_quantity) m, sum(l_extendedprice) s "
    "from lineitem group by 1, 2 order by s desc, 1, 2",
    # DuckDB binds the argument's type: an integer expression's sum is exact too.
    "select l_shipmode, median(l_quantity) m from lineitem group by 1 "
    "having sum(l_linenumber % 3) > 100 and avg(distinct l_quantity * 2) > 40 order by 1",
    # A double's as outputs, or as an ORDER BY's last key (equal values in any order).
    "select l_shipmode, median(l_quantity) m, avg(l_tax::double) t, "
    "sum(l_discount::double) sd, avg(distinct l_quantity::double) v from lineitem "
    "group by 1 order by 1",
    "select l_shipmode, median(l_quantity) m, sum(l_tax::double) t from lineitem "
    "group by 1 order by t",
    "select l_linestatus, median(l_quantity), bool_and(l_quantity > 1) b, "
    "bit_or(l_linenumber) o, sum(distinct l_linenumber) d from lineitem group by 1 order by 1",
    # mean(DISTINCT) is avg(DISTINCT) by another name (refused beside a median before the
    # fifty-seventh session; probes/holistic.py).
    "select count(*) from (select l_shipmode, median(l_quantity) m, "
    "mean(distinct l_quantity) a from lineitem group by 1) where a > 25",
    # mean(x) is kept by sqlglot as an anonymous call: its decimal argument is read all the same.
    "select l_shipmode, median(l_quantity) m from lineitem group by 1 "
    "having mean(l_discount) > 0.05 order by 1",
)


@pytest.mark.parametrize("sql", SPLIT_BESIDE)
def test_sums_beside_a_median_split_where_nothing_decides_on_their_last_bits(
    tpch_dir: Path, sql: str
) -> None:
    with Session(tpch_dir, device="polars") as s:
        expected = s.host.cursor().sql(sql).to_arrow_table()
        result = s.sql(sql, device_share=0.5)
        assert result.refusal is None and result.execution is not None
        assert "MEDIAN(" in result.plan.final_sql.upper()
        assert compare_tables(result.table, expected, ordered="order by" in sql) is None


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        # A double's sum or avg that decides: its last bits follow the order of additions.
        (
            "select l_shipmode, median(l_quantity) from lineitem group by 1 "
            "having avg(l_discount::double) > 0.05",
            "HAVING decides on a floating-point AVG the final query computes over the arms' rows",
        ),
        (
            "select count(*) from (select l_shipmode, median(l_quantity) m, "
            "sum(l_discount::double) a from lineitem group by 1) where a > 0.05",
            "decides on a floating-point SUM",
        ),
        # Moments keep the fold's refusal: one that cancels (a corr of nearly uncorrelated
        # pairs) moves past the tolerance with the order of the rows.
        (
            "select l_shipmode, median(l_quantity), corr(l_quantity, l_discount) from lineitem "
            "group by 1",
            "median",
        ),
        (
            "select l_shipmode, median(l_quantity), sum(l_tax::double) a from lineitem "
            "group by 1 order by a, 1",
            "ORDER BY that breaks its ties",
        ),
        (
            "select l_shipmode, median(l_quantity) from lineitem group by 1 "
            "having sum(l_linenumber / 2) > 100",
            "HAVING decides on a floating-point SUM",
        ),
        (
            "select distinct median(l_quantity), avg(l_linenumber / 2) from lineitem "
            "group by l_shipmode",
            "SELECT DISTINCT",
        ),
        # Sketches and sums whose value follows arrival stay refused.
        (
            "select l_shipmode, median(l_quantity), entropy(l_quantity) from lineitem group by 1",
            "entropy|median",
        ),
        ("select approx_quantile(l_quantity, 0.5) from lineitem", "approx_quantile"),
        (
            "select l_shipmode, median(l_quantity), string_agg(l_comment, ',') from lineitem "
            "group by 1",
            "string_agg",
        ),
    ],
)
def test_what_would_decide_on_arrival_stays_refused(tpch_dir: Path, sql: str, why: str) -> None:
    with Session(tpch_dir, device="polars") as s:
        result = s.sql(sql, device_share=0.5)
        assert result.refusal is not None and result.execution is None
        assert re.search(why, result.refusal), result.refusal
        expected = s.host.cursor().sql(sql).to_arrow_table()
        assert compare_tables(result.table, expected, ordered="order by" in sql) is None


def test_float_sums_near_the_doubles_limit_are_answered_unsplit_by_name() -> None:
    """Whether 1e308 + 1e308 overflows before a -inf arrives follows the rows' order (DuckDB's
    one thread gave -inf where a fold of two arms' sums gave NaN: ``probes/aggregates.py``);
    the final query's float sums raise there and the host answers."""
    import duckdb

    con = duckdb.connect()
    con.execute(
        "CREATE TABLE o AS SELECT i, i % 3 AS k, CASE WHEN i IN (5, 40, 77, 95) THEN 1e308 "
        "WHEN i IN (60, 61) THEN '-inf'::DOUBLE ELSE (i % 7) / 3.0 END AS x "
        "FROM range(120) r(i)"
    )
    with Session(con, device="polars") as s:
        for sql in (
            "select k, median(x), sum(x) from o group by k order by k",
            "select k, median(x), avg(x) from o group by k order by k",
        ):
            result = s.sql(sql, device_share=0.5)
            assert result.execution is None and result.fallback is not None
            assert "near the double's limit" in result.fallback
            assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=True) is None
        small = "select k, median(x), sum(x) from o where abs(x) < 1e300 group by k order by k"
        result = s.sql(small, device_share=0.5)
        assert result.execution is not None and result.fallback is None
        assert "ERROR(" in result.plan.final_sql.upper()  # guarded, below the limit
