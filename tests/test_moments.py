"""The variance family split: each arm's (count, mean, M2) moments, combined as DuckDB combines
its own states, on every path that folds partials (resident, lazy, chunks folded again and
again under a budget) and both CPU devices; moments too ill-conditioned to fold within the float
tolerance are answered unsplit, by name."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session, SplitError
from dau_scheduler.compare import compare_tables
from moment_checks import ARMS, ARMS_AND_PATHS, check_splits

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KINDS = ("var_samp", "variance", "var_pop", "stddev", "stddev_samp", "stddev_pop", "sem")
QUERIES = [
    "SELECT g, " + ", ".join(f"{k}(x)" for k in KINDS) + " FROM t GROUP BY g",
    "SELECT " + ", ".join(f"{k}(i)" for k in KINDS) + " FROM t",
    "SELECT var_samp(d), stddev_pop(f), sem(x) FILTER (WHERE g = 2) FROM t",
    "SELECT g, stddev(x) / avg(x) AS cv FROM t GROUP BY g HAVING count(*) > 1 ORDER BY cv DESC",
    "SELECT var_samp(x), var_pop(x) FROM t WHERE i = 7",  # one value: NULL and 0
    "SELECT var_samp(x), var_pop(x) FROM t WHERE i < 0",  # none: NULL
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, i % 9 AS g, "
        "CASE WHEN i % 11 = 0 THEN NULL ELSE 1e4 + ((i * 7919) % 1000) / 7.0 END AS x, "
        "(i % 17)::DECIMAL(9, 2) AS d, (i * 0.5)::FLOAT AS f FROM range(5000) r(i)"
    )
    con.execute("INSERT INTO t VALUES (5000, 9, 'inf', 1, 1), (5001, 9, 2, 1, 1)")
    con.execute("INSERT INTO t VALUES (5002, 10, 'nan', 1, 1), (5003, 11, 3, 1, 1)")
    return con


@ARMS_AND_PATHS
def test_moments_split_equal_duckdb(
    con: duckdb.DuckDBPyConnection, device: str, options: dict[str, object]
) -> None:
    check_splits(con, device, options, QUERIES)


def test_ill_conditioned_moments_are_answered_unsplit(con: duckdb.DuckDBPyConnection) -> None:
    # |mean| / stddev ~ 1e12: every algorithm, DuckDB's too, is off by ~1e-5 relative here.
    con.execute(
        "CREATE TABLE ill AS SELECT i % 5 AS g, 1e9 + (i % 3) * 1e-3 AS v FROM range(300) r(i)"
    )
    sql = "SELECT g, var_samp(v) FROM ill GROUP BY g"
    with Session(con, device="duckdb") as session:
        result = session.sql(sql, device_share=0.5)
        assert result.execution is None
        assert result.fallback is not None and "ill-conditioned" in result.fallback
        assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None
        # Remembered: the next run of it does not run the arms again, and names why.
        again = session.sql(sql, device_share=0.5)
        assert again.execution is None and again.fallback is None
        assert again.refusal is not None and "last split did not fold" in again.refusal
        assert compare_tables(again.table, result.table, ordered=False) is None
        with pytest.raises(SplitError, match="ill-conditioned"):
            session.sql(sql, device_share=0.5, strict=True)
    with Session(con, device="duckdb") as session, pytest.raises(SplitError, match="ill-cond"):
        session.sql(sql, device_share=0.5, strict=True)


@pytest.mark.parametrize("device", ARMS)
def test_a_group_of_one_value_has_a_variance_of_exactly_zero(device: str) -> None:
    """DuckDB's running mean of one repeated value is that value, so its M2 stays 0; AVG of
    1/3.0s may round, and two arms' means an ulp apart made M2 tiny, not 0 (then the guard
    answered unsplit: a constant price per product would never split)."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE c AS SELECT i % 200 AS g, (i % 200) / 3.0 AS x FROM range(20000) r(i)"
    )
    sql = "SELECT g, var_samp(x), stddev_pop(x), sem(x) FROM c GROUP BY g"
    with Session(con, device=device) as session:
        result = session.sql(sql, device_share=0.5)
    assert result.execution is not None, result.fallback
    assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None
    assert set(result.table.column(1).to_pylist()) == {0.0}


def test_moments_fold_in_duckdb_not_pyarrow(con: duckdb.DuckDBPyConnection) -> None:
    with Session(con, device="duckdb") as session:
        compiled = session.compile("SELECT g, var_pop(x), sum(x) FROM t GROUP BY g")
    assert compiled.fast is None  # moments do not fold a column at a time
    assert compiled.refold_sql is not None and "LIST_REDUCE" in compiled.refold_sql.upper()
