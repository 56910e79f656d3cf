"""skewness and kurtosis where a filter drops groups: DuckDB finalizes every group first and
raises "out of range" for one that is not finite, so the split asks every group before its
final query's HAVING, QUALIFY or an outer filter may drop it (``CompiledSplit.raise_check_sql``)."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i % 4 AS k, (i * i)::DOUBLE AS x, i AS ii FROM range(2000) r(i)"
    )
    # Group 8 is constant (its skewness is NULL), group 9 huge (DuckDB raises out of range).
    con.execute("INSERT INTO t SELECT 8, 2.5, 5000 + i FROM range(10) r(i)")
    con.execute("INSERT INTO t VALUES (9, 1e300, 6000), (9, -1e200, 6001), (9, 3e100, 6002)")
    return con


@pytest.mark.parametrize(
    ("sql", "checked"),
    [
        ("SELECT k, skewness(x) FROM t GROUP BY k", False),
        ("SELECT k, skewness(x) FROM t GROUP BY k ORDER BY k LIMIT 2", False),
        ("SELECT k, stddev(x) FROM t GROUP BY k HAVING min(ii) < 3", False),
        ("SELECT k, skewness(x) FROM t GROUP BY k HAVING min(ii) < 3", True),
        ("SELECT k, kurtosis(x) FROM t GROUP BY k QUALIFY rank() OVER (ORDER BY k) < 2", True),
        ("SELECT * FROM (SELECT k, kurtosis_pop(x), min(ii) m FROM t GROUP BY k) WHERE m<3", True),
    ],
)
def test_every_group_is_asked_only_where_a_filter_may_drop_one(
    con: duckdb.DuckDBPyConnection, sql: str, checked: bool
) -> None:
    with Session(con, device="duckdb") as session:
        compiled = session.compile(sql)
    assert compiled.plan.refusal is None
    assert (compiled.raise_check_sql is not None) is checked


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_a_dropped_group_that_raises_in_duckdb_raises_split(
    con: duckdb.DuckDBPyConnection, device: str
) -> None:
    sql = "SELECT k, skewness(x) FROM t GROUP BY k HAVING min(ii) < 3"
    with pytest.raises(duckdb.OutOfRangeException, match="SKEW is out of range"):
        con.sql(sql).fetchall()
    with (
        Session(con, device=device) as session,
        pytest.raises(duckdb.OutOfRangeException, match="SKEW is out of range"),
    ):
        session.sql(sql, device_share=0.5)


def test_a_dropped_group_that_only_the_guard_stops_is_answered_unsplit(
    con: duckdb.DuckDBPyConnection,
) -> None:
    # Group 8's variance is 0: the guard stops it, DuckDB answers NULL for it, and HAVING
    # drops it. The split cannot tell the two apart, so the host answers, by name.
    sql = "SELECT k, skewness(x) AS s FROM t WHERE k <> 9 GROUP BY k HAVING min(ii) < 3"
    with Session(con, device="duckdb") as session:
        result = session.sql(sql, device_share=0.5)
    assert result.fallback is not None and "a filter of the query may drop" in result.fallback
    assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None
    # Without the constant group, the same query splits.
    split = sql.replace("k <> 9", "k < 8")
    with Session(con, device="duckdb") as session:
        result = session.sql(split, device_share=0.5)
    assert result.fallback is None and result.execution is not None
    assert compare_tables(result.table, con.sql(split).to_arrow_table(), ordered=False) is None
