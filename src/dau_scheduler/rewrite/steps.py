"""Rewrite steps applied to every qualified query, in order: small pure ``(tree, schema) -> tree``
functions (``schema``: the tables' columns and types, as the query was qualified with).

They make the query easier for every engine to run without changing its answer.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Callable, Mapping

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types

from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.outer_joins import simplify_outer_joins
from dau_scheduler.rewrite.uuids import uuid_texts

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


def _date_and_interval(node: exp.Expr) -> tuple[dt.date, exp.Interval] | None:
    """The date literal and the interval of ``DATE 'x' +/- INTERVAL ...``, or None."""
    day, interval = _date_literal(node.this), node.expression
    return None if day is None or not isinstance(interval, exp.Interval) else (day, interval)


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
    if not any(
        isinstance(node.parent, _COMPARISONS) and _date_and_interval(node) is not None
        for node in tree.find_all(exp.Add, exp.Sub)
    ):
        return tree  # nothing to fold: sqlglot's types (a copy of the tree) are not read
    dated = _compared_with_dates(tree, schema)

    def visit(node: exp.Expr) -> exp.Expr:
        found = _date_and_interval(node) if id(node) in dated else None
        if found is None:
            return node
        day, interval = found
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


#: The steps, in the order they run.
STEPS: tuple[Callable[[exp.Expr, Schema], exp.Expr], ...] = (
    strip_comments,
    fold_date_arithmetic,
    uuid_texts,
    simplify_outer_joins,
)

__all__ = ["STEPS", "Schema", "fold_date_arithmetic", "strip_comments", "uuid_texts"]
