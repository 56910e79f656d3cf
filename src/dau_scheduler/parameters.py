"""Query parameters (``?``, ``$1``, ``$name``) written into the query as DuckDB binds them.

DuckDB binds a parameter as a constant of its value's own type (a Python int an INTEGER, or a
BIGINT or HUGEINT by its size; a Decimal a DECIMAL of its digits; a date a DATE; a list a
list), except text, which binds as a string literal does (compared with a DATE, it is read as
a date). So the query with each parameter written as that constant (text as a string literal,
None as NULL, any other value as ``CAST('<DuckDB's text of it>' AS <its type>)``) is the query
DuckDB answers, and it splits as any other. Each constant is checked on DuckDB: it must read
back as the same value of the same type. A query sqlglot cannot tokenize, parameters that do
not match the placeholders one to one, a value that fails that check, or a parameter where
DuckDB matches expressions as written (:func:`bind`) are not written in: the query is answered
unsplit with its parameters (DuckDB raises where they are wrong), by name.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokenizer_core import Token, TokenType

from dau_scheduler.errors import SqlError
from dau_scheduler.refusals import TEXT_DEPENDENT
from dau_scheduler.rewrite.dialect import DIALECT

#: DuckDB's text of a number that reads back as one (``.5``: a DECIMAL(1, 1)'s).
_NUMBER = re.compile(r"-?([0-9]+(\.[0-9]+)?|\.[0-9]+)(e[+-]?[0-9]+)?")
#: Why a query with parameters is answered unsplit, by what failed.
UNREAD = "the query's parameters could not be written into it ({}): answered unsplit with them"


def check(params: Any) -> None:
    """``params``: None, a list or tuple (``?`` and ``$1``), or a mapping of names (``$name``)."""
    if params is None:
        return
    if isinstance(params, Mapping):
        bad = [key for key in params if not isinstance(key, str)]
        if bad:
            raise SqlError(f"the names of params must be str, got {bad[0]!r}")
        return
    if isinstance(params, (str, bytes)) or not isinstance(params, Sequence):
        raise SqlError(
            "params must be a list or tuple of values (for ? and $1) or a dict of them (for "
            f"$name), got {type(params).__name__}"
        )


def bind(sql: str, params: Any, cursor: duckdb.DuckDBPyConnection) -> tuple[str | None, str]:
    """``sql`` with its parameters written in as constants, or None and why not. The text of
    each placeholder is replaced, nothing else: sqlglot reads ``l[$1]`` as an index it does
    not shift to zero-based (the type unknown), and wrote ``l[CAST(1 AS INT) + 1]`` once the
    placeholder held a constant (DuckDB's ``l[2]``: a wrong answer, found while this was
    written; a constant in parentheses is read and written back as the index it is)."""
    try:
        tokens = DIALECT().tokenize(sql)
        places = _placeholders(tokens)
    except (SqlglotError, ValueError) as exc:
        return None, UNREAD.format(str(exc))
    quoting = _quoting(tokens)
    if quoting is not None:
        return None, UNREAD.format(f"{quoting}() returns the query's own text, which they change")
    values = _values([name for _, _, name in places], params)
    if values is None:
        return None, UNREAD.format("they do not match its placeholders one to one")
    constants: dict[int, str] = {}
    for value in values:
        if id(value) not in constants:
            constant = _constant(value, cursor)
            if constant is None:
                return None, UNREAD.format(f"DuckDB does not read {value!r} back as itself")
            constants[id(value)] = constant.sql(dialect=DIALECT)
    matched = any(token.token_type in _MATCHING_TOKENS for token in tokens)
    if matched and not _apart(_numbered(sql, places)):
        # DuckDB matches a GROUP BY, ORDER BY, ... expression to the outputs' as written, and
        # $1 is not $2 nor a literal, whatever their values: ``GROUP BY i + $2`` leaves
        # ``i + $1`` ungrouped (DuckDB raises; written in, the two would match), and
        # NULLIF(UNNEST([$5, $6]), $1) grouped by its twin over $7, $8 made 4 groups where
        # the constants made 2 (DuckDB's unnest_group_by.test, its literals as parameters).
        return None, UNREAD.format(
            "one stands where DuckDB matches expressions as written: outputs, GROUP BY, "
            "ORDER BY, HAVING, a window"
        )
    for (start, end, _), value in reversed(list(zip(places, values, strict=True))):
        sql = f"{sql[:start]}({constants[id(value)]}){sql[end + 1 :]}"
    return sql, ""


def _placeholders(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """Where each placeholder stands in the query of ``tokens`` (first and last character) and
    its name: ``?``
    numbered in the order they stand in the text, as DuckDB numbers them (a tree's order need
    not be the text's: ``max(x + ?) ... BETWEEN ? AND ?`` took the second value for the first),
    ``$1`` its number, ``$name`` its name. ValueError where ``?`` stands beside ``$``."""
    found: list[tuple[int, int, str]] = []
    marks = 0
    for token, after in zip(tokens, [*tokens[1:], None], strict=True):
        if token.token_type == TokenType.PLACEHOLDER and token.text == "?":
            marks += 1
            found.append((token.start, token.end, str(marks)))
        elif token.token_type == TokenType.PARAMETER:
            if after is None or after.start != token.end + 1:
                raise ValueError("a $ with no name after it")
            found.append((token.start, after.end, after.text))
    if marks and len(found) > marks:
        raise ValueError("it mixes ? with $1 or $name")
    return found


def _quoting(tokens: list[Token]) -> str | None:
    """The first function of :data:`~dau_scheduler.refusals.TEXT_DEPENDENT` the query calls
    (``current_query()`` is the text as the user wrote it, placeholders and all), or None."""
    for token, after in itertools.pairwise(tokens):
        name = token.text.lower()
        if name in TEXT_DEPENDENT and after.token_type == TokenType.L_PAREN:
            return name
    return None


#: The tokens of the clauses where DuckDB matches an expression to another as written.
_MATCHING_TOKENS = frozenset(
    {
        TokenType.GROUP_BY,
        TokenType.ORDER_BY,
        TokenType.HAVING,
        TokenType.QUALIFY,
        TokenType.OVER,
        TokenType.WINDOW,
        TokenType.DISTINCT,
        TokenType.PIVOT,
        TokenType.UNPIVOT,
    }
)


#: The clauses whose expressions DuckDB matches to the outputs' (or one another's) as written.
_MATCHED = (
    exp.Group,
    exp.Order,
    exp.Having,
    exp.Qualify,
    exp.Window,
    exp.Distinct,
    exp.Pivot,
)


def _apart(numbered: str) -> bool:
    """Whether every placeholder of the query ``numbered`` (``?`` written ``$1``...) stands
    in a WHERE, a join's condition, an aggregate's arguments, a LIMIT or an OFFSET, none of
    them inside a clause DuckDB matches expressions in (:data:`_MATCHED`): a constant written
    there is matched to nothing."""
    try:
        tree = sqlglot.parse_one(numbered, read=DIALECT)
    except SqlglotError:
        return False
    for place in tree.find_all(exp.Placeholder):
        kept = False
        node: exp.Expr | None = place
        while node is not None:
            if isinstance(node, _MATCHED):
                return False
            parent = node.parent
            if isinstance(node, (exp.Where, exp.Limit, exp.Offset, exp.AggFunc)) or (
                isinstance(parent, exp.Join) and node.arg_key == "on"
            ):
                kept = True
            node = parent
        if not kept:
            return False
    return True


def _numbered(sql: str, places: list[tuple[int, int, str]]) -> str:
    """``sql`` with each ``?`` written ``$1``, ``$2``... as DuckDB numbers them (``places``:
    :func:`_placeholders`)."""
    for start, end, name in reversed(places):
        sql = f"{sql[:start]}${name}{sql[end + 1 :]}"
    return sql


def _values(names: list[str], params: Any) -> list[Any] | None:
    """The value of each placeholder, in order, or None where the two do not match one to one
    (DuckDB then says how)."""
    if isinstance(params, Mapping):
        if any(name.isdigit() for name in names) or set(names) != set(params):
            return None
        return [params[name] for name in names]
    if not all(name.isdigit() for name in names):
        return None
    numbers = [int(name) for name in names]
    if set(numbers) != set(range(1, len(params) + 1)):
        return None
    return [params[number - 1] for number in numbers]


def _constant(value: Any, cursor: duckdb.DuckDBPyConnection) -> exp.Expr | None:
    """``value`` as the constant DuckDB binds it as, or None where DuckDB does not read that
    constant back as the same value of the same type (or cannot take the value)."""
    if value is None:
        return exp.Null()
    if isinstance(value, str):
        return exp.Literal.string(value)
    try:
        found = cursor.execute("SELECT typeof($1), CAST($1 AS VARCHAR)", [value]).fetchone()
        if found is None or found[1] is None:
            return None
        type_, text = found
        # (a number as a number: the Polars arm takes a cast of one, not of text)
        number = _NUMBER.fullmatch(text) is not None and not isinstance(value, bool)
        if number and type_ in ("DOUBLE", "FLOAT") and "e" not in text:
            text += "e0"  # (a floating-point literal: 1.5 alone is a DECIMAL)
        inner = sqlglot.parse_one(text, read=DIALECT) if number else exp.Literal.string(text)
        constant = exp.Cast(this=inner, to=exp.DataType.build(type_, dialect=DIALECT))
        written = constant.sql(dialect=DIALECT)
        same = cursor.execute(
            f"SELECT typeof({written}) = $2 AND {written} IS NOT DISTINCT FROM $1", [value, type_]
        ).fetchone()
    except (duckdb.Error, SqlglotError, TypeError, ValueError):
        return None
    return constant if same is not None and same[0] is True else None


__all__ = ["UNREAD", "bind", "check"]
