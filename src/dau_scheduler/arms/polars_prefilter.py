"""A block's plain conditions applied before its correlated subqueries, for the Polars arm.

Polars decorrelates a subquery in WHERE (``EXISTS``, ``NOT EXISTS``, a scalar compared) by
numbering the rows of the block's whole FROM (a row index), joining the subquery's rows to them,
and filtering last; its optimizer cannot move the block's other conditions below that row index,
so the subquery is joined to every row the FROM makes, not to the few the block keeps. TPC-H Q21
on SF 1 (``l1`` with a join to its supplier, its order and one nation, two correlated
subqueries over ``lineitem``): 8.5 s on Polars' CPU engine where the same query with the plain
conditions applied first took 0.95 s (sixty-first session; the GPU engine plans the same IR).

:func:`prefilter` writes such a block ::

    SELECT outs FROM t JOIN u ON ... WHERE plain AND EXISTS (... t.k ...) GROUP BY ...

as ::

    SELECT outs' FROM (SELECT t.k AS __dau_f0_0, ... FROM t JOIN u ON ... WHERE plain)
    AS __dau_f0 WHERE EXISTS (... __dau_f0.__dau_f0_0 ...) GROUP BY ...

every column of the block's sources read outside its FROM (outputs, the remaining conditions,
the correlated references, GROUP BY, HAVING, QUALIFY, ORDER BY) read from the derived table by
a name of its own. A row the block keeps satisfies every conjunct either way (WHERE keeps the
rows whose conjunction is true), so the answer is the same; only the rows the subqueries are
joined to are fewer. A block is left as written where it reads a column of a query around it,
outputs a star, or its FROM holds anything but tables and derived tables.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_checks import defined_names, reads_outer_columns, source_items
from dau_scheduler.rewrite.block_parts import conjuncts

#: The derived tables' names (numbered) and their columns' prefix.
ALIAS = "__dau_f"


def _definer(column: exp.Column) -> exp.Select | None:
    """The query whose FROM defines ``column``'s table (the nearest one out), or None."""
    node = column.parent
    while node is not None:
        if isinstance(node, exp.Select) and column.table in defined_names(node):
            return node
        node = node.parent
    return None


def _in_from(node: exp.Expr, select: exp.Select) -> bool:
    """Whether ``node`` lies in ``select``'s own FROM or JOINs (which move into the derived
    table as they are)."""
    parts = [select.args.get("from_"), *(select.args.get("joins") or [])]
    current: exp.Expr | None = node
    while current is not None and current is not select:
        if any(current is part for part in parts if part is not None):
            return True
        current = current.parent
    return False


def _correlated(condition: exp.Expr, select: exp.Select) -> bool:
    """Whether ``condition`` holds a subquery reading a column of ``select``'s sources."""
    return any(
        column.find_ancestor(exp.Select) is not select and _definer(column) is select
        for column in condition.find_all(exp.Column)
        if column.table
    )


def _rewritable(select: exp.Select) -> tuple[list[exp.Expr], list[exp.Expr]] | None:
    """``select``'s plain conjuncts (an uncorrelated subquery among them) and those holding a
    correlated subquery, where it is to be written with the plain ones first; None where it is
    left as written."""
    where = select.args.get("where")
    if where is None or select.args.get("from_") is None:
        return None
    items = source_items(select)
    if not items or any(not isinstance(i, (exp.Table, exp.Subquery)) for i in items):
        return None  # (a table function, an UNNEST, a VALUES list)
    for output in select.expressions:
        if isinstance(output, exp.Star) or (
            isinstance(output, exp.Column) and isinstance(output.this, exp.Star)
        ):
            return None
        if not isinstance(output, (exp.Alias, exp.Column)):
            return None  # (Polars names it after its text, which the rewrite would change)
    if select.find(exp.Lateral) or select.args.get("laterals"):
        return None
    terms = conjuncts(where.this)
    rest = [t for t in terms if _correlated(t, select)]
    plain = [t for t in terms if not any(t is r for r in rest)]
    if not plain or not rest:
        return None
    if reads_outer_columns(select):
        return None  # (a column of a query around the block: the derived table could not read it)
    return plain, rest


def _prefiltered(select: exp.Select, alias: str) -> bool:
    """Whether ``select`` was written with its plain conjuncts first, in a derived table named
    ``alias`` (in place)."""
    found = _rewritable(select)
    if found is None:
        return False
    plain, rest = found
    # An output that is a bare column keeps its name once it reads the derived table's.
    for output in list(select.expressions):
        if isinstance(output, exp.Column):
            output.replace(exp.alias_(output.copy(), output.output_name, quoted=True))
    moving = {id(c) for term in plain for c in term.find_all(exp.Column)}
    names: dict[tuple[str, str], str] = {}
    for column in list(select.find_all(exp.Column)):
        if id(column) in moving or not column.table or _in_from(column, select):
            continue
        if _definer(column) is not select:
            continue
        name = names.setdefault((column.table, column.name), f"{alias}_{len(names)}")
        column.replace(exp.column(name, table=exp.to_identifier(alias, quoted=True), quoted=True))
    # (Never empty: a correlated subquery reads at least one of the block's columns.)
    inner = exp.Select(
        expressions=[
            exp.alias_(exp.column(c, table=exp.to_identifier(t, quoted=True), quoted=True), n)
            for (t, c), n in names.items()
        ]
    )
    inner.set("from_", select.args["from_"].copy())
    inner.set("joins", [j.copy() for j in select.args.get("joins") or []] or None)
    inner.set("where", exp.Where(this=exp.and_(*[t.copy() for t in plain])))
    derived = exp.Subquery(
        this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True))
    )
    select.set("from_", exp.From(this=derived))
    select.set("joins", None)
    select.set("where", exp.Where(this=exp.and_(*[t.copy() for t in rest])))
    return True


def prefilter(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each block whose WHERE holds a correlated subquery beside plain
    conditions written with the plain conditions applied first (module docstring); the
    innermost blocks first, each derived table named apart."""
    count = 0
    for select in reversed(list(tree.find_all(exp.Select))):
        if _prefiltered(select, f"{ALIAS}{count}"):
            count += 1
    return tree


__all__ = ["ALIAS", "prefilter"]
