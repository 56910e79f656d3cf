"""``ORDER BY ALL`` read as DuckDB reads it: one key per output, left to right."""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.block_parts import Refuse


def orders_by_all(order: exp.Order) -> bool:
    """Whether ``order`` is ``ORDER BY ALL`` (as sqlglot reads it)."""
    return any(
        isinstance(o.this, exp.Var) and o.this.name.upper() == "ALL" for o in order.expressions
    )


def order_by_all(order: exp.Order, outputs: int) -> list[exp.Ordered]:
    """``order``'s keys, ``ORDER BY ALL`` (the unquoted keyword) as one key per output, left to
    right, each with its direction and NULL order, as DuckDB reads it. (A quoted ``"all"``,
    which sqlglot reads as the keyword too, is refused before: ``reading.all_misread``.)"""
    ordered = list(order.expressions)
    if not orders_by_all(order):
        return ordered
    if len(ordered) > 1:
        raise Refuse("ORDER BY ALL beside other keys")
    keys = []
    for position in range(1, outputs + 1):
        key = ordered[0].copy()
        key.set("this", exp.Literal.number(position))
        keys.append(key)
    return keys


__all__ = ["order_by_all", "orders_by_all"]
