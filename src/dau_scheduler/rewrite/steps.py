"""Rewrite steps applied to every qualified query, in order: small pure ``tree -> tree`` functions.

They make the query easier for every engine to run without changing its answer.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Callable

from sqlglot import exp

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)


def strip_comments(tree: exp.Expr) -> exp.Expr:
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


def fold_date_arithmetic(tree: exp.Expr) -> exp.Expr:
    """``DATE 'x' +/- INTERVAL 'n' unit`` inside a comparison becomes the date it names.

    DuckDB types the sum as a TIMESTAMP at midnight; inside a comparison with a date or timestamp
    that is the same value as the date, and every engine can read a date literal.
    """

    def visit(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, (exp.Add, exp.Sub)) or not isinstance(node.parent, _COMPARISONS):
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

    return tree.transform(visit)


#: The steps, in the order they run.
STEPS: tuple[Callable[[exp.Expr], exp.Expr], ...] = (
    strip_comments,
    fold_date_arithmetic,
)

__all__ = ["STEPS", "fold_date_arithmetic", "strip_comments"]
