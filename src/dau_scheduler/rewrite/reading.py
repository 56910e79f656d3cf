"""sqlglot's reading of a query, which every rewrite works on: names as DuckDB gives them,
leading joins out of their parentheses, every column qualified, the rewrite steps run; and the
check that this reading binds to the unsplit query's types."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify

from dau_scheduler.errors import SplitError
from dau_scheduler.rewrite.columns import UNANALYSABLE, alias_subqueries
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.steps import STEPS

#: A binder: SQL -> (column names, DuckDB type names, Arrow schema), without executing anything.
Binder = Callable[[str], tuple[list[str], list[str], pa.Schema | None]]


def _name_as_duckdb(tree: exp.Expr) -> exp.Expr:
    """Unaliased projections sqlglot names after a column and DuckDB does not, aliased with
    their own text before qualification. sqlglot names ``CAST(i AS BOOL)`` ``i`` (and the
    literal ``'a'`` ``a``), so ``ORDER BY i``, ``GROUP BY i`` and ``WHERE i`` read the cast; in
    DuckDB that output is named ``CAST(i AS BOOLEAN)`` and ``i`` is the column (DuckDB's
    test/sql/types/numeric/*_try_cast.test ordered by the cast)."""
    for select in alias_subqueries(tree).find_all(exp.Select):
        for projection in select.expressions:
            named_after = projection.output_name
            if (
                named_after
                and not isinstance(projection, (exp.Alias, exp.Column, exp.Dot, exp.Star))
                and not (
                    isinstance(projection, exp.Paren) and isinstance(projection.this, exp.Column)
                )
            ):
                projection.replace(exp.alias_(projection.copy(), projection.sql(dialect=DIALECT)))
    return tree


def _set_args(node: exp.Expr | None) -> set[str]:
    return {key for key, value in node.args.items() if value} if node is not None else set()


def _ungroup_leading_joins(tree: exp.Expr) -> exp.Expr:
    """``FROM (a JOIN b ON p) JOIN c ON q`` read as ``FROM a JOIN b ON p JOIN c ON q``: joins
    associate to the left, so parentheses around the leading ones change nothing. DuckDB keeps
    a view's ``FROM a JOIN b`` as ``FROM (a INNER JOIN b ON ...)``, which the split otherwise
    reads as a table with joins of its own."""
    for select in list(tree.find_all(exp.Select)):
        while True:
            source = select.args.get("from_")
            group = source.this if source is not None else None
            first = group.this if isinstance(group, exp.Subquery) else None
            if not (
                source is not None
                and _set_args(group) == {"this"}
                and first is not None
                and first.args.get("joins")
                # a group's first part: a table (its alias is its own), or a group unaliased
                and (
                    isinstance(first, exp.Table)
                    or (isinstance(first, exp.Subquery) and _set_args(first) == {"this", "joins"})
                )
            ):
                break
            joins = first.args["joins"]
            first.set("joins", None)
            source.set("this", first)
            select.set("joins", [*joins, *(select.args.get("joins") or [])])
    return tree


def _analyse(tree: exp.Expr, schema: dict[str, dict[str, str]]) -> exp.Expr:
    tree = _name_as_duckdb(_ungroup_leading_joins(tree))
    tree = qualify(
        tree,
        schema=dict(schema),
        dialect=DIALECT,
        validate_qualify_columns=True,
        quote_identifiers=True,
        identify=True,
    )
    for step in STEPS:
        tree = step(tree)
    return tree


def read_back(
    tree: exp.Expr, schema: dict[str, dict[str, str]], binder: Binder, types: Sequence[str]
) -> exp.Expr | str:
    """``tree`` analysed (qualified, the rewrite steps run), or why it cannot be: sqlglot cannot
    analyse it, or its reading does not bind to the unsplit query's ``types``."""
    try:
        tree = _analyse(tree, schema)
    except UNANALYSABLE as exc:
        return f"the query could not be analysed for splitting: {exc}"
    # The rewrite works on sqlglot's reading of the query: it must bind to the same types.
    try:
        _, round_trip, _ = binder(tree.sql(dialect=DIALECT))
    except (SplitError, ValueError, RuntimeError) as exc:
        return f"the SQL front end cannot reproduce this query: {exc}"
    if list(round_trip) != list(types):
        return (
            f"the SQL front end reads this query differently (types {list(round_trip)} "
            f"instead of {list(types)})"
        )
    return tree


__all__ = ["UNANALYSABLE", "Binder", "read_back"]
