"""Memory strategies executed: the 22 TPC-H queries at SF 0.1 under a budget, chunked and
streamed, on the duckdb and polars devices, equal DuckDB's unsplit answers."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from dau_scheduler import Session, SqlError, profiling, run_sql, tpch
from dau_scheduler.arms.polars import PolarsArm
from dau_scheduler.compare import compare_tables
from dau_scheduler.profile import ProfileCache, host_identity
from odd_types import make as make_odd_types
from odd_types import problems
from suite_sample import cells

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
#: MB: at SF 0.1 the lineitem columns Q1 reads take ~60 MB: chunks of at most a quarter of the
#: budget make two; DuckDB gets half the budget, enough for the joins over the other tables.
BUDGET = 128


@pytest.fixture(scope="module")
def sf01() -> Path:
    return tpch.cached(0.1)


@pytest.fixture(scope="module")
def expected(sf01: Path) -> dict[str, pa.Table]:
    with Session(sf01, device=None) as s:
        return {name: s.sql(sql).table for name, sql in tpch.queries().items()}


@pytest.mark.parametrize(
    ("device", "strategy"),
    cells(
        [(d, s) for d in ("duckdb", "polars") for s in ("chunked", "streamed")],
        [("polars", "chunked"), ("duckdb", "streamed")],  # each device and strategy once
    ),
)
def test_tpch_under_a_budget_is_exact(
    sf01: Path, expected: dict[str, pa.Table], device: str, strategy: str
) -> None:
    chunked_runs, on_device, cut = 0, 0, 0
    with Session(sf01, device=device, mem_budget_mb=BUDGET, strategy=strategy) as session:
        for name, sql in tpch.queries().items():
            result = session.sql(sql, device_share=0.5)
            assert compare_tables(result.table, expected[name]) is None, name
            assert result.fallback is None and result.refusal is None, name
            assert result.strategy is not None and result.strategy.strategy == strategy
            assert result.execution is not None and result.split is not None, name
            if result.execution.device_rows == 0:
                # Only an arm without a byte limit is kept out, and the split says why.
                assert device == "polars" and "gets no rows" in result.split.rationale, name
            on_device += result.execution.device_rows > 0
            cut += "device share cut to" in result.split.rationale
            chunked_runs += result.strategy.chunks > 1
    assert chunked_runs >= 1  # Q1 reads lineitem in several chunks
    assert on_device >= (22 if device == "duckdb" else 14), on_device
    # The Polars arm's share of a chunk is cut to what fits its part of the budget.
    assert (cut > 0) == (device == "polars")


def test_cloud_plan_picks_the_strategy(sf01: Path, expected: dict[str, pa.Table]) -> None:
    q01 = tpch.queries()["q01"]
    with Session(sf01, device="duckdb", mem_budget_mb=4096) as roomy:
        result = roomy.sql(q01, device_share=0.5)
        assert result.strategy is not None and result.strategy.strategy == "in_memory"
        assert result.strategy.chunks == 1
    with Session(sf01, device="duckdb", mem_budget_mb=BUDGET / 2) as tight:
        limit = tight.host.con.execute("SELECT current_setting('memory_limit')").fetchone()
        assert limit is not None and str(limit[0]).endswith("MiB")  # DuckDB's limit: the budget
        result = tight.sql(q01, device_share=0.5)
        assert result.strategy is not None and result.strategy.strategy == "chunked"
        assert result.strategy.plan["n_chunks"] == result.strategy.chunks > 1
        assert compare_tables(result.table, expected["q01"]) is None
        # The host alone (share 0) still reads the rows chunk by chunk under a budget.
        alone = tight.sql(q01, device_share=0.0)
        assert alone.strategy is not None and alone.execution is not None
        assert alone.execution.device_rows == 0
        assert compare_tables(alone.table, expected["q01"]) is None


def test_one_shot_reads_lazily_and_is_exact(sf01: Path, expected: dict[str, pa.Table]) -> None:
    for share in (0.0, 0.5, 1.0):
        result = run_sql(tpch.queries()["q03"], sf01, device="polars", device_share=share)
        assert compare_tables(result.table, expected["q03"]) is None, share
    streamed = run_sql(
        tpch.queries()["q10"],
        sf01,
        device="duckdb",
        device_share=0.5,
        mem_budget_mb=BUDGET,
        strategy="streamed",
    )
    assert streamed.strategy is not None and streamed.strategy.strategy == "streamed"
    assert compare_tables(streamed.table, expected["q10"]) is None


def test_one_shot_host_alone_skips_the_planner(
    sf01: Path, expected: dict[str, pa.Table], tmp_path: Path
) -> None:
    """A lazy Session whose host will run alone (no device profile cached on shared cores)
    answers without planning, exactly; bad SQL and non-SELECTs still fail before running."""
    cache = tmp_path / "empty-cache"
    with Session(sf01, device="polars", lazy=True, cache=cache) as s:
        result = s.sql(tpch.queries()["q18"])
        assert compare_tables(result.table, expected["q18"]) is None
        assert result.execution is None and result.plan.split_table is None
        assert result.split is not None and "host runs the query alone" in result.split.rationale
        assert getattr(s.device, "frames", None) == {}  # the Polars arm was never reached
        with pytest.raises(SqlError, match="only queries"):
            s.sql("DROP TABLE lineitem")
        with pytest.raises(SqlError, match="nope"):
            s.sql("select nope from lineitem")
        assert s.sql("select count(*) as n from lineitem").table.num_rows == 1
        # Given a share, or strict, the query is planned as before.
        planned = s.sql(tpch.queries()["q06"], device_share=0.0)
        assert planned.plan.split_table == "lineitem"
    with Session(sf01, device=None, lazy=True, cache=cache) as s:
        result = s.sql(tpch.queries()["q01"])
        assert result.split is not None and result.split.posture == "cpu"
        assert compare_tables(result.table, expected["q01"]) is None


def test_one_shot_plans_only_where_cached_profiles_may_give_the_device_rows(
    sf01: Path, expected: dict[str, pa.Table], tmp_path: Path
) -> None:
    """A one-shot query pays the planner only where its own cached profiles could give the
    device rows: a profile of another query, a device profile alone, or profiles that pick the
    host leave the host to answer unplanned, as the planned decision would (issue 12's
    one-shot bar); profiles that pick the device plan the query."""
    cache = tmp_path / "cache"
    q06, q01 = tpch.queries()["q06"], tpch.queries()["q01"]
    with Session(sf01, device="polars", lazy=True, cache=cache) as s:
        device = s.profile(q06, arm="device")
    with Session(sf01, device="polars", lazy=True, cache=cache) as s:
        other = s.sql(q01)
        assert other.plan.split_table is None and other.split is not None
        assert "no profile of it for this query" in other.split.rationale
        assert compare_tables(other.table, expected["q01"]) is None
        alone = s.sql(q06)  # no host profile: the host runs alone
        assert alone.plan.split_table is None and alone.split is not None
        assert "no fresh profiles of both arms" in alone.split.rationale
        assert compare_tables(alone.table, expected["q06"]) is None
    # Profiles that pick the host: answered unplanned, with the planned decision's reason.
    host = device.model_copy(update={"host": host_identity()})
    slow = device.model_copy(update={"fixed_seconds": 10.0, "per_row_seconds": 1e-3})
    cached = ProfileCache(cache)
    cached.put(host.model_copy(update={"engine_version": profiling.host_version()}))
    cached.put(slow)
    with Session(sf01, device="polars", lazy=True, cache=cache) as s:
        measured = s.sql(q06)
        assert measured.plan.split_table is None and measured.split is not None
        assert measured.split.rationale == s.plan(q06, posture="adaptive").rationale
        assert "measured host" in measured.split.rationale
    # Profiles that pick the device: planned, and the device answers.
    cached.put(slow.model_copy(update={"fixed_seconds": 0.0, "per_row_seconds": 1e-12}))
    with Session(sf01, device="polars", lazy=True, cache=cache) as s:
        planned = s.sql(q06)
        assert planned.plan.split_table == "lineitem"
        assert planned.split is not None and planned.split.device_share == 1.0
        assert compare_tables(planned.table, expected["q06"]) is None
        # The keys looked up before planning include the key the profiles are stored under.
        assert s.plan_key(s.compile(q06)) in profiling.plan_keys(
            q06, sorted(s.row_counts), s.schema
        )


def test_one_shot_host_alone_imports_neither_pandas_nor_polars(sf01: Path, tmp_path: Path) -> None:
    """pyarrow imports pandas (where installed) at its first conversion of a Python value or
    Acero plan, about 0.25 s and 40 MB in a fresh process: neither the package's import, a query
    the host runs alone (the one-shot benchmark's bar) nor the fold of a scalar or of a few
    groups may make one (docs/benchmarks.md)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from dau_scheduler import run_sql, tpch\n"
        f"r = run_sql(tpch.queries()['q06'], {str(sf01)!r}, device='polars')\n"
        "assert r.execution is None and r.table.num_rows == 1\n"
        "lazy = {'pandas', 'polars', 'pyarrow.dataset', 'dau_scheduler.arms.polars_sql'}\n"
        "print(sorted(lazy & set(sys.modules)))\n"
        # Split, a scalar fold (Q6) and a fold of a few groups (Q1) make no Python value either.
        "for q in ('q06', 'q01'):\n"
        f"    r = run_sql(tpch.queries()[q], {str(sf01)!r}, device='duckdb', device_share=0.5)\n"
        "    assert r.execution is not None and r.execution.device_rows > 0\n"
        "print(sorted({'pandas', 'pyarrow.dataset'} & set(sys.modules)))\n"
    )
    env = {"PATH": "", "HOME": str(tmp_path), "DAU_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "[]"], done.stdout


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"mem_budget_mb": 0}, "mem_budget_mb"),
        ({"mem_budget_mb": float("inf")}, "mem_budget_mb"),
        ({"mem_budget_mb": "64"}, "mem_budget_mb"),
        ({"mem_budget_mb": 8}, "below 16 MB"),
        ({"mem_budget_mb": 64, "strategy": "spilled"}, "unknown strategy 'spilled'"),
        ({"strategy": "chunked"}, "needs a memory budget"),
        ({"chunk_rows": 100}, "chunk_rows=100 needs a memory budget"),
        ({"mem_budget_mb": 64, "chunk_rows": 0}, "chunk_rows must be a positive int"),
        ({"mem_budget_mb": 64, "chunk_rows": True}, "chunk_rows must be a positive int"),
    ],
)
def test_bad_budget_arguments_are_named(sf01: Path, kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(SqlError, match=named):
        Session(sf01, device=None, **kwargs)  # type: ignore[arg-type]


def test_chunk_rows_caps_the_chunks(sf01: Path, expected: dict[str, pa.Table]) -> None:
    with Session(
        sf01, device="duckdb", mem_budget_mb=BUDGET, strategy="streamed", chunk_rows=100_000
    ) as session:
        result = session.sql(tpch.queries()["q01"], device_share=0.5)
    assert result.strategy is not None
    assert result.strategy.chunk_rows == 100_000 and result.strategy.chunks == 7  # 600,572 rows
    assert compare_tables(result.table, expected["q01"]) is None


def test_in_memory_tables_under_a_budget(expected: dict[str, pa.Table], sf01: Path) -> None:
    import pyarrow.parquet as pq

    tables = {p.stem: pq.read_table(p) for p in sorted(sf01.glob("*.parquet"))}
    with Session(tables, device="polars", mem_budget_mb=BUDGET, strategy="streamed") as s:
        for name in ("q01", "q05", "q18"):
            result = s.sql(tpch.queries()[name], device_share=0.5)
            assert compare_tables(result.table, expected[name]) is None, name


def test_resident_parquet_is_read_by_each_arm_itself(tmp_path: Path) -> None:
    """Resident tables over Parquet are read by DuckDB and Polars themselves (no Arrow copy);
    both number the rows alike, so every split is exact."""
    import pyarrow.parquet as pq

    from dau_scheduler.arms.polars import PolarsArm

    n = 5000
    table = pa.table(
        {
            "k": pa.array(range(n), pa.int64()),
            "g": pa.array([f"g{i % 7}" for i in range(n)]).dictionary_encode(),
            "u": pa.array([i % 200 for i in range(n)], pa.uint8()),
            "p": pa.array([i / 8 for i in range(n)], pa.float64()),
        }
    )
    folder = tmp_path / "data"
    folder.mkdir()
    pq.write_table(table, folder / "t.parquet", row_group_size=700)
    assert PolarsArm().load_parquet("t", [folder / "t.parquet"])
    sql = (
        "select g, count(*) as c, sum(u) as s, min(k) as lo from t "
        "where p > 12.5 group by g order by g"
    )
    with Session(folder, device=None) as alone:
        expected = alone.sql(sql).table
    with Session(folder, device="polars") as s:
        for share in (0.0, 0.37, 1.0):
            result = s.sql(sql, device_share=share)
            assert result.execution is not None and result.refusal is None
            assert compare_tables(result.table, expected) is None, share


def test_a_device_the_budget_leaves_without_rows_is_not_asked_to_plan(
    sf01: Path, expected: dict[str, pa.Table]
) -> None:
    """Q18 reads lineitem whole, which does not fit the Polars arm's part of the budget: the
    arm gets no rows, so its refusal (which reads join keys: 180 MB of peak memory at SF 1)
    is never asked."""
    from dau_scheduler import strategies

    with Session(sf01, device="polars", mem_budget_mb=BUDGET) as session:
        compiled = session.compile(tpch.queries()["q18"])
        assert strategies.device_excluded(session, compiled)
        result = session.sql(tpch.queries()["q18"], device_share=0.5)
        assert compare_tables(result.table, expected["q18"]) is None
        assert result.execution is not None and result.execution.device_rows == 0
        assert result.split is not None and "gets no rows" in result.split.rationale
        assert getattr(session.device, "_unique", None) == {}  # no join key was read
    with Session(sf01, device="polars") as roomy:  # no budget: the arm is asked as before
        assert not strategies.device_excluded(roomy, roomy.compile(tpch.queries()["q18"]))


def test_split_rows_are_read_from_the_files_by_row_number(tmp_path: Path) -> None:
    """A lazy Session without a budget reads each arm's rows from the Parquet files where they
    are: DuckDB by ``file_row_number`` (``ParquetSource.range_sql``), Polars by its scan's
    slice. Three files of several row groups each; ranges that start and end inside files and
    row groups, span them, or hold no row, read the rows the files hold there, in order; and
    splits over them at any share equal DuckDB's answer."""
    import duckdb
    import pyarrow.parquet as pq

    from dau_scheduler.tables import resolve_sources

    folder = tmp_path / "data"
    (folder / "t").mkdir(parents=True)
    sizes, start = [1300, 1, 2699], 0
    for index, size in enumerate(sizes):
        part = pa.table(
            {
                "k": pa.array(range(start, start + size), pa.int64()),
                "g": pa.array([f"g{i % 7}" for i in range(start, start + size)]),
                "v": pa.array([(i % 97) / 4 for i in range(start, start + size)]),
            }
        )
        pq.write_table(part, folder / "t" / f"part{index}.parquet", row_group_size=500)
        start += size
    source = resolve_sources(folder)["t"]
    con = duckdb.connect()
    con.execute("SET threads = 4")
    for lo, hi in [(0, 4000), (0, 0), (17, 1299), (1299, 1301), (1300, 1301), (640, 3999)]:
        sql = source.range_sql(lo, hi)
        assert sql is not None
        assert con.sql(f"SELECT k FROM ({sql})").fetchall() == [(k,) for k in range(lo, hi)]
        # What keeps the order rows arrive in keeps the files' order across their pieces.
        numbered = f"SELECT k, row_number() OVER () FROM ({sql}) LIMIT 50 OFFSET 3"
        assert con.sql(numbered).fetchall() == [(k, k - lo + 1) for k in range(lo, hi)][3:53]
    # A file read part way is a scan of its own, under a row-number range DuckDB skips row
    # groups by; the files read whole between are one scan without one.
    pieces = (source.range_sql(640, 3999) or "").split(" UNION ALL ")
    assert [("file_row_number >=" in p, p.count(".parquet'")) for p in pieces] == [
        (True, 1),
        (False, 1),
        (True, 1),
    ]
    # (A filter on the float v would be answered unsplit: DuckDB prunes by statistics, which
    # skip NaN; test_filters_on_a_parquet_float_column_...)
    query = (
        "SELECT g, count(*), sum(v), min(k), max(k) FROM t WHERE g <> 'g3' GROUP BY g ORDER BY g"
    )
    expected = con.sql(query.replace("FROM t", f"FROM read_parquet('{folder}/t/*.parquet')"))
    for device in ("polars", "duckdb"):
        with Session(folder, device=device, lazy=True) as session:
            for share in (0.05, 0.3, 0.325, 0.9):
                result = session.sql(query, posture="collaborative", device_share=share)
                assert result.execution is not None, (device, share)
                assert compare_tables(result.table, expected.to_arrow_table()) is None
    con.close()


def test_files_with_a_column_named_filename_are_read_in_place(tmp_path: Path) -> None:
    """A range reads no ``filename`` of DuckDB's, so files holding a column of that name are
    read where they are too, their own column's values kept; only a column named
    ``file_row_number`` keeps DuckDB from numbering the rows."""
    import duckdb

    from dau_scheduler.execution import reads_in_place
    from dau_scheduler.tables import resolve_sources

    folder = tmp_path / "data"
    (folder / "t").mkdir(parents=True)
    con = duckdb.connect()
    for k in range(3):
        con.execute(
            f"COPY (SELECT range AS x, 'f' || (range % 4) AS filename FROM range({k * 900}, "
            f"{(k + 1) * 900})) TO '{folder / 't' / f'p{k}.parquet'}' (ROW_GROUP_SIZE 128)"
        )
    assert resolve_sources(folder)["t"].range_sql(100, 2000) is not None
    query = "SELECT filename, count(*), sum(x) FROM t GROUP BY filename ORDER BY filename"
    expected = con.sql(query.replace("FROM t", f"FROM '{folder}/t/*.parquet'")).to_arrow_table()
    for device in ("polars", "duckdb"):
        with Session(folder, device=device, lazy=True) as session:
            assert reads_in_place(session, session.compile(query))
            result = session.sql(query, device_share=0.4)
            assert result.execution is not None and result.execution.device_rows > 0
            assert compare_tables(result.table, expected) is None
    (tmp_path / "n").mkdir()
    con.execute(f"COPY (SELECT 1 AS file_row_number) TO '{tmp_path / 'n' / 'n.parquet'}'")
    assert resolve_sources(tmp_path / "n")["n"].range_sql(0, 1) is None
    con.close()


@pytest.mark.parametrize("strategy", ["chunked", "streamed"])
@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_chunks_read_by_pyarrow_stand_for_duckdbs_scan(
    tmp_path: Path, strategy: str, device: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """Chunks are read by pyarrow, which reads a TIMESTAMP(MILLIS) column as DuckDB's
    TIMESTAMP_MS (DuckDB's scan: TIMESTAMP) and an INTERVAL as 12 raw bytes: the first is cast
    to what DuckDB's scan reads, the second refused by name. Polars' reader is not asked about
    the INTERVAL file (it panicked, printing a backtrace)."""
    _, folder, oracle = make_odd_types(tmp_path / "odd")
    with Session(folder, device=device, mem_budget_mb=64, strategy=strategy) as s:
        s.chunk_rows = 700
        assert problems(s, oracle) == []
        refusal = s.sql("SELECT count(*) FROM t WHERE iv > INTERVAL 3 DAY").refusal
        assert refusal is not None and "column iv" in refusal
    assert "panicked" not in capfd.readouterr().err


def test_the_spill_folder_goes_with_the_session(
    sf01: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB spills to a folder of the Session's own under a budget; closing the Session
    removes it (168 were left in /tmp by one day's tests and sweeps)."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with Session(sf01, device="duckdb", mem_budget_mb=BUDGET) as s:
        s.sql(tpch.queries()["q06"])
        assert len(list(tmp_path.glob("dau-spill-*"))) == 1
    assert list(tmp_path.glob("dau-spill-*")) == []


def test_columns_duckdb_renames_are_not_read_by_pyarrow(tmp_path: Path) -> None:
    """DuckDB's scan names a file's second column 'C' as C_1 and an unnamed one C2; pyarrow
    keeps the file's names, so a chunk read for ``count(C_1)`` held no such column (DuckDB's
    bug13053.parquet: count 0 for 3). Such a table is refused on the chunk path, answered
    unsplit."""
    import duckdb
    import pyarrow.parquet as pq

    rows = pa.Table.from_arrays(
        [pa.array(range(3000)), pa.array(range(3000)), pa.array([None, 7, 9] * 1000)],
        names=["c", "C", ""],
    )
    pq.write_table(rows, tmp_path / "t.parquet", row_group_size=500)
    oracle = duckdb.connect()
    oracle.execute(f"CREATE VIEW t AS FROM read_parquet('{tmp_path / 't.parquet'}')")
    with Session(tmp_path, device="duckdb", mem_budget_mb=64, strategy="chunked") as s:
        s.chunk_rows = 700
        for sql in ("SELECT count(C_1), sum(C_1) FROM t", "SELECT count(C2), max(C2) FROM t"):
            result = s.sql(sql)
            assert compare_tables(result.table, oracle.sql(sql).to_arrow_table()) is None
            assert result.refusal is not None and "names its columns" in result.refusal


@pytest.mark.parametrize(
    "name", ["rle_malicious_bitwidth.parquet", "byte_array_decimal_empty_value.parquet"]
)
def test_a_file_pyarrow_cannot_read_is_answered_by_duckdb(tmp_path: Path, name: str) -> None:
    """Chunks are read by pyarrow; a file it cannot read and DuckDB can (two of DuckDB's own
    test files) crashed the split, in the column-width estimate or the chunk reader. The
    width estimate now falls back to Parquet's metadata, and a chunk pyarrow cannot read is a
    failure of the reader: no arm ran, and DuckDB answers the query unsplit."""
    import shutil

    import duckdb

    shutil.copy(Path(__file__).parent / "fixtures" / "parquet" / name, tmp_path / "t.parquet")
    oracle = duckdb.connect()
    oracle.execute(f"CREATE VIEW t AS FROM read_parquet('{tmp_path / 't.parquet'}')")
    last = oracle.sql("FROM t").columns[-1]
    with Session(tmp_path, device="duckdb", mem_budget_mb=64, strategy="chunked") as s:
        for sql in ("SELECT count(*) FROM t", f'SELECT count("{last}"), min("{last}") FROM t'):
            result = s.sql(sql)
            assert compare_tables(result.table, oracle.sql(sql).to_arrow_table()) is None, sql
            assert result.fallback is not None and "pyarrow cannot read" in result.fallback


class _CountingArm(PolarsArm):
    """The Polars arm, counting the queries whose partial it runs at once."""

    def __init__(self) -> None:
        super().__init__()
        self.inside, self.most = 0, 0
        self._count = threading.Lock()

    def _enter(self) -> None:
        with self._count:
            self.inside += 1
            self.most = max(self.most, self.inside)

    def _leave(self) -> None:
        with self._count:
            self.inside -= 1

    def run_partial_rows(self, compiled: Any, rows: pa.Table) -> pa.Table:
        self._enter()
        try:
            time.sleep(0.02)  # long enough that a second query would arrive meanwhile
            return super().run_partial_rows(compiled, rows)
        finally:
            self._leave()


def test_queries_from_several_threads_take_turns_under_the_budget(
    sf01: Path, expected: dict[str, pa.Table]
) -> None:
    """The budget is the Session's: queries from several threads each plan for all of it, so
    they run one at a time (six at once ran DuckDB out of its limit, unsplit answer too)."""
    arm = _CountingArm()
    names = ["q01", "q03", "q05", "q06", "q10", "q12"] * 2
    with Session(sf01, device=arm, mem_budget_mb=BUDGET) as session:

        def run(name: str) -> pa.Table:
            return session.sql(tpch.queries()[name], device_share=0.5).table

        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(run, names))
    for name, answer in zip(names, answers, strict=True):
        assert compare_tables(answer, expected[name]) is None, name
    assert arm.most == 1


@pytest.mark.parametrize(
    "options",
    [
        {"device": "polars", "lazy": True},
        {"device": "duckdb", "mem_budget_mb": 64, "strategy": "chunked", "chunk_rows": 3},
        {"device": "polars", "mem_budget_mb": 64, "strategy": "streamed", "chunk_rows": 3},
    ],
)
def test_filters_on_a_parquet_float_column_are_answered_as_duckdb_reads_the_files(
    tmp_path: Path, options: dict[str, Any]
) -> None:
    """DuckDB skips a row group whose statistics rule a filter out, and Parquet statistics skip
    NaN, which DuckDB ranks above every number: over the file ``x > 5`` and even ``isnan(x)``
    count 0 where the rows hold 2 NaN. A chunk read by pyarrow, or the Polars arm's own scan,
    counted them (2 for 0, found by the random differential over Parquet ways); a comparison
    outside a filter is folded by the same statistics."""
    import pyarrow.parquet as pq

    data = pa.table({"x": [-685.2, float("nan"), float("nan"), 1.0, 0.5, 2.0], "k": range(6)})
    pq.write_table(data, tmp_path / "t.parquet", row_group_size=3)
    with Session(tmp_path, **options) as session:
        for sql in [
            "select count(*) as c from t where x > 5",
            "select count(*) as c from t where isnan(x)",
            "select k from t join t as u using (k) where u.x >= 'nan'::double",
            # Outside a filter too: DuckDB folds x > 0 by the statistics (twenty-third session:
            # GROUP BY x > 0 gave 2 groups over the files, 3 through pyarrow's chunks).
            "select x > 0 as g, count(*) as c from t group by g",
            "select sum(case when x < 1 then 1 else 0 end) as c from t",
        ]:
            expected = session.host.cursor().sql(sql).to_arrow_table()
            result = session.sql(sql, device_share=0.5)
            assert compare_tables(result.table, expected, ordered=False) is None, sql
            assert result.refusal is not None and "statistics" in result.refusal, sql
        # No float in the filter: split as before.
        assert (
            session.sql("select sum(x) as s from t where k > 1", device_share=0.5).refusal is None
        )


def _cgroup_tree(root: Path, version: int, limit: str, usage: int, inactive: int) -> None:
    """A /proc and /sys tree as a container's kernel writes it (cgroup v1 or v2)."""
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/meminfo").write_text(
        "MemTotal:       24683652 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n"
    )
    if version == 2:
        (root / "proc/self/cgroup").write_text("0::/box/job\n")
        group = root / "sys/fs/cgroup/box/job"
        files = ("memory.max", "memory.current", "inactive_file")
    else:
        (root / "proc/self/cgroup").write_text("5:devices:/x\n4:memory:/box/job\n0::/\n")
        group = root / "sys/fs/cgroup/memory/box/job"
        files = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
    group.mkdir(parents=True)
    (group / files[0]).write_text(limit + "\n")
    (group / files[1]).write_text(f"{usage}\n")
    (group / "memory.stat").write_text(f"cache 5\n{files[2]} {inactive}\n")
    parent = group.parent  # an ancestor without a limit ("max", or v1's 2**63 rounded)
    (parent / files[0]).write_text("max\n" if version == 2 else "9223372036854771712\n")


@pytest.mark.parametrize("version", [1, 2])
def test_memory_readings_follow_a_containers_limit(tmp_path: Path, version: int) -> None:
    """A control group's limit is the memory a process may hold (DuckDB's default memory_limit
    reads it too); what it holds beyond reclaimable file cache is not available."""
    from dau_scheduler import machine

    mib = 1 << 20
    _cgroup_tree(tmp_path, version, str(1000 * mib), 300 * mib, 100 * mib)
    assert machine.memory_total(tmp_path) == 1000 * mib
    assert machine.memory_available(tmp_path) == 800 * mib
    free = tmp_path / "free"
    _cgroup_tree(free, version, "max" if version == 2 else "9223372036854771712", 0, 0)
    assert machine.memory_total(free) == 24683652 * 1024
    assert machine.memory_available(free) == 20000000 * 1024
    assert machine.memory_available(tmp_path / "nothing") is None


def test_without_a_budget_the_polars_share_fits_the_memory_available(
    sf01: Path, expected: dict[str, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Polars arm has no byte limit, and a failed allocation aborts the process (Rust) or
    the kernel kills it past a container's limit (TPC-H SF 1 Q21 at share 0.9 in a 1000 MB
    control group). Without a budget its share is cut to what fits half the memory available,
    as under a budget; with room, nothing changes."""
    from dau_scheduler import machine

    q01, q18 = tpch.queries()["q01"], tpch.queries()["q18"]
    with Session(sf01, device="polars") as session:
        roomy = session.sql(q01, device_share=0.9)
        assert roomy.split is not None and roomy.split.device_share == 0.9
        monkeypatch.setattr(machine, "memory_available", lambda: 64 << 20)
        for name, sql in (("q01", q01), ("q18", q18)):
            result = session.sql(sql, device_share=0.9)
            assert compare_tables(result.table, expected[name]) is None, name
            assert result.split is not None and result.fallback is None, name
            assert result.split.device_share < 0.9, name
            assert "64 MB of memory available" in result.split.rationale, name
        adaptive = session.sql(q01, posture="adaptive")
        assert compare_tables(adaptive.table, expected["q01"]) is None
        assert adaptive.split is not None and adaptive.split.device_share < 1
        monkeypatch.setattr(machine, "memory_available", lambda: 1 << 20)
        none = session.sql(q18, device_share=0.9)  # the tables it reads whole do not fit
        assert none.split is not None and "it gets no rows" in none.split.rationale
        assert none.execution is not None and none.execution.device_rows == 0
        assert compare_tables(none.table, expected["q18"]) is None
