"""The Spark backend on a real local Spark (``local[2]``, four attempts per task, 127.0.0.1):
TPC-H over Spark equals DuckDB's unsplit answers, a Python worker killed mid-task still gives
the exact answer, the handle and the CLI work, and bad arguments are named before anything runs.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from conftest import OVERFLOWS_ON_A_SHARD, check_workers_in_threads, overflow_table
from dau_scheduler import Session, SplitError, tpch
from dau_scheduler.compare import compare_tables
from dau_scheduler.errors import ClusterError
from dau_scheduler.planner import encoded_data, spark_backend
from odd_types import make as make_odd_types
from odd_types import problems as odd_problems
from odd_types import write_unreadable_text

pytest.importorskip("pyspark")
pytest.importorskip("pandas")
if spark_backend._java_ok() is not None:  # pragma: no cover - these machines have Java 17
    pytest.skip("no Java 17 for Spark", allow_module_level=True)
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        connection = spark_backend.connect("spark:local[2]")
    assert connection.owned
    yield connection.spark
    connection.close()


def test_tpch_over_spark_equals_duckdb(
    spark: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    # Every other query (the suite's ten minutes on two cores; test_dask.py runs all 22 over
    # workers, and the partials Spark's workers run are the same DuckDB SQL).
    with Session(tpch_dir, device=None, cluster=spark) as s:
        for name, sql in list(tpch.queries().items())[::2]:
            result = s.sql(sql)
            assert compare_tables(result.table, tpch_expected[name]) is None, name
            ex = result.execution
            assert ex is not None and result.refusal is None, name
            rows = s.row_counts[result.plan.split_table or ""]
            assert sum(r for _, r, _ in ex.workers) == ex.host_rows == rows, name
    assert not spark.sparkContext._jsc.sc().isStopped()  # a given Spark is left running


def test_queries_from_several_threads_each_report_their_own_workers(
    spark: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    """Each query's ``execution.workers`` holds its own Python workers' rows (the backend kept
    the last query's on itself: four threads at once read each other's)."""
    check_workers_in_threads(spark, tpch_dir, tpch_expected, ["q01", "q06", "q13", "q19"] * 2)


def test_in_memory_tables_and_the_polars_device_over_spark(spark: Any) -> None:
    n = 5000
    fact = pa.table(
        {"k": [i % 7 for i in range(n)], "v": [float(i) for i in range(n)], "i": list(range(n))}
    )
    dim = pa.table({"k": list(range(7)), "name": [f"n{i}" for i in range(7)]})
    # min over integers: the Polars arm refuses MIN/MAX over floats (NaN).
    sql = (
        "select d.name, count(*) as c, sum(f.v) as s, min(f.i) as lo from fact f "
        "join dim d on f.k = d.k group by d.name order by d.name"
    )
    with Session({"fact": fact, "dim": dim}, device=None) as alone:
        want = alone.sql(sql).table
    with Session({"fact": fact, "dim": dim}, device="polars", cluster=spark) as s:
        for share in (None, 0.3):
            result = s.sql(sql, device_share=share)
            assert compare_tables(result.table, want) is None, share
            assert result.execution is not None and result.execution.workers, share


def test_parquet_ranges_held_by_workers_cover_part_of_the_rows(
    spark: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    # The cluster gets [cut, n): each task runs the rows its held range shares with that.
    with Session(tpch_dir, device="polars", cluster=spark) as s:
        # q18 also reads lineitem whole (a subquery): then q06 runs its ranges from that table.
        for name in ("q01", "q18", "q06"):
            for share in (0.3, 0.7, 0.3):  # the second 0.3 runs on ranges already held
                result = s.sql(tpch.queries()[name], device_share=share)
                assert compare_tables(result.table, tpch_expected[name]) is None, (name, share)
                ex = result.execution
                assert ex is not None and ex.device_rows > 0, (name, share)
                assert sum(r for _, r, _ in ex.workers) == ex.host_rows, (name, share)


def test_the_spark_encoded_data_backend(
    spark: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    handle = encoded_data(tpch_dir, backend="spark", cluster=spark)
    try:
        assert compare_tables(handle.fold(tpch.queries()["q01"]), tpch_expected["q01"]) is None
        assert handle.num_chunks >= 1
    finally:
        handle.close()


def _python_workers() -> list[int]:
    """The pids of pyspark's Python workers: the processes its daemon forked."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().split(")")[1].split()[1])
            command = Path(f"/proc/{parent}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if b"pyspark.daemon" in command:
            pids.append(int(entry.name))
    return pids


def test_a_python_worker_killed_mid_task_is_retried_exactly(
    spark: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    with Session(tpch_dir, device=None, cluster=spark) as s:
        assert s.cluster is not None
        s.sql(tpch.queries()["q06"])  # the rows are cached before the race
        s.cluster.tables.task_delay = 3.0
        got: dict[str, Any] = {}

        def query() -> None:
            try:
                got["result"] = s.sql(tpch.queries()["q06"])
            except Exception as exc:  # noqa: BLE001 - reported below
                got["error"] = exc

        running = threading.Thread(target=query)
        running.start()
        time.sleep(1.5)  # the tasks are sleeping in their Python workers now
        workers = _python_workers()
        assert workers
        os.kill(workers[0], signal.SIGKILL)
        s.cluster.tables.task_delay = 0.0  # the retry need not wait (the closure has 3.0)
        running.join(timeout=120)
        assert "error" not in got, got.get("error")
        assert compare_tables(got["result"].table, tpch_expected["q06"]) is None


@pytest.mark.parametrize(
    ("cluster", "named"),
    [
        ("spark:yarn", "unknown Spark cluster 'spark:yarn'"),
        ("spark:local[0]", "at least one slot"),
    ],
)
def test_bad_spark_arguments_are_named(tpch_dir: Path, cluster: str, named: str) -> None:
    with pytest.raises(ClusterError, match=named):
        Session(tpch_dir, device=None, cluster=cluster)


def test_missing_pyspark_or_java_is_named(tpch_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "pyspark.sql", None)
        with pytest.raises(ClusterError, match=r"needs pyspark.*\[spark\]"):
            Session(tpch_dir, device=None, cluster="spark:local[2]")
    monkeypatch.setenv("JAVA_HOME", "/nonexistent")
    assert "Java 17" in (spark_backend._java_ok() or "")


def test_the_cli_runs_over_spark(spark: Any, tpch_dir: Path) -> None:
    from typer.testing import CliRunner

    from dau_scheduler.cli import app

    ran = CliRunner().invoke(
        app,
        ["run", "q06", "--data", str(tpch_dir), "--device", "none", "--cluster", "spark:local[2]"],
    )
    assert ran.exit_code == 0, ran.output
    assert "python worker" in ran.output
    assert not spark.sparkContext._jsc.sc().isStopped()  # the CLI used the running Spark


def test_types_spark_cannot_hold_are_refused_or_carried_back(spark: Any, tmp_path: Path) -> None:
    """Spark has no TIME, holds timestamps in microseconds and arrays as lists: a partial of a
    TIME or TIMESTAMP_NS crashed the query, a TIMESTAMP_MS or fixed-size array came back as
    another type, and an in-memory table holding any such column failed every query. Now the
    columns Spark cannot hold are left out of its DataFrame (a query reading one is refused),
    the others are cast back to their own types on the worker and on the driver."""
    table, folder, oracle = make_odd_types(tmp_path / "odd")
    with Session(folder, device=None, cluster=spark) as s:
        assert odd_problems(s, oracle, share=None) == []
    in_memory = duckdb.connect()
    in_memory.register("t", table)
    with Session({"t": table}, device=None, cluster=spark) as s:
        assert odd_problems(s, in_memory, share=None) == []
        refusal = s.sql("SELECT count(*) FROM t WHERE tm IS NOT NULL").refusal
        assert refusal is not None and "t.tm" in refusal
        typed = s.sql("SELECT g, max(typeof(tms)), max(typeof(arr)) FROM t GROUP BY g")
        assert typed.refusal is None and typed.execution is not None


def _failed_tasks(spark: Any) -> int:
    """Every failed task attempt of the Spark jobs run so far (outside job groups)."""
    tracker = spark.sparkContext.statusTracker()
    failed = 0
    for job in tracker.getJobIdsForGroup():
        info = tracker.getJobInfo(job)
        for stage in info.stageIds if info is not None else ():
            found = tracker.getStageInfo(stage)
            failed += found.numFailedTasks if found is not None else 0
    return failed


def test_rows_a_worker_cannot_read_are_answered_unsplit(spark: Any, tmp_path: Path) -> None:
    """A Python worker reads its range with DuckDB's scan of every column; where that fails
    (text that is not UTF-8: DuckDB's invalid_utf8_*.parquet) while DuckDB on the driver
    answers the query, Spark's failed task raised; now the reader is named, answered unsplit.
    The worker returns the reader's error instead of failing its task: Spark does not retry."""
    write_unreadable_text(tmp_path)
    with Session(tmp_path, device=None, cluster=spark) as s:
        failed = _failed_tasks(spark)
        result = s.sql("SELECT count(*), sum(i) FROM t")
        assert result.table.to_pylist() == [{"count_star()": 3, "sum(i)": 6}]
        assert result.fallback is not None and "cannot read the rows" in result.fallback
        assert _failed_tasks(spark) == failed


def test_a_partial_a_workers_duckdb_raises_is_answered_unsplit(spark: Any) -> None:
    """A Python worker's DuckDB raising on its partial (an overflow in a filter the unsplit plan
    evaluates in another order) is the host's computed error: the unsplit query answers. Before,
    Spark's four attempts failed alike and the query raised a ClusterError where DuckDB
    answered (as on dask)."""
    with Session({"tab2": overflow_table()}, device="duckdb", cluster=spark) as s:
        failed = _failed_tasks(spark)
        result = s.sql(OVERFLOWS_ON_A_SHARD, device_share=0.5)
        assert result.table.column(0).to_pylist() == [None]
        assert result.fallback is not None and "OutOfRangeException" in result.fallback
        # Returned by the worker, not raised: no task was attempted again (Spark ran each
        # such task four times, ~7 s, before the query fell back).
        assert _failed_tasks(spark) == failed


def test_a_partial_too_large_to_carry_back_is_answered_unsplit(spark: Any) -> None:
    """A task's partial past ``most_task_bytes`` comes back as the worker's error, not as rows:
    a 50M-row cross product (filtered only above a UNION, DuckDB's
    test_filter_pushdown_large.test, whose filter now reaches the partial) filled a local
    Spark's heap, which killed the JVM and every later query. The host answers such a query
    unsplit; the Session goes on."""
    rows = pa.table({"i": pa.array(range(2000), pa.int64())})
    other = pa.table({"k": pa.array(range(50), pa.int64())})
    sql = "SELECT count(*) AS n FROM (SELECT DISTINCT i, k FROM t, u) q"  # 50,000 rows an arm
    with Session({"t": rows, "u": other}, device="duckdb", cluster=spark) as s:
        assert s.cluster is not None
        s.cluster.tables.most_task_bytes = 4096
        failed = _failed_tasks(spark)
        result = s.sql(sql, device_share=0.5)
        assert result.table.to_pylist() == [{"n": 100_000}]
        assert result.fallback is not None and "too large for Spark" in result.fallback
        assert _failed_tasks(spark) == failed
        with pytest.raises(SplitError, match="carried back"):
            s.sql(sql, device_share=0.5, strict=True)
        s.cluster.tables.most_task_bytes = 2**27
        assert s.sql("SELECT count(*) FROM t", device_share=0.5).execution is not None


def test_queries_reading_no_column_or_one_named_after_a_comma_split(spark: Any) -> None:
    """Only the columns a query reads cross to a Python worker. ``count(*)`` reads none, and
    DuckDB cannot register a table of no columns; ``x = k`` after a comma in FROM reads
    ``dc_c.k``, which the columns-read analysis bound as sqlglot does (to ``dc_b``). Both
    failed on the workers and were answered unsplit (tests/slt over ``--cluster spark``)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE dc_b AS SELECT range::INTEGER AS k FROM range(100)")
    con.execute("CREATE TABLE dc_c AS SELECT range::INTEGER AS k, 0 AS z FROM range(500)")
    con.execute("CREATE TABLE dc_d AS SELECT range::INTEGER AS k FROM range(50)")
    con.execute("CREATE TABLE e AS SELECT range::INTEGER AS x FROM range(20)")
    tables = {n: con.table(n).to_arrow_table() for n in ("dc_b", "dc_c", "dc_d", "e")}
    queries = [
        "SELECT count(*) FROM dc_c",
        "SELECT count(*) FROM dc_b JOIN dc_d USING (k), e JOIN dc_c ON x = k",
    ]
    with Session(tables, device="duckdb", cluster=spark) as s:
        for sql in queries:
            result = s.sql(sql, device_share=0.5, split_table="dc_c", strict=True)
            assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None, sql
            assert result.execution is not None and result.execution.host_rows > 0, sql


def test_hugeints_past_sparks_decimals_are_refused_or_answered_unsplit(spark: Any) -> None:
    """DuckDB writes a HUGEINT as Arrow's decimal128(38, 0), whose 128 bits reach 39 digits;
    Spark's DECIMAL(38) cannot hold such a value. A column holding one is left out of the
    table's DataFrame (a query reading it refused by name), and a partial computing one is
    answered unsplit. Before, caching the rows failed every query over the table
    (DuckDB's test/sql/aggregate/group/group_by_limits.test)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t(k HUGEINT)")
    con.execute(
        "INSERT INTO t VALUES (-170141183460469231731687303715884105728), "
        "(170141183460469231731687303715884105727), (1), (1)"
    )
    con.execute(
        "CREATE TABLE u AS SELECT range::HUGEINT * (10::HUGEINT ** 36)::HUGEINT AS h, "
        "range AS i FROM range(100)"
    )
    tables = {n: con.table(n).to_arrow_table() for n in ("t", "u")}
    with Session(tables, device="duckdb", cluster=spark) as s:
        grouped = s.sql("SELECT k, count(*) FROM t GROUP BY k ORDER BY 1", device_share=0.5)
        assert grouped.refusal is not None and "past 38 digits" in grouped.refusal
        counted = s.sql("SELECT count(*) FROM t", device_share=0.5, strict=True)
        assert counted.table.column(0).to_pylist() == [4]
        # Over Arrow, h is a DECIMAL(38, 0) (below 10 ** 38 here): the partial's HUGEINT sum is
        # past it.
        sql = "SELECT h::HUGEINT + h::HUGEINT // 2 AS x FROM u WHERE i > 97 ORDER BY x"
        past = s.sql(sql, device_share=0.1)
        want = s.host.cursor().sql(sql).to_arrow_table()  # DuckDB over the same Arrow tables
        assert want.column(0).to_pylist()[-1] > 10**38
        assert compare_tables(past.table, want) is None
        assert past.fallback is not None and "cannot hold a value" in past.fallback


def test_columns_named_with_a_dot_are_refused_by_name(spark: Any) -> None:
    """Spark's mapInArrow resolves a column named ``a.b`` as a struct's field and fails; DuckDB
    names an unaliased output so (``list_value(1, 10.5)``, test/sql/types). Such a column of
    an in-memory table is left out and a query reading it refused by name, where every query
    reading it failed; the table's other columns still split."""
    con = duckdb.connect()
    con.execute('CREATE TABLE t AS SELECT i AS "a.b", i % 3 AS k FROM range(100) r(i)')
    with Session({"t": con.table("t").to_arrow_table()}, device="duckdb", cluster=spark) as s:
        dotted = s.sql('SELECT sum("a.b") FROM t', device_share=0.5)
        assert dotted.refusal is not None and "a.b" in dotted.refusal
        assert dotted.table.column(0).to_pylist() == [4950]
        plain = s.sql("SELECT k, count(*) FROM t GROUP BY k ORDER BY k", device_share=0.5)
        assert plain.execution is not None and plain.table.column(1).to_pylist() == [34, 33, 33]


def test_fixed_size_arrays_holding_null_rows_cross_spark(spark: Any) -> None:
    """A fixed-size array crosses Spark as a list and is cast back; pyarrow crashed the Python
    worker (a segmentation fault, every attempt) casting a range whose every row is NULL, read
    from Spark's Arrow with a null values buffer (DuckDB's array_length.test). Columns to cast
    are now copied into buffers of their own first, on the worker and the driver."""
    con = duckdb.connect()
    con.execute("CREATE TABLE arrays(a INTEGER[3], i INTEGER)")
    con.execute("INSERT INTO arrays VALUES ([1, 2, 3], 1), ([4, 5, 6], 2), (NULL, 3), (NULL, 4)")
    with Session(
        {"arrays": con.table("arrays").to_arrow_table()}, device="duckdb", cluster=spark
    ) as s:
        for sql in (
            "SELECT length(a) AS n, i FROM arrays ORDER BY i",
            "SELECT a, i FROM arrays WHERE a IS NULL ORDER BY i",
        ):
            result = s.sql(sql, device_share=0.5, strict=True)
            want = s.host.cursor().sql(sql).to_arrow_table()
            assert compare_tables(result.table, want, ordered=True) is None, sql
