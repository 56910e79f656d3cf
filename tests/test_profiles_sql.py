"""Measured profiles: DuckDB's JSON profiles, fitting, the cache, staleness, and postures."""

from __future__ import annotations

import json
import re
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from dau_scheduler import (
    ArmError,
    PostureError,
    ProfileCache,
    ProfileError,
    QueryProfile,
    Session,
    tpch,
)
from dau_scheduler.cli import app
from dau_scheduler.compare import compare_tables
from dau_scheduler.duckdb_profile import profile_from_duckdb, table_work
from dau_scheduler.link import knee_bytes
from dau_scheduler.profile import LinkRate, host_identity
from dau_scheduler.profiling import fit, fit_host, plan_key

FIXTURES = Path(__file__).parent / "fixtures" / "duckdb_profiles"


def live_profile(tmp_path: Path, sql: str, con: duckdb.DuckDBPyConnection) -> tuple[Path, float]:
    out = tmp_path / "profile.json"
    con.execute("SET enable_profiling = 'json'")
    con.execute(f"SET profiling_output = '{out}'")
    con.execute("SET profiling_mode = 'detailed'")
    t0 = time.perf_counter()
    con.sql(sql).fetchall()
    wall = time.perf_counter() - t0
    con.execute("SET enable_profiling = 'no_output'")
    return out, wall


def test_adapter_elapsed_matches_measured_wall(tmp_path: Path) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT range AS i, range % 1000 AS g FROM range(20000000)")
    sql = "SELECT g, sum(i * 2), count(*) FROM t GROUP BY g"
    ratios = []
    for _ in range(3):
        path, wall = live_profile(tmp_path, sql, con)
        profile = profile_from_duckdb(path, rows=20_000_000, plan_key="k")
        ratios.append(profile.estimate(profile.rows) / wall)
    assert abs(statistics.median(ratios) - 1.0) <= 0.10, ratios
    assert profile.engine_version == f"duckdb {duckdb.__version__}"
    fixed = {n.node for n in profile.nodes if not n.scales_with_rows}
    assert fixed <= {"planner", "optimizer", "physical_planner"} and fixed
    assert any("GROUP_BY" in n.node for n in profile.nodes)


def test_both_json_shapes_and_every_input_form(tmp_path: Path) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT range AS i FROM range(1000)")
    path, _ = live_profile(tmp_path, "SELECT sum(i) FROM t", con)
    as_dict = json.loads(path.read_text())
    for form in (path, str(path), path.read_text(), as_dict):
        assert profile_from_duckdb(form, rows=1000, plan_key="k").rows == 1000
    old = profile_from_duckdb(
        FIXTURES / "v1_shape.json", rows=1_000_000, plan_key="k", engine_version="duckdb 1.3.2"
    )
    assert old.fixed_seconds == pytest.approx(0.0004 + 0.0005 + 0.0001)
    assert old.estimate(1_000_000) == pytest.approx(0.0125)
    assert [n.node for n in old.nodes][-2:] == ["0:PERFECT_HASH_GROUP_BY", "1:SEQ_SCAN"]


@pytest.mark.parametrize("bad", ["{not json", '{"operator": []}', "[1, 2]"])
def test_bad_profiles_are_named(bad: str) -> None:
    with pytest.raises(ProfileError):
        profile_from_duckdb(bad, rows=1, plan_key="k")


def test_whole_table_reads_are_fixed_and_named_by_table(tpch_dir: Path, tmp_path: Path) -> None:
    """Q18's host partial reads lineitem twice: the split read (a rowid range) and, in the IN
    subquery, all of it. The subquery's aggregation is work on the whole table, not per row."""
    with Session(tpch_dir, device=None, cache=tmp_path / "cache") as s:
        compiled = s.compile(tpch.queries()["q18"])
        n = s.row_counts["lineitem"]
        cursor = s.host.cursor()
        out = tmp_path / "q18.json"
        cursor.execute("SET enable_profiling = 'json'")
        cursor.execute(f"SET profiling_output = '{out}'")
        cursor.execute("SET profiling_mode = 'detailed'")
        s.host.run_partial_on(cursor, compiled, 0, n // 2)
        cursor.execute("SET enable_profiling = 'no_output'")
        shares = table_work(out, split_table="lineitem", table_rows=s.row_counts)
        assert sum(shares.values()) == pytest.approx(1.0)
        assert set(shares) <= {"", "lineitem", "orders", "customer"}
        # the subquery's GROUP BY over all lineitem: about half the work on a quiet machine; a
        # share of the timings, so only its presence is asserted (a busy machine moves it)
        assert shares["lineitem"] > 0.1, shares
        plain = profile_from_duckdb(out, rows=n // 2, plan_key="k")
        split = profile_from_duckdb(
            out, rows=n // 2, plan_key="k", split_table="lineitem", table_rows=s.row_counts
        )
    assert split.estimate(n // 2) == pytest.approx(plain.estimate(n // 2))
    assert split.fixed_seconds > plain.fixed_seconds
    assert sum(split.table_seconds.values()) == pytest.approx(
        split.fixed_seconds - plain.fixed_seconds
    )
    assert set(split.table_rows) == set(split.table_seconds) | {"lineitem"}
    # without the arm's rowid range every lineitem scan is the split read
    doc = json.loads(out.read_text())
    text = json.dumps(doc).replace("rowid", "row_id")
    assert table_work(text, split_table="lineitem", table_rows=s.row_counts).get("lineitem") is None
    # a table whose rows are unknown cannot be grown, so its work is not booked to it
    unknown = table_work(doc, split_table="lineitem", table_rows={"lineitem": n})
    assert set(unknown) <= {"", "lineitem"}
    # 1.x flat profiles carry no plan to attribute: everything follows the split read
    v1 = FIXTURES / "v1_shape.json"
    assert table_work(v1, split_table="t", table_rows={"t": 1}) == {"": 1.0}


def test_session_profiles_carry_whole_table_reads(tpch_dir: Path, tmp_path: Path) -> None:
    with Session(tpch_dir, device=None, cache=tmp_path / "cache") as s:
        profile = s.profile(tpch.queries()["q18"], arm="host")
        assert s.cache.get(profile.plan_key, profile.host) == profile  # round trip, new fields too
        counts = dict(s.row_counts)
    assert {"lineitem", "orders"} <= set(profile.table_seconds)
    # (Parts of a whole: their float sum may pass it by an ulp.)
    assert sum(profile.table_seconds.values()) <= profile.fixed_seconds * (1 + 1e-9)
    assert profile.table_rows["lineitem"] == counts["lineitem"]
    doubled = profile.rescaled({t: 2 * n for t, n in counts.items()})
    growth = doubled.fixed_seconds - profile.fixed_seconds
    assert growth == pytest.approx(sum(profile.table_seconds.values()))
    assert doubled.per_row_seconds == profile.per_row_seconds


def test_fit_host_keeps_table_reads_within_the_fixed_cost() -> None:
    def run(rows: int, seconds: float, table: float) -> QueryProfile:
        return QueryProfile(
            plan_key="k",
            host="h",
            rows=rows,
            fixed_seconds=table,
            per_row_seconds=(seconds - table) / rows,
            table_rows={"t": 10, "o": 5},
            table_seconds={"o": table},
            engine_version="v",
        )

    fitted = fit_host([run(100, 0.011, 0.002), run(200, 0.021, 0.004), run(100, 0.011, 0.003)])
    assert fitted.fixed_seconds == pytest.approx(0.001) and fitted.rows == 200
    assert fitted.table_seconds == {"o": pytest.approx(0.001)}  # median 0.003, shrunk to fit


def test_fit_extrapolates_a_line() -> None:
    fixed, per_row = fit([(100, 0.011), (200, 0.021), (400, 0.041)])
    assert fixed == pytest.approx(0.001) and per_row == pytest.approx(1e-4)
    robust = fit([(100, 0.011), (200, 0.021), (300, 0.090), (400, 0.041)])
    assert robust[1] == pytest.approx(1e-4, rel=0.5)  # one outlier does not tilt the line
    with pytest.raises(ProfileError, match="two or more"):
        fit([(100, 0.1), (100, 0.2)])


@pytest.fixture
def session(tpch_dir: Path, tmp_path: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with Session(tpch_dir, device="polars", cache=tmp_path / "cache") as s:
            yield s


def test_profile_plan_and_collaborative_run(session: Session) -> None:
    sql = tpch.queries()["q06"]
    with pytest.raises(PostureError, match="dau profile QUERY --data DIR --arm host"):
        session.sql(sql, posture="collaborative")
    host = session.profile(sql, arm="host")
    assert host.rows == session.row_counts["lineitem"] and host.per_row_seconds >= 0
    assert host.fold_seconds > 0  # the fold of the whole partial, measured with it
    assert session.cache.get(host.plan_key, host.host) == host
    with pytest.raises(PostureError, match="--arm device"):
        session.plan(sql)
    device = session.profile(sql, arm="device")
    assert device.host.endswith("/polars") and device.engine_version.startswith("polars")
    split = session.plan(sql)
    assert split.posture == "collaborative" and split.device_share in (0.0, 1.0)
    assert "host's cores" in split.rationale
    result = session.sql(sql, posture="collaborative")
    expected = session.host.cursor().sql(sql).to_arrow_table()
    assert compare_tables(result.table, expected) is None
    assert result.profiled == () and result.split == split


def test_auto_measures_missing_profiles_once_and_says_so(session: Session) -> None:
    sql = tpch.queries()["q01"]
    first = session.sql(sql, posture="collaborative", profile="auto")
    assert first.profiled == ("host", "device")
    again = session.sql(sql, posture="collaborative", profile="auto")
    assert again.profiled == ()


def test_a_device_arm_failing_as_it_is_measured_answers_unsplit(tmp_path: Path) -> None:
    """A DECIMAL(38, 10) past the Polars arm's 26 integer digits is found as the arm reads the
    rows, not at planning: measuring its profile under ``profile="auto"`` failed the query
    with the arm's SqlError (``probes/holistic.py`` seed 5703). It is answered unsplit, saying
    why; ``Session.profile`` names the arm."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i % 3 AS k, i::UBIGINT AS u, "
        "CASE WHEN i = 7 THEN 1234567890123456789012345678.5 ELSE i END::DECIMAL(38, 10) AS d "
        "FROM range(2000) r(i)"
    )
    sql = "SELECT k, median(u), bit_and(u) FROM t WHERE d > 0 GROUP BY k ORDER BY k"
    expected = con.sql(sql).to_arrow_table()
    with Session(con, device="polars", cache=tmp_path / "cache") as session:
        result = session.sql(sql, posture="collaborative", profile="auto")
        assert compare_tables(result.table, expected) is None
        assert result.execution is None
        assert result.fallback is not None and "device arm failed" in result.fallback
        assert "could not load column t.d" in result.fallback
        with pytest.raises(ArmError, match="device arm failed: SqlError: polars arm could not"):
            session.profile(sql, arm="device")


def test_a_device_arm_panicking_as_it_is_measured_answers_unsplit(tmp_path: Path) -> None:
    """Polars' PanicException is a BaseException: a split's arm threads catch it, and so does
    measuring a profile (a Polars arm made to panic on its rows stands in for a Polars bug)."""
    import polars as pl

    from dau_scheduler.arms import PolarsArm

    class Panicking(PolarsArm):
        def run_partial(self, compiled: Any, start: int, stop: int) -> pa.Table:
            raise pl.exceptions.PanicException("index out of bounds")

    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i % 3 AS k, i AS v FROM range(2000) r(i)")
    sql = "SELECT k, sum(v) FROM t GROUP BY k ORDER BY k"
    with Session(con, device=Panicking(), cache=tmp_path / "cache") as session:
        result = session.sql(sql, posture="collaborative", profile="auto")
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
        assert result.fallback is not None and "PanicException" in result.fallback


def test_a_host_partial_failing_as_it_is_measured_answers_unsplit(tmp_path: Path) -> None:
    """The host's partial computes a SUM the unsplit query prunes and overflows there: as a
    split's host failure, the measurement's is answered by DuckDB's own plan."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i % 3 AS k, (i * 100000000000)::BIGINT AS b FROM range(5000) r(i)"
    )
    sql = "SELECT count(*) FROM (SELECT k, sum(b * 1000000000) s FROM t GROUP BY k)"
    with Session(con, device="polars", cache=tmp_path / "cache") as session:
        result = session.sql(sql, posture="collaborative", profile="auto")
        assert result.table.to_pylist() == [{"count_star()": 3}]
        assert result.fallback is not None and "host arm failed" in result.fallback


def test_stale_profiles_are_remeasured_not_trusted(session: Session) -> None:
    sql = tpch.queries()["q06"]
    session.sql(sql, posture="collaborative", profile="auto")
    compiled = session.compile(sql)
    key = plan_key(compiled, session.schema)
    host = session.cache.get(key)
    assert host is not None
    session.cache.put(host.model_copy(update={"engine_version": "duckdb 0.0.1"}))
    result = session.sql(sql, posture="collaborative")
    assert result.profiled == ("host (stale, re-measured)",)
    refreshed = session.cache.get(key)
    assert refreshed is not None and refreshed.engine_version == f"duckdb {duckdb.__version__}"
    tiny = host.model_copy(update={"rows": 10})
    assert tiny.is_stale_for(session.row_counts["lineitem"], engine_version=host.engine_version)


def test_adaptive_uses_cached_profiles_on_shared_cores(session: Session) -> None:
    sql = tpch.queries()["q06"]
    session.profile(sql, arm="host")
    session.profile(sql, arm="device")
    result = session.sql(sql)
    assert result.split is not None and result.split.posture == "adaptive"
    assert result.split.device_share in (0.0, 1.0)
    expected = session.host.cursor().sql(sql).to_arrow_table()
    assert compare_tables(result.table, expected) is None


def test_plan_key_ignores_row_counts_but_not_shape(tmp_path: Path) -> None:
    def key(rows: int, sql: str) -> str:
        data = {"t": pa.table({"a": list(range(rows))})}
        with Session(data, device=None, cache=tmp_path) as s:
            return plan_key(s.compile(sql), s.schema)

    assert key(10, "select sum(a) from t") == key(20, "SELECT SUM(a)   FROM t")
    assert key(10, "select sum(a) from t") != key(10, "select max(a) from t")


def test_corrupt_cache_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ProfileCache(tmp_path)
    p = QueryProfile(plan_key="k", host="h", rows=1, fixed_seconds=0, per_row_seconds=0)
    cache.put(p).write_text("{")
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert cache.get("k", "h") is None


def test_link_knee_and_no_gpu_message() -> None:
    rates = [
        LinkRate(host="h", device="d", bytes_per_second=r, transfer_bytes=b)
        for b, r in [(1 << 16, 2e9), (1 << 20, 9e9), (1 << 24, 20e9), (1 << 26, 22e9)]
    ]
    assert knee_bytes(rates) == 1 << 24
    result = CliRunner().invoke(app, ["link"])
    assert result.exit_code == 1 and "no CUDA GPU" in result.stderr


def test_cli_profile_plan_profiles(
    tpch_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAU_CACHE_DIR", str(tmp_path / "c"))
    runner = CliRunner()
    missing = runner.invoke(app, ["plan", "q06", "--data", str(tpch_dir), "--device", "duckdb"])
    assert missing.exit_code == 2 and "dau profile" in missing.stderr
    for arm in ("host", "device"):
        done = runner.invoke(
            app, ["profile", "q06", "--data", str(tpch_dir), "--device", "duckdb", "--arm", arm]
        )
        assert done.exit_code == 0, done.output
        # each arm's medians on its side of the cut: the device's first rows, the host's last
        side = r"rows 0-\d+ s" if arm == "device" else r"rows \d+-60175 s"
        assert len(re.findall(side, done.stdout)) == 4, done.stdout
    planned = runner.invoke(app, ["plan", "q06", "--data", str(tpch_dir), "--device", "duckdb"])
    assert planned.exit_code == 0 and "rationale" in planned.stdout
    listed = runner.invoke(app, ["profiles"])
    assert listed.exit_code == 0 and listed.stdout.count("q-") >= 2


def test_adaptive_without_profiles(tpch_dir: Path, tmp_path: Path) -> None:
    from conftest import device as make_device

    sql = tpch.queries()["q01"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with Session(tpch_dir, device="polars", cache=tmp_path / "a") as shared:
            result = shared.sql(sql)
            assert result.split is not None and "host runs alone" in result.split.rationale
            assert result.execution is not None and result.execution.device_rows == 0
        with Session(tpch_dir, device=make_device("polars-separate"), cache=tmp_path / "b") as gpu:
            result = gpu.sql(sql)
            ex = result.execution
            assert ex is not None and ex.posture == "adaptive"
            assert ex.device_rows > 0 and ex.host_rows > 0
            expected = gpu.host.cursor().sql(sql).to_arrow_table()
            assert compare_tables(result.table, expected) is None


def test_collaborative_measures_and_answers_where_the_rows_are_few_or_do_not_fold(
    tmp_path: Path,
) -> None:
    """Two classes the sqllogictest runner found with ``--posture collaborative`` (profiles
    measured for each query): a table of 0 or 1 rows cannot be measured at two row counts (a
    ProfileError reached the caller); a mode() whose largest counts tie over the whole table
    made the host profile's fold measurement raise the fold's refusal. Both are answered, as
    DuckDB answers them."""
    from dau_scheduler.arms import PolarsArm

    con = duckdb.connect()
    con.execute("CREATE TABLE e (i INTEGER)")
    con.execute("CREATE TABLE one AS SELECT 7 AS i")
    con.execute(
        "CREATE TABLE m AS SELECT * FROM (VALUES (1, 'b'), (1, 'a'), (1, 'a'), (1, 'b'), "
        "(1, 'a'), (2, 'z'), (2, 'y'), (3, NULL), (3, 'q')) t(g, v)"
    )
    queries = [
        "SELECT count(*), sum(i) FROM e",
        "SELECT count(*), sum(i) FROM one",
        "SELECT mode(v) IN ('y', 'z'), count(*) FROM m WHERE g = 2",
    ]
    with Session(con, device=PolarsArm(own_cores=True), cache=tmp_path / "cache") as session:
        for sql in queries:
            expected = con.sql(sql).to_arrow_table()
            for posture in ("collaborative", "adaptive"):
                got = session.sql(sql, posture=posture, profile="auto")
                assert compare_tables(got.table, expected) is None, (sql, posture)
        few = session.plan(queries[0], posture="collaborative")
        assert few.device_share == 0.0 and "has 0 rows, too few to measure" in few.rationale
        with pytest.raises(ProfileError, match="too few to measure two row counts"):
            session.profile(queries[1], arm="host")
        host = session.cache.get(session.plan_key(session.compile(queries[2])), host_identity())
    assert host is not None and host.fold_seconds == 0.0 and host.ranges
