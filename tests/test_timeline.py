"""A split's timeline: spans that match the execution, as Trace Event JSON and as a picture."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from conftest import device as make_device
from dau_scheduler import Session, tpch
from dau_scheduler.cli import app


def _tracks(events: list[dict]) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}


def test_fixed_split_trace_matches_the_execution(tpch_dir: Path, tmp_path: Path) -> None:
    with Session(tpch_dir, device="duckdb") as session:
        result = session.sql(tpch.queries()["q01"], device_share=0.5)
    ex = result.execution
    assert ex is not None
    path = ex.to_chrome_trace(tmp_path / "trace.json")
    events = json.loads(path.read_text())["traceEvents"]
    assert set(_tracks(events).values()) == {"device", "host", "fold"}
    spans = [e for e in events if e["ph"] == "X"]
    rows = {"device": 0, "host": 0}
    busy = {"device": 0.0, "host": 0.0}
    for e in spans:
        assert e["dur"] >= 0 and e["ts"] >= 0
        if e["cat"] in rows:
            rows[e["cat"]] += e["args"]["rows"]
            busy[e["cat"]] += e["dur"] / 1e6
    assert rows == {"device": ex.device_rows, "host": ex.host_rows}
    assert abs(busy["device"] - ex.device_seconds) < 1e-4
    assert abs(busy["host"] - ex.host_seconds) < 1e-4
    fold = [e for e in spans if e["cat"] == "fold"]
    assert len(fold) == 1 and abs(fold[0]["dur"] / 1e6 - ex.merge_seconds) < 1e-4


def test_adaptive_morsels_each_get_a_span(tpch_dir: Path, tmp_path: Path) -> None:
    with Session(tpch_dir, device=make_device("polars-separate")) as session:
        result = session.sql(tpch.queries()["q06"], posture="adaptive")
    ex = result.execution
    assert ex is not None and ex.posture == "adaptive"
    morsels = [s for s in ex.spans if s[0] != "fold"]
    assert len(morsels) >= 2
    assert sum(r for t, _, _, r in morsels if t == "device") == ex.device_rows
    assert sum(r for t, _, _, r in morsels if t == "host") == ex.host_rows
    picture = ex.timeline(tmp_path / "timeline.png")
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dau_run_writes_trace_and_timeline(tpch_dir: Path, tmp_path: Path) -> None:
    trace, picture = tmp_path / "t.json", tmp_path / "t.png"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "q03",
            "--data",
            str(tpch_dir),
            "--device",
            "duckdb",
            "--share",
            "0.5",
            "--trace",
            str(trace),
            "--timeline",
            str(picture),
            "--format",
            "csv",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(trace.read_text())["traceEvents"] and picture.stat().st_size > 1000


def test_chunked_splits_trace_every_chunk(tpch_dir: Path, tmp_path: Path) -> None:
    with Session(tpch_dir, device="duckdb", mem_budget_mb=16, strategy="streamed") as session:
        result = session.sql(tpch.queries()["q01"], device_share=0.5)
    ex = result.execution
    assert ex is not None and result.strategy is not None and result.strategy.chunks > 1
    arms = [s for s in ex.spans if s[0] != "fold"]
    assert sum(r for _, _, _, r in arms) == ex.device_rows + ex.host_rows
    assert sum(1 for s in ex.spans if s[0] == "fold") == result.strategy.chunks + 1
