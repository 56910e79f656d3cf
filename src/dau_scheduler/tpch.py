"""TPC-H: data through tpchgen-cli (no network), and the 22 queries with validation parameters.

The helpers below (packaged query folders, a generator beside the interpreter, the scale check,
the cache) serve :mod:`dau_scheduler.tpcds` too.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path

from dau_scheduler.errors import SqlError
from dau_scheduler.paths import data_root

TABLES: tuple[str, ...] = (
    "customer",
    "lineitem",
    "nation",
    "orders",
    "part",
    "partsupp",
    "region",
    "supplier",
)


def query_folder(benchmark: str) -> Path:
    """The folder of ``benchmark``'s queries (``sql/<benchmark>`` in a checkout, packaged in a
    wheel)."""
    packaged = resources.files("dau_scheduler") / "_sql" / benchmark
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "sql" / benchmark
    if checkout.is_dir():
        return checkout
    raise SqlError(f"the {benchmark} queries are missing from this installation")


def queries() -> dict[str, str]:
    """The 22 queries by name (``q01`` .. ``q22``)."""
    folder = query_folder("tpch")
    return {p.stem: p.read_text() for p in sorted(folder.glob("q*.sql"))}


def generator(tool: str) -> str:
    """The path of the command ``tool``, beside this interpreter first, then on PATH."""
    beside = Path(sys.executable).parent / tool
    if beside.exists():
        return str(beside)
    found = shutil.which(tool)
    if found is None:
        raise SqlError(f"{tool} is not installed (pip install {tool})")
    return found


def check_scale(scale: float) -> float:
    """``scale`` as a float, or a named error when it is not a positive finite number."""
    if (
        isinstance(scale, bool)
        or not isinstance(scale, (int, float))
        or not math.isfinite(scale)
        or scale <= 0
    ):
        raise SqlError(f"scale must be a positive number, got {scale!r}")
    return float(scale)


def run_generator(command: list[str], out: Path, tables: Sequence[str]) -> Path:
    """Run a data generator writing ``<table>.parquet`` under ``out``; a failure or a missing
    table is a named error."""
    tool = Path(command[0]).name
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SqlError(f"{tool} failed ({done.returncode}): {done.stderr.strip()[:500]}")
    missing = [t for t in tables if not (out / f"{t}.parquet").exists()]
    if missing:
        raise SqlError(f"{tool} did not write {', '.join(missing)} under {out}")
    return out


def generate(scale: float, out: Path | str) -> Path:
    """Write TPC-H at ``scale`` as ``<table>.parquet`` files under ``out``; returns ``out``."""
    scale = check_scale(scale)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    command = [generator("tpchgen-cli"), "parquet", "-s", f"{scale:g}", f"--output-dir={out}"]
    return run_generator(command, out, TABLES)


def cache_folder(name: str, tables: Sequence[str], make: Callable[[Path], Path]) -> Path:
    """``data_root()/name``, made by ``make(folder)`` the first time (written beside it and
    renamed, so an interrupted run leaves no half folder)."""
    folder = data_root() / name
    if all((folder / f"{t}.parquet").exists() for t in tables):
        return folder
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    make(partial)
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def cached(scale: float) -> Path:
    """TPC-H at ``scale`` in the cache folder, generated the first time it is asked for."""
    scale = check_scale(scale)
    return cache_folder(f"tpch-sf{scale:g}", TABLES, lambda out: generate(scale, out))


__all__ = ["TABLES", "cached", "generate", "queries"]
