"""Parquet files a query reads inline, split as tables of the Session (decision 028).

DuckDB's commonest idiom names a file where a table would stand: ``FROM 'lineitem.parquet'``,
``FROM read_parquet('lineitem.parquet')``. sqlglot reads the quoted path as a table named by
the path, so the planner cuts it as it cuts any table once the Session holds a source of that
name: :func:`adopt` gives it one (a :class:`~dau_scheduler.tables.ParquetViewSource` over the
files, their DuckDB types read by DuckDB), and :func:`as_paths` writes a ``read_parquet`` of
one path with no options (or with ``hive_partitioning`` or ``union_by_name`` set on where
DuckDB reads the same without it) as the quoted path DuckDB reads the same way (the alias the
function gave the rows kept), so both spellings split.

Files are taken only where DuckDB and the arms read the same rows under the same names: local
files (one, or a glob's matches as DuckDB's own ``glob`` lists them, in its order; no URL, no
list), named ``*.parquet`` (the quoted form is DuckDB's replacement scan by that suffix),
``key=value`` folders read as DuckDB's hive columns (``hive.py``), no table or view of
that name in the catalog (it would be read instead), a relative path only where
``file_search_path`` is unset, and every file's columns named as DuckDB names them. Anything
else is left to DuckDB alone, as before. A file changed since it was taken (another inode, size
or modification time), or a glob that matches other files now, is taken again before the next
query plans.

A path with capitals is a table of the lower-case name, as the planner reads every name
(``'Data/X.parquet'`` is the table ``data/x.parquet``), holding the files of the path as
written; the SQL written for the arms keeps the path's spelling (``rewrite/dialect.py``). Two
spellings of one name in a query (``'A.parquet'`` beside ``'a.parquet'``, two files) are
DuckDB's alone.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot
from sqlglot import exp

from dau_scheduler.errors import SqlError
from dau_scheduler.hive import keys_of
from dau_scheduler.parquet_source import file_stamp
from dau_scheduler.rewrite.dialect import DIALECT, sqlglot_quiet
from dau_scheduler.tables import (
    GLOB,
    NOT_A_FILE,
    ParquetViewSource,
    files_of,
    searches_paths,
    with_partitions,
)

if TYPE_CHECKING:
    from dau_scheduler.session import Session

#: The table functions whose one-literal call is DuckDB's replacement scan of the path.
_READERS = frozenset(("read_parquet", "parquet_scan"))
#: The options a one-path call may set on and still be written as its path, where DuckDB
#: reads the same without them (:func:`_said`): ``hive_partitioning`` (DuckDB's own default
#: is to look at the paths) and ``union_by_name`` (the same over files of one schema). Not
#: ``hive_partitioning = false``: where a folder's key names a file column, DuckDB reads the
#: file's value with it and the folder's without it, under the same names and types (500 for
#: 100).
_SAID_OPTIONS = ("hive_partitioning", "union_by_name")
_SAID_ON = (["true", ")"], ["1", ")"])
#: What may follow a table in FROM where it has no alias (the end of the text too: "").
# fmt: off
_ENDS_A_TABLE = frozenset((
    "", ",", ")", ";", "where", "group", "order", "having", "qualify", "window", "limit",
    "offset", "union", "except", "intersect", "join", "inner", "left", "right", "full", "cross",
    "natural", "positional", "asof", "anti", "semi", "on", "using",
))
# fmt: on


@dataclass(frozen=True)
class Taken:
    """A file a query read inline, as the Session took it (keyed by its path in lower case, as
    the planner reads names): the path as the query wrote it, and its columns' DuckDB types."""

    path: str
    columns: dict[str, str]


def _literal(text: str) -> str | None:
    """The value of a plain single-quoted SQL string token, or None for another spelling."""
    if len(text) < 2 or text[0] != "'" or text[-1] != "'":
        return None
    body = text[1:-1]
    if "'" in body.replace("''", ""):
        return None
    return body.replace("''", "'")


def _plain_path(path: str) -> bool:
    """Whether ``path`` names local Parquet files DuckDB reads by this text alone: one file or
    a glob of them (no `{`, no URL)."""
    return path.endswith(".parquet") and not NOT_A_FILE.search(GLOB.sub("", path))


def _reader_calls(
    sql: str,
) -> tuple[list[tuple[int, Any]], list[int], list[str], list[int]] | None:
    """DuckDB's tokens of ``sql``, where each ends, their texts, and the tokens that start a
    ``read_parquet``/``parquet_scan`` call of DuckDB's own (a name not qualified by a schema,
    then ``(``); None where the query names no Parquet or DuckDB cannot tokenize it."""
    if "parquet" not in sql.lower():
        return None
    try:
        tokens = duckdb.tokenize(sql)
    except (duckdb.Error, TypeError):
        return None
    ends = [offset for offset, _ in tokens[1:]] + [len(sql)]
    texts = [sql[o:e].strip() for (o, _), e in zip(tokens, ends, strict=True)]
    calls = [
        i
        for i in range(len(tokens) - 3)
        if tokens[i][1] == duckdb.token_type.identifier
        and texts[i].lower() in _READERS
        and not (i > 0 and texts[i - 1] == ".")  # (a qualified name: some schema's own function)
        and texts[i + 1] == "("
    ]
    return tokens, ends, texts, calls


def as_paths(
    sql: str, cursor: duckdb.DuckDBPyConnection, temporary: frozenset[str] = frozenset()
) -> str:
    """``sql`` with each ``read_parquet('x.parquet')`` (or ``parquet_scan``) of one plain
    local file or glob and no options written as ``"x.parquet" AS read_parquet`` (the alias
    DuckDB gives the function's rows; a given alias kept), which DuckDB reads alike where no
    table or view of the catalog has that name (nor one of ``temporary``, the user's
    connection's own temporary tables and views, which its cursors do not see); so too with
    ``hive_partitioning = true`` or ``union_by_name = true`` where DuckDB reads the same
    without it (:func:`_said`); else as it is."""
    if not isinstance(sql, str):
        return sql  # (not text: named where the query is checked)
    found = _reader_calls(sql)
    if found is None:
        return sql
    tokens, ends, texts, calls = found
    kinds = [kind for _, kind in tokens]
    edits: list[tuple[int, int, str, str]] = []
    for i in calls:
        if kinds[i + 2] != duckdb.token_type.string_const:
            continue
        given = [t.lower() for t in texts[i + 3 : i + 8]]
        if texts[i + 3] == ")":
            close = i + 3
        elif (
            given[0] == ","
            and given[1] in _SAID_OPTIONS
            and given[2:] in (["=", *on] for on in _SAID_ON)
        ):
            close = i + 7  # (the option, where it reads what DuckDB would read without it)
        else:
            continue
        path = _literal(texts[i + 2])
        files = None if path is None or not _plain_path(path) else files_of(cursor, path)
        if path is None or files is None:
            continue
        option = sql[tokens[i + 3][0] : ends[close - 1]]  # (", hive_partitioning = true")
        if close > i + 3 and not _said(cursor, path, files, given[1], option):
            continue
        following = texts[close + 1].lower() if close + 1 < len(texts) else ""
        aliased = following == "as" or (
            close + 1 < len(kinds) and kinds[close + 1] == duckdb.token_type.identifier
        )
        if not aliased and following not in _ENDS_A_TABLE:
            continue  # (WITH ORDINALITY, a sample: what a table function takes, a path not)
        quoted = '"' + path.replace('"', '""') + '"'
        written = quoted if aliased else f"{quoted} AS {texts[i]}"
        edits.append((tokens[i][0], tokens[close][0] + 1, written, path))
    if edits:
        shadowed = _catalog_names(cursor, [path.lower() for *_, path in edits]) | temporary
        edits = [edit for edit in edits if edit[3].lower() not in shadowed]
    written_sql = sql
    for start, stop, written, _ in reversed(edits):
        written_sql = written_sql[:start] + written + written_sql[stop:]
    try:
        cursor.extract_statements(written_sql)
    except duckdb.Error:  # (a spelling the rules above missed: the text as written)
        return sql
    return written_sql


def _said(
    cursor: duckdb.DuckDBPyConnection,
    path: str,
    files: tuple[Path, ...],
    name: str,
    option: str,
) -> bool:
    """Whether ``option`` (``, hive_partitioning = true``: the option ``name`` set on) says
    what DuckDB does without it, and DuckDB reads the same names and types either way:
    ``hive_partitioning`` where every file of ``path`` (``files``) lies under folders of the
    same keys (so DuckDB reads them as hive columns unasked); ``union_by_name`` where every
    file holds the same columns, named and typed alike, in the same order."""
    if name == "hive_partitioning":
        keys = {tuple(sorted(set(keys_of(file)))) for file in files}
        if len(keys) != 1 or keys == {()}:
            return False
    else:
        try:
            schemas = {tuple((f.name, str(f.type)) for f in pq.read_schema(file)) for file in files}
        except (OSError, pa.ArrowException):
            return False
        if len(schemas) != 1:
            return False
    literal = "'" + path.replace("'", "''") + "'"
    try:
        said, plain = (
            cursor.execute(f"DESCRIBE SELECT * FROM read_parquet({literal}{o})").fetchall()
            for o in (option, "")
        )
    except duckdb.Error:
        return False
    return said == plain


@functools.lru_cache(maxsize=256)
def paths_read(sql: str) -> tuple[str, ...]:
    """The quoted paths ``sql`` reads where a table stands (``FROM 'x.parquet'``), as written,
    first use first; none where sqlglot cannot read the query (read once per text)."""
    if ".parquet" not in sql:
        return ()
    with sqlglot_quiet():
        try:
            trees = sqlglot.parse(sql, read=DIALECT)
        except sqlglot.errors.SqlglotError:
            return ()
    found: list[str] = []
    for tree in trees:
        if tree is None:
            continue
        for table in tree.find_all(exp.Table):
            name = table.this
            if (
                isinstance(name, exp.Identifier)
                and name.quoted
                and not table.args.get("db")
                and not table.args.get("catalog")
                and name.name.endswith(".parquet")
                and name.name not in found
            ):
                found.append(name.name)
    return tuple(found)


def _catalog_names(cursor: duckdb.DuckDBPyConnection, names: list[str]) -> set[str]:
    """Those of ``names`` (lower case) a table or view of the catalog is called, any schema."""
    rows = cursor.execute(
        "SELECT lower(table_name) FROM duckdb_tables() WHERE lower(table_name) IN "
        "(SELECT unnest($1)) UNION ALL SELECT lower(view_name) FROM duckdb_views() "
        "WHERE lower(view_name) IN (SELECT unnest($1))",
        [names],
    ).fetchall()
    return {str(row[0]) for row in rows}


def _take(
    cursor: duckdb.DuckDBPyConnection, path: str, files: tuple[Path, ...]
) -> tuple[Taken, ParquetViewSource] | None:
    """The ``files`` DuckDB reads for ``path`` as a table, or None where another reader would
    read them otherwise than DuckDB (names, or a file pyarrow cannot read)."""
    try:
        source = ParquetViewSource(files, pattern=path if GLOB.search(path) else None)
    except SqlError:
        return None
    taken = with_partitions(cursor, [path], source)
    return None if taken is None else (Taken(path, taken[1]), taken[0])


def _why_not(path: str, why: str) -> str:
    return f"the query reads {path} inline, {why}: DuckDB's alone (decision 028)"


def _readers_left(sql: str) -> list[str]:
    """Why each ``read_parquet``/``parquet_scan`` call :func:`as_paths` left as written in
    ``sql`` stays DuckDB's: a list of files, options, or a path or form no quoted path
    stands for."""
    found = _reader_calls(sql)
    if found is None:
        return []
    tokens, _, texts, calls = found
    whys = []
    for i in calls:
        name = texts[i].lower()
        if texts[i + 2] == "[":
            why = "a list of files (a view over the list splits)"
            whys.append(_why_not(f"{name}([...])", why))
            continue
        path = (
            _literal(texts[i + 2]) if tokens[i + 2][1] == duckdb.token_type.string_const else None
        )
        if path is None:
            continue
        why = (
            "a path or form no quoted path stands for (not a local file or glob, a name the "
            "catalog holds, WITH ORDINALITY, a sample)"
            if texts[i + 3] == ")"
            else "with options the arms do not read alike (hive_partitioning = true or "
            "union_by_name = true alone is read, where DuckDB reads the same without it)"
        )
        whys.append(_why_not(f"{name}('{path}'{'' if texts[i + 3] == ')' else ', ...'})", why))
    return whys


def adopt(session: Session, sql: str) -> str | None:
    """Take the plain local Parquet files ``sql`` reads inline as tables of ``session`` (its
    tables read again where one is new or changed, or a glob matches other files); returns why
    they cannot split there, or why one was not taken, or None."""
    read = [
        p
        for p in paths_read(sql)
        if p.lower() not in session.row_counts or p.lower() in session.inline_files
    ]
    spellings = Counter(p.lower() for p in read)
    whys = [
        _why_not(
            p,
            "beside another spelling of it in other case (the planner reads names without "
            "case, as DuckDB reads identifiers: one table for two paths)",
        )
        for p in read
        if spellings[p.lower()] > 1
    ]
    whys += [
        _why_not(p, "not a local file or glob DuckDB reads by its text alone")
        for p in read
        if not _plain_path(p)
    ]
    whys += _readers_left(sql)
    paths = [p for p in read if _plain_path(p) and spellings[p.lower()] == 1]
    twice = {p.lower() for p in read if spellings[p.lower()] > 1} & set(session.inline_files)
    if twice:  # (a table taken under that name would be read for both: not one of them)
        sources = session.sources()
        for key in twice:
            del session.inline_files[key]
            sources.pop(key, None)
        session.retake(sources, session.shape)
    if not paths:
        return whys[0] if whys else None
    if session.cluster is not None:
        return (
            f"the query reads {paths[0]} inline; a Session over a cluster splits only the "
            "tables its workers hold (give the files as a table)"
        )
    if not session.lazy and not session.on_user_connection:
        return (
            f"the query reads {paths[0]} inline; a Session holding its tables in memory splits "
            "only those (give the files as a table, or open the Session with lazy=True)"
        )
    # (Each path is the table of its lower-case name, as the planner reads names, holding the
    # files of the path as written: another spelling of it is taken again.)
    taken = session.inline_files
    fresh = [
        path
        for path in paths
        if (key := path.lower()) not in taken
        or taken[key].path != path
        or key not in session.row_counts
        or not isinstance(source := session.source_of(key), ParquetViewSource)
        or source.stale(session.host.cursor)
    ]
    if not fresh:
        return whys[0] if whys else None
    cursor = session.host.cursor()
    if any(not Path(p).is_absolute() for p in fresh) and searches_paths(cursor):
        why = "a relative path DuckDB looks for along file_search_path"
        whys += [_why_not(p, why) for p in fresh if not Path(p).is_absolute()]
        fresh = [p for p in fresh if Path(p).is_absolute()]
    # (The user's connection's temporary tables and views too: DuckDB reads one of the path's
    # name there before the file, and the cursors this reads the catalog on do not see it.)
    keys = [p.lower() for p in fresh]
    shadowed = _catalog_names(cursor, keys) | session.host.temporary()
    sources = session.sources()
    changed = False
    for path, key in zip(fresh, keys, strict=True):
        if key in shadowed or (key in sources and key not in taken):
            continue  # the catalog's table or view of that name is what DuckDB reads
        files = files_of(cursor, path)
        stamps = None if files is None else tuple(file_stamp(f) for f in files)
        left = session.inline_left.get(path)
        if left is not None and left[0] == stamps:  # (not taken last time; nothing changed)
            whys.append(left[1])
            continue
        found = None if files is None else _take(cursor, path, files)
        if found is None:  # (no longer readable alike: DuckDB's alone from now on)
            why = _why_not(
                path,
                "which matches no file (or one under a key=value folder reached through a link)"
                if files is None
                else "whose columns DuckDB names otherwise than pyarrow, which hold other "
                "columns file by file, or whose key=value folders DuckDB reads otherwise than "
                "as a column each (other keys file by file, a key of a file column's name)",
            )
            whys.append(why)
            if stamps is not None:  # (files' metadata read for nothing: not read again)
                session.inline_left[path] = (stamps, why)
            changed |= taken.pop(key, None) is not None
            sources.pop(key, None)
            continue
        session.inline_left.pop(path, None)
        taken[key], sources[key] = found
        changed = True
    if changed:
        session.retake(sources, session.shape)
    return whys[0] if whys else None


__all__ = ["Taken", "adopt", "as_paths", "paths_read"]
