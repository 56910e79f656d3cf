"""A query that reads a Python object of the calling code (DuckDB's replacement scan:
``session.sql("SELECT count(*) FROM df")`` with a pandas, Arrow or Polars frame ``df``) is
answered as DuckDB answers it, unsplit and by name, on every kind of Session; it failed to bind
before (the Session calls DuckDB from its own frames, where the caller's names are not)."""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pytest

from dau_scheduler import Session, run_sql
from dau_scheduler.compare import compare_tables
from dau_scheduler.errors import SqlError

QUERIES = [
    "SELECT count(*), sum(x) FROM arrow_frame",
    "SELECT x % 3 AS k, count(*) FROM pandas_frame GROUP BY k ORDER BY k",
    "SELECT count(*), sum(base.x) FROM polars_frame JOIN base USING (x)",
]


@pytest.mark.parametrize("over", ["connection", "memory"])
@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_the_callers_objects_are_read_as_duckdb_reads_them(over: str, name: str) -> None:
    pd = pytest.importorskip("pandas")  # (the GPU kit's machine lists its own packages)
    con = duckdb.connect()
    con.execute("CREATE TABLE base AS SELECT range AS x FROM range(100)")
    arrow_frame = pa.table({"x": list(range(500))})
    pandas_frame = pd.DataFrame({"x": range(70)})
    polars_frame = pl.DataFrame({"x": range(90)})
    assert len(arrow_frame) + len(pandas_frame) + len(polars_frame)  # (read by the queries)
    tables = con if over == "connection" else {"base": con.sql("FROM base").to_arrow_table()}
    with Session(tables, device=name) as session:
        for sql in QUERIES:
            result = session.sql(sql, posture="collaborative", device_share=0.5)
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, sql
            assert result.refusal is not None and "a Python object of the calling code" in (
                result.refusal
            )
        # The Session's own tables still split; a name nobody holds is DuckDB's error.
        split = session.sql("SELECT sum(x) FROM base", posture="collaborative", device_share=0.5)
        assert split.execution is not None and split.refusal is None
        with pytest.raises(SqlError, match="nothing_here does not exist"):
            session.sql("SELECT * FROM nothing_here")
        number = 5
        assert number
        with pytest.raises(SqlError, match="not suitable for replacement scans"):
            session.sql("SELECT * FROM number")
    con.close()


def test_a_one_shot_query_reads_its_callers_objects() -> None:
    arrow_frame = pa.table({"x": [1, 2, 3]})
    assert len(arrow_frame)
    result = run_sql("SELECT sum(x) FROM arrow_frame", {"base": pa.table({"y": [1]})})
    assert result.table.column(0).to_pylist() == [6] and result.refusal is not None


def test_explain_and_plan_say_the_callers_object_is_duckdbs() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE base AS SELECT range AS x FROM range(100)")
    arrow_frame = pa.table({"x": list(range(50))})
    assert len(arrow_frame)
    sql = "SELECT count(*) FROM arrow_frame JOIN base USING (x)"
    with Session(con, device="polars") as session:
        plan = session.explain(sql)
        assert plan.refusal is not None and "arrow_frame, a Python object" in plan.refusal
        work = session.plan(sql)
        assert work.device_share == 0.0 and "arrow_frame, a Python object" in work.rationale
        with pytest.raises(SqlError, match="nothing_here does not exist"):
            session.explain("SELECT * FROM nothing_here")
    con.close()
