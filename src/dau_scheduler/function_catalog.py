"""A connection's functions as the split must know them: DuckDB's aggregates, the user's macros
(and those whose bodies call a non-deterministic function or an aggregate), and the user's
functions named as DuckDB's own, which DuckDB would call in the split's own SQL. Read from
``duckdb_functions()``; see docs/exactness.md for the classes behind each."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.volatility import NONDETERMINISTIC


@dataclass(frozen=True)
class FunctionKinds:
    """What the split must know of a connection's functions by name."""

    #: DuckDB's aggregates, and the macros whose bodies call one (``geomean``, a user's
    #: ``CREATE MACRO m(x) AS sum(x)``): read as scalar functions they ran on each arm's rows and
    #: both answers came back (DuckDB's test/sql/function/numeric).
    aggregates: frozenset[str]
    #: Macros whose bodies call a non-deterministic function (``nextval``, ``random``, ...),
    #: and functions registered with side effects (:attr:`registered`).
    volatile: frozenset[str]
    #: Every function and macro name the catalog listed (a name outside it is a new macro).
    known: frozenset[str]
    #: The user's own macros as (name, body) pairs: a body replaced since is read again.
    user_macros: frozenset[tuple[str, str]] = frozenset()
    #: The user's macros named as one of DuckDB's own functions, which they shadow wherever
    #: the name is called: in the split's own SQL too (``count_star``, which DuckDB calls for
    #: ``count(*)``; ``abs``, ``isfinite``, ``coalesce`` the rewrite writes); table macros
    #: named as one of its table functions (``read_parquet``, which a file's path is read as);
    #: registered functions named as one of DuckDB's own (:attr:`registered`).
    shadowing: frozenset[str] = frozenset()
    #: Functions registered on the connection's database through the Python API
    #: (``create_function``): DuckDB lists them as its own (``internal``, in the system
    #: catalog), so they are told by being absent from a database DuckDB has just opened. One
    #: named as DuckDB's own adds an overload DuckDB calls for the arguments its own does not
    #: take (``ln(VARCHAR)``), and is in :attr:`shadowing` too.
    registered: frozenset[str] = frozenset()

    def what(self, name: str) -> str:
        """How a refusal names the user's function ``name``."""
        if name in self.registered:
            return f"the function {name}() registered on the connection (create_function)"
        return f"the macro {name}()"


def shadowing_refusal(kinds: FunctionKinds) -> str | None:
    """Why a split is refused where the user's macros or registered functions shadow DuckDB's
    own functions, or None."""
    if not kinds.shadowing:
        return None
    name = min(kinds.shadowing)
    if name in kinds.registered:
        return (
            f"{kinds.what(name)} has the name of DuckDB's own function {name}(), which DuckDB "
            "calls for the arguments its own does not take; the split's arms and its rewrite "
            "would read the call as DuckDB's own"
        )
    return (
        f"{kinds.what(name)} has the name of DuckDB's own function {name}(), which "
        "the split's own SQL may call (DuckDB then calls the macro)"
    )


def _closure(seed: set[str], macros: list[tuple[str, str]]) -> frozenset[str]:
    """``seed`` and the macros calling one of its names, directly or through another."""
    names = set(seed)
    while names:
        calls = re.compile(rf"(?<![\w.])({'|'.join(map(re.escape, sorted(names)))})\s*\(")
        found = {name for name, body in macros if name not in names and calls.search(body)}
        if not found:
            break
        names |= found
    return frozenset(names)


#: Runs a statement (with its parameters, or None) and returns its rows.
Rows = Callable[[str, Any], list[tuple[Any, ...]]]


def rows_of(cursor: duckdb.DuckDBPyConnection) -> Rows:
    """:data:`Rows` read on ``cursor``."""
    return lambda sql, params: cursor.execute(sql, params).fetchall()


#: One row per function name and kind: its macro body, whether DuckDB lists it as its own, a
#: digest of the signatures (kind, parameter types, return type, varargs) of its overloads
#: listed as DuckDB's own that name no extension (a function registered through the Python API
#: names none, and a set of DuckDB's own it joined names none from then on either), and whether
#: any has side effects.
_LISTING = (
    "SELECT lower(function_name), function_type, lower(macro_definition), internal, "
    "bit_xor(CASE WHEN internal AND extension_name IS NULL THEN hash(function_type, "
    "parameter_types, return_type, varargs) END), bool_or(has_side_effects) "
    "FROM duckdb_functions() GROUP BY ALL"
)


@functools.cache
def _engine_digests() -> dict[tuple[str, str, str], int | None]:
    """:data:`_LISTING`'s digest of each of DuckDB's own functions, by name, kind and macro
    body (a macro's overloads are listed apart, each with its body), in a
    database this process's DuckDB has just opened: where no Python function has been
    registered. (A 64-bit digest: two signature sets taken for one by chance, one in 10^16.)"""
    con = duckdb.connect(":memory:")
    try:
        rows = con.execute(_LISTING).fetchall()
    finally:
        con.close()
    return {
        (str(n), str(kind), str(body)): digest
        for n, kind, body, internal, digest, _ in rows
        if internal
    }


def function_kinds(rows_read: Rows, nondeterministic: Iterable[str]) -> FunctionKinds:
    """The aggregates, volatile macros and known names of a connection's catalog (one scan),
    its temporary macros too where ``rows_read`` reads on the connection itself, and the
    functions registered on its database through the Python API: a name whose overloads
    differ from those of a database DuckDB has just opened."""
    engine = _engine_digests()
    macros: list[tuple[str, str]] = []
    mine: set[tuple[str, str]] = set()
    registered: set[str] = set()
    side_effects: set[str] = set()
    own: set[str] = set()
    own_tables: set[str] = set()
    tables: set[str] = set()
    aggregate_names: set[str] = set()
    known: set[str] = set()
    for name, kind, body, internal, digest, side in rows_read(_LISTING, None):
        name, kind = str(name), str(kind)
        known.add(name)
        if kind == "aggregate":
            aggregate_names.add(name)
        if kind == "macro":
            if body:
                macros.append((name, str(body)))
            if not internal:
                mine.add((name, str(body)))
        if not internal:
            if kind == "table_macro":
                tables.add(name)
            continue
        key = (name, kind, str(body))
        if key in engine or digest is None:  # DuckDB's own, or an extension's it loaded
            own.add(name)
            if "table" in kind:
                own_tables.add(name)
        if digest is not None and digest != engine.get(key):
            registered.add(name)  # through the Python API: no database DuckDB opens has it
            if side:
                side_effects.add(name)
    aggregates = _closure(aggregate_names, macros)
    volatile = _closure(set(nondeterministic) | side_effects, macros) - set(nondeterministic)
    shadowing = (
        frozenset(name for name, _ in mine if name in own)
        | (tables & own_tables)
        | (registered & own)
    )
    return FunctionKinds(
        aggregates, volatile, frozenset(known), frozenset(mine), shadowing, frozenset(registered)
    )


def _macro_bodies(rows_read: Rows, names: Iterable[str]) -> frozenset[tuple[str, str]]:
    """(name, body) of the user's macros called ``names`` as the catalog holds them now."""
    rows = rows_read(
        "SELECT DISTINCT lower(function_name), lower(macro_definition) FROM duckdb_functions() "
        "WHERE function_type = 'macro' AND NOT internal "
        "AND lower(function_name) IN (SELECT unnest($1))",
        [sorted(names)],
    )
    return frozenset((str(n), str(body)) for n, body in rows)


_CALL = re.compile(r"(?<![\w.\"])([a-z_][a-z0-9_]*)\s*\(", re.IGNORECASE)
#: Words that precede a parenthesis in SQL without naming a function.
# fmt: off
_NOT_CALLS = frozenset((
    "all", "and", "any", "array", "as", "between", "by", "cast", "columns", "cube", "date",
    "decimal", "exists", "extract", "filter", "from", "grouping", "in", "interval", "join",
    "like", "list", "map", "numeric", "on", "or", "over", "partition", "pivot", "position",
    "recursive", "repeatable", "returning", "rollup", "row", "select", "sets", "some", "struct",
    "substring", "table", "tablesample", "then", "timestamp", "trim", "try_cast", "union",
    "unnest", "unpivot", "using", "values", "varchar", "when", "where", "with", "within",
))
# fmt: on


def called_names(sql: str) -> frozenset[str]:
    """The names ``sql``'s text calls (lower case; SQL words before a parenthesis left out, an
    alias before a column list such as ``range(3) r(i)`` kept)."""
    return frozenset(m.lower() for m in _CALL.findall(sql)) - _NOT_CALLS


@functools.cache
def read_as_own_function(name: str) -> bool:
    """Whether sqlglot reads a call of ``name`` as a function of its own (which it may write
    back as something else) rather than as an unknown name it passes through."""
    try:
        tree = sqlglot.parse_one(f"SELECT {name}(1)", read=DIALECT)
    except SqlglotError:
        return True  # it knows the name well enough to reject the arguments
    projection = tree.expressions[0] if isinstance(tree, exp.Select) else None
    return not isinstance(projection, exp.Anonymous)


class FunctionCatalog:
    """A connection's :class:`FunctionKinds`, read once; on a user's connection (``fresh``) read
    on the connection itself (its temporary macros are not a cursor's), and again after
    :meth:`forget` (the Session's host saw another statement run since its last query), when a
    query calls a name the last read did not list (a macro created since), or one of the
    user's macros whose body has changed since (``CREATE OR REPLACE MACRO f(x) AS sum(x)``
    over a scalar ``f``: split as a scalar, one answer row per arm came back). Names a fresh
    read does not list either (``range(3) r(i)``: an alias) are not read for again."""

    def __init__(self, rows_read: Rows, fresh: bool) -> None:
        self._rows = rows_read
        self._fresh = fresh
        self._kinds: FunctionKinds | None = None
        self._not_functions: frozenset[str] = frozenset()

    def kinds(self, sql: str = "") -> FunctionKinds:
        kinds = self._kinds
        called = called_names(sql)
        # Names the last read did not list: a macro created since.
        unknown = called - kinds.known - self._not_functions if kinds else frozenset()
        if kinds is not None and self._fresh and not unknown and kinds.user_macros:
            held = frozenset(pair for pair in kinds.user_macros if pair[0] in called)
            if held and _macro_bodies(self._rows, {n for n, _ in held}) != held:
                kinds = None
        if kinds is None or (self._fresh and unknown):
            kinds = (
                function_kinds(self._rows, NONDETERMINISTIC) if self._fresh else self._built_in()
            )
            self._kinds = kinds
            # (what the query calls that a fresh read does not list is no function: ``r(i)``)
            self._not_functions |= called - kinds.known
        return kinds

    def forget(self) -> None:
        """Read the catalog again at the next query."""
        self._kinds = None

    def _built_in(self) -> FunctionKinds:
        """A connection the Session made holds DuckDB's functions and its loaded extensions'
        alone (no statement of the user's reaches it): read once per process for each set of
        loaded extensions, as the scan costs 20 ms (a Session made per query, the suite's
        thousands of Sessions)."""
        loaded = frozenset(
            str(row[0])
            for row in self._rows(
                "SELECT extension_name FROM duckdb_extensions() WHERE loaded", None
            )
        )
        key = (duckdb.__version__, loaded)
        with _BUILT_IN_LOCK:
            kinds = _BUILT_IN.get(key)
        if kinds is None:
            kinds = function_kinds(self._rows, NONDETERMINISTIC)
            with _BUILT_IN_LOCK:
                _BUILT_IN[key] = kinds
        return kinds


#: :meth:`FunctionCatalog._built_in`'s reads, by DuckDB version and loaded extensions.
_BUILT_IN: dict[tuple[str, frozenset[str]], FunctionKinds] = {}
_BUILT_IN_LOCK = threading.Lock()


__all__ = [
    "FunctionCatalog",
    "FunctionKinds",
    "Rows",
    "called_names",
    "function_kinds",
    "read_as_own_function",
    "rows_of",
    "shadowing_refusal",
]
