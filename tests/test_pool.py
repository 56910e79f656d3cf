"""The pool (seed 004 on queries): WorkerPool, cloud_plan, cloud_resources, cloud_count_rows."""

from __future__ import annotations

import csv
import io
import itertools
import math
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dau_scheduler.errors import SizingError
from dau_scheduler.pool import WorkerPool, cloud_count_rows, cloud_plan, cloud_resources
from dau_scheduler.pool.cloud import CHUNK_FRACTION, MIB


@given(workers=st.integers(min_value=1, max_value=64), rows=st.integers(0, 10**6))
def test_shards_are_contiguous_near_equal_and_cover_every_row(workers: int, rows: int) -> None:
    pool = WorkerPool(workers)
    handle = pool.scatter(rows)
    shards = pool.shards(handle)
    assert shards[0]["start"] == 0 and shards[-1]["end"] == rows
    assert all(a["end"] == b["start"] for a, b in itertools.pairwise(shards))
    sizes = [s["end"] - s["start"] for s in shards]
    assert max(sizes) - min(sizes) <= 1 and len(shards) == max(1, min(workers, rows))
    assert [s["id"] for s in shards] == list(range(len(shards)))
    pool.release(handle)


def test_pool_maps_in_parallel_and_reduces() -> None:
    with WorkerPool(0) as pool:
        assert pool.n_workers >= 1
    pool = WorkerPool(4)
    handle = pool.scatter(10)
    barrier = threading.Barrier(4, timeout=10)

    def work(shard: dict[str, int]) -> list[float]:
        barrier.wait()  # all four shards run at once, or this times out
        return [float(shard["end"] - shard["start"]), 1.0]

    results = pool.map(handle, work)
    assert pool.allreduce_sum(results) == [10.0, 4.0]
    assert pool.allreduce_mean(results) == [2.5, 1.0]
    pool.release(handle)
    with pytest.raises(SizingError, match="released"):
        pool.shards(handle)
    with pytest.raises(SizingError, match="released"):
        pool.release(handle)
    with pytest.raises(SizingError, match="one length"):
        pool.allreduce_sum([[1.0], [1.0, 2.0]])
    with pytest.raises(SizingError, match="at least one"):
        pool.allreduce_mean([])
    with pytest.raises(SizingError, match="n_workers"):
        WorkerPool(-1)
    with pytest.raises(SizingError, match="n_rows"):
        pool.scatter(-5)
    pool.close()


def test_a_failing_shard_raises_after_all_finish() -> None:
    pool = WorkerPool(2)
    handle = pool.scatter(4)
    done: list[int] = []

    def work(shard: dict[str, int]) -> int:
        if shard["id"] == 0:
            raise RuntimeError("shard 0 failed")
        done.append(shard["id"])
        return shard["id"]

    with pytest.raises(RuntimeError, match="shard 0"):
        pool.map(handle, work)
    assert done == [1]
    pool.close()


def test_cloud_plan_strategies_and_keys() -> None:
    small = cloud_plan(1000, 10, 2048)
    assert small["strategy"] == "in_memory" and small["n_chunks"] == 1
    keys = {
        "n_rows",
        "n_cols",
        "bytes_total",
        "mem_budget_mb",
        "recommended_workers",
        "recommended_chunk_rows",
        "n_chunks",
        "estimated_seconds",
        "strategy",
    }
    assert keys <= set(small)
    chunked = cloud_plan(6_000_000, 16, 256)
    assert chunked["strategy"] == "chunked"
    assert chunked["recommended_chunk_rows"] * 128 <= CHUNK_FRACTION * 256 * MIB
    assert chunked["n_chunks"] == math.ceil(6_000_000 / chunked["recommended_chunk_rows"])
    streamed = cloud_plan(60_000_000, 16, 256, throughput=2e6)
    assert streamed["strategy"] == "streamed" and streamed["calibrated"]
    assert streamed["estimated_seconds"] == pytest.approx(30.0)
    assert cloud_plan(0, 1)["n_chunks"] == 0


@pytest.mark.parametrize(
    ("args", "kwargs", "named"),
    [
        ((-1, 3), {}, "n_rows"),
        ((10, 0), {}, "n_cols"),
        ((10, 3, 0), {}, "mem_budget_mb"),
        ((10, 3, float("nan")), {}, "mem_budget_mb"),
        ((10, 3), {"row_bytes": -2}, "row_bytes"),
        ((10, 3), {"throughput": 0}, "throughput"),
    ],
)
def test_cloud_plan_nonsense_is_named(args: tuple, kwargs: dict, named: str) -> None:
    with pytest.raises(SizingError, match=named):
        cloud_plan(*args, **kwargs)


def test_cloud_resources() -> None:
    found = cloud_resources()
    assert found["cpu_threads"] >= 1 and found["backend"] == "threads"
    assert {"os", "arch", "registry_dir", "tasks_dir", "memory_bytes", "gpus"} <= set(found)


AWKWARD = {
    "plain.csv": b"a,b\n1,2\n3,4\n",
    "crlf.csv": b"a,b\r\n1,2\r\n3,4\r\n",
    "no_final_newline.csv": b"a,b\n1,2\n3,4",
    "quoted.csv": b'a,b\n"x,y",2\n"multi\nline\r\nfield",3\n"say ""hi""",4\n',
    "empty.csv": b"",
    "header_only.csv": b"a,b\n",
    "header_only_no_newline.csv": b"a,b",
    "blank_lines.csv": b"a,b\n\n1,2\n\r\n3,4\n\n",
    "lone_cr.csv": b"a,b\r1,2\r3,4\r",
    "quoted_blank.csv": b'a\n""\n"\n\n"\n',
}


def _oracle(data: bytes, header: bool, delimiter: str = ",") -> int:
    text = data.decode()
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter) if r]
    return max(0, len(rows) - 1) if header else len(rows)


@pytest.mark.parametrize("name", sorted(AWKWARD))
@pytest.mark.parametrize("header", [True, False])
def test_count_rows_matches_a_csv_parser(tmp_path: Path, name: str, header: bool) -> None:
    path = tmp_path / name
    path.write_bytes(AWKWARD[name])
    assert cloud_count_rows(path, has_header=header) == _oracle(AWKWARD[name], header)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.text(alphabet='ab,"\n\r ', max_size=6), min_size=1, max_size=3), max_size=30
    ),
    block=st.integers(min_value=1, max_value=40),
)
def test_count_rows_random_files_in_small_blocks(rows: list[list[str]], block: int) -> None:
    import tempfile

    from dau_scheduler.pool import cloud

    sink = io.StringIO(newline="")
    csv.writer(sink, lineterminator="\r\n").writerows(rows)
    data = sink.getvalue().encode()
    with tempfile.NamedTemporaryFile(suffix=".csv") as handle:
        handle.write(data)
        handle.flush()
        assert cloud._count_csv_records(Path(handle.name), block) == _oracle(data, header=False)


def test_count_rows_parquet_and_bad_input(tmp_path: Path) -> None:
    pq.write_table(pa.table({"x": list(range(1234))}), tmp_path / "t.parquet", row_group_size=100)
    assert cloud_count_rows(tmp_path / "t.parquet") == 1234
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 nonsense")
    with pytest.raises(SizingError, match=r"broken\.parquet"):
        cloud_count_rows(tmp_path / "broken.parquet")
    with pytest.raises(SizingError, match="no such file"):
        cloud_count_rows(tmp_path / "absent.csv")
    (tmp_path / "t.tsv").write_bytes(b"a\tb\n1\t2\n")
    assert cloud_count_rows(tmp_path / "t.tsv", delimiter="\t") == 1
    with pytest.raises(SizingError, match="delimiter"):
        cloud_count_rows(tmp_path / "t.tsv", delimiter='"')
