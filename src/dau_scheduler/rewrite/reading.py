"""sqlglot's reading of a query, which every rewrite works on: names as DuckDB gives them,
leading joins out of their parentheses, every column qualified, the rewrite steps run; and the
check that this reading binds to the unsplit query's types."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import TokenType, exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify

from dau_scheduler.errors import SplitError
from dau_scheduler.rewrite.columns import UNANALYSABLE, alias_subqueries, unanalysable
from dau_scheduler.rewrite.comma_scopes import scope_after_commas
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.steps import STEPS

#: A binder: SQL -> (column names, DuckDB type names, Arrow schema), without executing anything.
Binder = Callable[[str], tuple[list[str], list[str], pa.Schema | None]]


def _name_as_duckdb(tree: exp.Expr) -> exp.Expr:
    """Unaliased projections sqlglot names after a column and DuckDB does not, aliased with
    their own text before qualification. sqlglot names ``CAST(i AS BOOL)`` ``i`` (and the
    literal ``'a'`` ``a``), so ``ORDER BY i``, ``GROUP BY i`` and ``WHERE i`` read the cast; in
    DuckDB that output is named ``CAST(i AS BOOLEAN)`` and ``i`` is the column (DuckDB's
    test/sql/types/numeric/*_try_cast.test ordered by the cast)."""
    for select in alias_subqueries(tree).find_all(exp.Select):
        for projection in select.expressions:
            named_after = projection.output_name
            if (
                named_after
                and not isinstance(projection, (exp.Alias, exp.Column, exp.Dot, exp.Star))
                and not (
                    isinstance(projection, exp.Paren) and isinstance(projection.this, exp.Column)
                )
            ):
                projection.replace(exp.alias_(projection.copy(), projection.sql(dialect=DIALECT)))
    return tree


def _set_args(node: exp.Expr | None) -> set[str]:
    return {key for key, value in node.args.items() if value} if node is not None else set()


def _ungroup_leading_joins(tree: exp.Expr) -> exp.Expr:
    """``FROM (a JOIN b ON p) JOIN c ON q`` read as ``FROM a JOIN b ON p JOIN c ON q``: joins
    associate to the left, so parentheses around the leading ones change nothing. DuckDB keeps
    a view's ``FROM a JOIN b`` as ``FROM (a INNER JOIN b ON ...)``, which the split otherwise
    reads as a table with joins of its own."""
    for select in list(tree.find_all(exp.Select)):
        while True:
            source = select.args.get("from_")
            group = source.this if source is not None else None
            first = group.this if isinstance(group, exp.Subquery) else None
            if not (
                source is not None
                and _set_args(group) == {"this"}
                and first is not None
                and first.args.get("joins")
                # a group's first part: a table (its alias is its own), or a group unaliased
                and (
                    isinstance(first, exp.Table)
                    or (isinstance(first, exp.Subquery) and _set_args(first) == {"this", "joins"})
                )
            ):
                break
            joins = first.args["joins"]
            first.set("joins", None)
            source.set("this", first)
            select.set("joins", [*joins, *(select.args.get("joins") or [])])
    return tree


def _analyse(tree: exp.Expr, schema: dict[str, dict[str, str]]) -> exp.Expr:
    tree = scope_after_commas(_name_as_duckdb(_ungroup_leading_joins(tree)), schema)
    tree = qualify(
        tree,
        schema=dict(schema),
        dialect=DIALECT,
        validate_qualify_columns=True,
        quote_identifiers=True,
        identify=True,
    )
    for step in STEPS:
        tree = step(tree, schema)
    return tree


def read_back(
    tree: exp.Expr, schema: dict[str, dict[str, str]], binder: Binder, types: Sequence[str]
) -> exp.Expr | str:
    """``tree`` analysed (qualified, the rewrite steps run), or why it cannot be: sqlglot cannot
    analyse it, or its reading does not bind to the unsplit query's ``types``."""
    try:
        tree = _analyse(tree, schema)
    except UNANALYSABLE as exc:
        if any(part in str(exc) for part in ("'rowid' could not be", "Unknown column: rowid")):
            return "rowid: DuckDB's row identifier is a column of its storage, not of the rows"
        return unanalysable(exc)
    # The rewrite works on sqlglot's reading of the query: it must bind to the same types.
    try:
        _, round_trip, _ = binder(tree.sql(dialect=DIALECT))
    except (SplitError, ValueError, RuntimeError) as exc:
        return f"the SQL front end cannot reproduce this query: {exc}"
    if list(round_trip) != list(types):
        return (
            f"the SQL front end reads this query differently (types {list(round_trip)} "
            f"instead of {list(types)})"
        )
    return tree


def all_misread(texts: Sequence[str], tree: exp.Expr) -> str | None:
    """Why sqlglot's reading orders by every output where the query orders by a column named
    ``all``, or None. sqlglot reads the quoted ``ORDER BY "all"`` as the keyword ``ORDER BY
    ALL`` (in a window's and an aggregate's ORDER BY too), which DuckDB reads as the name: an
    alias ``"all"`` in the second output sorted by the first, and under a LIMIT kept other rows.
    ``texts``: the query and the definitions of the views inlined into ``tree``."""
    if not any(
        isinstance(o.this, exp.Var) and o.this.name.upper() == "ALL"
        for o in tree.find_all(exp.Ordered)
    ):
        return None
    for text in texts:
        try:
            tokens = DIALECT().tokenize(text)
        except SqlglotError:
            tokens = []
        if any(t.token_type == TokenType.IDENTIFIER and t.text.lower() == "all" for t in tokens):
            return (
                'the SQL front end reads ORDER BY "all" (a column named all) as ORDER BY ALL '
                "(every output)"
            )
    return None


def ambiguous_order(tree: exp.Expr) -> str | None:
    """Why an ORDER BY names an output that two outputs carry, or None. DuckDB compares names
    without case and takes the last such output (``SELECT i, i % 3 AS i ... ORDER BY i`` sorts
    by ``i % 3``; ``SELECT x AS a, y AS "A" ... ORDER BY a`` by ``y``); sqlglot's reading
    took the first, and rows came back in another order or, under a LIMIT, other rows (found
    by ``probes/aliases.py``, thirtieth session)."""
    for select in tree.find_all(exp.Select):
        order = select.args.get("order")
        if order is None:
            continue
        names = [e.alias_or_name.lower() for e in select.expressions if e.alias_or_name]
        twice = {name for name in names if names.count(name) > 1}
        for item in order.expressions:
            key = item.this if isinstance(item, exp.Ordered) else item
            if isinstance(key, exp.Column) and not key.table and key.name.lower() in twice:
                return (
                    f"ORDER BY {key.sql(dialect=DIALECT)} names an output two outputs carry "
                    "(DuckDB takes the last, without case), which the split may read otherwise"
                )
    return None


#: Functions whose appearance in sqlglot's rendering, where the query has none, changes what
#: it computes (a case folded, a value rounded); others it adds keep the value (a list built).
_ADDED_WATCH = frozenset({"upper", "lower", "round", "trunc", "floor", "ceil", "abs", "coalesce"})


#: Functions DuckDB registers twice without naming one an alias of the other (sqlglot writes
#: the second name: ``datediff(s, ...)`` as ``DATE_DIFF('S', ...)`` over a column named ``s``).
_SAME_FUNCTIONS = {
    "datediff": "date_diff",
    "datetrunc": "date_trunc",
    "datepart": "date_part",
    "datesub": "date_sub",
}
_PARSER: list[duckdb.DuckDBPyConnection] = []
_PARSER_LOCK = threading.Lock()
_CANONICAL: dict[str, str] = {}


_Calls = Counter[tuple[str, tuple[str, ...]]]


def _calls(sql: str) -> _Calls | None:
    """DuckDB's own parse of ``sql``: each function call (operators left out) as its name
    (aliases to the name they stand for) and its arguments' kinds, a constant's with its value;
    None where DuckDB's parser cannot serialize it."""
    with _PARSER_LOCK:
        if not _PARSER:
            _PARSER.append(duckdb.connect())
            rows = (
                _PARSER[0]
                .execute(
                    "SELECT DISTINCT lower(function_name), lower(alias_of) FROM duckdb_functions() "
                    "WHERE alias_of IS NOT NULL"
                )
                .fetchall()
            )
            _CANONICAL.update({str(n): str(a) for n, a in rows})
            _CANONICAL.update(_SAME_FUNCTIONS)
        try:
            text = _PARSER[0].execute("SELECT json_serialize_sql($1)", [sql]).fetchall()[0][0]
        except duckdb.Error:
            return None
    tree = json.loads(text)
    if tree.get("error"):
        return None
    found: _Calls = Counter()
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("class") == "FUNCTION" and not node.get("is_operator"):
                name = str(node.get("function_name", "")).lower()
                name = _CANONICAL.get(name, name)
                arguments = node.get("arguments") or node.get("children") or []
                found[(name, _defaults(name, arguments))] += 1
            elif node.get("type") == "ARRAY_CONSTRUCTOR":  # ARRAY[a, b] is list_value(a, b)
                found[("list_value", tuple(_kind(arg) for arg in node.get("children") or []))] += 1
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _defaults(name: str, arguments: list[Any]) -> tuple[str, ...]:
    """The kinds of a call's arguments with the defaults DuckDB fills in written out, as sqlglot
    writes them: ``range(n)`` is ``range(0, n)`` (also ``generate_series``), ``string_agg(x)``
    is ``string_agg(x, ',')``, and a group of 0 is ``regexp_extract``'s default (sqlglot leaves
    it out)."""
    kinds = tuple(_kind(arg) for arg in arguments)
    if name in ("range", "generate_series") and len(kinds) == 1:
        return ("CONSTANT 0", *kinds)
    if name == "string_agg" and len(kinds) == 1:
        return (*kinds, "CONSTANT ,")
    if name in ("regexp_extract", "regexp_extract_all") and kinds[2:] == ("CONSTANT 0",):
        return kinds[:2]
    return kinds


#: Calls whose first argument names a date part, which sqlglot writes by its own name for it
#: (``EXTRACT(dow FROM d)`` as ``DAYOFWEEK``, ``date_trunc('y', d)`` as ``'YEAR'``).
# fmt: off
_PART_CALLS = frozenset(
    {"date_part", "datepart", "date_trunc", "datetrunc", "date_diff", "datediff", "date_sub",
     "datesub"}
)
_PARTS: dict[str, str] = {}
#: Names of date parts, DuckDB's and those sqlglot writes.
_PART_NAMES = (
    "century", "centuries", "day", "days", "d", "dayofmonth", "decade", "decades", "dow",
    "dayofweek", "doy", "dayofyear", "epoch", "era", "hour", "hours", "h", "hr", "hrs", "isodow",
    "isoyear", "julian", "microsecond", "microseconds", "us", "usec", "usecs", "millennium",
    "millennia", "millisecond", "milliseconds", "ms", "msec", "msecs", "minute", "minutes", "m",
    "min", "mins", "month", "months", "mon", "mons", "quarter", "quarters", "second", "seconds",
    "s", "sec", "secs", "week", "weeks", "w", "weekofyear", "weekday", "year", "years", "y", "yr",
    "yrs", "yearweek",
)
# fmt: on


def _measure_parts(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Each date part by what DuckDB computes for it: two names are one where ``date_part``,
    ``date_trunc`` and ``date_diff`` give the same values (or the same error) over a few
    timestamps."""
    probes = (
        "TIMESTAMP '2021-01-03 04:05:06.123456'",
        "TIMESTAMP '1999-12-31 23:59:59.999999'",
        "TIMESTAMP '2020-02-29 12:00:00.5'",
    )
    seen: dict[tuple[Any, ...], str] = {}
    parts: dict[str, str] = {}
    for part in _PART_NAMES:
        values: list[Any] = []
        for a in probes:
            for call in (
                f"date_part('{part}', {a})",
                f"date_trunc('{part}', {a})",
                f"date_diff('{part}', {a}, {probes[0]})",
            ):
                try:
                    values.append(con.execute(f"SELECT {call}").fetchall()[0][0])
                except duckdb.Error:
                    values.append("error")
        parts[part] = seen.setdefault(tuple(values), part)
    return parts


def _kind(argument: Any) -> str:
    """An argument's kind in DuckDB's parse (a column, a constant, a call, ...), through the
    casts sqlglot adds (``BOOL_AND(CAST(b AS BOOLEAN))``)."""
    node = argument.get("expression", argument) if isinstance(argument, dict) else None
    while isinstance(node, dict) and node.get("class") == "CAST":
        node = node.get("child")
    if not isinstance(node, dict):
        return ""
    if node.get("class") == "CONSTANT":
        return f"CONSTANT {_value(node.get('literal') or {})}"
    return "FUNCTION" if node.get("type") == "ARRAY_CONSTRUCTOR" else str(node.get("class", ""))


def _value(literal: dict[str, Any]) -> str:
    """A constant's value as DuckDB's parser read it, numbers by value (``1_000``, ``.5``), so
    that an argument sqlglot changes (regexp options ``'li'`` written ``'i'``: the literal match
    dropped) shows. Text keeps its case: a date part (``'month'`` written ``'MONTH'``) is read
    by :func:`_parts_named`."""
    kind, text = str(literal.get("kind", "")), str(literal.get("text", ""))
    if kind in ("INTEGER", "NUMERIC"):
        try:
            return format(Decimal(text.replace("_", "")).normalize(), "f")
        except InvalidOperation:
            return text
    return text if kind == "STRING" else f"{kind.lower()} {text.lower()}"


def _other_arguments(before: _Calls, after: _Calls) -> str | None:
    """The first function ``before`` calls with arguments ``after`` does not call it with."""
    by_name: dict[str, Counter[tuple[str, ...]]] = {}
    for (name, kinds), n in after.items():
        by_name.setdefault(name, Counter())[kinds] += n
    for (name, kinds), n in before.items():
        if name in by_name and by_name[name][kinds] < n:
            return name
    return None


def _parts_named(calls: _Calls) -> _Calls:
    """``calls`` with each date part named by what DuckDB computes for it (measured once, on
    the parser's connection, the first time a part is spelt otherwise: ~0.1 s)."""
    with _PARSER_LOCK:
        if not _PARTS:
            _PARTS.update(_measure_parts(_PARSER[0]))
    named: _Calls = Counter()
    for (name, kinds), n in calls.items():
        if name in _PART_CALLS and kinds and kinds[0].startswith("CONSTANT "):
            part = kinds[0][len("CONSTANT ") :].lower()
            kinds = (f"CONSTANT {_PARTS.get(part, part)}", *kinds[1:])
        named[(name, kinds)] += n
    return named


def written_otherwise(sql: str, rendered: str) -> str | None:
    """Why sqlglot's rendering of ``sql`` calls a function otherwise than ``sql`` does, by
    DuckDB's own parser, or None: a function called with other arguments (sqlglot wrote
    ``jaro_winkler_similarity(s, t, 0.9)`` as ``JARO_WINKLER_SIMILARITY(UPPER(s), UPPER(t))``,
    ``regexp_replace(s, p, r, opt)`` without its options, and read a column named ``s`` in
    ``date_trunc(s, d)`` as the unit 'SECOND', regexp options ``'li'`` as ``'i'``), or one
    called more often (an ``UPPER`` added). Arguments compare by kind and constants by value
    (:func:`_value`), with the defaults DuckDB fills in written out (:func:`_defaults`). The
    rewrite works on sqlglot's reading; such a reading is not the query."""
    before, after = _calls(sql), _calls(rendered)
    if before is None or after is None:
        return None  # DuckDB's binder will speak for the query
    other = _other_arguments(before, after)
    if other is not None and other in _PART_CALLS:  # a date part spelt otherwise ('dow')?
        other = _other_arguments(_parts_named(before), _parts_named(after))
    if other is not None:
        return f"the SQL front end writes {other}() with other arguments than the query"
    names_before = Counter(name for name, _ in before.elements())
    names_after = Counter(name for name, _ in after.elements())
    added = sorted(set(names_after - names_before) - set(names_before))
    changed = [name for name in added if name in _ADDED_WATCH]
    if changed:
        return f"the SQL front end adds {changed[0]}() to the query"
    return None


__all__ = ["UNANALYSABLE", "Binder", "ambiguous_order", "read_back", "written_otherwise"]
