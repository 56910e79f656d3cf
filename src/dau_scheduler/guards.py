"""Guards of exactness the Session applies before it splits a query: calls it must not repeat,
types Arrow does not carry between the engines, the connection's sort order, and how a table's
rows reach a device arm. See docs/exactness.md for the classes of wrong answer behind each."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dau_scheduler.errors import DauError, SqlError
from dau_scheduler.rewrite.columns import query_columns
from dau_scheduler.rewrite.dialect import DIALECT, sqlglot_quiet
from dau_scheduler.tables import ArrowSource, ConnectionSource, ParquetSource, Source

#: Calls with side effects or a value per call: a query holding one is run once, as it is.
VOLATILE = re.compile(
    r"\b(nextval|currval|setval|setseed|random|uuid|gen_random_uuid|uuidv4|uuidv7)\s*\(",
    re.IGNORECASE,
)
#: DuckDB types whose values Arrow does not carry exactly (partials and rows cross as Arrow).
ARROW_LOSSY: dict[str, str] = {
    "HUGEINT": "Arrow's DECIMAL(38, 0) holds 38 digits, HUGEINT 39",
    "UHUGEINT": "Arrow's DECIMAL(38, 0) holds 38 digits, UHUGEINT 39",
    "BIT": "read back as BLOB",
    "TIMETZ": "the offset is not kept",
    "ENUM": "read back as a dictionary of strings, ordered as text",
    "UNION": "no Arrow equivalent kept",
    "BIGNUM": "no Arrow equivalent",
    "VARINT": "no Arrow equivalent",
    # Its Arrow form is a struct of binary metadata and value whose key dictionary depends on the
    # rows encoded together: two arms' halves re-encode the same value differently.
    "VARIANT": "its Arrow encoding depends on the rows encoded together",
    # DuckDB exports JSON as plain text (test_json_empty_object.test: typeof gave VARCHAR).
    "JSON": "read back as VARCHAR, which typeof and casts to nested types read differently",
}
#: Kinds Arrow loses only as rows: a column of one is safe where DuckDB reads the rows in place
#: (a resident Session on the user's connection, DuckDB arms only); its values in a partial
#: still cross Arrow.
LOST_AS_ROWS = frozenset({"JSON"})


def default_order(cursor: duckdb.DuckDBPyConnection) -> bool:
    """Whether a connection orders as DuckDB does by default (ASC, NULLS LAST)."""
    row = cursor.execute(
        "SELECT lower(current_setting('default_order')), "
        "lower(current_setting('default_null_order'))"
    ).fetchone()
    return row is not None and ordered_by_default(row[0], row[1])


def ordered_by_default(order: object, null_order: object) -> bool:
    """Whether settings ``default_order`` and ``default_null_order`` are DuckDB's defaults."""
    return str(order).lower() in ("asc", "ascending") and str(null_order).lower() == "nulls_last"


def default_collation(cursor: duckdb.DuckDBPyConnection) -> str:
    """The connection's ``default_collation`` ('' when none is set)."""
    row = cursor.execute("SELECT current_setting('default_collation')").fetchone()
    return str(row[0]) if row is not None and row[0] else ""


def collated_tables(cursor: duckdb.DuckDBPyConnection, tables: Iterable[str]) -> str | None:
    """Why strings of ``tables`` compare by a collation the fold would not keep: the first of
    them (a table or a view) declared with ``COLLATE``, named; None when none is. Arrow
    partials carry plain strings and the final query over them compares bytes (DuckDB's
    test/sql/collate)."""
    names = sorted({t.lower() for t in tables})
    if not names:
        return None
    row = cursor.execute(
        "SELECT (SELECT list(lower(table_name)) FROM duckdb_tables() "
        "WHERE lower(table_name) IN (SELECT unnest($1)) AND sql ILIKE '%collate%'), "
        "(SELECT list(lower(view_name)) FROM duckdb_views() "
        "WHERE lower(view_name) IN (SELECT unnest($1)) AND sql ILIKE '%collate%')",
        [names],
    ).fetchone()
    collated = sorted(set((row[0] or []) + (row[1] or []))) if row is not None else []
    if collated:
        return (
            f"table {collated[0]} declares a collation (COLLATE), which the fold over Arrow "
            "partials does not keep"
        )
    return None


def is_query(sql: str, kind: duckdb.StatementType) -> bool:
    """Whether a statement of ``kind`` reads and changes nothing: a SELECT with no data-changing
    part (:func:`data_change`), or a query DuckDB expands into several (:func:`expanded_query`)."""
    if kind == duckdb.StatementType.SELECT:
        return data_change(sql) is None
    return expanded_query(sql, kind)


#: Query nodes of DuckDB's parser that only read; any other (``DELETE_QUERY_NODE`` in a WITH,
#: INSERT, UPDATE, MERGE, COPY) changes data, even inside a SELECT statement.
READING_NODES = frozenset(
    {"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE", "BOUND_SUBQUERY_NODE"}
)
_CHANGING_WORD = re.compile(r"\b(insert|update|delete|merge|copy)\b", re.IGNORECASE)
_NODE_TYPE = re.compile(r'"type":"([A-Z_]+_NODE)"')


@functools.cache
def _parser() -> duckdb.DuckDBPyConnection:
    """A database of its own, for DuckDB's parser (``json_serialize_sql`` runs nothing)."""
    return duckdb.connect(":memory:")


def data_change(sql: str) -> str | None:
    """The kind of the first data-changing part of a SELECT statement (``DELETE`` for ``WITH d
    AS (DELETE FROM t ... RETURNING id) SELECT * FROM d``), or None.

    DuckDB's parser says (``json_serialize_sql``); where it cannot describe the statement,
    sqlglot's reading does. Only text holding INSERT, UPDATE, DELETE, MERGE or COPY is parsed:
    each such part starts with its keyword. DuckDB 2.0 runs such a part whenever the query runs,
    binding included (DuckDB's test/sql/trigger/trigger_returning.test: a Session deleted the
    row, then answered with no rows)."""
    if not _CHANGING_WORD.search(sql):
        return None
    try:
        cursor = _parser().cursor()
        text = str(cursor.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()[0][0])
    except duckdb.Error:
        text = ""
    nodes = _NODE_TYPE.findall(text)
    if nodes:
        changing = [n for n in nodes if n not in READING_NODES]
        return changing[0].removesuffix("_NODE").removesuffix("_QUERY") if changing else None
    try:
        tree = sqlglot.parse_one(sql, read=DIALECT)
    except SqlglotError:
        return "part neither DuckDB's parser nor sqlglot could describe"
    found = next((n for n in tree.walk() if isinstance(n, (exp.DML, exp.Merge, exp.Copy))), None)
    return None if found is None else type(found).__name__.upper()


def expanded_query(sql: str, kind: duckdb.StatementType) -> bool:
    """Whether a statement DuckDB expands into several (``MULTI``: a PIVOT without an IN list
    first finds the pivot's values) is a query that reads and changes nothing: a SELECT or a
    PIVOT at the top, no DDL or DML anywhere (``CREATE TABLE x AS PIVOT ...`` is MULTI too)."""
    if kind != duckdb.StatementType.MULTI:
        return False
    try:
        with sqlglot_quiet():  # ("falling back to parsing as a Command" is the answer here)
            tree = sqlglot.parse_one(sql, read=DIALECT)
    except SqlglotError:  # a PIVOT sqlglot cannot read (`USING sum(v) + 1`): DuckDB's words tell
        return _reads_only(sql)
    changes = (exp.DDL, exp.DML, exp.Command, exp.Merge, exp.Set, exp.Pragma)
    return isinstance(tree, (exp.Query, exp.Pivot)) and not any(
        isinstance(node, changes) for node in tree.walk()
    )


#: The keywords a query may start with, and those of any statement that changes something
#: (a table, a setting, the catalog, a transaction) or is no query.
_QUERY_FIRST = frozenset({"pivot", "unpivot", "select", "from", "with", "values"})
# fmt: off
_NOT_READING = frozenset({
    "insert", "update", "delete", "merge", "copy", "create", "drop", "alter", "attach", "detach",
    "set", "reset", "pragma", "call", "export", "import", "load", "install", "checkpoint",
    "vacuum", "truncate", "use", "begin", "commit", "rollback", "transaction", "prepare",
    "execute", "deallocate", "analyze", "explain",
})
# fmt: on


def _reads_only(sql: str) -> bool:
    """Whether DuckDB's tokens of ``sql`` make a query that changes nothing: its first keyword
    starts a query and no keyword is one of ``_NOT_READING``. A keyword used as a name (a
    column ``copy``) makes it no query: the caller then refuses to run it, by name."""
    words = [
        match.group(0).lower()
        for offset, kind in duckdb.tokenize(sql)
        if kind == duckdb.token_type.keyword
        and (match := re.match(r"\w+", sql[offset:])) is not None
    ]
    return bool(words) and words[0] in _QUERY_FIRST and not _NOT_READING.intersection(words)


_LOSSY = re.compile(rf"\b({'|'.join(ARROW_LOSSY)})\b")


def lossy_part(type_name: str) -> str | None:
    """The type within ``type_name`` (a DuckDB type, nested or not) that Arrow does not carry
    exactly, or None. DuckDB spells TIMETZ ``TIME WITH TIME ZONE`` in its catalog."""
    found = _LOSSY.search(type_name.upper().replace("TIME WITH TIME ZONE", "TIMETZ"))
    return found.group(1) if found else None


def type_refusal(
    sql: str,
    schema: dict[str, dict[str, str]],
    partial_types: Sequence[str] = (),
    *,
    in_place: bool = False,
) -> str | None:
    """Why the query reads a column, or its partial carries a value, whose type Arrow cannot
    carry exactly (``ARROW_LOSSY``, also inside a list or struct), or None. ``in_place``: the
    arms read the tables where they are, not as Arrow (``LOST_AS_ROWS`` columns are then safe)."""
    try:
        used = query_columns(sql, schema)
    except DauError:
        # The columns read are unknown: any such column of any table may be among them.
        used = {table: {c.lower() for c in columns} for table, columns in schema.items()}
    for table, columns in sorted(used.items()):
        for column, type_name in schema.get(table, {}).items():
            part = lossy_part(type_name)
            if in_place and part in LOST_AS_ROWS:
                continue
            if column.lower() in columns and part is not None:
                return (
                    f"column {table}.{column} is {type_name}, which Arrow does not carry "
                    f"exactly between the arms ({ARROW_LOSSY[part]})"
                )
    for type_name in partial_types:
        part = lossy_part(type_name)
        # A HUGEINT the query computes (sum of BIGINTs) fits Arrow's 38 digits below 10^19 rows;
        # a JSON partial column is read as JSON again by the final query (rewrite.outputs._RETYPED).
        if part is not None and part not in ("HUGEINT", "UHUGEINT") and type_name != "JSON":
            return (
                f"the partial carries a {type_name} value, which Arrow does not carry exactly "
                f"between the arms ({ARROW_LOSSY[part]})"
            )
    return None


def arrow_for_device(
    name: str,
    source: Source,
    device: Any,
    columns: list[str] | None = None,
    *,
    limit: int | None = None,
) -> pa.Table:
    """A table's rows (its ``columns``, default all; from a user's connection, at most
    ``limit`` rows where given, in no set order) as Arrow for the arms to load; from a user's
    connection, the columns Arrow cannot carry are left out and named in the device arm's
    ``unloaded`` (a query that reads one is refused by that arm; the host still answers it on
    the connection)."""
    read: Callable[[list[str] | None], pa.Table] = source.arrow
    if isinstance(source, ConnectionSource) and limit is not None:
        read = functools.partial(source.head, rows=limit)
    try:
        return read(columns)
    except (duckdb.Error, pa.ArrowException, ValueError, OSError) as exc:
        # (pyarrow raises OSError for a file out of specification: DuckDB's afl/*.parquet)
        if not isinstance(source, ConnectionSource):
            raise SqlError(f"table {name!r} cannot be read: {exc}") from exc
    kept: list[pa.Table] = []
    names: list[str] = []
    for column in columns or source.arrow_schema_names():
        try:
            kept.append(read([column]))
            names.append(column)
        except (duckdb.Error, pa.ArrowException, ValueError) as exc:
            unloaded = getattr(device, "unloaded", None)
            if isinstance(unloaded, dict):
                unloaded[(name, column)] = f"not carried by Arrow: {str(exc).splitlines()[0]}"
    if not kept:
        return pa.table({})
    return pa.Table.from_arrays([t.column(0) for t in kept], names=names)


def load_resident(sources: Mapping[str, Source], arms: list[Any], device: Any) -> None:
    """Load every table into every arm, one table at a time.

    An arm that reads Parquet itself (``load_parquet``) is given the files: no Arrow copy is
    made for it (a copy let go stays in Arrow's allocator: the Polars device's resident footprint
    at SF 1 was ~2x the tables' Arrow bytes through Arrow). The others share one Arrow copy of
    the table, let go once they hold it."""
    for name, source in sources.items():
        try:
            pending = [
                arm
                for arm in arms
                if not (
                    isinstance(source, ParquetSource)
                    and callable(getattr(arm, "load_parquet", None))
                    and arm.load_parquet(name, source.files)
                )
            ]
            if pending:
                loaded = {name: arrow_for_device(name, source, device)}
                for arm in pending:
                    arm.load(loaded)
                del loaded
        except (duckdb.Error, pa.ArrowException, OSError) as exc:
            # A file DuckDB cannot read (DuckDB's parquet-testing: "Invalid dictionary page
            # header"), or pyarrow (its OSError, afl/*.parquet): the table named, not the
            # engine's own exception.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SqlError(f"table {name!r} cannot be loaded: {first}") from exc


class ColumnWidths(Mapping[str, Mapping[str, int]]):
    """Each table's Arrow bytes per column by lower-case name, worked out the first time a column
    is asked for (a Parquet table's variable-width columns are sampled, only those asked for:
    sampling them all held ~40 MB at TPC-H SF 1, a sixth of a 256 MB budget)."""

    def __init__(self, sources: Mapping[str, Source]) -> None:
        # Arrow sources are measured now (cheap), so no reference to their tables is kept.
        self._known: dict[str, Mapping[str, int]] = {
            n: s.column_nbytes() for n, s in sources.items() if isinstance(s, ArrowSource)
        }
        self._sources = {n: s for n, s in sources.items() if not isinstance(s, ArrowSource)}

    def __getitem__(self, table: str) -> Mapping[str, int]:
        if table not in self._known:
            self._known[table] = _TableWidths(self._sources[table])
        return self._known[table]

    def __iter__(self) -> Iterator[str]:
        return iter([*self._known, *(n for n in self._sources if n not in self._known)])

    def __len__(self) -> int:
        return len(set(self._known) | set(self._sources))


class _TableWidths(Mapping[str, int]):
    """One table's column widths, each measured when first asked for."""

    def __init__(self, source: ParquetSource | ConnectionSource) -> None:
        self._source = source
        self._names = [n.lower() for n in source.arrow_schema_names()]
        self._known: dict[str, int] = {}

    def __getitem__(self, column: str) -> int:
        name = column.lower()
        if name not in self._known:
            if name not in self._names:
                raise KeyError(column)
            self._known.update(self._source.column_nbytes([name]))
        return self._known[name]

    def values(self) -> Any:  # one read for all the columns not yet measured
        missing = [n for n in self._names if n not in self._known]
        if missing:
            self._known.update(self._source.column_nbytes(missing))
        return [self._known[n] for n in self._names]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def one_query(sql: str, parser: duckdb.DuckDBPyConnection) -> None:
    """Raise ``SqlError`` unless ``sql`` is exactly one query that changes nothing (named
    before any engine runs it). ``parser``: the connection whose parser reads it (a cursor of
    the Session's database: it parses as the database that answers does, and costs nothing
    where ``duckdb.extract_statements`` opens the module's default database, ~15 ms once a
    process)."""
    if not isinstance(sql, str) or not sql.strip():
        raise SqlError("the query is empty")
    try:
        statements = parser.extract_statements(sql)
    except duckdb.Error as exc:
        raise SqlError(f"malformed SQL: {str(exc).strip()}") from exc
    if len(statements) != 1:
        raise SqlError(f"expected one statement, got {len(statements)}; run them one by one")
    kind = statements[0].type
    if not is_query(sql, kind):
        changed = data_change(sql) if kind == duckdb.StatementType.SELECT else None
        if changed is not None:
            raise SqlError(
                "only queries that change nothing are run here; this SELECT has a "
                f"data-changing part inside it ({changed})"
            )
        raise SqlError(f"only queries (SELECT) are run here; got a {kind.name} statement")


__all__ = [
    "one_query",
    "ARROW_LOSSY",
    "VOLATILE",
    "ColumnWidths",
    "arrow_for_device",
    "collated_tables",
    "default_collation",
    "default_order",
    "expanded_query",
    "is_query",
    "load_resident",
    "lossy_part",
    "type_refusal",
]
