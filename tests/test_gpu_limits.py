"""The cudf arm's limits, run on the CPU: a Polars arm given the GPU engine's limits
(``arms/polars_gpu.py``). The GPU kit's first run on an H200 (2026-12-04) found that the GPU
engine's strict casts do not raise on overflow (``ti + 1`` of a TINYINT 127 answered) and that
its ``ln``, ``exp`` and ``pow`` differ from DuckDB's in the last bit (``ln`` of a FLOAT gained
GROUP BY groups). Such a partial is refused by name and DuckDB answers; arithmetic the data bounds
needs no check, so TPC-H still splits. And a LIKE is written as ``starts_with``/``ends_with`` or
a regular expression without the ``(?s)`` flag the GPU engine rejected (TPC-H Q2, Q9, Q13, Q14,
Q16), on both engines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from dau_scheduler import Session, tpch
from dau_scheduler.arms import PolarsArm
from dau_scheduler.arms.cudf import CudfStandIn
from dau_scheduler.compare import compare_tables
from dau_scheduler.errors import SqlError
from test_error_parity import RAISING, overflow_tables


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = overflow_tables()
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def held(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    """The tables as Arrow, which the arm holds (and reads its bounds from once)."""
    return {name: con.table(name).to_arrow_table() for name in ("t", "h")}


@pytest.mark.parametrize("sql", RAISING)
def test_what_may_overflow_is_refused_and_duckdb_raises(
    con: duckdb.DuckDBPyConnection, held: dict[str, pa.Table], sql: str
) -> None:
    with Session(held, device=CudfStandIn()) as session:
        query = sql.format(t="t")
        refusal = session.refusals.device(session.compile(query))
        assert refusal is not None and ("overflow" in refusal or "FLOAT" in refusal), refusal
        for share in (1.0, 0.5):
            with pytest.raises((duckdb.OutOfRangeException, duckdb.ConversionException)):
                session.sql(query, device_share=share)
        # Over rows the data bounds (table h: nothing near a type's limit) it needs no check.
        plain = sql.format(t="h")
        result = session.sql(plain, device_share=0.5)
        # (The bounds follow what picks one of its values too: NULLIF, IFNULL, CASE.)
        if "FLOAT" not in sql:
            assert result.execution is not None and result.execution.device_rows > 0, result.refusal
        assert result.table.to_pylist()[0] == dict(
            zip(result.table.column_names, con.execute(plain).fetchall()[0], strict=True)
        )


@pytest.mark.parametrize(
    ("expression", "refused"),
    [("ln(x + 1)", True), ("exp(x / 1e6)", True), ("pow(x, 2)", True), ("sqrt(x)", False)],
)
def test_inexact_math_is_refused_by_name(
    con: duckdb.DuckDBPyConnection, held: dict[str, pa.Table], expression: str, refused: bool
) -> None:
    sql = f"SELECT {expression} AS v, count(*) AS c FROM h GROUP BY v ORDER BY v"
    with Session(held, device=CudfStandIn()) as session:
        result = session.sql(sql, device_share=0.5)
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
        if refused:
            assert result.refusal is not None and "last bit" in result.refusal, result.refusal
        else:
            assert result.refusal is None and result.execution is not None


def test_tpch_splits_within_the_limits(tpch_dir: Path, tpch_expected: dict[str, pa.Table]) -> None:
    split, refused = 0, {}
    with Session(tpch_dir, device=CudfStandIn()) as session:
        for name, sql in tpch.queries().items():
            result = session.sql(sql, device_share=0.5)
            assert compare_tables(result.table, tpch_expected[name]) is None, name
            ex = result.execution
            if ex is not None and ex.device_rows > 0 and ex.host_rows > 0:
                split += 1
            else:
                refused[name] = result.refusal
    # Q20's 0.5 * sum(l_quantity) is bounded by the column's magnitude times lineitem's rows.
    assert split == 22, refused


def test_tpch_plans_hold_nothing_the_gpu_engine_lacks(tpch_dir: Path) -> None:
    """No ``list.contains`` (Polars' IN of a subquery beside a join: Q16 and Q18 on the H200)
    and no ``(?s)`` regular expression (its LIKE: Q2, Q9, Q13, Q14, Q16) in any query's plan,
    nor a ``$``."""
    with Session(tpch_dir, device=CudfStandIn()) as session:
        arm = session.device
        assert isinstance(arm, PolarsArm)
        for name, sql in tpch.queries().items():
            compiled = session.compile(sql)
            plan = arm.polars_plan(compiled)
            assert "list.contains" not in plan and "(?s)" not in plan, (name, plan)
            # No end anchor either: libcudf's $ is not documented to hold only at the end.
            assert "$'" not in arm.sql_for(compiled), name


@pytest.mark.parametrize("negated", ["", "NOT "])
@pytest.mark.parametrize(
    "pattern",
    [
        "PROMO%",
        "%BRASS",
        "%green%",
        "%special%requests%",
        "P%O",
        "%",
        "%a_b%",
        "Épée%",
        "x%",
        "x%BRASS",
        "%re%ts",
        "PR_MO%",
        "P_O",
        "_",
        "%_",
        "%.%",
        "x.y%",
        "%(y)%[z]%",
        "%a\\b%",
        "P.O_",
        "%?%_",
    ],
)
def test_like_as_functions(pattern: str, negated: str) -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, (['PROMO x', E'a green\\nb', NULL, 'xBRASS', '', "
        "E'special\\nrequests', 'Épée green BRASS', 'PROMO', 'requests special', E'PO\\n', "
        "E'xBRASS\\n'])[i % 11 + 1] AS s FROM range(990) r(i)"
    )
    sql = (
        f"SELECT i % 3 AS g, count(*) AS c, count(s) AS n FROM t WHERE s {negated}LIKE "
        f"'{pattern}' GROUP BY g ORDER BY g"
    )
    with Session(con, device="polars") as session:
        result = session.sql(sql, device_share=0.5)
        assert result.execution is not None and result.execution.device_rows > 0
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
        written = session.device.sql_for(session.compile(sql))  # type: ignore[union-attr]
        runs = pattern.split("%")
        # Left a LIKE: a last run after a % that holds a _ ($).
        left = len(runs) > 1 and "_" in runs[-1]
        assert ("LIKE" in written) == left, written


def test_a_connection_is_bounded_as_its_rows_are_now() -> None:
    """Over a user's connection the bounds are read from it as the partial is translated, and
    each run first checks the rows it is given against them: a row past a bound (the table
    changed since) fails the arm, and the host answers (here: raises, as DuckDB does)."""
    con = overflow_tables()
    arm = CudfStandIn()
    with Session(con, device=arm) as session:
        for sql in ("SELECT sum(ti + 1) FROM h", "SELECT max(d * 1000000000) FROM h"):
            result = session.sql(sql, device_share=0.5)
            assert result.execution is not None and result.execution.device_rows > 0, sql
            assert result.table.to_pylist()[0] == dict(
                zip(result.table.column_names, con.execute(sql).fetchall()[0], strict=True)
            )
        compiled = session.compile("SELECT sum(ti + 1) FROM h")
        arm.sql_for(compiled)  # written while h holds nothing near a limit
        con.execute("INSERT INTO h SELECT * FROM t WHERE i = 0")
        rows = con.execute("SELECT count(*) FROM h").fetchall()[0][0]
        with pytest.raises(SqlError, match="past the"):
            arm.run_partial(compiled, 0, rows + 1)
        with pytest.raises(duckdb.OutOfRangeException):
            session.sql("SELECT sum(ti + 1) FROM h", device_share=0.5)


def test_a_sum_over_a_connection_is_bounded_by_its_rows_now() -> None:
    """A product of a SUM (TPC-H Q20's ``0.5 * sum(l_quantity)``) is bounded by the column's
    magnitude times the table's rows, both read from the connection; a run given more rows
    than that (the table grew) fails the arm."""
    con = overflow_tables()
    arm = CudfStandIn()
    sql = "SELECT count(*) FROM h WHERE d > 0.001 * (SELECT sum(d) FROM h)"
    with Session(con, device=arm) as session:
        result = session.sql(sql, device_share=0.5)
        assert result.execution is not None and result.execution.device_rows > 0
        assert result.table.to_pylist()[0]["count_star()"] == con.execute(sql).fetchall()[0][0]
        compiled = session.compile(sql)
        arm.sql_for(compiled)
        con.execute("INSERT INTO h SELECT * FROM h LIMIT 1")  # the same magnitudes, a row more
        rows = con.execute("SELECT count(*) FROM h").fetchall()[0][0]
        with pytest.raises(SqlError, match="rows now"):
            arm.run_partial(compiled, 0, rows)


def test_date_arithmetic_the_data_bounds_splits_and_the_rest_is_refused() -> None:
    """A date plus or minus an integer is computed on day numbers and made a DATE again, which
    DuckDB checks against its last day. Over held tables the dates' days bound it (TPC-DS Q72's
    ``d_date + 5``): it splits on the cudf arm. Where the bound passes DuckDB's dates the cast
    back is a check the GPU engine would not make: refused, and DuckDB raises."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, DATE '2000-01-01' + i::INTEGER AS e, "
        "CASE WHEN i = 7 THEN 2147483000 ELSE i END::INTEGER AS n FROM range(3000) r(i)"
    )
    tables = {"t": con.table("t").to_arrow_table()}
    with Session(tables, device=CudfStandIn()) as session:
        for sql in (
            "SELECT count(*) FROM t WHERE e + 5 > DATE '2000-02-05'",
            "SELECT max(e - 7) AS m, min(3 + e) AS l FROM t",
        ):
            result = session.sql(sql, device_share=0.5)
            assert result.execution is not None and result.execution.device_rows > 0, sql
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
        past = "SELECT max(e + n) FROM t"
        refusal = session.refusals.device(session.compile(past))
        assert refusal is not None and "overflow" in refusal, refusal
        with pytest.raises(duckdb.OutOfRangeException):
            session.sql(past, device_share=0.5)


def test_a_connections_dates_are_bounded_by_their_days_now() -> None:
    """A DATE column of a user's connection is bounded by its days since 1970, read from it as
    a held one's are (``polars_bounds._read_magnitude``): ``e - d`` and ``d + 5`` need no
    overflow check, and split on the cudf arm. A date far from 1970 added since (a day past
    the bound) fails the arm's run, and the host answers; an ``infinity`` leaves no bound."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE w AS SELECT i, DATE '2000-01-01' + (i % 40)::INTEGER AS d, "
        "DATE '2000-01-05' + (i % 30)::INTEGER AS e FROM range(2000) r(i)"
    )
    arm = CudfStandIn()
    queries = [
        "SELECT count(*) AS c FROM w WHERE e - d > 3",
        "SELECT max(d + 5) AS c FROM w",
        "SELECT count(*) AS c FROM w WHERE e > d + 7",
    ]
    with Session(con, device=arm) as session:
        for sql in queries:
            result = session.sql(sql, device_share=0.5)
            assert result.execution is not None and result.execution.device_rows > 0, sql
            assert result.table.to_pylist()[0]["c"] == con.execute(sql).fetchall()[0][0]
        compiled = session.compile(queries[0])
        arm.sql_for(compiled)
        con.execute("INSERT INTO w VALUES (5000, DATE '9000-01-01', DATE '2000-01-01')")
        with pytest.raises(SqlError, match="past the"):
            arm.run_partial(compiled, 0, 2001)
        for sql in queries:
            assert (
                session.sql(sql, device_share=0.5).table.to_pylist()[0]["c"]
                == (con.execute(sql).fetchall()[0][0])
            )
    con.execute("INSERT INTO w VALUES (5001, DATE 'infinity', DATE '2000-01-01')")
    with Session(con, device=CudfStandIn()) as session:
        refusal = session.refusals.device(session.compile(queries[0]))
        assert refusal is not None and "overflow" in refusal, refusal


_FLOATS = (
    "CREATE TABLE n AS SELECT i, i % 5 AS k, CASE WHEN i % 7 = 0 THEN 'nan'::DOUBLE ELSE i / 3 "
    "END AS x, CASE WHEN i % 11 = 0 THEN 'inf'::DOUBLE ELSE i / 4 END AS y, (i % 9)::FLOAT AS f "
    "FROM range(2000) r(i)"
)
#: Comparisons of a column holding NaN, or of a value that may be NaN (``y - y`` of an
#: infinity): the GPU engine compares as IEEE does.
_NAN_REFUSED = [
    "SELECT count(*) FROM n WHERE x > 100",
    "SELECT k, count(*) FROM n WHERE x BETWEEN 1 AND 50 GROUP BY k",
    "SELECT count(*) FROM n WHERE y - y < 1",
    "SELECT sum(CASE WHEN x = 2.0 THEN 1 ELSE 0 END) FROM n",
]
#: Of columns the arm read holds no NaN (infinities are ordered alike), and of values made of
#: them that cannot be NaN (a sum with a number, floor, a constant, a cast of an integer); and
#: ``isnan``, ``isinf``, ``isfinite`` of a column holding NaN, written as comparisons of its
#: magnitude with infinity that answer alike in both orders (``polars_sql._float_class``).
_NAN_FREE = [
    "SELECT count(*) FROM n WHERE y > 100",
    "SELECT k, count(*) FROM n WHERE y + 1 BETWEEN 10 AND 200 GROUP BY k",
    "SELECT count(*) FROM n WHERE f >= 3 AND floor(y) < 1e3 * 0.5",
    "SELECT count(*) FROM n WHERE i::DOUBLE > y AND round(y) <> 7",
    "SELECT count(*) FROM n WHERE isnan(x) OR isinf(y)",
    "SELECT k, count(*) FILTER (WHERE isfinite(x)), sum(x) FROM n GROUP BY k",
]


def test_float_comparisons_that_may_meet_nan_are_refused_on_the_gpu_engine() -> None:
    """cudf-polars 26.10 maps a comparison to libcudf's IEEE one (NVIDIA/cudf#18842): ``NaN >
    2`` false there, true in DuckDB and Polars' CPU engine. Over held tables the arm reads once
    whether a float column holds NaN; over a connection's as the partial is translated, and
    again over the rows each run is given (a NaN there since: the arm fails, DuckDB answers)."""
    con = duckdb.connect()
    con.execute(_FLOATS)
    held = {"n": con.table("n").to_arrow_table()}
    with Session(held, device=CudfStandIn(translate=False)) as session:
        for sql in [*_NAN_REFUSED, *_NAN_FREE]:
            result = session.sql(sql, device_share=0.5)
            want = con.sql(sql).to_arrow_table()
            assert compare_tables(result.table, want, ordered=False) is None, sql
            if sql in _NAN_REFUSED:
                assert "may be NaN" in (result.refusal or ""), sql
            else:
                assert result.refusal is None and result.execution is not None, sql
    with Session(con, device=CudfStandIn(translate=False)) as session:
        assert "may be NaN" in (session.sql(_NAN_REFUSED[0], device_share=0.5).refusal or "")
        sql = _NAN_FREE[1]
        first = session.sql(sql, device_share=0.5)
        assert first.refusal is None and first.execution is not None
        con.execute("UPDATE n SET y = 'nan'::DOUBLE WHERE i % 13 = 0")
        again = session.sql(sql, device_share=0.5)
        want = con.sql(sql).to_arrow_table()
        assert compare_tables(again.table, want, ordered=False) is None
        # (the arm's SQL kept for the query: its run reads the NaN and fails; DuckDB answers)
        assert "holds NaN now" in (again.fallback or "") or "may be NaN" in (again.refusal or "")
    with Session(held, device=PolarsArm()) as session:  # the CPU engine orders NaN as DuckDB
        for sql in _NAN_REFUSED:
            assert session.sql(sql, device_share=0.5).refusal is None, sql
