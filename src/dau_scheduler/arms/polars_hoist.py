"""Scalar subqueries the host computes for the Polars arm: those whose value folds
floating-point values (an AVG, a float SUM, a variance), which Polars adds up in another order
than DuckDB, so a row compared with its value can go the other way (TPC-H Q17 and Q22).

Such a subquery reads whole tables, never the split rows, so its value is the same for every
arm: the host computes it once with DuckDB (the value the unsplit query compares with) and the
arm reads that value as a small table, ``__dau_host_<digest>``:

- an uncorrelated one, ``(SELECT avg(x) FROM t WHERE ...)``, is one row ``v``, read as
  ``(SELECT FIRST(v) FROM __dau_host_...)``;
- one correlated only through equalities ``inner = outer`` in its WHERE, ``(SELECT 0.2 *
  avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)``, is grouped by the inner sides
  (``k0``, ``k1``, ... and ``v``) and looked up by the outer ones, ``(SELECT FIRST(v) FROM
  __dau_host_... WHERE k0 = p_partkey)``, which Polars decorrelates as it does any aggregate
  subquery (a grouped table and a join). Where no inner row matches an outer row, the
  subquery's value is its aggregates over no rows and the lookup finds no group (NULL): only
  values that are NULL over no rows are hoisted, aggregates NULL over nothing under arithmetic
  and casts, and keys of one type on both sides (integers, text, dates, booleans), compared
  alike by the grouping and by the lookup.

Anything else with such a fold stays refused by ``polars_checks``. :class:`HostValues` also
holds the CTEs, derived tables and IN lists the host computes as tables
(``polars_host_tables``), which :meth:`HostValues.rewrite` takes first.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
from sqlglot import exp

from dau_scheduler.arms.polars_checks import source_items
from dau_scheduler.arms.polars_frames import (
    ASCII_LOWER,
    lowercase_names,
    sql_type_of,
    sql_types_of,
    widen_decimals,
)
from dau_scheduler.arms.polars_host_tables import (
    ctes_needed,
    drop_unread_ctes,
    hoist_tables,
    in_scope,
    is_recursive,
    standalone,
    table_name,
    top_ctes,
)
from dau_scheduler.arms.polars_marks import HOST_LOOKUP
from dau_scheduler.arms.polars_values import beyond_polars
from dau_scheduler.errors import SqlError
from dau_scheduler.lazy import LazyModule
from dau_scheduler.rewrite.block_parts import conjuncts
from dau_scheduler.rewrite.decisions import ARITHMETIC, FLOAT_FOLDS
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.planner import PLACEHOLDER

if TYPE_CHECKING:
    import polars as pl

    from dau_scheduler.rewrite.planner import CompiledSplit
else:
    pl = LazyModule("polars")

#: The prefix of a table of host-computed values in the arm's SQL context.
HOST_TABLE = "__dau_host_"

#: DuckDB's types of a host-computed table's columns that the arm holds as DuckDB means them
#: (as it holds a table's): numbers, text, booleans, dates and timestamps without a zone.
_TABLE_TYPES = re.compile(
    r"BOOLEAN|(U?(TINYINT|SMALLINT|INTEGER|BIGINT))|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)"
    r"|VARCHAR|DATE|TIMESTAMP(_MS|_NS)?"
)

#: Aggregates that are NULL over no rows (of a correlated subquery's value).
_NULL_OVER_NOTHING = (*FLOAT_FOLDS, exp.Min, exp.Max)

#: What may surround them in a correlated subquery's value: NULL in, NULL out.
_NULL_STRICT = (
    *ARITHMETIC,
    exp.Cast,
    exp.Literal,
    exp.DataType,
    exp.DataTypeParam,
)

#: Key types the host's grouping and Polars' lookup compare alike.
_KEY_TYPES = (
    *exp.DataType.INTEGER_TYPES,
    *exp.DataType.TEXT_TYPES,
    exp.DType.DATE,
    exp.DType.BOOLEAN,
)


@dataclass(frozen=True)
class HostQuery:
    """One subquery the host computes: ``sql`` (DuckDB's, over whole tables) gives key columns
    ``k0``... of ``key_types`` (sqlglot's types, checked against what DuckDB gives) and ``v``."""

    name: str
    sql: str
    key_types: tuple[exp.DataType, ...]
    #: A derived table's or IN list's column names (``polars_host_tables``); () for a value.
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Candidate:
    subquery: exp.Subquery
    query: HostQuery
    outer: tuple[exp.Expr, ...]


def _defined(select: exp.Select) -> set[str] | None:
    """The names the subquery's FROM and JOINs define, when each is a table (None where one
    is a derived table, a function or a list: the host's query would need them written out)."""
    items = source_items(select)
    if not items or not all(isinstance(item, exp.Table) for item in items):
        return None
    return {item.alias_or_name for item in items}


def _side(node: exp.Expr, inner: set[str]) -> str | None:
    """``"inner"`` or ``"outer"`` where every column of ``node`` is of one side (and it has
    one), None otherwise (unqualified columns count as neither)."""
    tables = {column.table for column in node.find_all(exp.Column)}
    if not tables or "" in tables:
        return None
    if tables <= inner:
        return "inner"
    return "outer" if not tables & inner else None


def _null_over_nothing(value: exp.Expr) -> bool:
    """Whether ``value`` is NULL where every aggregate in it is over no rows."""
    if isinstance(value, _NULL_OVER_NOTHING):
        return True
    if not isinstance(value, _NULL_STRICT):
        return False
    return all(_null_over_nothing(child) for child in value.iter_expressions())


def _candidate(
    subquery: exp.Subquery,
    is_table: Callable[[str], bool],
    write: Callable[[exp.Select], exp.Query | None] = lambda host: host,
) -> _Candidate | None:
    select = subquery.this
    if not isinstance(select, exp.Select) or len(select.expressions) != 1:
        return None
    if any(
        select.args.get(arg) is not None
        for arg in ("group", "having", "order", "limit", "offset", "distinct", "qualify", "with_")
    ):
        return None
    if select.find(exp.Subquery, exp.Window, exp.Union, exp.Intersect, exp.Except) is not None:
        return None
    if any(nested is not select for nested in select.find_all(exp.Select)):
        return None
    inner = _defined(select)
    tables = list(select.find_all(exp.Table))
    if inner is None or any(t.name == PLACEHOLDER or not is_table(t.name.lower()) for t in tables):
        return None
    value = select.expressions[0].unalias()
    if value.find(*FLOAT_FOLDS) is None:
        return None
    for join in select.args.get("joins") or []:
        if any(_side(c, inner) != "inner" for c in join.find_all(exp.Column)):
            return None
    if any(_side(c, inner) != "inner" for c in value.find_all(exp.Column)):
        return None
    where = select.args.get("where")
    keep, pairs = [], []
    for term in conjuncts(where.this) if where is not None else []:
        if all(_side(c, inner) == "inner" for c in term.find_all(exp.Column)):
            keep.append(term)
            continue
        if not isinstance(term, exp.EQ):
            return None
        sides = _side(term.this, inner), _side(term.expression, inner)
        if sides == ("inner", "outer"):
            pairs.append((term.this, term.expression))
        elif sides == ("outer", "inner"):
            pairs.append((term.expression, term.this))
        else:
            return None
    if pairs and not _null_over_nothing(value):
        return None
    key_types = []
    for inner_side, outer_side in pairs:
        kind, other = inner_side.type, outer_side.type
        if kind is None or other is None or not kind.is_type(*_KEY_TYPES):
            return None
        if kind.this != other.this:
            return None
        key_types.append(kind)
    host = select.copy()
    host.set(
        "expressions",
        [
            *(exp.alias_(k.copy(), f"k{i}") for i, (k, _) in enumerate(pairs)),
            exp.alias_(value.copy(), "v"),
        ],
    )
    host.set("where", exp.Where(this=exp.and_(*(t.copy() for t in keep))) if keep else None)
    if pairs:
        host.set("group", exp.Group(expressions=[k.copy() for k, _ in pairs]))
    alone = write(host)  # with the CTEs it reads written before it
    if alone is None:
        return None
    sql = alone.sql(dialect=DIALECT)
    name = table_name(sql, HOST_TABLE)
    return _Candidate(subquery, HostQuery(name, sql, tuple(key_types)), tuple(o for _, o in pairs))


def hoist(
    partial: exp.Expr,
    is_table: Callable[[str], bool],
    accept: Callable[[HostQuery], bool],
    ctes: dict[str, exp.CTE] | None = None,
) -> tuple[exp.Expr, tuple[HostQuery, ...]]:
    """``partial`` (annotated with types) with each scalar subquery of the kinds above that
    ``accept`` takes (the host ran it, with the types expected) replaced by its lookup; and the
    host queries it now reads. ``is_table(name)``: a table of the session. A subquery may read
    the partial's top-level CTEs that do not read the split rows (TPC-DS Q30's average over
    ``customer_total_return``): the host's query writes them before it, as ``ctes`` (by
    lower-cased name; the partial's own where None) has them."""
    tree = partial.copy()
    written = top_ctes(tree) if ctes is None else ctes
    recursive = is_recursive(tree)
    named = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    taken: dict[str, HostQuery] = {}
    for subquery in list(tree.find_all(exp.Subquery)):
        if isinstance(subquery.parent, (exp.From, exp.Join, exp.In, exp.Exists, exp.Any, exp.All)):
            continue
        needed = ctes_needed(subquery.this, written)
        if needed is None or not in_scope(subquery.find_ancestor(exp.CTE), needed, tree):
            continue
        read = set(needed)

        def readable(name: str, read: set[str] = read) -> bool:
            return name in read or (name not in named and is_table(name))

        def write(host: exp.Select, needed: list[str] = needed) -> exp.Query | None:
            return standalone(host, written, needed, recursive)

        found = _candidate(subquery, readable, write)
        if found is None or not accept(found.query):
            continue
        query = found.query
        first = exp.First(this=exp.column("v", table=query.name))
        first.meta[HOST_LOOKUP] = True
        lookup = exp.select(first).from_(exp.to_table(query.name))
        for i, outer in enumerate(found.outer):
            key = exp.column(f"k{i}", table=query.name)
            lookup = lookup.where(exp.EQ(this=key, expression=outer.copy()))
        subquery.set("this", lookup)
        taken[query.name] = query
    if taken:
        drop_unread_ctes(tree)  # a CTE read only by the subqueries the host now computes
    return tree, tuple(taken.values())


_NAMED = re.compile(HOST_TABLE + "[0-9a-f]{16}")


def _frame_of(table: pa.Table) -> pl.LazyFrame:
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.lazy()


def _frame(table: pa.Table) -> pl.LazyFrame:
    return widen_decimals(lowercase_names(_frame_of(table)))


class HostValues:
    """One Polars arm's host-computed subqueries: the queries its partials read (by name), their
    empty frames (planning), and their values, computed once and kept until the arm's tables
    change (:meth:`forget`). Without a host cursor (:meth:`use`) nothing is hoisted."""

    def __init__(self) -> None:
        self.cursor: Callable[[], duckdb.DuckDBPyConnection] | None = None
        self._queries: dict[str, HostQuery] = {}
        self._empty: dict[str, pl.LazyFrame] = {}
        self._stored: dict[str, dict[str, str]] = {}
        self._values: dict[str, pl.LazyFrame] = {}
        self._lock = threading.Lock()

    def use(self, cursor: Callable[[], duckdb.DuckDBPyConnection]) -> None:
        """Compute subqueries on cursors of the host's connection (``DuckDBArm.cursor``)."""
        self.cursor = cursor

    def forget(self) -> None:
        """Drop the values computed: the tables they were computed over may have changed."""
        with self._lock:
            self._values = {}

    def rewrite(
        self,
        compiled: CompiledSplit,
        types: dict[str, dict[str, str]],
        stored: dict[str, dict[str, str]],
        runs_alone: Callable[[exp.Query], bool] | None = None,
    ) -> tuple[exp.Expr | None, dict[str, dict[str, str]], dict[str, dict[str, str]]]:
        """The compiled partial with the subqueries the host can compute read from its tables
        (None: the partial as it is), and ``types`` and ``stored`` (table -> column -> SQL
        type, as the arm holds them and as the data has them) with theirs. Derived tables and
        IN lists the arm does not run by itself (``runs_alone``; ``polars_host_tables``) are
        taken first, then the scalar subqueries above."""
        partial = compiled.partial
        if self.cursor is None or partial is None or partial.find(exp.Subquery, exp.CTE) is None:
            return None, types, stored
        from dau_scheduler.arms.duckdb_types import annotate

        written = {name: cte.copy() for name, cte in top_ctes(partial).items()}
        tree: exp.Expr = partial.copy()
        names: list[str] = []
        if runs_alone is not None:
            tree, names = hoist_tables(tree, runs_alone, self._accept_table, HOST_TABLE)
        split = compiled.plan.split_table or ""
        schema = dict(types) | ({PLACEHOLDER: types[split]} if split in types else {})
        schema |= {name: sql_types_of(self._empty[name]) for name in names}
        typed: dict[str, object] = dict(schema)
        annotated = annotate(tree, typed)
        tree, queries = hoist(annotated, lambda name: name in types, self._accept, written)
        names += [query.name for query in queries]
        if not names:
            return None, types, stored
        for node in tree.walk():  # the translation annotates its own rewrite again
            node.type = None
        more = {name: sql_types_of(self._empty[name]) for name in names}
        return tree, dict(types) | more, dict(stored) | {n: self._stored[n] for n in names}

    def _accept_table(self, name: str, sql: str, columns: tuple[str, ...]) -> bool:
        """Whether the host runs the derived table or IN list ``sql`` (over no rows here), with
        columns of types the arm holds as DuckDB means them (``_TABLE_TYPES``)."""
        assert self.cursor is not None
        try:
            relation = self.cursor().sql(f"SELECT * FROM ({sql}) LIMIT 0")
            kinds = [str(kind) for kind in relation.types]
            empty = relation.to_arrow_table()
        except duckdb.Error:
            return False
        if not all(_TABLE_TYPES.fullmatch(kind) for kind in kinds):
            return False
        frame = _frame(empty)
        schema = frame.collect_schema()
        lowered = [column.translate(ASCII_LOWER) for column in columns]
        if schema.names() != lowered or any(sql_type_of(t) is None for t in schema.dtypes()):
            return False
        with self._lock:
            self._queries[name] = HostQuery(name, sql, (), columns)
            self._empty[name] = frame
            self._stored[name] = sql_types_of(lowercase_names(_frame_of(empty)))
        return True

    def _accept(self, query: HostQuery) -> bool:
        """Whether the host runs ``query`` (over no rows here) with a DOUBLE value and keys of
        the types the partial compares them with."""
        assert self.cursor is not None
        try:
            empty = self.cursor().sql(f"SELECT * FROM ({query.sql}) LIMIT 0").to_arrow_table()
        except duckdb.Error:
            return False
        frame = _frame(empty)
        schema = frame.collect_schema()
        if schema.get("v") != pl.Float64 or len(schema) != len(query.key_types) + 1:
            return False
        for i, kind in enumerate(query.key_types):
            name = sql_type_of(schema[f"k{i}"]) if f"k{i}" in schema else None
            if name is None or exp.DataType.build(name, dialect="duckdb").this != kind.this:
                return False
        with self._lock:
            self._queries[query.name] = query
            self._empty[query.name] = frame
            self._stored[query.name] = sql_types_of(frame)
        return True

    def frames(self, text: str, *, held: bool) -> dict[str, pl.LazyFrame]:
        """The host tables the arm's SQL ``text`` reads: empty while planning (``held``), their
        values, computed by the host once, when the partial runs."""
        frames = {}
        for name in sorted(set(_NAMED.findall(text))):
            if name not in self._queries or self.cursor is None:
                raise SqlError(f"{name}: a subquery the host computes, unknown to this arm")
            frames[name] = self._empty[name] if held else self._value(name)
        return frames

    def _value(self, name: str) -> pl.LazyFrame:
        with self._lock:
            frame = self._values.get(name)
        if frame is None:
            assert self.cursor is not None
            rows = self.cursor().sql(self._queries[name].sql).to_arrow_table()
            for column in rows.columns:
                beyond = beyond_polars(column)
                if beyond is not None:
                    raise SqlError(
                        f"{name}: the host's rows hold {beyond}, which Polars reads otherwise"
                    )
            frame = _frame(rows)
            if frame.collect_schema() != self._empty[name].collect_schema():
                raise SqlError(f"{name}: the host's subquery changed its types since planning")
            with self._lock:
                self._values[name] = frame
        return frame


__all__ = ["HOST_TABLE", "HostQuery", "HostValues", "hoist"]
