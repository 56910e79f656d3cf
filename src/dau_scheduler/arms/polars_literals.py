"""Literals the Polars arm reads bare, as DuckDB's parser does: a literal in parentheses, and a
number literal cast to the type DuckDB gives the literal itself. The arm's checks look for a
bare literal, and it widens every decimal literal before it reads a cast."""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_decimals import duckdb_type


def bare_literal(node: exp.Expr) -> exp.Expr:
    """A literal in parentheses, bare: DuckDB reads ``('03:00')`` as the literal (its parser
    keeps no parentheses), and the arm's checks look for a literal, not one in parentheses
    (``('03:00') = tm`` compared a TIME as text: 24 rows for 49; a query's parameters are
    written in so, ``parameters.bind``)."""
    if isinstance(node, exp.Paren) and isinstance(
        node.unnest(), (exp.Literal, exp.Null, exp.Boolean)
    ):
        return node.unnest().copy()
    return node


def literal_cast(node: exp.Expr) -> exp.Expr:
    """A cast of a number literal to the type DuckDB gives the literal itself (its digits, its
    fractional digits: ``CAST(1.005 AS DECIMAL(4, 3))``), the literal: the cast changes
    nothing, and the arm, which widens every decimal literal first, refused it as a cast to
    fewer digits (a query's Decimal parameter is written so, ``parameters.bind``)."""
    if isinstance(node, exp.Cast) and node.to.is_type(exp.DType.DECIMAL):
        inner = node.this
        literal = inner.this if isinstance(inner, exp.Neg) else inner
        sizes = [p.name for p in node.to.expressions if isinstance(p.this, exp.Literal)]
        if (
            isinstance(literal, exp.Literal)
            and not literal.is_string
            and len(sizes) == 2
            and duckdb_type(inner) == (int(sizes[0]), int(sizes[1]), None)
        ):
            bare: exp.Expr = inner.copy()
            return bare
    return node


__all__ = ["bare_literal", "literal_cast"]
