"""Text DuckDB reads as the number it is compared with, written as that number for Polars.

DuckDB casts a string literal compared with a number (``l_quantity > '45'``, ``k IN ('1',
'2')``, ``n BETWEEN '1' AND '5'``) to the number's type; Polars fails on it, so the arm refused
every such query. That is every numeric parameter ``dau run --param`` passes (parameters come as
text there), and what a user's parameter of a str holds.

The cast is DuckDB's, with its own rounding: over a TINYINT, ``'4.5'`` is 5, so ``ti > '4.5'``
is false for 5 where ``ti > 4.5`` is true. So a text is written as a number only where the cast
is exact and the same number whatever the rounding: digits with an optional minus sign and
fraction (no space, exponent or plus), compared with a column of a base table (DuckDB's type of
it as stored, not sqlglot's guess of an expression's): of an integer type when it is a whole
number in that type's range, of a DECIMAL(p, s) when it has at most ``s`` fractional and
``p - s`` whole digits, of a DOUBLE when it has at most 15 significant digits (converted
through a 64-bit integer and one division, as DuckDB converts a decimal, it is then the
nearest DOUBLE too). Anything else stays text, and the arm refuses it by name as before
(``polars_functions.function_divergence``). An IN list is written as numbers only when all of
its text is.
"""

from __future__ import annotations

import re

from sqlglot import exp

from dau_scheduler.arms.integer_types import integer_range
from dau_scheduler.arms.polars_functions import COMPARISONS

#: A number's text every cast reads alike: digits, an optional minus sign and fraction.
_PLAIN_NUMBER = re.compile(r"(-?)(\d+)(?:\.(\d+))?")
#: Significant digits a DOUBLE holds every decimal of exactly through one division.
_DOUBLE_DIGITS = 15


def _number(text: str, column_type: exp.DataType) -> exp.Expr | None:
    """``text`` as the number DuckDB casts it to for a column of ``column_type``, or None where
    that cast may round, overflow or read it otherwise."""
    found = _PLAIN_NUMBER.fullmatch(text)
    if found is None:
        return None
    minus, whole, fraction = found.group(1), found.group(2), found.group(3) or ""
    whole = whole.lstrip("0") or "0"
    bounds = integer_range(column_type)
    if bounds is not None:
        if fraction.strip("0"):
            return None
        value = int(minus + whole)
        return _literal(minus, whole) if bounds[0] <= value <= bounds[1] else None
    if column_type.is_type(exp.DType.DECIMAL):
        sizes = [int(p.name) for p in column_type.expressions if isinstance(p.this, exp.Literal)]
        if len(sizes) != 2:
            return None  # (DuckDB writes a stored decimal's width and scale)
        width, scale = sizes
        if len(fraction) > scale or (whole != "0" and len(whole) > width - scale):
            return None
    elif column_type.is_type(exp.DType.DOUBLE):
        if len((whole + fraction).lstrip("0")) > _DOUBLE_DIGITS:
            return None
    else:
        return None
    return _literal(minus, f"{whole}.{fraction}" if fraction else whole)


def _literal(minus: str, digits: str) -> exp.Expr:
    literal = exp.Literal.number(digits)
    return exp.Neg(this=literal) if minus and digits.strip("0.") else literal


def compared_pairs(node: exp.Expr) -> list[tuple[exp.Expr, exp.Expr | None]]:
    """What a comparison, BETWEEN or IN ``node`` compares: (a value, what it is compared with),
    each side of a comparison once as the value."""
    if isinstance(node, exp.Between):
        return [(node.this, node.args.get("low")), (node.this, node.args.get("high"))]
    if isinstance(node, exp.In):
        return [(node.this, e) for e in node.expressions]
    return [(node.this, node.expression), (node.expression, node.this)]


def _stored_types(tree: exp.Expr, stored: dict[str, dict[str, str]]) -> dict[int, exp.DataType]:
    """The columns of ``tree`` that read a base table, by id: DuckDB's type of each
    (``stored``: table -> column -> DuckDB's type)."""
    from sqlglot.optimizer.scope import traverse_scope

    found: dict[int, exp.DataType] = {}
    for scope in traverse_scope(tree):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table):
                kind = stored.get(source.name.lower(), {}).get(column.name)
                if kind is not None:
                    found[id(column)] = exp.DataType.build(kind, dialect="duckdb")
    return found


def number_texts_as_numbers(tree: exp.Expr, stored: dict[str, dict[str, str]]) -> exp.Expr:
    """``tree`` with each text literal compared with a numeric column of a base table
    (``stored``: table -> column -> DuckDB's type) written as the number DuckDB reads it as,
    where that reading is exact (see the module's docstring)."""
    if not any(
        isinstance(literal.parent, (*COMPARISONS, exp.Between, exp.In)) and literal.is_string
        for literal in tree.find_all(exp.Literal)
    ):
        return tree
    types = _stored_types(tree, stored)
    for node in list(tree.find_all(*COMPARISONS, exp.Between, exp.In)):
        changes: list[tuple[exp.Expr, exp.Expr | None]] = []
        for subject, text in compared_pairs(node):
            kind = types.get(id(subject))
            if isinstance(text, exp.Literal) and text.is_string and kind is not None:
                changes.append((text, _number(text.this, kind)))
        if isinstance(node, exp.In) and any(new is None for _, new in changes):
            continue  # (all of its text as numbers, or none: the arm refuses it as text)
        for text, new in changes:
            if new is not None:
                text.replace(new)
    return tree


__all__ = ["compared_pairs", "number_texts_as_numbers"]
