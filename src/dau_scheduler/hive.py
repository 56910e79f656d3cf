"""Hive partition columns: the values DuckDB reads from a file's ``key=value`` folders.

DuckDB reads ``FROM 'dir/**/*.parquet'`` over ``COPY ... (PARTITION_BY (k))``'s output as the
files' own columns followed by one column per key (``dir/k=1/data_0.parquet`` holds ``k = 1``
in every row), typed by what the values look like (``BIGINT``, ``DATE``, ``VARCHAR``, ...) and
ordered as DuckDB orders the keys. Other readers read the files' own columns only. Here each
such column is a per-file constant, read from DuckDB itself (its values and types, one row per
file: :func:`partition_values`) and appended to every read of the files' rows
(:func:`appended`, :func:`polars_frame`; DuckDB's own range scan names the types,
:meth:`Partitions.scan_options`).

Taken only where DuckDB's columns are the files' own followed by exactly the keys every file's
folders name: a key of a file column's name (DuckDB reads the folder's value for it, the file's
own value lost: ``a=5/x.parquet`` holding ``a = 1``) or files under other keys are left to
DuckDB alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import polars as pl


def keys_of(file: Path) -> list[str]:
    """The keys of ``file``'s ``key=value`` folders, lower case, outermost first."""
    return [part.split("=", 1)[0].lower() for part in file.parent.parts if "=" in part]


@dataclass(frozen=True)
class Partitions:
    """The hive columns DuckDB adds reading some files: each one's DuckDB type, by name in its
    order, and their values, one row per file (DuckDB's values, as Arrow)."""

    types: dict[str, str]
    values: pa.Table

    def scan_options(self) -> str:
        """``read_parquet``'s options that read the columns as DuckDB typed them over every
        file (a range of the files alone could look like another type)."""
        types = ", ".join(
            "'" + name.replace("'", "''") + "': '" + kind + "'" for name, kind in self.types.items()
        )
        return f"hive_partitioning = true, hive_types = {{{types}}}"


def partition_values(
    con: duckdb.DuckDBPyConnection,
    read: str,
    files: Sequence[Path],
    counts: Sequence[int],
    own: Sequence[str],
    columns: Sequence[tuple[str, str]],
) -> Partitions | None:
    """The hive columns DuckDB adds reading ``files`` (``counts`` rows each, by ``read``, the
    ``read_parquet`` call's first argument as SQL; ``columns``: its columns' names and DuckDB
    types), none where it adds none; None where it reads them otherwise than as the files'
    ``own`` columns followed by the keys every file's folders name."""
    if [name for name, _ in columns[: len(own)]] != list(own):
        return None
    added = dict(columns[len(own) :])
    keys = {tuple(sorted(set(keys_of(file)))) for file in files}
    if not added:  # (a folder's key of a file column's name: DuckDB reads the folder's value)
        return Partitions({}, pa.table({})) if keys == {()} else None
    if keys != {tuple(sorted(name.lower() for name in added))} or "filename" in {
        name.lower() for name in own
    }:
        return None
    names = ", ".join('"' + name.replace('"', '""') + '"' for name in added)
    try:
        found = con.sql(
            f"SELECT filename, {names} FROM read_parquet({read}, filename = true) GROUP BY ALL"
        ).to_arrow_table()
    except duckdb.Error:
        return None
    where = {str(name): row for row, name in enumerate(found.column("filename").to_pylist())}
    if len(where) != found.num_rows:  # (a file read under two values: not one constant)
        return None
    rows = [where.get(str(file)) for file in files]
    if any(row is None and count for row, count in zip(rows, counts, strict=True)):
        return None  # (DuckDB named a file otherwise: its values unknown)
    return Partitions(added, found.select(list(added)).take(pa.array(rows, pa.int64())))


def _repeats(counts: Sequence[int], start: int, stop: int) -> np.ndarray[Any, Any]:
    """Each row of ``[start, stop)``'s file, as an index into the files (rows in file order,
    ``counts`` rows each)."""
    edges = np.concatenate(([0], np.cumsum(counts, dtype=np.int64)))
    lo = np.clip(edges[:-1], start, stop)
    hi = np.clip(edges[1:], start, stop)
    return np.repeat(np.arange(len(counts), dtype=np.int64), hi - lo)


def appended(
    table: pa.Table,
    values: pa.Table,
    counts: Sequence[int],
    start: int,
    columns: Sequence[str] | None,
) -> pa.Table:
    """``table`` (rows ``[start, start + rows)`` of the files' own columns) with the hive
    columns of ``columns`` (all where None) appended, in ``columns``' order."""
    rows = _repeats(counts, start, start + table.num_rows)
    if len(rows) != table.num_rows:  # pragma: no cover - metadata counts read the rows
        raise ValueError("the files hold other rows than their metadata counts")
    wanted = values.column_names if columns is None else list(columns)
    taken = pa.array(rows)
    for name in values.column_names:
        if name in wanted:
            table = table.append_column(values.schema.field(name), values.column(name).take(taken))
    return table if columns is None else table.select(list(columns))


def polars_frame(
    files: Sequence[Path], counts: Sequence[int], values: pa.Table, drop: Sequence[str]
) -> pl.LazyFrame:
    """Polars' scan of ``files`` (``counts`` rows each; less ``drop``) with each file's hive
    values as columns of the types Arrow gives DuckDB's, files in order.

    Polars' own hive reading (one scan of every file, typed by DuckDB's types) where it reads
    every file's values as DuckDB does, checked on one row of each file: a scan per file with
    the values as literals is 2.4x as slow over lineitem's four partitions, and its slices are
    not pushed into the files (a third of the rows from the middle took 8.6x as long). Else,
    those per-file scans."""
    import polars as pl

    typed = pl.from_arrow(values)
    assert isinstance(typed, pl.DataFrame)
    keys = typed.columns
    try:
        native = pl.scan_parquet(
            [str(file) for file in files], hive_partitioning=True, hive_schema=dict(typed.schema)
        )
        own = [c for c in native.collect_schema().names() if c not in keys and c not in drop]
        native = native.select([*own, *keys])
        starts = list(itertools.accumulate(counts, initial=0))[:-1]
        probes = [
            native.slice(at, 1).select(keys) for at, n in zip(starts, counts, strict=True) if n
        ]
        read = pl.concat(probes).collect() if probes else typed.clear()
        if read.equals(typed.filter(pl.Series([n > 0 for n in counts]))):
            return native
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError, ValueError):
        pass  # (Polars reads the folders otherwise: the values as literals, file by file)
    scans = [
        pl.scan_parquet(str(file))
        .drop(list(drop))
        .with_columns(
            [pl.lit(typed[name][index], dtype=typed.schema[name]).alias(name) for name in keys]
        )
        for index, file in enumerate(files)
    ]
    return pl.concat(scans, how="vertical")


__all__ = ["Partitions", "appended", "keys_of", "partition_values", "polars_frame"]
