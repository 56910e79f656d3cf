"""Resolve the ``tables`` a Session is given into named sources, validating before reading.

Accepted: a directory of ``<name>.parquet`` files or ``<name>/`` folders of Parquet parts; a
mapping ``name -> path | pyarrow.Table | polars.DataFrame``; or a DuckDB connection, used as it is
(its tables, types, settings, macros and views). Row order is the order the data is read in (a
connection's tables: ``rowid`` order), and both arms number rows by it.

A source is a :class:`ParquetSource` (``parquet_source.py``: files read when and as far as a
query needs them; row counts and column sizes come from the files' metadata), an
:class:`ArrowSource` (a table already in memory) or a :class:`ConnectionSource` (a table of a
user's connection). ``resolve_tables`` reads every source whole, for the resident path.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from dau_scheduler.errors import SqlError
from dau_scheduler.hive import Partitions, appended, partition_values
from dau_scheduler.parquet_source import SAMPLE_ROWS, ParquetSource, wanted_columns
from dau_scheduler.rewrite.views import View

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_name(name: str) -> str:
    """``name``'s key (lower case), or a named error for a name a Session does not take."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise SqlError(f"table name {name!r} must be a plain identifier (letters, digits, _)")
    if name.lower().startswith("__dau_"):
        raise SqlError(f"table name {name!r} uses the reserved prefix __dau_")
    return name.lower()


def _new_key(found: Mapping[str, object], name: str, where: str = "") -> str:
    """``name``'s key (see :func:`check_name`), or a named error where another of ``found``
    has it: SQL reads names without case, so a second would hide the first."""
    key = check_name(name)
    if key in found:
        raise SqlError(
            f"table {name!r}{where} has the name of another table given (SQL reads names "
            "without case; a file and a folder of parts are one name): rename one of them"
        )
    return key


@dataclass(frozen=True)
class ArrowSource:
    """A table already in memory."""

    table: pa.Table

    @property
    def num_rows(self) -> int:
        return int(self.table.num_rows)

    def column_nbytes(self, columns: Collection[str] | None = None) -> dict[str, int]:
        wanted = wanted_columns(columns)
        return {
            c.lower(): int(self.table.column(c).nbytes)
            for c in self.table.column_names
            if wanted is None or c.lower() in wanted
        }

    def arrow(self, columns: list[str] | None = None) -> pa.Table:
        return self.table if columns is None else self.table.select(columns)

    def batches(self, columns: list[str], rows: int) -> Iterator[pa.Table]:
        """The table's ``columns`` in order, ``rows`` at a time (zero-copy slices)."""
        table = self.table.select(columns)
        for start in range(0, table.num_rows, rows):
            yield table.slice(start, rows)


@dataclass(frozen=True)
class ConnectionSource:
    """A base table of the user's DuckDB connection, used where it is: nothing is copied for
    the host; rows are read as Arrow (by ``rowid`` range) only for a device arm or a chunk."""

    con: duckdb.DuckDBPyConnection
    name: str
    #: The catalog and schema the table lives in: the table is read by its full name, which a
    #: catalog ATTACHed under the same name with a default table cannot make ambiguous
    #: (DuckDB's test/sql/attach/attach_default_table.test).
    database: str = ""
    schema: str = ""

    @property
    def ref(self) -> str:
        """The table's name as this source reads it."""
        if not self.database:
            return _quote(self.name)
        return f"{_quote(self.database)}.{_quote(self.schema)}.{_quote(self.name)}"

    def _sql(self, columns: list[str] | None) -> str:
        cols = ", ".join(_quote(c) for c in columns) if columns else "*"
        return f"SELECT {cols} FROM {self.ref}"

    @property
    def num_rows(self) -> int:
        """The rowid span (``max(rowid) + 1``): row ranges are rowid ranges, and rows a DELETE
        removed leave gaps that the span still covers."""
        return self.span()[0]

    def span(self) -> tuple[int, int]:
        """``(rowid span, rows)`` as the table holds them now: ``max(rowid) + 1`` and
        ``count(*)`` (2.1 ms for TPC-H SF 1 lineitem, against 1.2 for the metadata read it
        replaced: ``bench-queries/rowid_span.py``).

        No metadata stands in for the scan: a checkpoint that drops a row group whose rows
        were all deleted leaves the rows kept (``estimated_size``) equal to the count with
        the rowids past the gap still numbered as before (DELETE of rowids 122,880 to 245,759
        of 400,000, CHECKPOINT: 277,120 rows kept and counted, rowids up to 399,999; a span
        of the count missed 122,880 rows; DuckDB's roaring storage tests, which delete every
        row and insert again, read no row at all). A table's own column named rowid hides the
        row numbers (no split cuts such a table: ``refusals``); where that column is no number,
        the count stands for both."""
        cursor = self.con.cursor()
        try:
            found = cursor.execute(
                f"SELECT coalesce(max(rowid) + 1, 0), count(*) FROM {self.ref}"
            ).fetchone()
        except duckdb.BinderException:
            found = cursor.execute(f"SELECT count(*), count(*) FROM {self.ref}").fetchone()
        return (int(found[0]), int(found[1])) if found else (0, 0)

    def column_nbytes(self, columns: Collection[str] | None = None) -> dict[str, int]:
        rows = self.num_rows
        wanted = wanted_columns(columns)
        names = [c for c in self.arrow_schema_names() if wanted is None or c.lower() in wanted]
        if not names:
            return {}
        sample = self.con.cursor().sql(f"{self._sql(names)} LIMIT {SAMPLE_ROWS}").to_arrow_table()
        if not sample.num_rows:
            return {name.lower(): 0 for name in sample.column_names}
        return {
            name.lower(): int(sample.column(name).nbytes * rows / sample.num_rows)
            for name in sample.column_names
        }

    def arrow(self, columns: list[str] | None = None) -> pa.Table:
        return self._in_rowid_order(columns, "")

    def head(self, columns: list[str] | None = None, rows: int = 0) -> pa.Table:
        """At most ``rows`` rows, in no set order, with the Arrow columns and types
        :meth:`arrow` gives."""
        return self.con.cursor().sql(f"{self._sql(columns)} LIMIT {rows}").to_arrow_table()

    def _in_rowid_order(self, columns: list[str] | None, where: str) -> pa.Table:
        """The rows in ``rowid`` order. A scan keeps that order where the connection preserves
        insertion order, and an ``ORDER BY rowid`` costs a sort (0.7 s of 0.85 for four columns
        of TPC-H SF 1 lineitem), so the rowids come along and the rows are sorted here only
        when they came otherwise."""
        cols = ", ".join(_quote(c) for c in columns) if columns else "*"
        table = (
            self.con.cursor()
            .sql(f"SELECT rowid AS __dau_rowid, {cols} FROM {self.ref}{where}")
            .to_arrow_table()
        )
        import pyarrow.compute as pc  # (~25 ms to import: a one-shot query never needs it)

        rowids = table.column(0)
        if (
            len(rowids) > 1
            and not pc.all(pc.greater(rowids.slice(1), rowids.slice(0, len(rowids) - 1))).as_py()
        ):
            table = table.sort_by([("__dau_rowid", "ascending")])
        return table.remove_column(0)

    def arrow_schema_names(self) -> list[str]:
        return list(self.con.cursor().sql(self._sql(None)).columns)

    def batches(self, columns: list[str], rows: int) -> Iterator[pa.Table]:
        """The table's ``columns`` in ``rowid`` order, ``rows`` at a time."""
        total = self.num_rows
        for start in range(0, total, rows):
            yield self.rowid_range(columns, start, start + rows)

    def rowid_range(self, columns: list[str], start: int, stop: int) -> pa.Table:
        """The rows whose ``rowid`` is in ``[start, stop)``, their ``columns``, in that order."""
        return self._in_rowid_order(columns, f" WHERE rowid >= {start} AND rowid < {stop}")


@dataclass(frozen=True)
class ParquetViewSource(ParquetSource):
    """A view of the user's connection that reads Parquet files whole (``CREATE VIEW t AS
    FROM 'x.parquet'``), or files a query reads inline, split as those files (a Session reads
    its views again when one is redefined, or a file rewritten: ``live.follow``)."""

    #: The glob DuckDB listed the files by, matched again before each query, or None.
    pattern: str | None = field(default=None, compare=False)
    #: The hive columns DuckDB adds from the files' `key=value` folders, or None (``hive``).
    hive: Partitions | None = field(default=None, compare=False)

    def scan_options(self) -> str:
        return super().scan_options() if self.hive is None else self.hive.scan_options()

    def arrow_schema_names(self) -> list[str]:
        names = super().arrow_schema_names()
        return names if self.hive is None else names + list(self.hive.types)

    def _own(self, columns: Collection[str] | None) -> list[str] | None:
        """Those of ``columns`` the files hold themselves (None: all)."""
        if columns is None or self.hive is None:
            return None if columns is None else list(columns)
        return [name for name in columns if name not in self.hive.types]

    def column_nbytes(self, columns: Collection[str] | None = None) -> dict[str, int]:
        sizes = super().column_nbytes(columns)
        wanted = wanted_columns(columns)
        values = self.hive.values if self.hive is not None else pa.table({})
        for name in values.column_names:
            if wanted is None or name.lower() in wanted:
                per_file = values.column(name)
                sizes[name.lower()] = per_file.nbytes * self.num_rows // max(len(per_file), 1)
        return sizes

    def arrow(self, columns: list[str] | None = None) -> pa.Table:
        if self.hive is None:
            return super().arrow(columns)
        return self.rows(columns, 0, self.num_rows)

    def rows(self, columns: list[str] | None, start: int, stop: int) -> pa.Table:
        if self.hive is None:
            return super().rows(columns, start, stop)
        own = self._own(columns)
        if own == []:  # (the hive columns alone: rows counted, no file read)
            count = max(0, min(stop, self.num_rows) - start)
            table = pa.table({"": pa.nulls(count)})
        else:
            table = super().rows(own, start, stop)
        return appended(table, self.hive.values, self.file_rows(), start, columns)

    def batches(self, columns: list[str], rows: int) -> Iterator[pa.Table]:
        if self.hive is None:
            yield from super().batches(columns, rows)
            return
        own, total = self._own(columns), self.num_rows
        if own == []:
            for start in range(0, total, rows):
                yield self.rows(columns, start, min(start + rows, total))
            return
        start, counts = 0, self.file_rows()
        for batch in super().batches(own or [], rows):
            yield appended(batch, self.hive.values, counts, start, columns)
            start += batch.num_rows

    def stale(self, cursor: Callable[[], duckdb.DuckDBPyConnection]) -> bool:
        """Whether DuckDB would read other files or rows now: a file changed since its
        metadata was read (``changed``), or the glob matches other files (read on a
        ``cursor()``, made only for a glob)."""
        if super().stale(cursor):
            return True
        # (The same names, each file unchanged: files_of's checks would pass as before.)
        return self.pattern is not None and _globbed(cursor(), self.pattern) != self.files


#: A path DuckDB would expand (a glob) or read from elsewhere than a local file.
NOT_A_FILE = re.compile(r"[*?\[{]|^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
#: What makes a path a glob DuckDB expands (``*``, ``**``, ``?``, ``[...]``).
GLOB = re.compile(r"[*?\[]")


def _globbed(con: duckdb.DuckDBPyConnection, pattern: str) -> tuple[Path, ...]:
    """What DuckDB's own ``glob`` lists for ``pattern``, in its order (none where it fails)."""
    try:
        rows = con.execute("SELECT file FROM glob($1)", [pattern]).fetchall()
    except duckdb.Error:
        return ()
    return tuple(Path(str(row[0])) for row in rows)


def files_of(con: duckdb.DuckDBPyConnection, path: str) -> tuple[Path, ...] | None:
    """The local files DuckDB reads for ``path``, in its order: the file, or a glob's matches
    as DuckDB's own ``glob`` lists them (its scan lists them so: byte order); None for no
    file, a URL, a ``{`` (not taken), or a ``key=value`` folder reached through a link or
    ``..``. DuckDB reads a ``key=value`` folder as a hive column (:func:`with_partitions`
    says which; a key of a file column's name stands for the file's own column, which
    another reader reads from the file: a=5/x.parquet holding a = 1 gave 500 for 300)."""
    if NOT_A_FILE.search(GLOB.sub("", path)):
        return None
    files = _globbed(con, path) if GLOB.search(path) else (Path(path),)
    if not files or not all(file.is_file() for file in files):
        return None
    # (Each folder resolved once: a glob of a thousand files lies in a few.) A `key=value`
    # folder reached through a link or `..`: which keys DuckDB reads is not told here.
    parents = {file.parent for file in files}
    named = {part for parent in parents for part in parent.parts}
    resolved = {part for parent in parents for part in parent.resolve().parts}
    return None if any("=" in part for part in resolved - named) else files


def with_partitions(
    con: duckdb.DuckDBPyConnection, paths: Collection[str], source: ParquetViewSource
) -> tuple[ParquetViewSource, dict[str, str]] | None:
    """``source`` (the files DuckDB reads for ``paths``) with the hive columns DuckDB adds
    from their `key=value` folders (``hive.py``), and DuckDB's columns and types; or None
    where DuckDB reads them under other names than every file's own columns (and those keys)
    in order."""
    quoted = ["'" + path.replace("'", "''") + "'" for path in paths]
    read = quoted[0] if len(quoted) == 1 else "[" + ", ".join(quoted) + "]"
    try:
        described = con.execute(f"DESCRIBE SELECT * FROM read_parquet({read})").fetchall()
    except duckdb.Error:
        return None
    own = [list(m.schema.to_arrow_schema().names) for m in source._meta]
    if any(names != own[0] for names in own):
        return None
    columns = [(str(row[0]), str(row[1])) for row in described]
    parts = partition_values(con, read, source.files, source.file_rows(), own[0], columns)
    if parts is None:
        return None
    if parts.types:
        object.__setattr__(source, "hive", parts)  # (once, before anything reads the source)
    return source, dict(columns)


def searches_paths(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection sets ``file_search_path``: DuckDB then looks for a relative path
    along it, where the arms would read it from the working folder."""
    row = con.execute("SELECT current_setting('file_search_path')").fetchone()
    return bool(row is not None and row[0])


def parquet_view_files(sql: str) -> tuple[str, ...] | None:
    """The paths a view definition reads, as written, when it is ``SELECT * FROM`` one
    ``read_parquet`` of literal paths with no options, or one quoted ``.parquet`` path; None
    for anything else."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return None
    body = tree.expression if isinstance(tree, exp.Create) else None
    if not isinstance(body, exp.Select) or [k for k, v in body.args.items() if v] != [
        "expressions",
        "from_" if "from_" in body.args else "from",
    ]:
        return None
    if len(body.expressions) != 1 or not isinstance(body.expressions[0], exp.Star):
        return None
    if any(body.expressions[0].args.get(k) for k in ("except_", "except", "replace", "rename")):
        return None
    from_ = body.args.get("from_") or body.args.get("from")
    source = from_.this if from_ is not None else None
    if not isinstance(source, exp.Table) or any(
        v for k, v in source.args.items() if k not in ("this", "alias")
    ):
        return None
    scan = source.this
    paths: list[exp.Expr] = []
    if isinstance(scan, exp.Identifier) and scan.quoted and scan.name.endswith(".parquet"):
        paths = [exp.Literal.string(scan.name)]
    elif isinstance(scan, exp.ReadParquet) and len(scan.expressions) == 1:
        only = scan.expressions[0]
        paths = list(only.expressions) if isinstance(only, exp.Array) else [only]
    if not paths or not all(isinstance(p, exp.Literal) and p.is_string for p in paths):
        return None
    return tuple(p.name for p in paths)


def connection_parquet_views(
    con: duckdb.DuckDBPyConnection, place: tuple[str, str]
) -> dict[str, ParquetViewSource]:
    """The persistent views of ``place`` that read Parquet files whole, by lower-case name,
    where DuckDB reads the files under the same column names as pyarrow does (a hive partition
    column DuckDB adds from the path, a file under a `key=value` folder at all, or files whose
    columns differ, are left as views)."""
    found: dict[str, ParquetViewSource] = {}
    searched = functools.cache(lambda: searches_paths(con))  # (asked once, where needed)
    for key, view in connection_views(con, place).items():
        paths = parquet_view_files(view.sql)
        if paths is None or not _NAME.match(view.name):
            continue
        globs = [path for path in paths if GLOB.search(path)]
        if globs and len(paths) > 1:
            continue  # (a list holding a glob: not read here)
        if any(not Path(path).is_absolute() for path in paths) and searched():
            continue
        listed = [files_of(con, path) for path in paths]
        files = tuple(file for each in listed if each is not None for file in each)
        if None in listed:
            continue
        try:
            source = ParquetViewSource(files, pattern=globs[0] if globs else None)
        except SqlError:
            continue
        taken = with_partitions(con, paths, source)
        if taken is None or taken[0].arrow_schema_names() != list(view.columns):
            continue
        found[key] = taken[0]
    return found


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


Source = ArrowSource | ParquetSource | ConnectionSource


def _parquet(name: str, path: Path) -> ParquetSource:
    if not path.exists():
        raise SqlError(f"table {name!r}: no such file or folder {path}")
    if path.is_dir():
        parts = sorted(path.glob("*.parquet"))
        if not parts:
            raise SqlError(f"table {name!r}: folder {path} holds no .parquet files")
        return ParquetSource(tuple(parts))
    return ParquetSource((path,))


def discover(folder: Path) -> dict[str, Path]:
    """``<name>.parquet`` files and ``<name>/`` folders of parts directly under ``folder``."""
    if folder.is_file():
        raise SqlError(
            f"data folder {folder} is a file: give a folder of <name>.parquet files, or a DuckDB "
            "database's connection (duckdb.connect(path, read_only=True))"
        )
    if not folder.is_dir():
        raise SqlError(f"data folder {folder} does not exist or is not a folder")
    found: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        if entry.is_file() and entry.suffix == ".parquet":
            found[_new_key(found, entry.stem, f" ({entry})")] = entry
        elif entry.is_dir() and any(entry.glob("*.parquet")):
            found[_new_key(found, entry.name, f" ({entry})")] = entry
    if not found:
        raise SqlError(f"data folder {folder} holds no <name>.parquet files or <name>/ folders")
    return found


def resolve_sources(tables: Any) -> dict[str, Source]:
    """Named sources from any accepted ``tables`` argument (see the module docstring); Parquet
    is not read beyond its metadata."""
    if isinstance(tables, (str, Path)):
        return {name: _parquet(name, path) for name, path in discover(Path(tables)).items()}
    if isinstance(tables, duckdb.DuckDBPyConnection):
        place = connection_place(tables)
        if place is None:  # no current database: no table to split, every query unsplit
            return {}
        database, schema = place
        found: dict[str, Source] = {
            name.lower(): ConnectionSource(tables, name, database, schema)
            for name in connection_tables(tables)
        }
        found.update(connection_parquet_views(tables, place))
        return found
    if isinstance(tables, Mapping):
        if not tables:
            raise SqlError("tables is an empty mapping")
        out: dict[str, Source] = {}
        for name, value in tables.items():
            key = _new_key(out, name)
            if isinstance(value, pa.Table):
                out[key] = ArrowSource(value)
            elif isinstance(value, (str, Path)):
                out[key] = _parquet(name, Path(value))
            elif hasattr(value, "to_arrow") and type(value).__module__.startswith("polars"):
                out[key] = ArrowSource(value.to_arrow())
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


def connection_place(con: duckdb.DuckDBPyConnection) -> tuple[str, str] | None:
    """The database and schema the connection itself stands in (``USE`` moves them; its
    cursors start in the default ones, DuckDB's test/sql/attach/attach_default_table.test), or
    None where it stands in none: its default database was detached and nothing was ``USE``d
    since (DuckDB's detach_manager_default_database.test)."""
    try:
        found = con.execute("SELECT current_database(), current_schema()").fetchall()
    except duckdb.CatalogException:
        return None
    return (str(found[0][0]), str(found[0][1])) if found else ("memory", "main")


def connection_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The base tables of the schema the connection stands in (what a split may cut)."""
    place = connection_place(con)
    if place is None:
        return []
    database, schema = place
    rows = (
        con.cursor()
        .execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "AND table_schema = ? AND table_catalog = ? ORDER BY table_name",
            [schema, database],
        )
        .fetchall()
    )
    return [str(row[0]) for row in rows]


def connection_views(
    con: duckdb.DuckDBPyConnection, place: tuple[str, str], names: Collection[str] | None = None
) -> dict[str, View]:
    """The persistent views among ``names`` (lower case; all where None) in ``place``
    (database, schema), by lower-case name: their definitions and output column names as the
    catalog holds them now. (A temporary view is the connection's own: a cursor does not see
    it.)"""
    among = "" if names is None else "AND lower(v.view_name) IN (SELECT unnest($3)) "
    rows = con.execute(
        "SELECT v.view_name, v.sql, list(c.column_name ORDER BY c.column_index) "
        "FROM duckdb_views() AS v JOIN duckdb_columns() AS c ON c.database_name = "
        "v.database_name AND c.schema_name = v.schema_name AND c.table_name = v.view_name "
        "WHERE NOT v.internal AND NOT v.temporary AND v.database_name = $1 "
        f"AND v.schema_name = $2 {among}GROUP BY v.view_name, v.sql",
        [place[0], place[1]] + ([] if names is None else [sorted(names)]),
    ).fetchall()
    return {
        str(name).lower(): View(str(name), str(sql), tuple(str(c) for c in columns))
        for name, sql, columns in rows
        if sql
    }


def table_columns(
    cursor: duckdb.DuckDBPyConnection, place: tuple[str, str], tables: Collection[str]
) -> dict[str, dict[str, str]]:
    """``table -> column -> DuckDB type`` of ``tables`` (lower-case names) in ``place``
    (database, schema), columns in their order."""
    found: dict[str, dict[str, str]] = {name: {} for name in tables}
    if not found:  # (a connection standing in no database has none to describe)
        return found
    rows = cursor.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = $1 AND table_schema = $2 ORDER BY table_name, ordinal_position",
        list(place),
    ).fetchall()
    for table, column, data_type in rows:
        if table.lower() in found:
            found[table.lower()][column] = str(data_type)
    return found


def resolve_tables(tables: Any) -> dict[str, pa.Table]:
    """Named Arrow tables from any accepted ``tables`` argument, every source read whole."""
    return {name: source.arrow() for name, source in resolve_sources(tables).items()}


__all__ = [
    "GLOB",
    "NOT_A_FILE",
    "ArrowSource",
    "ConnectionSource",
    "ParquetSource",
    "ParquetViewSource",
    "Source",
    "check_name",
    "connection_parquet_views",
    "connection_place",
    "connection_tables",
    "discover",
    "files_of",
    "resolve_sources",
    "resolve_tables",
    "searches_paths",
    "table_columns",
]
