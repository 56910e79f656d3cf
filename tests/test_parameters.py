"""Query parameters (``Session.sql(sql, params=...)``): written into the query as the constants
DuckDB binds them as, the query then splits; the answer is DuckDB's ``execute(sql, params)``,
its columns named as DuckDB names them (``$1``, ``$name``). What cannot be written in is
answered unsplit with the parameters, by name; bad parameters are DuckDB's error, or ours
before anything runs."""

from __future__ import annotations

import datetime
import decimal
import warnings

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dau_scheduler import Session, SplitError, SqlError
from dau_scheduler.compare import compare_tables

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, (i / 3)::DECIMAL(9, 2) AS d, "
        "DATE '2020-01-01' + (i % 40)::INTEGER AS dt, (i % 100)::TINYINT AS ti, "
        "((i % 7) * 0.5)::DOUBLE AS x, ['a', 'b', '?'][i % 3 + 1] AS s FROM range(4000) r(i)"
    )
    return con


def _session(con: duckdb.DuckDBPyConnection, device: str) -> Session:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return Session(con, device=device)


def _check(session: Session, con: duckdb.DuckDBPyConnection, sql: str, params: object) -> bool:
    """The split answer is DuckDB's with the parameters; whether it split."""
    result = session.sql(sql, params=params, device_share=0.5)  # type: ignore[arg-type]
    expected = con.sql(sql, params=params).to_arrow_table()
    assert compare_tables(result.table, expected, ordered="ORDER BY" in sql) is None, sql
    assert result.table.column_names == expected.column_names
    return result.execution is not None


SPLIT = [
    ("SELECT count(*) FROM t WHERE i > ?", [2500]),
    (
        "SELECT ti, count(*), sum(i * ?) FROM t WHERE dt > ? GROUP BY ti ORDER BY ti",
        [3, "2020-01-05"],
    ),
    ("SELECT count(*) FROM t WHERE ti < $1 AND i <> $1::INTEGER AND dt > $2", [20, "2020-01-09"]),
    (
        "SELECT count(*) FROM t WHERE dt >= $day AND s = $s",
        {"day": datetime.date(2020, 1, 9), "s": "a"},
    ),
    ("SELECT s, count(*) FROM t WHERE s <> '?' AND x > ? GROUP BY s ORDER BY s", [1.5]),
    ("SELECT max(x + ?) AS m, min(i) FROM t WHERE i BETWEEN ? AND ?", [0.25, 100, 900]),
]


@pytest.mark.parametrize("device", ["duckdb", "polars"])
@pytest.mark.parametrize(("sql", "params"), SPLIT, ids=[str(i) for i in range(len(SPLIT))])
def test_parameters_are_written_in_and_the_query_splits(
    con: duckdb.DuckDBPyConnection, device: str, sql: str, params: object
) -> None:
    with _session(con, device) as session:
        assert _check(session, con, sql, params)


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_a_parameter_as_an_index_is_duckdb_s_one_based_index(
    con: duckdb.DuckDBPyConnection, device: str
) -> None:
    """sqlglot shifts an index it knows to be an integer to zero-based and back; a placeholder
    it does not, so a constant written into the tree came back one higher (``l[$1]`` with 1
    read ``l[2]``). The constants are written into the text instead."""
    with _session(con, device) as session:
        for sql, params in [
            ("SELECT s[?] AS c, count(*) FROM t GROUP BY c ORDER BY c", [1]),
            ("SELECT sum([i, ti, 7][$1]), max(s[$2:$1]) FROM t", [2, 1]),
            ("SELECT count(*) FROM t WHERE [i, ti][$k] > $k", {"k": 1}),
        ]:
            _check(session, con, sql, params)


def test_what_cannot_be_split_is_answered_unsplit_with_its_parameters(
    con: duckdb.DuckDBPyConnection,
) -> None:
    with _session(con, "polars") as session:
        # A placeholder that is not one of the values: DuckDB's to answer, unsplit, by name.
        result = session.sql("SELECT count(*) FROM t WHERE i > ? AND i < $1", params=[10])
        assert result.refusal is not None and "parameters" in result.refusal
        assert result.table.to_pylist() == [{"count_star()": 0}]
        with pytest.raises(SplitError, match="parameters"):
            session.sql("SELECT count(*) FROM t WHERE i > ? AND i < $1", params=[10], strict=True)
        # A NULL output (its type cannot be cast to): answered, equal, unsplit.
        _check(session, con, "SELECT sum(d * ?), ? FROM t", [decimal.Decimal("1.005"), None])
        # A Decimal is written as a cast of its digits to its own type, which the Polars arm
        # reads as the literal (it refused it as a cast to fewer digits).
        for value in ("1.005", "0.5", "-0.25", "1234567.125"):
            assert _check(session, con, "SELECT sum(d * ?) FROM t", [decimal.Decimal(value)])
        # current_query() is the text as written, placeholders and all (DuckDB's
        # pg_catalog/system_functions.test, its literals as parameters: the constants' text).
        for sql in ("SELECT ?, current_query() FROM t LIMIT 1", "SELECT alias(? + i) FROM t"):
            assert not _check(session, con, sql, [1])


def test_a_parameter_where_duckdb_matches_expressions_is_answered_unsplit(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """DuckDB matches GROUP BY, ORDER BY, HAVING and window expressions to the outputs' as
    written, and ``$1`` is not ``$2`` (nor a literal) whatever the values: written in as
    constants they would match (DuckDB's unnest_group_by.test with its literals as
    parameters: 2 groups for 4). Such a query is DuckDB's to answer; a parameter in a WHERE
    of one still splits."""
    with _session(con, "duckdb") as session:
        for sql, params in [
            ("SELECT ti % 5 AS g, count(*) FROM t GROUP BY ti % 5 ORDER BY g, max(i) > ?", [9]),
            (
                "SELECT NULLIF(UNNEST([?, ?]), ?) AS tag, count(*) FROM range(1, 3) "
                "GROUP BY NULLIF(UNNEST([?, ?]), ?) ORDER BY tag",
                [1, 2, 0, 1, 2, 0],
            ),
        ]:
            result = session.sql(sql, params=params, device_share=0.5)
            assert result.refusal is not None and "as written" in result.refusal
            expected = con.sql(sql, params=params).to_arrow_table()
            assert compare_tables(result.table, expected, ordered=True) is None
        with pytest.raises(SqlError, match="GROUP BY"):
            session.sql("SELECT i + ? FROM t GROUP BY i + ?", params=[1, 1])
        assert _check(
            session, con, "SELECT ti, count(*) FROM t WHERE i > ? GROUP BY ti ORDER BY ti", [7]
        )


def test_explain_plan_and_profile_take_the_parameters_as_sql_does(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The plan of a query with parameters is the plan of the query with them written in;
    what ``sql`` would answer unsplit with them is refused by the same name."""
    sql = "SELECT ti, sum(i * $1) FROM t WHERE dt > $2 GROUP BY ti"
    params = [3, "2020-01-05"]
    with _session(con, "polars") as session:
        plan = session.explain(sql, params=params)
        assert plan.refusal is None and plan.split_table == "t"
        assert "2020-01-05" in (plan.partial_sql or "")
        split = session.plan(sql, posture="offload", params=params)
        assert split.device_share == 1.0, split.rationale
        for bad in ([3], [3, "2020-01-05", 4]):
            assert "one to one" in (session.explain(sql, params=bad).refusal or "")
            assert "one to one" in session.plan(sql, params=bad).rationale
            with pytest.raises(SplitError, match="one to one"):
                session.profile(sql, params=bad)
        with pytest.raises(SqlError, match="params must be"):
            session.explain(sql, params="3")


def test_what_only_the_connection_binds_is_answered_there_with_its_parameters() -> None:
    """A temporary table (or a setting such as a lambda syntax) a cursor does not see: the
    query is answered on the user's connection with its parameters, as one without them is."""
    con = duckdb.connect()
    con.execute("CREATE TEMPORARY TABLE tmp AS SELECT range AS i FROM range(100)")
    with _session(con, "polars") as session:
        result = session.sql("SELECT count(*) AS n FROM tmp WHERE i > ?", params=[90])
    assert result.table.to_pylist() == [{"n": 9}]
    assert result.refusal is not None and "given connection" in result.refusal


def test_bad_parameters_are_refused_before_anything_runs(con: duckdb.DuckDBPyConnection) -> None:
    before = con.execute("SELECT count(*), sum(i) FROM t").fetchall()
    with _session(con, "polars") as session:
        with pytest.raises(SqlError, match="params must be a list or tuple"):
            session.sql("SELECT count(*) FROM t WHERE i > ?", params="5")  # type: ignore[arg-type]
        with pytest.raises(SqlError, match="names of params must be str"):
            session.sql("SELECT count(*) FROM t WHERE i > $1", params={1: 5})  # type: ignore[dict-item]
        with pytest.raises(SqlError, match=r"mismatch|not provided"):
            session.sql("SELECT count(*) FROM t WHERE i > ?", params=[1, 2])
        with pytest.raises(SqlError, match=r"not provided|mismatch"):
            session.sql("SELECT count(*) FROM t WHERE i > ? AND i < ?", params=[1])
    assert con.execute("SELECT count(*), sum(i) FROM t").fetchall() == before


VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(
        allow_nan=False, allow_infinity=False, places=3, min_value=-(10**9), max_value=10**9
    ),
    st.dates(min_value=datetime.date(1, 1, 1)),
    st.text(max_size=6),
    st.booleans(),
    st.none(),
)
SHAPES = [
    "SELECT count(*) FROM t WHERE i < ? OR x > ?",
    "SELECT ti, count(*) FROM t WHERE coalesce(?, ti) > ti GROUP BY ti ORDER BY ti",
    "SELECT count(*), max(?) FROM t WHERE ? IS NOT NULL",
    "SELECT s, count(*) FROM t WHERE s < ?::VARCHAR GROUP BY s ORDER BY s",
]


@settings(max_examples=40, deadline=None)
@given(a=VALUES, b=VALUES, shape=st.sampled_from(SHAPES))
def test_drawn_values_answer_as_duckdb(
    con: duckdb.DuckDBPyConnection, a: object, b: object, shape: str
) -> None:
    """Any value (ints past 64 bits, NaN, decimals, dates, text, NULL) in any place: the answer
    is DuckDB's, or DuckDB's error."""
    params = [a, b][: shape.count("?")]
    try:
        expected = con.sql(shape, params=params).to_arrow_table()
    except duckdb.Error:
        # (DuckDB's own error where DuckDB raises running it, SqlError where binding it)
        with _session(con, "polars") as session, pytest.raises((SqlError, duckdb.Error)):
            session.sql(shape, params=params)
        return
    with _session(con, "polars") as session:
        result = session.sql(shape, params=params, device_share=0.5)
    assert compare_tables(result.table, expected, ordered=True) is None, (shape, params)
    assert result.table.column_names == expected.column_names
