"""Bad input: a clear error naming the problem, raised before any arm runs; the data untouched."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from dau_scheduler import Session, SqlError, run_sql
from dau_scheduler.arms import DuckDBArm
from dau_scheduler.rewrite import CompiledSplit


class CountingArm(DuckDBArm):
    """A real DuckDB arm that counts the partials it is asked to run."""

    def __init__(self) -> None:
        super().__init__(name="counting")
        self.calls = 0

    def run_partial(self, compiled: CompiledSplit, start: int, stop: int) -> pa.Table:
        self.calls += 1
        return super().run_partial(compiled, start, stop)


@pytest.fixture
def session() -> Any:
    data = pa.table({"k": [1, 2, 3, 4], "v": [1.0, 2.0, 3.0, None]})
    arm = CountingArm()
    with Session({"t": data, "d": pa.table({"k": [1, 2]})}, device=arm) as s:
        yield s, arm


BAD_QUERIES = [
    ("select sum(v from t", "malformed|Parser|syntax"),
    ("select * from missing_table", "missing_table"),
    ("select nope from t", "nope"),
    ("insert into t values (5, 5.0)", "INSERT"),
    ("drop table t", "DROP"),
    ("update t set v = 0", "UPDATE"),
    ("create table x as select 1", "CREATE"),
    # DuckDB calls these MULTI, as it does a PIVOT query; they change the database.
    ("create table x as pivot t on k using sum(v)", "MULTI"),
    ("insert into d select * from (pivot t on k using sum(v))", "MULTI"),
    # An ORDER BY after the PIVOT, which sqlglot does not read: DuckDB's words are read instead.
    ("create table x as pivot t on k using sum(v) order by 1", "MULTI"),
    ("select 1; select 2", "one statement"),
    ("", "empty"),
    # SELECT statements with a data-changing part, which DuckDB runs whenever the query runs
    # (DuckDB's trigger_returning.test: a Session deleted the row, then answered no rows).
    ("with x as (delete from t where k = 1 returning k) select * from x", r"part.*\(DELETE\)"),
    (
        "select * from t where k in (with u as (update t set v = 0 returning k) select k from u)",
        r"\(UPDATE\)",
    ),
    ("with x as (insert into d values (9) returning k) select count(*) from x", r"\(INSERT\)"),
]


@pytest.mark.parametrize(("sql", "named"), BAD_QUERIES)
def test_bad_queries_are_named_and_nothing_runs(session: Any, sql: str, named: str) -> None:
    s, arm = session
    with pytest.raises(SqlError, match=named):
        s.sql(sql)
    assert arm.calls == 0
    assert s.host.cursor().sql("select count(*), sum(v) from t").fetchall() == [(4, 6.0)]
    assert s.host.cursor().sql("select count(*) from d").fetchall() == [(2,)]


@pytest.mark.parametrize("share", [-0.1, 1.01, float("nan"), float("inf"), "half", True])
def test_bad_shares_are_named(session: Any, share: Any) -> None:
    s, arm = session
    with pytest.raises(SqlError, match="device_share"):
        s.sql("select sum(v) from t", device_share=share)
    assert arm.calls == 0


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"sql": b"select sum(v) from t"}, "SQL text.*bytes"),
        ({"sql": None}, "SQL text.*NoneType"),
        ({"split_table": 3}, "split_table.*3"),
        ({"strict": "no"}, "strict.*'no'"),
    ],
)
def test_arguments_of_the_wrong_type_are_named(
    session: Any, arguments: dict[str, Any], named: str
) -> None:
    """(``strict="no"`` read as true, ``split_table=3`` raised AttributeError, bytes were 'the
    query is empty'.)"""
    s, arm = session
    sql = arguments.pop("sql", "select sum(v) from t")
    with pytest.raises(SqlError, match=named):
        s.sql(sql, **arguments)
    if "strict" not in arguments:
        with pytest.raises(SqlError, match=named):
            s.explain(sql, **arguments)
    assert arm.calls == 0


@pytest.mark.parametrize("threads", [0, -1, "2", 1.5])
def test_bad_thread_counts_are_named(threads: Any) -> None:
    """(0 and -1 were DuckDB's own SyntaxException; '2' was taken.)"""
    with pytest.raises(SqlError, match="threads must be a positive int"):
        Session({"t": pa.table({"k": [1]})}, device=None, threads=threads)


def test_unknown_posture_and_split_table_are_named(session: Any) -> None:
    s, arm = session
    with pytest.raises(SqlError, match="'turbo'"):
        s.sql("select sum(v) from t", posture="turbo")
    with pytest.raises(SqlError, match="'nosuch'"):
        s.sql("select sum(v) from t", split_table="nosuch")
    with pytest.raises(SqlError, match="'d' is not read by this query"):
        s.sql("select sum(v) from t", split_table="d")
    assert arm.calls == 0


def test_unknown_device_and_missing_folder_are_named(tmp_path: Path) -> None:
    with pytest.raises(SqlError, match="'tpu'"):
        Session({"t": pa.table({"a": [1]})}, device="tpu")
    with pytest.raises(SqlError, match="does not exist"):
        Session(tmp_path / "nowhere")
    with pytest.raises(SqlError, match="holds no"):
        Session(tmp_path)
    (tmp_path / "db.duckdb").write_bytes(b"")
    with pytest.raises(SqlError, match=r"db\.duckdb is a file: .*duckdb\.connect"):
        Session(tmp_path / "db.duckdb")
    with pytest.raises(SqlError, match="expected a path"):
        Session({"t": 42})
    with pytest.raises(SqlError, match="plain identifier"):
        Session({"bad name": pa.table({"a": [1]})})


def test_strict_refusal_raises_and_default_answers_unsplit(session: Any) -> None:
    s, _ = session
    sql = "select entropy(v) as m from t"
    result = s.sql(sql)
    assert result.execution is None and result.refusal and "'m'" in result.refusal
    assert result.table.column("m").to_pylist() == [pytest.approx(math.log2(3))]
    from dau_scheduler import SplitError

    with pytest.raises(SplitError, match="entropy"):
        s.sql(sql, strict=True)


def test_run_sql_one_shot() -> None:
    result = run_sql(
        "select count(*) as n from t",
        {"t": pa.table({"a": [1, 2, 3]})},
        device="duckdb",
        device_share=0.5,
    )
    assert result.table.column("n").to_pylist() == [3]
    assert result.execution is not None and result.execution.device_rows == 2


def test_every_kind_of_tables_argument(tmp_path: Path) -> None:
    import duckdb
    import polars as pl
    import pyarrow.parquet as pq

    data = pa.table({"k": [1, 2, 2, 3], "v": [1.5, 2.5, None, 4.0]})
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM data")
    (tmp_path / "parts" / "t").mkdir(parents=True)
    pq.write_table(data.slice(0, 2), tmp_path / "parts" / "t" / "0.parquet")
    pq.write_table(data.slice(2), tmp_path / "parts" / "t" / "1.parquet")
    pq.write_table(data, tmp_path / "t.parquet")
    sql = "select k, sum(v) as s, count(*) as n from t group by k order by k"
    sources = [
        con,
        {"t": data},
        {"t": pl.from_arrow(data)},
        {"t": tmp_path / "t.parquet"},
        tmp_path / "parts",
    ]
    for source in sources:
        result = run_sql(sql, source, device="duckdb", device_share=0.5)
        assert result.execution is not None and result.execution.device_rows == 2
        assert result.table.to_pylist() == [
            {"k": 1, "s": 1.5, "n": 1},
            {"k": 2, "s": 2.5, "n": 2},
            {"k": 3, "s": 4.0, "n": 1},
        ]
    # Two tables one name to SQL: the second hid the first without a word.
    with pytest.raises(SqlError, match="'T' has the name of another table given"):
        run_sql(sql, {"t": data, "T": data.slice(0, 1)}, device="duckdb")
    pq.write_table(data, tmp_path / "parts" / "t.parquet")  # beside the folder t/
    with pytest.raises(SqlError, match="has the name of another table given"):
        run_sql(sql, tmp_path / "parts", device="duckdb")


def test_words_of_statements_in_text_and_names_still_run(session: Any) -> None:
    s, _ = session
    result = s.sql("select 'delete from t' as \"update\", count(*) as n from t", device_share=0.5)
    assert result.table.to_pylist() == [{"update": "delete from t", "n": 4}]


def test_a_pivot_with_an_order_after_it_is_answered(session: Any) -> None:
    """A PIVOT at the top with an ORDER BY after it, and no values listed: DuckDB's MULTI
    statement, which a Session once rejected as no query. It splits now (rewrite/pivots.py);
    one sqlglot cannot read (an expression of the aggregate) is answered unsplit, its refusal
    one line without the terminal codes sqlglot underlines a token with."""
    s, arm = session
    for sql in ("pivot t on k using count(*) order by 1", "pivot t on k using sum(v) + 1"):
        result = s.sql(sql, device_share=0.5)
        assert result.table == s.host.cursor().sql(sql).to_arrow_table()
        assert result.table.column_names[-4:] == ["1", "2", "3", "4"]
        assert (result.refusal is None) == ("count" in sql)
    assert result.refusal is not None and "could not be analysed" in result.refusal
    assert "\x1b" not in result.refusal and "\n" not in result.refusal
    assert arm.calls == 1  # the first split, the second was not
