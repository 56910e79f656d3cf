"""Window functions in a block without aggregation: computed by the final query over every
arm's rows.

A window sees rows of both arms, so no arm can compute it; the arms pass the columns the
windowed expressions (outputs, QUALIFY, ORDER BY items) read, and the final query evaluates
those expressions over the partials, as DuckDB evaluates them over the block's rows. Only
functions whose value is the same however the rows are split and however they arrive are
taken: the ranking and numbering functions, COUNT, MIN and MAX, and the value functions
(``lag``, ``first_value``, ...). Where their value depends on the order rows arrive in (no
ORDER BY, or keys that may tie) ``rewrite/arrival.py`` refuses the query first. SUM, AVG and
the other folds are refused: over floating-point values the final query's order of additions
is not DuckDB's, and a QUALIFY or ORDER BY over one would decide on its last bits.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.block_parts import Refuse, function_name, own_nodes
from dau_scheduler.rewrite.blocks import replace_outside_subqueries
from dau_scheduler.rewrite.dialect import DIALECT

#: Window functions the final query computes over the arms' rows.
WINDOWED = frozenset(
    {
        "row_number",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "ntile",
        "count",
        "min",
        "max",
        "lag",
        "lead",
        "first_value",
        "last_value",
        "nth_value",
    }
)


def _function(window: exp.Window) -> exp.Expr:
    inner: exp.Expr = window.this
    if isinstance(inner, (exp.IgnoreNulls, exp.RespectNulls)):
        inner = inner.this
    return inner


def row_window_refusal(select: exp.Select, table: str) -> str | None:
    """Why the windows of ``select`` (a block without aggregation reading ``table``) cannot run
    in the final query, or None (module docstring)."""
    if select.args.get("windows"):
        return f"the block reading {table} names its windows (WINDOW w AS ...)"
    for node in own_nodes(select):
        if not isinstance(node, exp.Window):
            continue
        function = _function(node)
        name = function_name(function)
        if isinstance(function, exp.Filter) or name not in WINDOWED:
            return (
                f"a window function ({name}() OVER ...) runs over {table}: only "
                f"{', '.join(sorted(WINDOWED))} are computed over every arm's rows"
            )
    return None


def windowed(node: exp.Expr) -> bool:
    """Whether ``node`` holds a window of its own block."""
    return any(isinstance(n, exp.Window) for n in own_nodes(node))


class FinalColumns:
    """The columns the windowed expressions read, carried by the partial as ``__dau_w<i>``,
    and those expressions rewritten over them for the final query."""

    def __init__(self, what: str = "a windowed expression") -> None:
        self.what = what  # named where an expression reads a subquery (refused)
        self.hidden: dict[str, str] = {}
        self.projections: list[exp.Expr] = []

    def final(self, expression: exp.Expr) -> exp.Expr:
        """``expression`` over the partial's columns (each column it reads carried once)."""

        def carried(node: exp.Expr) -> exp.Expr | None:
            if isinstance(node, (exp.Query, exp.Subquery, exp.Exists)):
                raise Refuse(f"{self.what} reads a subquery ({node.sql(dialect=DIALECT)[:60]})")
            if not isinstance(node, exp.Column):
                return None
            text = node.sql(dialect=DIALECT)
            if text not in self.hidden:
                self.hidden[text] = f"__dau_w{len(self.hidden)}"
                self.projections.append(exp.alias_(node.copy(), self.hidden[text]))
            return exp.column(self.hidden[text])

        return replace_outside_subqueries(expression.copy(), carried)


__all__ = ["WINDOWED", "FinalColumns", "row_window_refusal", "windowed"]
