from __future__ import annotations

import json
import math
import multiprocessing
from pathlib import Path

import pytest

from dau_scheduler import (
    LinkRate,
    NodeCost,
    ProfileCache,
    ProfileError,
    QueryProfile,
    host_identity,
    profile_from_spans,
)


def profile(**kw: object) -> QueryProfile:
    base: dict[str, object] = dict(
        plan_key="q1",
        host="h",
        rows=1000,
        fixed_seconds=0.002,
        per_row_seconds=1e-6,
        engine_version="2.0.1",
    )
    base.update(kw)
    return QueryProfile(**base)  # type: ignore[arg-type]


def test_estimate_is_fixed_plus_per_row() -> None:
    assert math.isclose(profile().estimate(5000), 0.002 + 5000e-6)


def test_staleness_by_rows_and_by_version_in_one_predicate() -> None:
    p = profile()
    assert not p.is_stale_for(5000, engine_version="2.0.1")
    assert p.is_stale_for(20000, engine_version="2.0.1")
    assert p.is_stale_for(50, engine_version="2.0.1")
    assert p.is_stale_for(1000, engine_version="2.1.0")
    assert profile(engine_version="").is_stale_for(1000, engine_version="")


def test_invalid_profiles_and_copies_are_caught() -> None:
    with pytest.raises(ValueError, match="per_row_seconds"):
        profile(per_row_seconds=float("nan"))
    broken = profile().model_copy(update={"fixed_seconds": -1.0})
    with pytest.raises(ProfileError, match="fixed_seconds"):
        broken.estimate(10)
    with pytest.raises(ValueError, match="seconds"):
        NodeCost(node="x", seconds=float("inf"), scales_with_rows=True)


def test_rescaled_grows_each_tables_reads_and_nothing_else() -> None:
    p = profile(
        fixed_seconds=0.010,
        table_rows={"orders": 100, "customer": 10, "lineitem": 400},
        table_seconds={"orders": 0.004, "customer": 0.001},
    )
    grown = p.rescaled({"orders": 300, "customer": 10, "lineitem": 1200, "nation": 25})
    # 0.005 outside the table reads stays; orders' 0.004 triples; customer's 0.001 stays
    assert grown.fixed_seconds == pytest.approx(0.005 + 0.012 + 0.001)
    assert grown.per_row_seconds == p.per_row_seconds and grown.rows == p.rows
    assert grown.table_rows == {"orders": 300, "customer": 10, "lineitem": 1200}
    assert grown.rescaled(p.table_rows).fixed_seconds == pytest.approx(p.fixed_seconds)
    assert profile().rescaled({"anything": 5}) == profile()  # nothing measured: unchanged
    with pytest.raises(ProfileError, match="lacks customer"):
        p.rescaled({"orders": 300})
    with pytest.raises(ProfileError, match="orders"):
        p.rescaled({"orders": -1, "customer": 10})


def test_table_seconds_are_part_of_the_fixed_cost() -> None:
    with pytest.raises(ValueError, match="cannot exceed"):
        profile(fixed_seconds=0.001, table_rows={"t": 5}, table_seconds={"t": 0.002})
    with pytest.raises(ValueError, match="table_rows lacks"):
        profile(table_rows={"t": 5}, table_seconds={"u": 0.001})
    with pytest.raises(ValueError, match="table_seconds"):
        profile(table_rows={"t": 5}, table_seconds={"t": float("nan")})


def test_seed_span_example_is_fifteen_ms_not_twenty_one() -> None:
    spans = [(0, 1000, "optimization"), (1000, 11000, "scan"), (5000, 15000, "filter")]
    p = profile_from_spans(
        spans, rows=1000, plan_key="q", host="h", is_fixed=lambda n: n == "optimization"
    )
    elapsed = p.fixed_seconds + p.per_row_seconds * 1000
    assert math.isclose(elapsed, 0.015)
    assert math.isclose(p.fixed_seconds, 0.001)
    costs = {n.node: n for n in p.nodes}
    assert math.isclose(costs["scan"].seconds, 0.010) and costs["scan"].scales_with_rows
    assert not costs["optimization"].scales_with_rows


def test_fixed_nodes_are_a_union_and_gaps_scale() -> None:
    spans = [(0, 1000, "plan"), (500, 1500, "plan"), (3000, 4000, "scan")]
    p = profile_from_spans(spans, rows=10, plan_key="q", host="h", is_fixed=lambda n: n == "plan")
    assert math.isclose(p.fixed_seconds, 0.0015)
    assert math.isclose(p.per_row_seconds * 10, 0.0025)


def test_bad_spans_are_named() -> None:
    with pytest.raises(ProfileError, match="at least one"):
        profile_from_spans([], rows=1, plan_key="q")
    with pytest.raises(ProfileError, match="forward"):
        profile_from_spans([(10, 5, "x")], rows=1, plan_key="q")
    assert profile_from_spans([(0, 5, "x")], rows=1, plan_key="q").host == host_identity()


def test_link_rate_validation_and_staleness() -> None:
    rate = LinkRate(
        host="h",
        device="gpu0",
        bytes_per_second=2e10,
        transfer_bytes=1 << 20,
        samples=(1.9e10, 2.1e10),
        measured_at=1000.0,
    )
    assert not rate.is_stale(now=1500.0, max_age_seconds=3600)
    assert rate.is_stale(now=10_000.0, max_age_seconds=3600)
    assert LinkRate(host="h", device="d", bytes_per_second=1.0, transfer_bytes=1).is_stale(
        now=1.0, max_age_seconds=1e9
    )
    with pytest.raises(ValueError, match="bytes_per_second"):
        LinkRate(host="h", device="d", bytes_per_second=0.0, transfer_bytes=1)


KEYS = ["plain", "a/b", "../../etc/passwd", "with space", "ünïcødé ☃", "..", "%41", "x--y"]


@pytest.mark.parametrize("key", KEYS)
def test_cache_keys_stay_under_root_and_round_trip(tmp_path: Path, key: str) -> None:
    root = tmp_path / "cache"
    cache = ProfileCache(root)
    p = profile(plan_key=key, host=key)
    path = cache.put(p)
    assert path.parent.resolve() == root.resolve()
    assert cache.get(key, key) == p
    rate = LinkRate(host=key, device=key, bytes_per_second=1e9, transfer_bytes=4096)
    assert cache.put_link_rate(rate).parent.resolve() == root.resolve()
    assert cache.get_link_rate(key, 4096, key) == rate
    assert {q.parent.resolve() for q in cache.entries()} == {root.resolve()}
    assert not list(tmp_path.glob("etc*"))


def test_distinct_keys_never_collide(tmp_path: Path) -> None:
    cache = ProfileCache(tmp_path)
    for key in KEYS:
        cache.put(profile(plan_key=key))
    assert len(list(cache.entries())) == len(KEYS)
    for key in KEYS:
        got = cache.get(key, "h")
        assert got is not None and got.plan_key == key


def test_missing_and_corrupt_entries_are_misses_with_a_warning(tmp_path: Path) -> None:
    cache = ProfileCache(tmp_path)
    assert cache.get("nothing", "h") is None
    path = cache.put(profile())
    path.write_text(path.read_text()[:20])
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert cache.get("q1", "h") is None
    path.write_text(json.dumps({"plan_key": "q1"}))
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert cache.get("q1", "h") is None


def test_an_entry_read_again_is_the_file_as_it_is_now(tmp_path: Path) -> None:
    # The cache keeps what it read until the file changes: a rewrite is seen at once, whether
    # through put (a new file renamed into place) or written over in place.
    cache = ProfileCache(tmp_path)
    cache.put(profile(rows=1000))
    first = cache.get("q1", "h")
    assert first is not None and cache.get("q1", "h") is first
    cache.put(profile(rows=2000))
    got = cache.get("q1", "h")
    assert got is not None and got.rows == 2000
    path = cache.put(profile(rows=3000))
    path.write_text(profile(rows=4000).model_dump_json())  # same file, same size
    got = cache.get("q1", "h")
    assert got is not None and got.rows == 4000
    path.unlink()
    assert cache.get("q1", "h") is None


def _writer(root: str, worker: int) -> None:
    cache = ProfileCache(root)
    for i in range(40):
        cache.put(
            profile(
                rows=1 + worker * 1000 + i,
                nodes=tuple(
                    NodeCost(node=f"n{j}", seconds=0.001, scales_with_rows=True) for j in range(50)
                ),
            )
        )


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_concurrent_writers_never_leave_a_torn_file(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w)) for w in range(3)]
    for proc in procs:
        proc.start()
    cache = ProfileCache(tmp_path)
    seen = 0
    while any(p.is_alive() for p in procs) or not seen:
        got = cache.get("q1", "h")  # a torn read warns, and this test makes that an error
        seen += got is not None
    for proc in procs:
        proc.join()
        assert proc.exitcode == 0
    final = cache.get("q1", "h")
    assert final is not None and len(final.nodes) == 50
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []
