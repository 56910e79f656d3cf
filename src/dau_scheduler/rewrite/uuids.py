"""Text that meets a UUID, written as DuckDB reads it, so that a Polars arm (which is handed a
UUID as its text: lower case, hyphenated) answers as DuckDB does.

DuckDB casts text that meets a UUID to UUID: upper case, braces and missing hyphens read
alike, and the value comes out as DuckDB writes it. Text meets a UUID in a comparison (``=``,
``<``, BETWEEN, IN, IS DISTINCT FROM), in a simple CASE's WHEN values, in a column of a set
operation (UNION, INTERSECT, EXCEPT: the final query, which runs over the partials' Arrow
text, deduplicated ``'A0EE...'`` apart from the UUID), and in the functions that
give their values one type (COALESCE, NULLIF, GREATEST, LEAST, IF, a CASE's results), whose
result is then a UUID itself: ``coalesce(u, 'A0EEBC99-...')`` is the UUID
``a0eebc99-...`` in DuckDB and was that text as written on the Polars arm (the split counted
334 of 668 rows on ``coalesce(u, '...') = '...'``, and grouped the one value as two; forty-
fourth session). Such a literal is written as DuckDB writes the UUID; any other text
expression is cast to UUID (which the Polars arm refuses). The text's order is the UUIDs' own
(hexadecimal digits in order), so ORDER BY, MIN and MAX agree. Text that is no UUID is kept:
DuckDB raises on it, and so does the host arm.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types

from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.one_type import ONE_TYPE, given_one_type

Schema = Mapping[str, Mapping[str, str]]

_COMPARISONS = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Between,
    exp.In,
    exp.NullSafeEQ,
    exp.NullSafeNEQ,
)


def _operands(node: exp.Expr) -> list[exp.Expr]:
    """What a comparison compares (a simple CASE: its operand and its WHEN values)."""
    if isinstance(node, exp.Between):
        found = [node.this, node.args.get("low"), node.args.get("high")]
    elif isinstance(node, exp.In):
        found = [node.this, *node.expressions]
    elif isinstance(node, exp.Case):
        found = [node.this, *(branch.this for branch in node.args.get("ifs") or [])]
    else:
        found = [node.this, node.expression]
    return [o for o in found if isinstance(o, exp.Expr)]


def _leaves(node: exp.Expr) -> list[exp.Select] | None:
    """The SELECTs a set operation's columns come from, in order; None where one is of
    another form (a VALUES list, ``FROM t`` alone)."""
    node = _bare(node)
    if isinstance(node, exp.Subquery):
        return _leaves(node.this)
    if isinstance(node, exp.SetOperation):
        left, right = _leaves(node.this), _leaves(node.expression)
        return None if left is None or right is None else left + right
    return [node] if isinstance(node, exp.Select) else None


def _columns(node: exp.SetOperation) -> list[list[exp.Expr]]:
    """Each column of a set operation: its value in every SELECT (none where one cannot be
    read, or a ``*`` or a width that differs leaves it unknown)."""
    leaves = _leaves(node)
    if not leaves:
        return []
    widths = {len(leaf.selects) for leaf in leaves}
    if len(widths) != 1 or any(isinstance(s, exp.Star) for leaf in leaves for s in leaf.selects):
        return []
    return [[leaf.selects[i].unalias() for leaf in leaves] for i in range(widths.pop())]


def _bare(node: exp.Expr) -> exp.Expr:
    """``node`` out of its parentheses (a subquery stays one: ``unnest`` would open it)."""
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _is_uuid(kind: exp.DataType | None) -> bool:
    return kind is not None and kind.is_type(exp.DType.UUID)


def _is_text(kind: exp.DataType | None) -> bool:
    return kind is not None and kind.is_type(*exp.DataType.TEXT_TYPES)


def uuid_texts(tree: exp.Expr, schema: Schema) -> exp.Expr:
    """Write the text that meets a UUID in ``tree`` as DuckDB reads it (see the module)."""
    if not any(kind.upper() == "UUID" for columns in schema.values() for kind in columns.values()):
        return tree
    try:
        typed = annotate_types(tree.copy(), schema=dict(schema), dialect=DIALECT)
    except (SqlglotError, ValueError, KeyError):
        return tree
    # Children before their parents (a copy walks in the same order), so a combining function
    # is known to give a UUID before what compares it is looked at.
    pairs = list(zip(tree.walk(bfs=False), typed.walk(bfs=False), strict=True))
    kinds = {id(node): twin.type for node, twin in pairs}
    uuids: set[int] = set()
    changes: list[tuple[exp.Expr, exp.Expr]] = []

    def meet(operands: list[exp.Expr]) -> bool:
        if not any(id(_bare(o)) in uuids for o in operands):
            return False
        for operand in operands:
            inner = _bare(operand)
            if isinstance(inner, exp.Literal) and inner.is_string:
                with contextlib.suppress(ValueError):
                    changes.append((inner, exp.Literal.string(str(uuid.UUID(inner.this.strip())))))
            elif _is_text(kinds.get(id(inner))):
                changes.append((inner, exp.cast(inner.copy(), exp.DType.UUID)))
        return True

    for node, _twin in reversed(pairs):
        if _is_uuid(kinds[id(node)]):
            uuids.add(id(node))
        if isinstance(node, ONE_TYPE) and meet(given_one_type(node)):
            uuids.add(id(node))
        if isinstance(node, _COMPARISONS) or (isinstance(node, exp.Case) and node.this):
            meet(_operands(node))
        if isinstance(node, exp.SetOperation):
            for column in _columns(node):
                meet(column)
    for old, new in changes:
        old.replace(new)
    return tree


__all__ = ["uuid_texts"]
