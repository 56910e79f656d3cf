"""What the joins of the Polars arm's SQL may cost: Polars joins in the order the query is
written, with no reordering, and holds a join's pairs at once. ``single_key_joins`` lists the
joins on one key (``PolarsArm`` refuses one whose key repeats on both sides), ``unkeyed_joins``
the joins without an equality key, with the most pairs each may make."""

from __future__ import annotations

import functools
from collections.abc import Callable

from sqlglot import exp
from sqlglot.errors import SqlglotError

from dau_scheduler.arms.polars_checks import source_items
from dau_scheduler.arms.polars_join_sql import sources
from dau_scheduler.arms.polars_sql import _PolarsSQL
from dau_scheduler.rewrite.block_parts import conjuncts
from dau_scheduler.rewrite.planner import PLACEHOLDER


@functools.lru_cache(maxsize=8)
def _tree(text: str) -> exp.Expr | None:
    """The Polars SQL ``text`` parsed, once for both analyses (the arm asks both of one text;
    the tree is only read); None where sqlglot cannot read it back: nothing is known about its
    joins, and Polars' own planning already accepted it."""
    import sqlglot

    try:
        return sqlglot.parse_one(text, read=_PolarsSQL)
    except SqlglotError:
        return None


def tables_in(text: str) -> set[str] | None:
    """The lower-cased names of the tables the Polars SQL ``text`` reads (None where sqlglot
    cannot read it back)."""
    tree = _tree(text)
    return None if tree is None else {t.name.lower() for t in tree.find_all(exp.Table)}


def _whole_table(item: exp.Expr) -> exp.Table | None:
    """The table a FROM or JOIN item reads every row of: itself, or the one a derived table
    only adds columns to (``(SELECT *, u.n AS __dau_o0 FROM u) AS u``:
    ``polars_correlation.name_shared_outer_columns``)."""
    if isinstance(item, exp.Table):
        return item
    inner = item.this if isinstance(item, exp.Subquery) else None
    if (
        isinstance(inner, exp.Select)
        and any(isinstance(e, exp.Star) for e in inner.expressions)
        and isinstance(inner.args.get("from_") and inner.args["from_"].this, exp.Table)
        and not any(
            inner.args.get(k) for k in ("joins", "where", "group", "having", "distinct", "limit")
        )
    ):
        return _whole_table(inner.args["from_"].this)
    return None


def single_key_joins(text: str, split_table: str) -> list[tuple[str, str, str, str]]:
    """``(table, column, table, column)`` of each join in the Polars SQL ``text`` on one
    equality between two base tables' columns (the split table under its own name). Joins of
    derived tables, or on several keys, are not listed."""
    tree = _tree(text)
    if tree is None:
        return []
    found = []
    for select in tree.find_all(exp.Select):
        tables = {
            item.alias_or_name: (split_table if table.name == PLACEHOLDER else table.name.lower())
            for item in source_items(select)
            if (table := _whole_table(item)) is not None
        }
        for join in select.args.get("joins") or []:
            on = join.args.get("on")
            conditions = conjuncts(on) if on is not None else []
            if len(conditions) != 1 or not isinstance(conditions[0], exp.EQ):
                continue
            left, right = conditions[0].this, conditions[0].expression
            if (
                isinstance(left, exp.Column)
                and isinstance(right, exp.Column)
                and left.table in tables
                and right.table in tables
            ):
                found.append((tables[left.table], left.name, tables[right.table], right.name))
    return found


def _equalities(term: exp.Expr) -> set[tuple[str, frozenset[str]]]:
    """The equalities between two sources that ``term`` implies (as text, with the sources):
    its own, its conjuncts', and those every branch of an OR holds (TPC-H Q19 repeats
    ``p_partkey = l_partkey`` in each branch, and Polars joins on it)."""
    term = term.unnest()
    if isinstance(term, exp.EQ) and len(sources(term)) == 2:
        sides = sorted((term.this.sql(), term.expression.sql()))
        return {(" = ".join(sides), frozenset(sources(term)))}
    if isinstance(term, exp.And):
        return _equalities(term.this) | _equalities(term.expression)
    if isinstance(term, exp.Or):
        return _equalities(term.this) & _equalities(term.expression)
    return set()


def _one_row(select: exp.Select) -> bool:
    """Whether ``select`` aggregates without GROUP BY (one row), read from its own outputs."""
    return select.args.get("group") is None and any(
        node.find_ancestor(exp.Window, exp.Select) is select
        for output in select.expressions
        for node in output.find_all(exp.AggFunc)
    )


def unkeyed_joins(text: str, split_table: str, rows: Callable[[str], int]) -> list[tuple[str, int]]:
    """Each join in the Polars SQL ``text`` that has no equality key (a CROSS JOIN, or a comma
    join that no WHERE equality links to the sources before it), with the most pairs it may
    make: the rows before it (the largest source there: the joins between them are on keys)
    times its own. Polars holds the pairs it keeps at once (all of them for a cross join; for
    an inequality, an IEJoin's index pairs), where DuckDB streams them. ``rows(table)`` is a
    table's row count (the split table's whole); a subquery aggregating without GROUP BY is one
    row, a union the sum of its sides. Joins with a one-row side are not listed."""
    tree = _tree(text)
    if tree is None:
        return []
    ctes = {cte.alias_or_name: cte.this for cte in tree.find_all(exp.CTE)}

    def size(node: exp.Expr, seen: frozenset[str] = frozenset()) -> int:
        if isinstance(node, exp.Table):
            if node.name in ctes and node.name not in seen:
                return size(ctes[node.name], seen | {node.name})
            return rows(split_table if node.name == PLACEHOLDER else node.name.lower())
        if isinstance(node, exp.Subquery):
            return size(node.this, seen)
        if isinstance(node, exp.Union):
            return size(node.this, seen) + size(node.expression, seen)
        if isinstance(node, exp.Select):
            if _one_row(node):
                return 1
            return max((size(item, seen) for item in source_items(node)), default=1)
        return max((size(t, seen) for t in node.find_all(exp.Table)), default=1)

    found = []
    for select in tree.find_all(exp.Select):
        from_ = select.args.get("from_")
        if from_ is None:
            continue
        where = select.args.get("where")
        terms = conjuncts(where.this) if where is not None else []
        before = [from_.this]
        for join in select.args.get("joins") or []:
            item, names = join.this, {b.alias_or_name for b in before}
            keyed = (
                join.args.get("on") is not None
                or join.args.get("using")
                or any(
                    item.alias_or_name in sources and sources - {item.alias_or_name} <= names
                    for term in terms
                    for _, sources in _equalities(term)
                )
            )
            if not keyed:
                left, right = max(size(b) for b in before), size(item)
                if min(left, right) > 1:
                    what = f"{', '.join(sorted(names))} with {item.alias_or_name}"
                    found.append((what.replace(PLACEHOLDER, split_table), left * right))
            before.append(item)
    return found


__all__ = ["single_key_joins", "unkeyed_joins"]
