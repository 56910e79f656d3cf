"""Partitioning the cores between the arms: the settings reach DuckDB and Polars."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CHECK = """
import json, sys
from dau_scheduler import Session  # first: it sets Polars' pool from DAU_DEVICE_THREADS
from dau_scheduler.arms import PolarsArm
import polars
with Session(sys.argv[1], device=PolarsArm(own_cores=True), threads=1) as s:
    threads = s.host.cursor().execute("SELECT current_setting('threads')").fetchone()[0]
    print(json.dumps({"duckdb": int(threads), "polars": polars.thread_pool_size(),
                      "shares": s.device.shares_host_cores}))
"""


def test_device_threads_and_host_threads_are_applied(tpch_dir: Path) -> None:
    env = {**os.environ, "DAU_DEVICE_THREADS": "1"}
    env.pop("POLARS_MAX_THREADS", None)
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(tpch_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"duckdb": 1, "polars": 1, "shares": False}
