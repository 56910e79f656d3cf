"""What one aggregate kind's split is made of (:class:`MergeStep`), and the helpers every step
uses to read a call: its argument and its FILTER clause."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp


@dataclass(frozen=True)
class MergeStep:
    """How one aggregate kind splits.

    ``partials(call)`` are the aggregates each arm computes over its rows; ``merge(columns)`` folds
    those partial columns (one per partial, all arms' rows together) into the unsplit value, as
    SQL for the final query. ``arrow`` and ``finish`` are the same fold in pyarrow, for the fast
    path: one hash aggregate per partial column (NULL when a group saw no non-NULL partial), then
    ``finish`` turns the folded columns into the value. Empty-range and all-NULL behaviour is
    stated per step and matches DuckDB.

    A step whose partial columns do not fold one column at a time (the moments of a variance or
    a covariance) has no ``arrow`` fold: such a block always folds in DuckDB, and
    ``refold(columns)`` gives the expressions that fold partial rows back into one partial row
    of the same columns.

    ``raises(columns)``, for a kind whose unsplit finalize can raise (DuckDB's skewness and
    kurtosis are "out of range" where not finite), is a condition over the same columns that
    holds where ``merge`` raises for the group. DuckDB finalizes every group before HAVING,
    QUALIFY or an outer filter drops one, and the final query's projection comes after them:
    where a filter may drop groups, the fold first asks every group this condition
    (``CompiledSplit.raise_check_sql``).
    """

    partials: Callable[[exp.Expr], list[exp.Expr]]
    merge: Callable[[Sequence[exp.Expr]], exp.Expr]
    arrow: tuple[str, ...] | None
    finish: Callable[[Sequence[pa.Array]], pa.Array] | None
    refold: Callable[[Sequence[exp.Expr]], list[exp.Expr]] | None = None
    raises: Callable[[Sequence[exp.Expr]], exp.Expr] | None = None


def argument(node: exp.Expr) -> exp.Expr:
    """A one-argument aggregate call's argument (under its FILTER, if any)."""
    inner = node.this if isinstance(node, exp.Filter) else node
    if isinstance(inner, exp.Anonymous):  # sem(x): a name sqlglot does not know
        first: exp.Expr = inner.expressions[0]
        return first
    return inner.this if isinstance(inner, exp.Func) else inner


def with_filter(agg: exp.Expr, original: exp.Expr) -> exp.Expr:
    """Carry the original call's FILTER (WHERE ...) clause onto a partial aggregate."""
    if isinstance(original, exp.Filter):
        return exp.Filter(this=agg, expression=original.expression.copy())
    return agg


__all__ = ["MergeStep", "argument", "with_filter"]
