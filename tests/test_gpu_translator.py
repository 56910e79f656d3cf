"""cudf-polars' own translator on the CPU (``make gpu-translator``; ``arms.cudf``): the cudf
arm's stand-in gives every plan to it, so a partial the GPU engine would not translate is
refused by name and DuckDB answers, and what it translates is answered exactly. Skipped where
cudf-polars cannot be imported (CI): run with the environment ``gpu/translator.py env``
prints."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.arms.cudf import CudfStandIn, translating_engine
from dau_scheduler.compare import compare_tables

needs_translator = pytest.mark.skipif(
    translating_engine() is None, reason="cudf-polars is not importable (make gpu-translator)"
)


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE t AS SELECT i, 'x' || (i % 13) AS s, (i % 7)::INTEGER AS k, "
        "DATE '2000-01-01' + (i % 30)::INTEGER AS d FROM range(3000) r(i)"
    )
    connection.execute("CREATE TABLE u AS SELECT i AS j FROM range(0, 3000, 7) r(i)")
    yield connection
    connection.close()


def _answer(con: duckdb.DuckDBPyConnection, session: Session, sql: str) -> str | None:
    result = session.sql(sql, posture="collaborative", device_share=0.5)
    assert compare_tables(result.table, con.sql(sql).to_arrow_table(), ordered=True) is None
    return result.refusal


@needs_translator
def test_what_cudf_polars_does_not_translate_is_refused_by_name(
    con: duckdb.DuckDBPyConnection,
) -> None:
    # A correlated IN under an OR: Polars plans it as a list.contains, which cudf-polars has
    # no translation for. (An uncorrelated IN under an OR was one, TPC-DS Q45, until the
    # thirty-seventh session wrote it as a semi join: it splits below; a correlated NOT IN
    # until the thirty-ninth wrote it as NOT EXISTS for the GPU engine; this test named it
    # until the sixty-first found it splitting, exactly, with the translator built.)
    sql = (
        "SELECT s, count(*) FROM t WHERE i IN (SELECT j FROM u WHERE j > t.k) OR k = 1 "
        "GROUP BY s ORDER BY s"
    )
    with Session(con, device=CudfStandIn(translate=True)) as session:
        refusal = _answer(con, session, sql)
    assert refusal is not None and "cudf-polars cannot translate" in refusal, refusal
    assert "ListFunction.Contains" in refusal


@needs_translator
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT k, sum(i), count(*) FROM t GROUP BY k ORDER BY k",
        # Text compared with a DATE: a date literal, not a cached strptime (TPC-DS Q16, Q32).
        "SELECT k, count(*) FROM t WHERE d BETWEEN '2000-01-05' AND '2000-01-20' GROUP BY k "
        "ORDER BY k",
        "SELECT count(*) FROM t WHERE d IN ('2000-01-02', '2000-01-09') OR d >= '2000-01-28'",
        "SELECT s, count(*) FROM t WHERE i IN (SELECT j FROM u) GROUP BY s ORDER BY s",
        "SELECT s, count(*) FROM t WHERE i IN (SELECT j FROM u) OR k = 1 GROUP BY s ORDER BY s",
        # A covariance as sums (polars_gpu.covariances_as_sums): cudf-polars has no cov.
        "SELECT k, corr(i, i % 11), covar_samp(i % 5, i) FROM t GROUP BY k ORDER BY k",
    ],
)
def test_what_it_translates_splits_exactly(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    with Session(con, device=CudfStandIn(translate=True)) as session:
        assert _answer(con, session, sql) is None


def test_asking_for_the_translator_where_it_is_missing_is_a_clear_error() -> None:
    if translating_engine() is not None:
        assert CudfStandIn(translate=True).collect_engine is not None
        return
    with pytest.raises(RuntimeError, match="make gpu-translator"):
        CudfStandIn(translate=True)
    assert CudfStandIn().collect_engine == "streaming"  # the default: without it
