"""Parquet files as a source of rows, read on demand (:class:`ParquetSource`): row counts and
column widths from the files' metadata, row ranges read by DuckDB's scan or by pyarrow in the
form DuckDB's scan gives (``reader_forms``). Re-exported by :mod:`dau_scheduler.tables`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from dau_scheduler.errors import SqlError
from dau_scheduler.lazy import empty_table
from dau_scheduler.reader_forms import ReaderForms, compare_readers

#: Rows read to estimate a Parquet table's Arrow width per column.
SAMPLE_ROWS = 4096


def wanted_columns(columns: Collection[str] | None) -> set[str] | None:
    """The lower-cased names of ``columns``; None for every column."""
    return None if columns is None else {c.lower() for c in columns}


def file_stamp(path: Path) -> tuple[int, ...] | None:
    """What tells the file at ``path`` changed: its device and inode (another file there, or a
    relative path read from another folder), size and modification time; None where it is
    gone."""
    try:
        status = path.stat()
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def _file_rows(meta: Any) -> int:
    """A Parquet file's rows: its row groups' counts, which readers read by (a file's own total
    can disagree: DuckDB's arrow/repeated_no_annotation.parquet says 0 over a group of 6)."""
    return sum(int(meta.row_group(g).num_rows) for g in range(meta.num_row_groups))


@dataclass(frozen=True)
class ParquetSource:
    """Parquet files read on demand, in file order; nothing is held but their metadata."""

    files: tuple[Path, ...]
    _meta: list[Any] = field(default_factory=list, compare=False, repr=False)
    #: Worked out at the first read by pyarrow: see :meth:`reader_forms`.
    _forms: list[ReaderForms] = field(default_factory=list, compare=False, repr=False)
    #: Each file's :func:`file_stamp` before its metadata was read (:meth:`changed`).
    _stamps: list[tuple[int, ...] | None] = field(default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        for file in self.files:
            self._stamps.append(file_stamp(file))
            try:
                self._meta.append(pq.ParquetFile(file).metadata)
            except (OSError, ValueError) as exc:
                raise SqlError(f"cannot read the Parquet metadata of {file}: {exc}") from exc

    def changed(self) -> Path | None:
        """The first file rewritten, replaced or removed since its metadata was read, or None.
        DuckDB reads a file as it is when a query runs; counts and row groups read before would
        cut the rows wrong (a view's file rewritten by COPY: 1,000 rows for 100,000)."""
        for file, stamp in zip(self.files, self._stamps, strict=True):
            if stamp is None or file_stamp(file) != stamp:
                return file
        return None

    def stale(self, cursor: Callable[[], Any]) -> bool:
        """Whether DuckDB would read other rows now than the metadata read says: a file
        changed since (:meth:`changed`); a view over a glob asks more (``ParquetViewSource``;
        ``cursor()`` is made only there)."""
        return self.changed() is not None

    @property
    def num_rows(self) -> int:
        return sum(_file_rows(m) for m in self._meta)

    def file_rows(self) -> list[int]:
        """Each file's rows (its row groups' counts), in file order."""
        return [_file_rows(m) for m in self._meta]

    def scan_options(self) -> str:
        """DuckDB's ``read_parquet`` options that read the files as the arms do: each file's
        own columns (a `key=value` folder is no partition here)."""
        return "hive_partitioning = false"

    @property
    def totals_agree(self) -> bool:
        """Whether each file's own row total is its row groups' (Polars' reader reads a file
        by its total: 0 rows of DuckDB's arrow/repeated_no_annotation.parquet, which holds 6)."""
        return all(int(m.num_rows) == _file_rows(m) for m in self._meta)

    def arrow_schema_names(self) -> list[str]:
        return list(self._meta[0].schema.to_arrow_schema().names)

    def column_nbytes(self, columns: Collection[str] | None = None) -> dict[str, int]:
        """Arrow bytes per column (of ``columns``, lower-case, or all): exact for fixed-width
        types (width x rows); for the others estimated from the first ``SAMPLE_ROWS`` rows read
        as Arrow, scaled to the table's rows (Parquet's own sizes are of encoded pages, often a
        fraction of the Arrow width). Only the variable-width columns asked for are read."""
        rows = self.num_rows
        schema = self._meta[0].schema.to_arrow_schema()
        wanted = wanted_columns(columns)
        sizes: dict[str, int] = {}
        variable = []
        for field_ in schema:
            if wanted is not None and field_.name.lower() not in wanted:
                continue
            try:
                width = field_.type.bit_width
            except ValueError:  # not fixed-width
                variable.append(field_.name)
                continue
            sizes[field_.name.lower()] = (width * rows + 7) // 8
        if variable:
            try:
                handle = pq.ParquetFile(self.files[0], pre_buffer=False)
                batches = handle.iter_batches(
                    batch_size=SAMPLE_ROWS, columns=variable, use_threads=False
                )
                batch = next(batches, None)
            except (OSError, pa.ArrowException):
                # A file pyarrow cannot read (DuckDB may: rle_malicious_bitwidth.parquet):
                # Parquet's own uncompressed sizes stand in.
                sizes.update(self._metadata_nbytes(variable))
                return sizes
            for name in variable:
                sample = batch.column(name) if batch is not None and batch.num_rows else None
                per_row = sample.nbytes / len(sample) if sample is not None else 0.0
                sizes[name.lower()] = int(per_row * rows)
        return sizes

    def _metadata_nbytes(self, names: list[str]) -> dict[str, int]:
        """The uncompressed bytes Parquet's metadata gives each of ``names`` (top-level
        columns: their leaves summed), over every file and row group."""
        wanted = {name.lower(): name for name in names}
        sizes = dict.fromkeys(wanted, 0)
        for meta in self._meta:
            for group in (meta.row_group(g) for g in range(meta.num_row_groups)):
                for chunk in (group.column(j) for j in range(group.num_columns)):
                    top = chunk.path_in_schema.split(".", 1)[0].lower()
                    if top in sizes:
                        sizes[top] += int(chunk.total_uncompressed_size)
        return sizes

    def arrow(self, columns: list[str] | None = None) -> pa.Table:
        tables = [pq.read_table(f, columns=columns) for f in self.files]
        return self._as_duckdb_reads(tables[0] if len(tables) == 1 else pa.concat_tables(tables))

    def mixed_types(self) -> str | None:
        """Where these files' columns differ in name or type (not in nullability): the first
        difference, named; else None. DuckDB reads every file as the first one's columns and
        types (a later file's INT64 cast to INT32, or an error); a split reads each chunk as
        its own file's types."""
        first = [(f.name, f.type) for f in self._meta[0].schema.to_arrow_schema()]
        for path, meta in zip(self.files[1:], self._meta[1:], strict=True):
            fields = [(f.name, f.type) for f in meta.schema.to_arrow_schema()]
            if fields == first:
                continue
            for (name, kind), (first_name, first_kind) in zip(fields, first, strict=False):
                if name != first_name or kind != first_kind:
                    return (
                        f"column {name} is {kind} in {path.name} and {first_name} is "
                        f"{first_kind} in {self.files[0].name}"
                    )
            return f"{path.name} holds other columns than {self.files[0].name}"
        return None

    def reader_forms(self) -> ReaderForms:
        """What pyarrow reads otherwise than DuckDB's scan of these files (worked out once)."""
        if not self._forms:
            self._forms.append(compare_readers(self.files[0]))
        return self._forms[0]

    def _as_duckdb_reads(self, table: pa.Table) -> pa.Table:
        return self.reader_forms().conform(table)

    def rows(self, columns: list[str] | None, start: int, stop: int) -> pa.Table:
        """Rows ``[start, stop)`` of the files' ``columns`` (all when None), reading only the
        row groups that hold them, one at a time."""
        pieces: list[pa.Table] = []
        offset = 0
        for path, meta in zip(self.files, self._meta, strict=True):
            if offset >= stop:
                break
            handle = None
            for index in range(meta.num_row_groups):
                size = int(meta.row_group(index).num_rows)
                lo, hi = max(start, offset), min(stop, offset + size)
                if lo < hi:
                    handle = handle or pq.ParquetFile(path, pre_buffer=False)
                    group = handle.read_row_group(index, columns=columns, use_threads=False)
                    pieces.append(group.slice(lo - offset, hi - lo))
                offset += size
        if not pieces:
            schema = pq.ParquetFile(self.files[0], pre_buffer=False).schema_arrow
            empty = empty_table(schema)
            empty = empty if columns is None else empty.select(columns)
            return self._as_duckdb_reads(empty)
        return self._as_duckdb_reads(pa.concat_tables(pieces))

    def range_sql(self, start: int, stop: int) -> str | None:
        """DuckDB's query of rows ``[start, stop)`` of the files, scanned where they are; None
        where a column of the files is itself named ``file_row_number``.

        A file read part way is a scan of that file alone under a ``file_row_number`` range
        (DuckDB skips the row groups outside it); the files read whole between are one scan;
        the pieces are joined by ``UNION ALL``, which DuckDB documents keeps its inputs' rows
        in order. One scan of all the files under a filter on ``filename`` and
        ``file_row_number`` together read every row group of a file read part way (a 10%
        range across one boundary took 1.54x the whole file, fifty-first session)."""
        if "file_row_number" in {n.lower() for n in self.arrow_schema_names()}:
            return None
        options = f"{self.scan_options()}, file_row_number = true"
        pieces: list[str] = []
        whole: list[str] = []

        def flush() -> None:
            if whole:
                listed = ", ".join(f"'{path}'" for path in whole)
                pieces.append(
                    f"SELECT * EXCLUDE (file_row_number) FROM read_parquet([{listed}], {options})"
                )
                whole.clear()

        offset = 0
        for path, meta in zip(self.files, self._meta, strict=True):
            size = _file_rows(meta)
            lo, hi = max(start, offset) - offset, min(stop, offset + size) - offset
            offset += size
            if lo >= hi:
                continue
            quoted = str(path).replace("'", "''")
            if lo == 0 and hi == size:
                whole.append(quoted)
                continue
            flush()
            pieces.append(
                f"SELECT * EXCLUDE (file_row_number) FROM read_parquet('{quoted}', {options}) "
                f"WHERE file_row_number >= {lo} AND file_row_number < {hi}"
            )
        flush()
        if not pieces:
            listed = str(self.files[0]).replace("'", "''")
            return f"SELECT * FROM read_parquet('{listed}', {self.scan_options()}) WHERE false"
        return " UNION ALL ".join(pieces)

    def batches(self, columns: list[str], rows: int) -> Iterator[pa.Table]:
        """The files' ``columns`` in row order, ``rows`` at a time (the last may be short).

        Read a row group at a time, without pre-buffering: pyarrow's ``iter_batches`` held
        ~5x a chunk's bytes in its reader at SF 1, row groups read one by one ~1x."""
        pending: list[pa.Table] = []
        count = 0
        for path in self.files:
            handle = pq.ParquetFile(path, pre_buffer=False)
            for index in range(handle.num_row_groups):
                group = handle.read_row_group(index, columns=columns, use_threads=False)
                start = 0
                while start < group.num_rows:
                    take = min(rows - count, group.num_rows - start)
                    pending.append(group.slice(start, take))
                    count += take
                    start += take
                    if count == rows:
                        yield self._as_duckdb_reads(pa.concat_tables(pending))
                        pending, count = [], 0
        if pending:
            yield self._as_duckdb_reads(pa.concat_tables(pending))


__all__ = ["SAMPLE_ROWS", "ParquetSource", "wanted_columns"]
