"""A query that reads a Parquet file inline (``FROM 'x.parquet'``, ``read_parquet('x.parquet')``)
splits over that file as a table of the Session (decision 028): the 22 TPC-H queries written
so equal DuckDB's answers, split, on every CPU device; a file read otherwise (options, a glob,
a list, a hive folder, a name the catalog holds) is DuckDB's alone. A path with capitals splits
over the files as written (the arms' SQL keeps its case)."""

from __future__ import annotations

import warnings
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import device
from dau_scheduler import Session, tpch
from dau_scheduler.compare import compare_tables
from dau_scheduler.inline_files import as_paths, paths_read
from suite_sample import cells


@pytest.mark.parametrize(
    ("name", "spelling"),
    cells(
        [
            ("duckdb", "quoted"),  # (the read_parquet spelling is written before any arm runs)
            ("polars", "quoted"),
            ("polars", "read_parquet"),
            ("polars", "glob"),
            ("duckdb", "glob"),
            ("polars", "hive"),
            ("duckdb", "hive"),
        ],
        # Each spelling once, the polars device's own reading of files where it has one.
        [("duckdb", "quoted"), ("polars", "read_parquet"), ("polars", "glob"), ("polars", "hive")],
    ),
)
def test_tpch_reading_files_inline_splits_exactly(
    tpch_dir: Path, tmp_path: Path, name: str, spelling: str
) -> None:
    """The 22 queries reading their files inline; ``glob``: lineitem and orders as three
    files each, read by a glob (``'lineitem/*.parquet'``), in row order; ``hive``: lineitem and
    orders written by ``COPY ... PARTITION_BY`` (their flags and statuses as `key=value`
    folders, read back as DuckDB's hive columns: ``tpch.partitioned``)."""
    globs = {}
    if spelling == "hive":
        globs = tpch.partitioned(tpch_dir, tmp_path)
    if spelling == "glob":
        for table in ("lineitem", "orders"):
            source = f"read_parquet('{tpch_dir / f'{table}.parquet'}', file_row_number = true)"
            for k, (lo, hi) in enumerate(((0, 1000), (1000, 30000), (30000, 1 << 40))):
                part = tmp_path / table / f"{table}-{k}.parquet"
                _file(
                    part,
                    f"SELECT * EXCLUDE (file_row_number) FROM {source} WHERE "
                    f"file_row_number >= {lo} AND file_row_number < {hi} ORDER BY file_row_number",
                )
            globs[table] = f"{tmp_path / table}/*.parquet"
    con = duckdb.connect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Session(con, device=device(name)) as session:
            for query, text in tpch.queries().items():
                sql = tpch.read_inline(text, tpch_dir, "quoted" if globs else spelling, globs)
                assert ".parquet" in sql, query
                expected = con.sql(sql).to_arrow_table()
                result = session.sql(sql, posture="collaborative", device_share=0.4)
                assert compare_tables(result.table, expected, ordered=True) is None, query
                assert result.execution is not None, (query, result.refusal)
                assert result.fallback is None, (query, result.fallback)
    plain = {str(tpch_dir / f"{t}.parquet") for t in tpch.TABLES if t not in globs}
    assert set(session.inline_files) == plain | set(globs.values())


def _file(path: Path, sql: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    duckdb.sql(f"COPY ({sql}) TO '{path}' (FORMAT parquet)")
    return path


def test_only_one_plain_local_file_is_written_as_its_path(tmp_path: Path) -> None:
    path = _file(tmp_path / "t.parquet", "SELECT range AS i FROM range(10)")
    con = duckdb.connect()
    cursor = con.cursor()
    written = as_paths(f"SELECT count(*) FROM read_parquet('{path}')", cursor)
    assert written == f'SELECT count(*) FROM "{path}" AS read_parquet'
    assert paths_read(written) == (str(path),)
    globbed = f"SELECT count(*) FROM read_parquet('{tmp_path}/*.parquet')"
    assert (
        as_paths(globbed, cursor) == f'SELECT count(*) FROM "{tmp_path}/*.parquet" AS read_parquet'
    )
    aliased = f"SELECT t.i FROM Parquet_Scan('{path}') t JOIN read_parquet('{path}') AS u USING (i)"
    assert as_paths(aliased, cursor) == f'SELECT t.i FROM "{path}" t JOIN "{path}" AS u USING (i)'
    left = [
        f"SELECT * FROM read_parquet('{path}', filename = true)",
        f"SELECT * FROM read_parquet(['{path}'])",
        f"SELECT * FROM read_parquet('{tmp_path}/{{t,u}}.parquet')",  # (a brace list)
        f"SELECT * FROM read_parquet('{tmp_path}/*.missing.parquet')",  # (matches nothing)
        f"SELECT * FROM main.read_parquet('{path}')",
        f"SELECT * FROM read_parquet('{tmp_path / 'missing.parquet'}')",
        f"SELECT 'read_parquet(''{path}'')' AS text",
        f"SELECT i, ordinality FROM read_parquet('{path}') WITH ORDINALITY",
    ]
    for sql in left:
        assert as_paths(sql, cursor) == sql, sql
    con.execute(f'CREATE TABLE "{path}" AS SELECT 42 AS i')  # the catalog's name is read
    assert as_paths(f"SELECT * FROM read_parquet('{path}')", cursor).endswith(f"('{path}')")
    with Session(con, device="duckdb") as session:
        for sql in (f"SELECT * FROM read_parquet('{path}') r", f'SELECT * FROM "{path}"'):
            answer = session.sql(sql).table
            assert compare_tables(answer, con.sql(sql).to_arrow_table()) is None, sql
        assert not session.inline_files


def test_a_reader_call_left_as_written_is_refused_naming_it(tmp_path: Path) -> None:
    """A ``read_parquet`` of a list of files, or with options the arms do not read alike, stays
    DuckDB's, and the refusal says which call and why (it said only that the query reads no
    table both arms hold)."""
    path = _file(tmp_path / "t.parquet", "SELECT range AS i FROM range(10)")
    con = duckdb.connect()
    said = {
        f"SELECT count(*) FROM read_parquet(['{path}', '{path}'])": "read_parquet([...]) inline, "
        "a list of files",
        f"SELECT count(*) FROM read_parquet('{path}', binary_as_string = true)": f"read_parquet("
        f"'{path}', ...) inline, with options",
        f"SELECT count(*) FROM parquet_scan('{path}', filename = true)": "parquet_scan(",
    }
    with Session(con, device="polars") as session:
        for sql, why in said.items():
            result = session.sql(sql, device_share=0.5)
            assert result.execution is None and why in (result.refusal or ""), sql
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
    con.close()


def test_union_by_name_over_files_of_one_schema_splits_as_the_path(tmp_path: Path) -> None:
    """``union_by_name = true`` over files that hold the same columns, named and typed alike,
    in one order reads what the plain path reads: written as the path, it splits. Over files
    whose columns differ (another order, another type) it is left as written, DuckDB's alone,
    and the refusal names the call."""
    for k in range(3):
        _file(
            tmp_path / "same" / f"p{k}.parquet",
            f"SELECT range AS i, range % 7 AS g FROM range({k * 400}, {(k + 1) * 400})",
        )
    _file(tmp_path / "other" / "a.parquet", "SELECT range AS i, range % 7 AS g FROM range(50)")
    _file(tmp_path / "other" / "b.parquet", "SELECT range % 7 AS g, range AS i FROM range(50)")
    con = duckdb.connect()
    cursor = con.cursor()
    same = f"read_parquet('{tmp_path}/same/*.parquet', union_by_name = true)"
    other = f"read_parquet('{tmp_path}/other/*.parquet', union_by_name = 1)"
    assert as_paths(f"SELECT * FROM {same}", cursor) == (
        f'SELECT * FROM "{tmp_path}/same/*.parquet" AS read_parquet'
    )
    assert as_paths(f"SELECT * FROM {other}", cursor) == f"SELECT * FROM {other}"
    with Session(con, device="polars") as session:
        sql = f"SELECT g, count(*), sum(i) FROM {same} GROUP BY g ORDER BY g"
        assert _sum(session, con, sql).execution is not None
        sql = f"SELECT g, count(*), sum(i) FROM {other} GROUP BY g ORDER BY g"
        refusal = _sum(session, con, sql).refusal
        assert refusal is not None and "with options the arms do not read alike" in refusal
    con.close()


def _sum(session: Session, con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    result = session.sql(sql, posture="collaborative", device_share=0.5)
    assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, sql
    return result


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_a_file_changed_between_queries_is_read_again(tmp_path: Path, name: str) -> None:
    path = _file(tmp_path / "t.parquet", "SELECT range AS i, range % 7 AS k FROM range(1000)")
    sql = f"SELECT k, count(*), sum(i) FROM '{path}' GROUP BY k ORDER BY k"
    con = duckdb.connect()
    with Session(con, device=device(name)) as session:
        assert _sum(session, con, sql).execution is not None
        _file(path, "SELECT range AS i, range % 5 AS k FROM range(3000)")
        assert _sum(session, con, sql).execution is not None
        assert session.row_counts[str(path)] == 3000
        con.execute("CREATE TABLE t AS SELECT 1 AS i")  # the catalog changed: tables read again
        assert _sum(session, con, sql).execution is not None
        # Now DuckDB names its columns otherwise than pyarrow (a duplicate name: k, k_1).
        pq.write_table(pa.table([[1, 2], [3, 4], [5, 6]], names=["i", "k", "k"]), path)
        sql = f"SELECT count(*), sum(i) FROM '{path}'"
        assert _sum(session, con, sql).execution is None
        assert str(path) not in session.inline_files and str(path) not in session.row_counts


def test_a_lazy_session_splits_a_file_read_inline_and_a_resident_one_says_why(
    tpch_dir: Path,
) -> None:
    path = tpch_dir / "lineitem.parquet"
    sql = f"SELECT l_returnflag, sum(l_quantity) FROM '{path}' GROUP BY 1 ORDER BY 1"
    con = duckdb.connect()
    with Session(tpch_dir, device="polars", lazy=True) as lazy:
        result = _sum(lazy, con, sql)
        assert result.execution is not None and result.refusal is None
        assert lazy.explain(sql).refusal is None
        assert lazy.plan(sql, posture="offload").device_share == 1.0
    with Session({"nation": tpch_dir / "nation.parquet"}, device="polars") as resident:
        result = _sum(resident, con, sql)
        assert result.refusal is not None and "inline; a Session holding" in result.refusal
        assert "lazy=True" in result.refusal


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_a_glob_splits_over_the_files_duckdb_globs_as_they_are_now(
    tmp_path: Path, name: str
) -> None:
    """A glob is taken as one table of the files DuckDB's own ``glob`` lists, in its order
    (byte order: ``C`` before ``a``), matched again before each query: a file added, removed
    or rewritten since is read as DuckDB reads it. A glob under a ``key=value`` folder whose key
    names a file column, or over files whose types differ, is DuckDB's alone."""
    folder = tmp_path / "g"
    for part, rows in (("b", 300), ("a", 1000), ("C", 50)):
        _file(folder / f"{part}.parquet", f"SELECT '{part}' AS f, range AS i FROM range({rows})")
    _file(folder / "sub" / "z.parquet", "SELECT 'z' AS f, range AS i FROM range(10)")
    queries = [
        f"SELECT f, count(*), sum(i) FROM '{folder}/*.parquet' GROUP BY f ORDER BY f",
        f"SELECT f, i FROM read_parquet('{folder}/*.parquet') WHERE i % 97 = 0",
        f"SELECT count(*), sum(i) FROM '{folder}/**/*.parquet'",
        f"SELECT f, i FROM '{folder}/[ab].parquet' LIMIT 30",
    ]
    con = duckdb.connect()
    with Session(con, device=device(name)) as session:
        for change in ("", "add", "remove", "rewrite"):
            if change == "add":
                _file(folder / "d.parquet", "SELECT 'd' AS f, range AS i FROM range(77)")
            elif change == "remove":
                (folder / "a.parquet").unlink()
            elif change == "rewrite":
                _file(folder / "b.parquet", "SELECT 'b' AS f, range AS i FROM range(7)")
            for sql in queries:
                result = _sum(session, con, sql)
                assert result.execution is not None and result.fallback is None, (change, sql)
        assert session.row_counts[f"{folder}/*.parquet"] == 7 + 50 + 77
        for virtual in ("filename", "file_row_number", "file_index"):  # DuckDB's, not the files'
            sql = f"SELECT {virtual} IS NULL, count(*) FROM '{folder}/*.parquet' GROUP BY 1"
            refusal = _sum(session, con, sql).refusal
            assert refusal is not None and f"virtual column {virtual} of a file" in refusal
    # DuckDB reads every file as the first one's types: a split would read each as its own.
    _file(folder / "e.parquet", "SELECT 'e' AS f, range::INTEGER AS i FROM range(5)")
    hive = _file(tmp_path / "k=1" / "t.parquet", "SELECT 2 AS k")  # (DuckDB reads k = 1)
    with Session(con, device=device(name)) as session:
        sql = f"SELECT typeof(i), count(*) FROM '{folder}/*.parquet' GROUP BY 1"
        result = _sum(session, con, sql)
        assert result.refusal is not None and "Parquet files differ" in result.refusal
        result = _sum(session, con, f"SELECT count(*) FROM '{hive.parent.parent}/k=*/*.parquet'")
        assert result.execution is None
    con.close()


def test_a_glob_not_taken_is_not_read_again_until_a_file_changes(tmp_path: Path) -> None:
    """Files whose columns differ are not taken (DuckDB reads them by the first one's names);
    what was read to learn it is not read again each query, only when a file changes."""
    for part, extra in (("a", ""), ("b", ", 1 AS y")):
        _file(tmp_path / f"{part}.parquet", f"SELECT range AS i{extra} FROM range(10)")
    sql = f"SELECT count(*), sum(i) FROM '{tmp_path}/*.parquet'"
    con = duckdb.connect()
    with Session(con, device="polars") as session:
        for _ in range(2):
            result = _sum(session, con, sql)
            assert result.refusal is not None and "other columns" in result.refusal
            assert list(session.inline_left) == [f"{tmp_path}/*.parquet"]
        _file(tmp_path / "b.parquet", "SELECT range AS i FROM range(7)")
        result = _sum(session, con, sql)
        assert result.execution is not None and not session.inline_left


def test_files_another_reader_reads_otherwise_stay_duckdbs(tmp_path: Path) -> None:
    rows = "SELECT range AS i, range % 3 AS k FROM range(500)"
    hive = _file(tmp_path / "k=1" / "t.parquet", rows)  # DuckDB reads k from the folder
    con = duckdb.connect()
    with Session(con, device="polars") as session:
        # The refusal names the file and why it was not taken.
        for path, why in ((hive, "key=value folder"),):
            sql = f"SELECT k, count(*) FROM '{path}' GROUP BY k ORDER BY k"
            result = _sum(session, con, sql)
            assert result.execution is None, path
            assert result.refusal is not None and f"reads {path} inline" in result.refusal
            assert why in result.refusal
        assert not session.inline_files


@pytest.mark.parametrize("name", ["duckdb", "polars"])
def test_a_path_with_capitals_is_read_as_written(tmp_path: Path, name: str) -> None:
    """sqlglot reads every name in lower case, as DuckDB compares identifiers; DuckDB reads a
    path as written. Two folders whose names differ only in case hold other rows: each
    spelling splits over its own files, and both in one query are DuckDB's alone."""
    upper = _file(tmp_path / "Data" / "T.parquet", "SELECT range AS i FROM range(1000)")
    lower = _file(tmp_path / "data" / "t.parquet", "SELECT range * 7 AS i FROM range(300)")
    small = _file(tmp_path / "Keys.parquet", "SELECT range * 3 AS i FROM range(400)")
    con = duckdb.connect()
    with Session(con, device=device(name)) as session:
        for path in (upper, lower, upper):
            sql = f"SELECT count(*), sum(i) FROM '{path}'"
            assert _sum(session, con, sql).execution is not None, path
            glob = str(path.parent / "*.parquet")
            sql = f"SELECT count(*), sum(i) FROM read_parquet('{glob}')"
            assert _sum(session, con, sql).execution is not None, glob
        # Beside a table read unsplit (the join's other side, by its path in the arms' SQL).
        sql = (
            f"SELECT count(*), sum(t.i) FROM '{upper}' t JOIN '{small}' k ON t.i = k.i "
            f"WHERE t.i IN (SELECT i FROM '{small}' WHERE i % 2 = 0)"
        )
        assert _sum(session, con, sql).execution is not None
        both = f"SELECT (SELECT count(*) FROM '{upper}'), (SELECT count(*) FROM '{lower}')"
        result = _sum(session, con, both)
        assert result.execution is None
        assert result.refusal is not None and "beside another spelling" in result.refusal
