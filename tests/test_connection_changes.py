"""A Session over a user's connection stays exact while the connection's tables change under
it (decision 023): INSERT, UPDATE and DELETE on the split table and on a table it joins,
a table replaced, emptied and filled again, between the Session's queries, on every CPU
device and under a memory budget. DuckDB cannot say whether a table changed, so the split
table's rowid span is read again before each split and a device that holds copies reads
what each query reads when the query runs."""

from __future__ import annotations

import random
import warnings
from typing import Any

import duckdb
import pytest

from conftest import device
from dau_scheduler import Session
from dau_scheduler.compare import compare_tables

QUERIES = [
    "SELECT k, sum(x), count(*), avg(v) FROM t GROUP BY k ORDER BY k",
    "SELECT u.name, sum(t.x * u.w) FROM t JOIN u ON t.k = u.k GROUP BY u.name ORDER BY 1",
    "SELECT x, v FROM t WHERE k = 3 ORDER BY x DESC LIMIT 5",
    # A self-join: the device reads the split table again whole, beside its split rows.
    "SELECT a.k, count(*), sum(b.v) FROM t a JOIN t b ON a.x = b.x GROUP BY a.k ORDER BY 1",
]

CHANGES = [
    "INSERT INTO t SELECT 5, 5, 2.5 FROM range(10)",
    "UPDATE t SET x = x + 1 WHERE k = 2",
    "UPDATE u SET w = w + 1",
    "DELETE FROM t WHERE x % 3 = 0",
    "INSERT INTO t SELECT i, i % 7, 1.0 FROM range(30000, 30500) r(i)",
    "CREATE OR REPLACE TABLE u AS SELECT i AS k, 'z' || i AS name, i AS w FROM range(5) r(i)",
    "DELETE FROM t",
    "INSERT INTO t SELECT i, i % 7, 3.0 FROM range(100) r(i)",
]

OPTIONS: dict[str, dict[str, Any]] = {
    "duckdb": {},
    "polars": {},
    "polars-streamed": {"mem_budget_mb": 64, "strategy": "streamed", "chunk_rows": 3000},
}


def _split(
    session: Session,
    con: duckdb.DuckDBPyConnection,
    sql: str,
    share: float = 0.5,
    ordered: bool = True,
) -> Any:
    """``sql`` split at ``share``, checked against DuckDB's answer on ``con`` now (its Arrow
    schema too; rows in order unless ``ordered`` is False)."""
    expected = con.sql(sql).to_arrow_table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = session.sql(sql, posture="collaborative", device_share=share)
    assert result.table.schema == expected.schema, sql
    assert compare_tables(result.table, expected, ordered=ordered) is None, sql
    return result


@pytest.mark.parametrize("case", sorted(OPTIONS))
def test_answers_follow_the_connection_as_it_changes(case: str) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i AS x, i % 7 AS k, i * 0.5 AS v FROM range(8000) r(i)")
    con.execute("CREATE TABLE u AS SELECT i AS k, 'u' || i AS name, i * 10 AS w FROM range(7) r(i)")
    split = 0
    with Session(con, device=device(case.split("-")[0]), **OPTIONS[case]) as session:
        for change in ["SELECT 1", *CHANGES]:
            con.execute(change).fetchall()
            for sql in QUERIES:
                split += _split(session, con, sql).execution is not None
    con.close()
    assert split == len(QUERIES) * (len(CHANGES) + 1)


SHAPES = [
    (
        "ALTER TABLE t ADD COLUMN z INTEGER DEFAULT 3",
        "SELECT k, sum(z), count(*) FROM t GROUP BY k",
    ),
    ("UPDATE t SET z = x % 5", "SELECT k, sum(z) FROM t GROUP BY k"),
    ("ALTER TABLE t ALTER v TYPE VARCHAR", "SELECT k, max(v), count(*) FROM t GROUP BY k"),
    ("DROP TABLE u", "SELECT * FROM t WHERE k = 2 ORDER BY x LIMIT 4"),
    (
        "CREATE TABLE u AS SELECT i AS k, i * 2 AS w2 FROM range(7) r(i)",
        "SELECT sum(t.x * u.w2) FROM t JOIN u ON t.k = u.k",
    ),
    ("ALTER TABLE t RENAME COLUMN x TO xx", "SELECT sum(xx) FROM t"),
    ("ALTER TABLE t DROP COLUMN z", "SELECT * FROM t ORDER BY xx LIMIT 3"),
    (
        "CREATE OR REPLACE TABLE t AS SELECT i % 3 AS k, i AS xx FROM range(500) r(i)",
        "SELECT * FROM t ORDER BY xx DESC LIMIT 3",
    ),
    ("CREATE VIEW w AS SELECT k, xx * 2 AS y FROM t", "SELECT k, sum(y) FROM w GROUP BY k"),
]


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_a_changed_catalog_is_read_again(name: str) -> None:
    """Tables created, dropped, altered or replaced after the Session opened: it reads them
    again before planning, so a star, a new column or a new table is the catalog's as it is."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i AS x, i % 7 AS k, i * 0.5 AS v FROM range(8000) r(i)")
    con.execute("CREATE TABLE u AS SELECT i AS k, 'u' || i AS name FROM range(7) r(i)")
    with Session(con, device=device(name)) as session:
        for change, sql in SHAPES:
            con.execute(change).fetchall()
            result = _split(session, con, sql, ordered="ORDER BY" in sql)
            assert result.execution is not None, (change, result.refusal, result.fallback)
    con.close()


@pytest.mark.parametrize("seed", [1, 5])
@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_random_changes_between_queries(name: str, seed: int) -> None:
    """A seeded random walk of changes (rows inserted, updated, deleted; a table replaced; a
    view redefined; a rolled-back transaction; CHECKPOINT) with a query after each."""
    rng = random.Random(seed)
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i AS x, i % 7 AS k, i * 0.5 AS v, 'n' || (i % 13) AS s "
        "FROM range(3000) r(i)"
    )
    con.execute("CREATE TABLE u AS SELECT i AS k, 'u' || i AS name, i * 10 AS w FROM range(7) r(i)")
    con.execute("CREATE VIEW vt AS SELECT x, k FROM t WHERE k > 2")
    changes = [
        lambda: (
            f"INSERT INTO t SELECT i, i % 7, i * 0.25, 'z' || (i % 5) FROM range("
            f"{rng.randint(0, 5000)}, {rng.randint(5000, 6000)}) r(i)"
        ),
        lambda: f"UPDATE t SET x = x + {rng.randint(1, 9)} WHERE k = {rng.randint(0, 6)}",
        lambda: f"DELETE FROM t WHERE x % {rng.randint(3, 40)} = {rng.randint(0, 2)}",
        lambda: f"UPDATE u SET w = w + {rng.randint(1, 5)}",
        lambda: (
            "CREATE OR REPLACE TABLE u AS SELECT i AS k, 'y' || i AS name, i AS w "
            f"FROM range({rng.randint(3, 7)}) r(i)"
        ),
        lambda: f"CREATE OR REPLACE VIEW vt AS SELECT x, k FROM t WHERE k > {rng.randint(0, 5)}",
        lambda: "BEGIN; UPDATE t SET x = x * 2 WHERE k = 1; ROLLBACK",
        lambda: "CHECKPOINT",
    ]
    queries = [
        "SELECT k, sum(x), count(*), avg(v), min(s), max(s) FROM t GROUP BY k ORDER BY k",
        "SELECT u.name, sum(t.x * u.w), count(*) FROM t JOIN u ON t.k = u.k GROUP BY 1 ORDER BY 1",
        "SELECT x, v, s FROM t WHERE k = 3 ORDER BY x DESC, v LIMIT 7",
        "SELECT * FROM t LIMIT 5",
        "SELECT k, count(*), sum(x) FROM vt GROUP BY k ORDER BY k",
    ]
    with Session(con, device=device(name)) as session:
        for _ in range(25):
            for statement in rng.choice(changes)().split(";"):
                con.execute(statement).fetchall()
            _split(session, con, rng.choice(queries), rng.choice([0.2, 0.5, 0.8]))
    con.close()


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_a_setting_changed_between_queries_is_followed(name: str) -> None:
    """A plan's types depend on the settings: ``SET TimeZone`` retypes a TIMESTAMPTZ's Arrow
    column, ``SET integer_division`` an integer quotient (DuckDB's test_icu_strftime.test, one
    Session kept across the file, answered in the old time zone's type)."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i % 5 AS k, i AS x, TIMESTAMPTZ '2024-03-10 01:30:00+00' + "
        "to_minutes(i) AS ts FROM range(4000) r(i)"
    )
    sqls = [
        "SELECT k, min(ts), max(ts) FROM t GROUP BY k ORDER BY k",
        "SELECT k, sum(x) / 7 AS q FROM t GROUP BY k ORDER BY k",
    ]
    with Session(con, device=device(name)) as session:
        for change in [
            "SET TimeZone = 'UTC'",
            "SET TimeZone = 'Asia/Kathmandu'",
            "SET integer_division = true",
            "SET TimeZone = 'America/St_Johns'",
            "RESET integer_division",
        ]:
            con.execute(change).fetchall()
            for sql in sqls:
                _split(session, con, sql)
    con.close()


def test_a_copying_device_keeps_no_rows_of_the_connection() -> None:
    """The Polars device plans over the connection's columns and types; the rows it computes on
    are read as each query runs (only the columns it reads) and let go after (decision 023)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i AS x, i % 7 AS k, i * 0.5 AS v FROM range(8000) r(i)")
    con.execute("CREATE TABLE u AS SELECT i AS k, 'u' || i AS name, i * 10 AS w FROM range(7) r(i)")
    with Session(con, device="polars") as session:
        for sql in QUERIES:
            _split(session, con, sql)
        arm: Any = session.device
        assert {name: frame.collect().height for name, frame in arm.frames.items()} == {
            "t": 0,
            "u": 0,
        }
        assert arm.frames["u"].collect_schema().names() == ["k", "name", "w"]
        assert arm._fresh == {}
    con.close()


def test_resident_handles_and_profiles_read_the_connection_as_it_is() -> None:
    """A resident-data handle over a connection with a Polars shard, and a device profile on a
    connection, run the partial by row range outside the Session's split: the Polars arm reads
    the connection's rows as they are then (its frames hold none), by rowid range."""
    from dau_scheduler.planner import DeviceSpec, Resources, encoded_data

    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i AS x, i % 7 AS k, i * 0.5 AS v FROM range(8000) r(i)")
    con.execute("CREATE TABLE u AS SELECT i AS k, 'u' || i AS name, i * 10 AS w FROM range(7) r(i)")
    resources = Resources((DeviceSpec("a", throughput=1), DeviceSpec("b", engine="polars")))
    handle = encoded_data(con, resources=resources)
    for change in ["SELECT 1", *CHANGES[:5]]:
        con.execute(change).fetchall()
        for sql in QUERIES[:2]:
            expected = con.sql(sql).to_arrow_table()
            assert compare_tables(handle.fold(sql), expected) is None, (change, sql)
        assert handle.last_engines == ("duckdb", "polars")
    handle.close()
    with Session(con, device="polars") as session:
        profile = session.profile(QUERIES[1], arm="device")
        assert profile.per_row_seconds >= 0 and profile.rows > 0
    con.close()


def test_the_rowid_span_holds_rows_a_checkpoint_kept_past_a_dropped_row_group(
    tmp_path: Any,
) -> None:
    """``ConnectionSource.span`` reads ``max(rowid)``: a CHECKPOINT that drops a row group
    whose rows were all deleted leaves the rows kept (``estimated_size``) equal to the count,
    and the rowids past the gap as they were. Trusting that metadata (sessions 12 to 42), the
    split covered rowids 0 to the count: 154,240 of 277,120 rows, and none after DELETE of
    every row and an INSERT (DuckDB's roaring storage tests, run once the runner loaded
    database files)."""
    from dau_scheduler.tables import resolve_sources

    con = duckdb.connect(str(tmp_path / "gaps.db"))
    con.execute("CREATE TABLE t AS SELECT i AS x, i % 7 AS k FROM range(400000) r(i)")
    sql = "SELECT k, count(*), sum(x) FROM t GROUP BY k ORDER BY k"

    def exact() -> tuple[int, int]:
        found = con.execute("SELECT coalesce(max(rowid) + 1, 0), count(*) FROM t").fetchall()
        return int(found[0][0]), int(found[0][1])

    for change in [
        "CHECKPOINT",
        "DELETE FROM t WHERE x >= 122880 AND x < 245760",  # the second row group, whole
        "CHECKPOINT",
        "DELETE FROM t WHERE x >= 390000",  # the last rowids: no gap, a shorter span
        "DELETE FROM t WHERE x % 100 = 7",
        "CHECKPOINT",
        "DELETE FROM t",
        "INSERT INTO t SELECT i, i % 5 FROM range(3000) r(i)",
        "CHECKPOINT",
    ]:
        con.execute(change).fetchall()
        assert resolve_sources(con)["t"].span() == exact(), change
        with Session(con, device="duckdb") as session:
            result = session.sql(sql, device_share=0.5)
            assert result.execution is not None, change
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, change
    con.close()
