"""Scale-out on a real dask LocalCluster (worker processes, 127.0.0.1 only): TPC-H over the
workers (and the workers beside the Polars device) equals DuckDB's unsplit answers, the
differential property holds on a cluster, a worker killed mid-query costs time not rows, lost
scattered rows are a named error, and bad cluster arguments are named before anything runs."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import OVERFLOWS_ON_A_SHARD, check_workers_in_threads, overflow_table
from dau_scheduler import Session, SqlError, tpch
from dau_scheduler.compare import compare_tables
from dau_scheduler.errors import ClusterError
from dau_scheduler.planner import dask_backend, encoded_data
from odd_types import make as make_odd_types
from odd_types import problems as odd_problems
from odd_types import write_unreadable_text

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _cluster(workers: int = 2) -> Any:
    return dask_backend.local_cluster(workers, silence_logs=logging.CRITICAL)


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with _cluster() as cluster, distributed.Client(cluster) as c:
        yield c


def test_tpch_over_the_workers_equals_duckdb(
    client: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    with Session(tpch_dir, device=None, cluster=client) as s:
        for name, sql in tpch.queries().items():
            result = s.sql(sql)
            assert compare_tables(result.table, tpch_expected[name]) is None, name
            ex = result.execution
            assert ex is not None and result.refusal is None, name
            assert len(ex.workers) == 2, (name, ex.workers)  # both workers ran a shard
            rows = s.row_counts[result.plan.split_table or ""]
            assert sum(r for _, r, _ in ex.workers) == ex.host_rows == rows, name
            # the workers' tree fold after the last shard: reported, within the host's time
            assert 0.0 <= ex.worker_fold_seconds <= ex.host_seconds, name


def test_queries_from_several_threads_each_report_their_own_workers(
    client: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    """Each query's ``execution.workers`` holds its own shard tasks: the backends return them
    with the partial (four threads at once mixed them up: a query's workers counted other
    queries' rows)."""
    check_workers_in_threads(
        client, tpch_dir, tpch_expected, ["q01", "q03", "q06", "q13", "q19", "q08"] * 2
    )


def test_many_shards_fold_in_a_tree_on_the_workers(
    client: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    with Session(tpch_dir, device=None, cluster=client) as s:
        assert s.cluster is not None
        s.cluster.tables.num_shards = 9  # an odd count: one partial waits a level
        for name, sql in tpch.queries().items():
            result = s.sql(sql)
            assert compare_tables(result.table, tpch_expected[name]) is None, name
            assert result.execution is not None, name
            assert len(s.cluster.tables.placement(0, result.execution.host_rows)) >= 9, name
            assert sum(r for _, r, _ in result.execution.workers) == result.execution.host_rows
        # The variance family's moments fold in the same tree (their refold is no column op).
        sql = (
            "SELECT l_returnflag, stddev(l_quantity) AS s, var_pop(l_extendedprice) AS v, "
            "sem(l_discount) AS e FROM lineitem GROUP BY 1 ORDER BY 1"
        )
        # And the covariance family's co-moments.
        co_sql = (
            "SELECT l_returnflag, corr(l_extendedprice, l_quantity) AS r, "
            "regr_slope(l_extendedprice, l_quantity) AS b, regr_count(l_tax, l_discount) AS n "
            "FROM lineitem GROUP BY 1 ORDER BY 1"
        )
        # And the bitwise folds (refolded by the same call).
        bit_sql = (
            "SELECT l_linestatus, bit_and(l_partkey) AS a, bit_or(l_suppkey) AS o, "
            "bit_xor(l_orderkey) AS x FROM lineitem GROUP BY 1 ORDER BY 1"
        )
        for query in (sql, co_sql, bit_sql):
            result = s.sql(query)
            assert result.execution is not None, result.fallback
            with Session(tpch_dir, device=None) as alone:
                assert compare_tables(result.table, alone.sql(query).table) is None


def test_tpch_over_workers_and_the_polars_device(
    client: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    with Session(tpch_dir, device="polars", cluster=client) as s:
        for name, sql in tpch.queries().items():
            result = s.sql(sql, device_share=0.4)
            assert compare_tables(result.table, tpch_expected[name]) is None, name
            assert result.fallback is None, (name, result.fallback)
            if result.refusal is None:
                ex = result.execution
                assert ex is not None and ex.device_rows > 0 and ex.workers, name


def test_in_memory_tables_are_scattered_once_and_exact(client: Any) -> None:
    n = 3000
    fact = pa.table({"k": [i % 7 for i in range(n)], "v": [float(i) for i in range(n)]})
    dim = pa.table({"k": list(range(7)), "name": [f"n{i}" for i in range(7)]})
    sql = (
        "select d.name, count(*) as c, sum(f.v) as s from fact f join dim d on f.k = d.k "
        "group by d.name order by d.name"
    )
    with Session({"fact": fact, "dim": dim}, device=None) as alone:
        want = alone.sql(sql).table
    with Session({"fact": fact, "dim": dim}, device=None, cluster=client) as s:
        assert s.cluster is not None
        scattered = {name: len(f) for name, f in s.cluster.tables._scattered.items()}
        assert scattered == {"fact": 2, "dim": 2}  # one piece per worker, sent once
        for share in (None, 0.0):
            result = s.sql(sql, device_share=share)
            assert compare_tables(result.table, want) is None
            assert result.execution is not None and len(result.execution.workers) == 2


def test_the_dask_encoded_data_backend(
    client: Any, tpch_dir: Path, tpch_expected: dict[str, pa.Table]
) -> None:
    handle = encoded_data(tpch_dir, backend="dask", cluster=client)
    try:
        for name in ("q01", "q18"):
            assert compare_tables(handle.fold(tpch.queries()[name]), tpch_expected[name]) is None
        assert handle.num_chunks == 2
    finally:
        handle.close()


@pytest.mark.parametrize(
    ("cluster", "named"),
    [
        (42, "cluster must be a dask.distributed Client"),
        ("nowhere", "unknown cluster 'nowhere'"),
        ("local:0", "at least one worker"),
        ("tcp://127.0.0.1:9", "cannot reach the dask scheduler at tcp://127.0.0.1:9"),
    ],
)
def test_bad_cluster_arguments_are_named(
    tpch_dir: Path, cluster: Any, named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dask_backend, "CONNECT_TIMEOUT", 2)
    with pytest.raises(ClusterError, match=named):
        Session(tpch_dir, device=None, cluster=cluster)


def test_without_dask_the_error_names_the_extra(
    tpch_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(ClusterError, match=r"\[dask\]"):
        Session(tpch_dir, device=None, cluster="local:1")


def test_the_cli_runs_and_explains_over_a_cluster(client: Any, tpch_dir: Path) -> None:
    from typer.testing import CliRunner

    from dau_scheduler.cli import app

    address = client.scheduler.address
    runner = CliRunner()
    ran = runner.invoke(
        app, ["run", "q06", "--data", str(tpch_dir), "--device", "none", "--cluster", address]
    )
    assert ran.exit_code == 0, ran.output
    assert "worker tcp://127.0.0.1" in ran.output and "worker fold s" in ran.output
    explained = runner.invoke(
        app, ["explain", "q06", "--data", str(tpch_dir), "--cluster", address]
    )
    assert explained.exit_code == 0, explained.output
    assert explained.output.count("worker tcp://127.0.0.1") == 2
    bad = runner.invoke(app, ["run", "q06", "--data", str(tpch_dir), "--cluster", "nowhere"])
    assert bad.exit_code == 2 and "unknown cluster 'nowhere'" in bad.output


def test_a_budget_and_a_cluster_together_are_named(tpch_dir: Path) -> None:
    with pytest.raises(SqlError, match="cluster= and mem_budget_mb="):
        Session(tpch_dir, device=None, cluster="local:1", mem_budget_mb=256)


def _kill_a_busy_worker(c: Any, deadline: float = 20.0) -> str:
    """SIGKILL a worker process while it runs a shard task; its address."""
    pids = c.run(os.getpid)
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        busy = [w for w, keys in c.processing().items() if keys]
        if busy:
            os.kill(pids[busy[0]], signal.SIGKILL)
            return str(busy[0])
        time.sleep(0.05)
    raise AssertionError("no worker ever ran a task")


def test_a_worker_killed_mid_query_costs_time_not_rows(
    tpch_dir: Path, tpch_expected: dict[str, pa.Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(dask_backend.DELAY_ENV, "1.5")  # the workers inherit it
    with (
        _cluster() as cluster,
        distributed.Client(cluster) as c,
        Session(tpch_dir, device=None, cluster=c) as s,
    ):
        got: dict[str, Any] = {}

        def query() -> None:
            try:
                got["result"] = s.sql(tpch.queries()["q01"])
            except Exception as exc:  # noqa: BLE001 - reported below
                got["error"] = exc

        running = threading.Thread(target=query)
        running.start()
        killed = _kill_a_busy_worker(c)
        running.join(timeout=90)
        assert "error" not in got, got.get("error")
        result = got["result"]
        assert compare_tables(result.table, tpch_expected["q01"]) is None
        ex = result.execution
        assert ex is not None and sum(r for _, r, _ in ex.workers) == ex.host_rows
        assert killed  # the lost shard's task ran again elsewhere: every row is counted


def test_scattered_rows_lost_with_their_worker_are_a_named_error() -> None:
    n = 2000
    fact = pa.table({"k": [i % 5 for i in range(n)], "v": list(range(n))})
    with (
        _cluster() as cluster,
        distributed.Client(cluster) as c,
        Session({"fact": fact}, device=None, cluster=c) as s,
    ):
        sql = "select k, sum(v) as s from fact group by k order by k"
        assert s.sql(sql).execution is not None
        assert s.cluster is not None
        futures = s.cluster.tables._scattered["fact"]
        pids = c.run(os.getpid)
        holder = next(iter(c.who_has(futures[0]).values()))[0]
        os.kill(pids[holder], signal.SIGKILL)
        end = time.monotonic() + 20
        while futures[0].status == "finished" and time.monotonic() < end:
            time.sleep(0.05)
        with pytest.raises(ClusterError, match=r"lost.*table fact rows 0 to 1000"):
            s.sql(sql)


# -- the differential property, on a cluster ---------------------------------------------------

from test_sql_differential import rows, tables, wrapped  # noqa: E402


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=rows, pick=st.data())
def test_split_over_a_cluster_equals_unsplit_or_is_refused(
    client: Any, data: list[tuple[Any, ...]], pick: st.DataObject
) -> None:
    n = len(data)
    sql, ordered = pick.draw(wrapped(n), label="sql")
    share = pick.draw(st.sampled_from([0.0, 0.5, None]), label="share")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with Session(tables(data), device="duckdb") as alone:
            try:
                want = alone.host.cursor().sql(sql).to_arrow_table()
            except Exception:  # noqa: BLE001 - DuckDB fails it unsplit: nothing to compare
                return
        with Session(tables(data), device="duckdb", cluster=client) as s:
            try:
                result = s.sql(sql, device_share=share, split_table="fact")
            except Exception as exc:  # noqa: BLE001
                # only what DuckDB itself raises on a part of the rows (an overflow)
                assert "Overflow" in str(exc) or "overflow" in str(exc), exc
                return
    if result.refusal is not None or result.fallback is not None:
        assert compare_tables(result.table, want, ordered=ordered) is None
        return
    diff = compare_tables(result.table, want, ordered=ordered)
    assert diff is None, f"{sql} at share {share}: {diff}"


def test_types_pyarrow_reads_otherwise_over_the_workers(client: Any, tmp_path: Path) -> None:
    """The workers read their ranges of a Parquet split table with DuckDB's own scan: read by
    pyarrow, a TIMESTAMP(MILLIS) column was a TIMESTAMP_MS (``typeof`` said so for TIMESTAMP)
    and an INTERVAL 12 raw bytes (a crash). In memory, every type is exact."""
    table, folder, oracle = make_odd_types(tmp_path / "odd")
    with Session(folder, device=None, cluster=client) as s:
        assert odd_problems(s, oracle, share=None) == []
        interval = s.sql("SELECT count(*) FROM t WHERE iv > INTERVAL 3 DAY")
        assert interval.refusal is None and interval.execution is not None
    in_memory = duckdb.connect()
    in_memory.register("t", table)
    with Session({"t": table}, device=None, cluster=client) as s:
        assert odd_problems(s, in_memory, share=None) == []


def test_a_file_whose_row_total_is_not_its_row_groups_over_the_workers(
    client: Any, tmp_path: Path
) -> None:
    """A file's own row total of 0 over a row group of 6 (DuckDB's
    arrow/repeated_no_annotation.parquet) placed no rows on the workers: count 0 for 6."""
    import shutil

    fixture = Path(__file__).parent / "fixtures" / "parquet" / "repeated_no_annotation.parquet"
    shutil.copy(fixture, tmp_path / "t.parquet")
    with Session(tmp_path, device=None, cluster=client) as s:
        result = s.sql("SELECT count(*), sum(id) FROM t")
        assert result.table.to_pylist() == [{"count_star()": 6, "sum(id)": 21}]
        assert result.execution is not None


def test_a_file_pyarrow_cannot_read_is_a_named_error_for_the_device(
    client: Any, tmp_path: Path
) -> None:
    """On a cluster the Polars device loads its copy through pyarrow, which raised a bare
    OSError on a file out of specification (DuckDB's rle_malicious_bitwidth.parquet): now the
    Session names the table (DuckDB's own full read of it fails too)."""
    import shutil

    fixture = Path(__file__).parent / "fixtures" / "parquet" / "rle_malicious_bitwidth.parquet"
    shutil.copy(fixture, tmp_path / "t.parquet")
    with pytest.raises(SqlError, match="table 't' cannot be read"):
        Session(tmp_path, device="polars", cluster=client)


def test_a_file_changed_under_the_workers_is_answered_unsplit(client: Any, tmp_path: Path) -> None:
    """The workers hold the rows they read at opening; DuckDB reads a file as it is when the
    query runs. A query over a file rewritten since gave 1,000 rows for DuckDB's 100,000,
    split; it is answered unsplit now, by name."""
    path = tmp_path / "t.parquet"
    rows = "SELECT range AS x, range % 3 AS g FROM range({})"
    duckdb.sql(f"COPY ({rows.format(1000)}) TO '{path}'")
    sql = "SELECT count(*), sum(x) FROM t"
    with Session(tmp_path, device=None, cluster=client) as s:
        assert s.sql(sql).execution is not None
        duckdb.sql(f"COPY ({rows.format(100_000)}) TO '{path}'")
        result = s.sql(sql)
        assert (
            compare_tables(
                result.table, duckdb.sql(f"SELECT count(*), sum(x) FROM '{path}'").to_arrow_table()
            )
            is None
        )
        assert result.refusal is not None and "changed since the cluster's workers" in (
            result.refusal
        )


def test_rows_a_worker_cannot_read_are_answered_unsplit(client: Any, tmp_path: Path) -> None:
    """A worker reads its range with DuckDB's scan of every column; where that fails (text that
    is not UTF-8, an encrypted column: DuckDB's invalid_utf8_*.parquet), DuckDB on the driver
    still answers a query that reads no such value. The shard's task failed and the query raised
    the cluster's error; now the reader is named and the query answered unsplit."""
    write_unreadable_text(tmp_path)
    with Session(tmp_path, device=None, cluster=client) as s:
        result = s.sql("SELECT count(*), sum(i) FROM t")
        assert result.table.to_pylist() == [{"count_star()": 3, "sum(i)": 6}]
        assert result.fallback is not None and "cannot read the rows of t" in result.fallback
        with pytest.raises(duckdb.Error, match="UTF8"):  # DuckDB's own error where it reads s
            s.sql("SELECT max(s) FROM t")


def test_a_partial_a_workers_duckdb_raises_is_answered_unsplit(client: Any) -> None:
    """A worker's DuckDB raising on its partial is the host's computed error, as where the host
    runs in this process: the unsplit query answers (or raises DuckDB's own error). Before, the
    query failed with a ClusterError where DuckDB answered (found by the sqllogictest runner's
    ``--cluster`` mode over test/sql/cast)."""
    tab2 = overflow_table()
    with duckdb.connect() as con:
        con.execute("CREATE TABLE tab2 AS FROM tab2")
        want = con.sql(OVERFLOWS_ON_A_SHARD).to_arrow_table()
    with Session({"tab2": tab2}, device="duckdb", cluster=client) as s:
        result = s.sql(OVERFLOWS_ON_A_SHARD, device_share=0.5)
        assert compare_tables(result.table, want) is None
        assert result.fallback is not None and "a worker's DuckDB" in result.fallback
        assert "Overflow" in result.fallback


def test_the_sqllogictest_corpus_over_the_workers(client: Any) -> None:
    """The runner's ``--cluster`` mode: Arrow copies of each file's tables over the workers,
    against DuckDB over the same copies: no wrong answer, no crash, no answer where DuckDB
    raises over the copies (error_parity.test: a worker's overflow), and splits."""
    from dau_scheduler import slt

    corpus = Path(__file__).parent / "slt"
    outcomes: dict[str, int] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        stems = (
            "aggregate_decimals",
            "correlated_outputs",
            "whole_rows",
            "reserved_names",
            "holistic_aggregates",
        )
        for stem in (*stems, "error_parity"):
            report = slt.run_file(corpus / f"{stem}.test", "duckdb", 0.5, True, {"cluster": client})
            assert not any(report.outcomes[o] for o in slt.DEFECTS), report.details
            for kind, count in report.outcomes.items():
                outcomes[kind] = outcomes.get(kind, 0) + count
    assert outcomes.get("equal", 0) > 0 and outcomes.get("raised", 0) >= 8


def test_a_view_over_hive_folders_is_answered_unsplit(client: Any, tmp_path: Path) -> None:
    """DuckDB reads a `key=value` folder's value as a column of every row under it; the
    workers read the files' own columns. Such a view is answered unsplit over a cluster."""
    duckdb.sql(
        f"COPY (SELECT range AS x, range % 3 AS g FROM range(3000)) TO '{tmp_path / 'h'}' "
        "(FORMAT parquet, PARTITION_BY (g))"
    )
    con = duckdb.connect()
    con.execute(f"CREATE VIEW v AS FROM '{tmp_path / 'h'}/*/*.parquet'")
    sql = "SELECT g, count(*), sum(x) FROM v GROUP BY g ORDER BY g"
    with Session(con, device=None, cluster=client) as s:
        result = s.sql(sql)
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
        assert result.refusal is not None and "hive columns" in result.refusal
