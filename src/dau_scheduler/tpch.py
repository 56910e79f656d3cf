"""TPC-H: data through tpchgen-cli (no network), and the 22 queries with validation parameters."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
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


def _query_folder() -> Path:
    packaged = resources.files("dau_scheduler") / "_sql" / "tpch"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "sql" / "tpch"
    if checkout.is_dir():
        return checkout
    raise SqlError("the TPC-H queries are missing from this installation")


def queries() -> dict[str, str]:
    """The 22 queries by name (``q01`` .. ``q22``)."""
    folder = _query_folder()
    return {p.stem: p.read_text() for p in sorted(folder.glob("q*.sql"))}


def _generator() -> str:
    beside = Path(sys.executable).parent / "tpchgen-cli"
    if beside.exists():
        return str(beside)
    found = shutil.which("tpchgen-cli")
    if found is None:
        raise SqlError("tpchgen-cli is not installed (pip install tpchgen-cli)")
    return found


def _check_scale(scale: float) -> float:
    if (
        isinstance(scale, bool)
        or not isinstance(scale, (int, float))
        or not math.isfinite(scale)
        or scale <= 0
    ):
        raise SqlError(f"scale must be a positive number, got {scale!r}")
    return float(scale)


def generate(scale: float, out: Path | str) -> Path:
    """Write TPC-H at ``scale`` as ``<table>.parquet`` files under ``out``; returns ``out``."""
    scale = _check_scale(scale)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    command = [_generator(), "parquet", "-s", f"{scale:g}", f"--output-dir={out}"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SqlError(f"tpchgen-cli failed ({done.returncode}): {done.stderr.strip()[:500]}")
    missing = [t for t in TABLES if not (out / f"{t}.parquet").exists()]
    if missing:
        raise SqlError(f"tpchgen-cli did not write {', '.join(missing)} under {out}")
    return out


def cached(scale: float) -> Path:
    """TPC-H at ``scale`` in the cache folder, generated the first time it is asked for."""
    scale = _check_scale(scale)
    folder = data_root() / f"tpch-sf{scale:g}"
    if all((folder / f"{t}.parquet").exists() for t in TABLES):
        return folder
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    generate(scale, partial)
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


__all__ = ["TABLES", "cached", "generate", "queries"]
