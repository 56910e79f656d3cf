"""The covariance family split: each arm's pair count, means, variances and covariance, combined
as DuckDB combines its own states, on every path that folds partials (resident, lazy, chunks
folded again and again under a budget) and both CPU devices; co-moments too ill-conditioned to
fold within the float tolerance, or not finite, are answered unsplit, by name."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session, SplitError
from dau_scheduler.arms.cudf import CudfStandIn
from dau_scheduler.compare import compare_tables
from moment_checks import ARMS_AND_PATHS, check_splits

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KINDS = (
    "covar_pop",
    "covar_samp",
    "corr",
    "regr_slope",
    "regr_intercept",
    "regr_r2",
    "regr_sxx",
    "regr_syy",
    "regr_sxy",
    "regr_count",
    "regr_avgx",
    "regr_avgy",
)
QUERIES = [
    "SELECT g, " + ", ".join(f"{k}(y, x)" for k in KINDS) + " FROM t GROUP BY g",
    "SELECT " + ", ".join(f"{k}(d, i)" for k in KINDS) + " FROM t",
    "SELECT corr(x, y) FILTER (WHERE g = 2), regr_count(y, x) FILTER (WHERE i > 100) FROM t",
    "SELECT g, corr(y, x) AS r FROM t GROUP BY g HAVING regr_count(y, x) > 1 ORDER BY r DESC",
    "SELECT covar_samp(y, x), covar_pop(y, x), corr(y, x) FROM t WHERE i = 7",  # one pair
    "SELECT covar_pop(y, x), regr_count(y, x), regr_avgx(y, x) FROM t WHERE i < 0",  # none
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, i % 9 AS g, "
        "CASE WHEN i % 11 = 0 THEN NULL ELSE 1e3 + ((i * 7919) % 1000) / 7.0 END AS x, "
        "CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 7919) % 1000) * 0.3 + (i % 17) END AS y, "
        "(i % 17)::DECIMAL(9, 2) AS d FROM range(5000) r(i)"
    )
    return con


@ARMS_AND_PATHS
def test_co_moments_split_equal_duckdb(
    con: duckdb.DuckDBPyConnection, device: str, options: dict[str, object]
) -> None:
    # cudf-polars has no covariance (NVIDIA/cudf#20564 asks for corr): the GPU engine's partial
    # writes it as sums (polars_gpu.covariances_as_sums), so the cudf arm splits these too.
    check_splits(con, device, options, QUERIES)


@pytest.mark.parametrize(
    "options",
    [{}, {"mem_budget_mb": 64, "strategy": "streamed", "chunk_rows": 1000}],
    ids=["resident", "streamed"],
)
def test_co_moments_split_through_the_gpu_engines_sums(
    con: duckdb.DuckDBPyConnection, options: dict[str, object]
) -> None:
    """cudf-polars translates no covariance ("Unary function name='corr'"): on the GPU engine
    the partial writes the sample covariance as sums (``polars_gpu.covariances_as_sums``), and
    the fold's guard counts their cancellation. The cudf arm's CPU stand-in runs that form,
    resident and refolded chunk by chunk (the lazy path reads as the resident one folds:
    test_co_moments_split_equal_duckdb runs it)."""
    check_splits(con, CudfStandIn(), options, QUERIES)


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_a_constant_side_has_a_co_moment_of_exactly_zero(device: str) -> None:
    """DuckDB's deviations from a repeated value's running mean are exactly 0, so its co-moment
    is 0: covar 0, corr and the slope NaN, the intercept and r2 NULL (r2 is 1 where only y is
    constant). AVG of 1/3.0s may round; the arms take such a side's MIN as its mean."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE c AS SELECT i % 200 AS g, (i % 200) / 3.0 AS x, "
        "((i * 17) % 101) / 7.0 AS y FROM range(20000) r(i)"
    )
    sql = (
        "SELECT g, covar_pop(y, x), corr(y, x), regr_slope(y, x), regr_intercept(y, x), "
        "regr_r2(y, x), regr_r2(x, y), covar_samp(x, y) FROM c GROUP BY g"
    )
    with Session(con, device=device) as session:
        result = session.sql(sql, device_share=0.5)
    assert result.execution is not None, result.fallback
    assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=False) is None
    assert set(result.table.column(1).to_pylist()) == {0.0}
    assert set(result.table.column(6).to_pylist()) == {1.0}


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        # y = 2x + 1e-3: DuckDB's intercept is 16e-9 off the exact one, relative.
        ("SELECT regr_intercept(2 * i + 1e-3, i::DOUBLE) FROM range(3000) r(i)", "intercept"),
        # A covariance of 0 against the spreads: (i % 2, i // 2 % 2) takes each pair alike.
        ("SELECT covar_pop((i % 2)::DOUBLE, (i // 2 % 2)::DOUBLE) FROM range(3000) r(i)", "0"),
        # DuckDB's co-moment over an infinity is inf or NaN by the rows' order.
        (
            "SELECT covar_pop(i::DOUBLE, CASE i WHEN 9 THEN 'inf'::DOUBLE ELSE i END) "
            "FROM range(99) r(i)",
            "",
        ),
    ],
)
def test_ill_conditioned_co_moments_are_answered_unsplit(sql: str, why: str) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE r AS SELECT * FROM range(3000) r(i)")
    sql = sql.replace("range(3000) r(i)", "r").replace("range(99) r(i)", "r WHERE i < 99")
    with Session(con, device="duckdb") as session:
        result = session.sql(sql, device_share=0.5)
        assert result.execution is None, why
        assert result.fallback is not None and "ill-conditioned" in result.fallback
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
        with pytest.raises(SplitError, match="ill-conditioned"):
            session.sql(sql, device_share=0.5, strict=True)


def test_regr_count_is_duckdb_s_uinteger(con: duckdb.DuckDBPyConnection) -> None:
    with Session(con, device="duckdb") as session:
        result = session.sql("SELECT g, regr_count(y, x) FROM t GROUP BY g", device_share=0.5)
        compiled = session.compile("SELECT g, covar_pop(y, x), regr_count(y, x) FROM t GROUP BY g")
    assert str(result.table.schema.field(1).type) == "uint32"
    assert result.execution is not None
    assert compiled.fast is None  # co-moments do not fold a column at a time
    assert compiled.refold_sql is not None and "LIST_REDUCE" in compiled.refold_sql.upper()


@pytest.mark.parametrize("seed", range(6))
def test_random_tables_split_equal_or_answer_unsplit_by_name(seed: int) -> None:
    """Random pairs (means far from and near 0, any correlation, NULLs, a constant side, an
    infinity), every kind at once, both devices: equal to DuckDB, or unsplit with the reason."""
    import random

    rng = random.Random(seed)
    con = duckdb.connect()
    s = rng.randrange(1 << 30)
    offset, scale = 10 ** rng.uniform(0, 7), 10 ** rng.uniform(-3, 3)
    rho = rng.choice([0.0, 0.01, 0.5, 0.99, 1.0, -0.7])
    unit, noise = f"(hash(i, {s}) % 1000000) / 1e6", f"(hash(i, {s + 1}) % 1000000) / 1e6"
    x = f"({offset} + {scale} * {unit})"
    y = f"({offset / 3} + {scale} * ({rho} * {unit} + {1 - abs(rho)} * {noise}))"
    kind = ("float", "constx", "inf", "thirds", "float", "int")[seed]
    if kind == "constx":
        x = "(i % 7) / 3.0"
    elif kind == "inf":
        x = f"CASE WHEN i = 17 THEN 'inf'::DOUBLE ELSE {x} END"
    elif kind == "thirds":
        x = f"(hash(i, {s}) % 7) / 3.0"
        y = f"(hash(i, {s + 1}) % 5) / 3.0 + (hash(i, {s}) % 7) / 9.0"
    elif kind == "int":
        x, y = f"(hash(i, {s}) % 1000)::INTEGER", f"((hash(i, {s}) % 1000) * 3 + i % 50)::BIGINT"
    con.execute(
        f"CREATE TABLE t AS SELECT i % 7 AS g, CASE WHEN i % 10 = 3 THEN NULL ELSE {x} END AS x, "
        f"CASE WHEN i % 9 = 4 THEN NULL ELSE {y} END AS y FROM range(2000) r(i)"
    )
    sql = "SELECT g, " + ", ".join(f"{k}(y, x)" for k in KINDS) + " FROM t GROUP BY g"
    expected = con.sql(sql).to_arrow_table()
    for device in ("duckdb", "polars"):
        with Session(con, device=device) as session:
            result = session.sql(sql, device_share=rng.choice([0.2, 0.5, 0.7]))
        assert compare_tables(result.table, expected, ordered=False) is None, (device, kind)
        if result.execution is None:
            assert result.fallback is not None and "ill-conditioned" in result.fallback
        if kind == "inf":
            assert result.execution is None
        if kind in ("constx", "int", "thirds"):
            assert result.execution is not None, (device, kind, result.fallback)
