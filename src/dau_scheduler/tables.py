"""Resolve the ``tables`` a Session is given into named Arrow tables, validating before loading.

Accepted: a directory of ``<name>.parquet`` files or ``<name>/`` folders of Parquet parts; a
mapping ``name -> path | pyarrow.Table | polars.DataFrame``; or a DuckDB connection whose tables
are read. Row order is the order the data is read in, and both arms number rows by it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from dau_scheduler.errors import SqlError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise SqlError(f"table name {name!r} must be a plain identifier (letters, digits, _)")
    if name.lower().startswith("__dau_"):
        raise SqlError(f"table name {name!r} uses the reserved prefix __dau_")
    return name.lower()


def _read_path(name: str, path: Path) -> pa.Table:
    if not path.exists():
        raise SqlError(f"table {name!r}: no such file or folder {path}")
    if path.is_dir():
        parts = sorted(path.glob("*.parquet"))
        if not parts:
            raise SqlError(f"table {name!r}: folder {path} holds no .parquet files")
        tables = [pq.read_table(part) for part in parts]
        return pa.concat_tables(tables)
    return pq.read_table(path)


def discover(folder: Path) -> dict[str, Path]:
    """``<name>.parquet`` files and ``<name>/`` folders of parts directly under ``folder``."""
    if not folder.is_dir():
        raise SqlError(f"data folder {folder} does not exist or is not a folder")
    found: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        if entry.is_file() and entry.suffix == ".parquet":
            found[_check_name(entry.stem)] = entry
        elif entry.is_dir() and any(entry.glob("*.parquet")):
            found[_check_name(entry.name)] = entry
    if not found:
        raise SqlError(f"data folder {folder} holds no <name>.parquet files or <name>/ folders")
    return found


def resolve_tables(tables: Any) -> dict[str, pa.Table]:
    """Named Arrow tables from any accepted ``tables`` argument (see the module docstring)."""
    if isinstance(tables, (str, Path)):
        return {name: _read_path(name, path) for name, path in discover(Path(tables)).items()}
    if isinstance(tables, duckdb.DuckDBPyConnection):
        names = [
            row[0]
            for row in tables.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
            ).fetchall()
        ]
        if not names:
            raise SqlError("the DuckDB connection holds no tables")
        return {_check_name(n): tables.table(f'"{n}"').to_arrow_table() for n in names}
    if isinstance(tables, Mapping):
        if not tables:
            raise SqlError("tables is an empty mapping")
        out: dict[str, pa.Table] = {}
        for name, value in tables.items():
            key = _check_name(name)
            if isinstance(value, pa.Table):
                out[key] = value
            elif isinstance(value, (str, Path)):
                out[key] = _read_path(name, Path(value))
            elif hasattr(value, "to_arrow") and type(value).__module__.startswith("polars"):
                out[key] = value.to_arrow()
            else:
                raise SqlError(
                    f"table {name!r}: expected a path, pyarrow.Table or polars.DataFrame, "
                    f"got {type(value).__name__}"
                )
        return out
    raise SqlError(
        "tables must be a data folder, a mapping of name -> table, or a DuckDB connection; "
        f"got {type(tables).__name__}"
    )


__all__ = ["discover", "resolve_tables"]
