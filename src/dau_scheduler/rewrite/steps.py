"""Rewrite steps applied to every qualified query, in order: small pure ``(tree, schema) -> tree``
functions (``schema``: the tables' columns and types, as the query was qualified with).

They make the query easier for every engine to run without changing its answer.
"""

from __future__ import annotations

import calendar
import contextlib
import datetime as dt
import uuid
from collections.abc import Callable, Mapping

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types

from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.outer_joins import simplify_outer_joins

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)
#: The types a date compares with as the TIMESTAMP at its midnight does (DuckDB casts both to
#: the same type, or the date to the TIMESTAMP it is).
_DATED = (
    exp.DType.DATE,
    exp.DType.TIMESTAMP,
    exp.DType.TIMESTAMPNTZ,
    exp.DType.TIMESTAMPTZ,
    exp.DType.TIMESTAMPLTZ,
    exp.DType.TIMESTAMP_S,
    exp.DType.TIMESTAMP_MS,
    exp.DType.TIMESTAMP_NS,
)

Schema = Mapping[str, Mapping[str, str]]


def strip_comments(tree: exp.Expr, schema: Schema) -> exp.Expr:
    """Drop comments, so generated SQL carries no stale text."""
    for node in tree.walk():
        node.comments = None
    return tree


def _date_literal(node: exp.Expr) -> dt.date | None:
    if isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.DATE):
        inner = node.this
        if isinstance(inner, exp.Literal) and inner.is_string:
            try:
                return dt.date.fromisoformat(inner.this)
            except ValueError:
                return None
    return None


def _shift(day: dt.date, amount: int, unit: str) -> dt.date | None:
    if unit in {"DAY", "DAYS"}:
        return day + dt.timedelta(days=amount)
    if unit in {"WEEK", "WEEKS"}:
        return day + dt.timedelta(weeks=amount)
    months = {"MONTH": 1, "MONTHS": 1, "YEAR": 12, "YEARS": 12, "QUARTER": 3, "QUARTERS": 3}
    if unit not in months:
        return None
    total = day.month - 1 + amount * months[unit]
    year, month = day.year + total // 12, total % 12 + 1
    return day.replace(
        year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1])
    )


def _partners(node: exp.Expr) -> list[exp.Expr]:
    """What ``node``, an operand of a comparison, is compared with."""
    parent = node.parent
    if isinstance(parent, exp.Between):
        ends = [parent.args.get("low"), parent.args.get("high")]
        return [e for e in ends if e is not None] if node is parent.this else [parent.this]
    return [o for o in (parent.this, parent.expression) if o is not node]  # type: ignore[union-attr]


def _compared_with_dates(tree: exp.Expr, schema: Schema) -> set[int]:
    """The ids of ``tree``'s sums and differences under a comparison whose other operands are
    all dates or timestamps, by sqlglot's types (read on a copy, which walks in the same order)."""
    try:
        typed = annotate_types(tree.copy(), schema=dict(schema), dialect=DIALECT)
    except (SqlglotError, ValueError, KeyError):
        return set()
    found = set()
    for node, twin in zip(tree.walk(), typed.walk(), strict=True):
        if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.parent, _COMPARISONS):
            kinds = [p.type for p in _partners(twin)]
            if kinds and all(k is not None and k.is_type(*_DATED) for k in kinds):
                found.add(id(node))
    return found


def fold_date_arithmetic(tree: exp.Expr, schema: Schema) -> exp.Expr:
    """``DATE 'x' +/- INTERVAL 'n' unit`` compared with dates or timestamps becomes the date it
    names (every engine can read a date literal).

    DuckDB types the sum as a TIMESTAMP at midnight; compared with a date or a timestamp that is
    the same value as the date. With text it is not: DuckDB compares ``s = DATE '2021-01-01' +
    INTERVAL '3 days'`` as timestamps ('2021-01-04 10:00' is not equal) and ``s = DATE
    '2021-01-04'`` as dates (it is): the split counted 500 rows for 250 (thirty-first session),
    so a sum compared with anything but a date or a timestamp is kept as written. (Left: DuckDB
    casts a DATE column to a TIMESTAMP to compare it with the sum, which raises on a year past
    294247; compared with the date no error is raised.)
    """
    dated = _compared_with_dates(tree, schema)

    def visit(node: exp.Expr) -> exp.Expr:
        if id(node) not in dated:
            return node
        day, interval = _date_literal(node.this), node.expression
        if day is None or not isinstance(interval, exp.Interval):
            return node
        amount, unit = interval.this, interval.unit
        if not (isinstance(amount, exp.Literal) and unit is not None):
            return node
        try:
            count = int(str(amount.this))
        except ValueError:
            return node
        shifted = _shift(day, -count if isinstance(node, exp.Sub) else count, unit.name.upper())
        if shifted is None:
            return node
        return exp.cast(exp.Literal.string(shifted.isoformat()), exp.DataType.Type.DATE)

    return tree.transform(visit, copy=False)


def uuid_texts(tree: exp.Expr, schema: Schema) -> exp.Expr:
    """Text compared with a UUID (by a comparison, BETWEEN or IN), as DuckDB reads it: a
    literal written as DuckDB writes that UUID (lower case, hyphens at their places), anything
    else cast to UUID as DuckDB casts it. A UUID reaches a Polars arm as that text, which it
    compares as text: ``u = 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'`` matched no row there where
    DuckDB matches one (DuckDB's test_uuid.storage.test, found once the slt runner loaded
    database files); a cast to UUID the arm refuses. The text's order is the UUIDs' own (its
    hexadecimal digits in order), so ORDER BY, MIN and MAX agree. Text that is no UUID is
    kept: DuckDB raises on it."""
    if not any(kind.upper() == "UUID" for columns in schema.values() for kind in columns.values()):
        return tree
    try:
        typed = annotate_types(tree.copy(), schema=dict(schema), dialect=DIALECT)
    except (SqlglotError, ValueError, KeyError):
        return tree
    changes: list[tuple[exp.Expr, exp.Expr]] = []
    for node, twin in zip(tree.walk(), typed.walk(), strict=True):
        if not isinstance(node, (*_COMPARISONS, exp.In, exp.NullSafeEQ, exp.NullSafeNEQ)):
            continue
        pairs = list(zip(_operands(node), _operands(twin), strict=True))
        if not any(t.type is not None and t.type.is_type(exp.DType.UUID) for _, t in pairs):
            continue
        for operand, operand_type in ((o, t.type) for o, t in pairs):
            if isinstance(operand, exp.Literal) and operand.is_string:
                with contextlib.suppress(ValueError):
                    text = str(uuid.UUID(operand.this.strip()))
                    changes.append((operand, exp.Literal.string(text)))
            elif operand_type is not None and operand_type.is_type(*exp.DataType.TEXT_TYPES):
                changes.append((operand, exp.cast(operand.copy(), exp.DType.UUID)))
    for old, new in changes:
        old.replace(new)
    return tree


def _operands(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Between):
        return [node.this, node.args["low"], node.args["high"]]
    if isinstance(node, exp.In):
        return [node.this, *node.expressions]
    return [node.this, node.expression]


#: The steps, in the order they run.
STEPS: tuple[Callable[[exp.Expr, Schema], exp.Expr], ...] = (
    strip_comments,
    fold_date_arithmetic,
    uuid_texts,
    simplify_outer_joins,
)

__all__ = ["STEPS", "Schema", "fold_date_arithmetic", "strip_comments", "uuid_texts"]
