"""The Polars arm in a container's memory: each query in a fresh process inside a memory control
group (cgroup v1 or v2) of ``--limit-mb``, with and without the cut to the memory available.

    sudo python bench-queries/container_memory.py --scale 1 --limit-mb 1000 --share 0.9

Needs root and a writable memory controller (it makes a child group of its own and removes it).
Each query runs over the Parquet files (a one-shot ``Session(lazy=True)``, device ``polars``, the
given share), four ways: the host alone; as before decision 026 (Polars' in-memory engine, no
cut); the streaming engine without ``strategies.fit_available``; and with it (as now).
Reported: whether the process was killed, the share the split ran at, whether the answer equals
the TPC-H reference, the group's peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def _groups() -> tuple[Path, str]:
    """A new memory control group beside this process's: (its folder, the limit file's name)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "" and Path("/sys/fs/cgroup/cgroup.controllers").exists():
            base = Path("/sys/fs/cgroup") / path.lstrip("/")
            return base / f"dau-bench-{os.getpid()}", "memory.max"
        if "memory" in controllers.split(","):
            base = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            return base / f"dau-bench-{os.getpid()}", "memory.limit_in_bytes"
    raise SystemExit("no memory control group to make a child in (cgroup v1 or v2)")


def _peak(group: Path) -> int | None:
    for name in ("memory.max_usage_in_bytes", "memory.peak"):
        if (group / name).exists():
            return int((group / name).read_text()) >> 20
    return None


def _one(data: str, name: str, share: float, way: str) -> None:
    from dau_scheduler import Session, strategies, tpch

    if way in ("before", "uncut"):
        strategies.AVAILABLE_FRACTION = float("inf")
    with Session(Path(data), device="polars", lazy=True) as session:
        if way == "before":
            session.device.collect_engine = "in-memory"  # type: ignore[union-attr]
        result = session.sql(tpch.queries()[name], device_share=0.0 if way == "host" else share)
    scale = float(Path(data).name.removeprefix("tpch-sf")) if "tpch-sf" in data else None
    wrong = tpch.compare_reference(result.table, name, scale) if scale else "no reference"
    got = result.split.device_share if result.split is not None else None
    print(json.dumps({"share": got, "reference": wrong or "equal", "fallback": result.fallback}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--limit-mb", type=int, default=1000)
    parser.add_argument("--share", type=float, default=0.9)
    parser.add_argument("--queries", default="q01,q09,q18,q21")
    parser.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        data, name, share, way = args.one
        _one(data, name, float(share), way)
        return
    from dau_scheduler import tpch

    data = str(tpch.cached(args.scale))
    group, limit = _groups()
    group.mkdir()
    try:
        (group / limit).write_text(str(args.limit_mb << 20))
        for name in args.queries.split(","):
            for way in ("host", "before", "uncut", "cut"):
                if (group / "memory.max_usage_in_bytes").exists():  # (cgroup v1: a new peak)
                    (group / "memory.max_usage_in_bytes").write_text("0")
                command = [sys.executable, __file__, "--one", data, name, str(args.share), way]
                enter = f"echo $$ > {group / 'cgroup.procs'} && exec " + " ".join(command)
                done = subprocess.run(["sh", "-c", enter], capture_output=True, text=True)
                killed = done.returncode < 0 or done.returncode == 137
                found = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout else {}
                print(
                    f"{name} {way:5}: "
                    + ("KILLED" if killed else f"rc {done.returncode} {found}")
                    + f", group peak {_peak(group)} MiB",
                    flush=True,
                )
    finally:
        group.rmdir()


if __name__ == "__main__":
    main()
