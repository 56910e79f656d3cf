"""Conditions on one table implied by an OR across several, for the Polars arm.

A condition that is an OR of branches over several of a block's tables cannot be applied until
they are joined. DuckDB's optimizer derives, for each table every branch constrains, the OR of
each branch's terms on that table alone and applies it to the table before the joins; Polars'
does not. TPC-H Q7 (``(n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name =
'GERMANY' AND n2.n_name = 'FRANCE')``) then joined two years of ``lineitem`` to ``orders``,
``customer`` and ``supplier`` before keeping the rows of two nations, and Q19 joined every
``part`` of a brand's size range to ``lineitem`` before the three brands' terms.

:func:`imply_table_conditions` adds such a derived condition beside the OR::

    WHERE (a.x = 1 AND b.y = 2) OR (a.x = 3 AND b.z IS NULL)

gains ``AND (a.x = 1 OR a.x = 3)`` (``b`` gains ``(b.y = 2 OR b.z IS NULL)``). WHERE keeps the
rows whose condition is true; where the OR is true one of its branches is, so every term of that
branch is, so the derived condition is: adding it keeps exactly the same rows, NULLs included.

Only terms that cannot fail on any row are taken (a bare column of the table compared with a
constant, an IN list or BETWEEN of constants, IS [NOT] NULL, and AND, OR and NOT of those): the
derived condition is evaluated on rows of the table the joins would have dropped, where a cast
or a function of the original might raise. A block is left as written unless its FROM holds
tables and derived tables joined by inner, cross or comma joins only. Over an outer join the
added condition would be as exact (it is added to the WHERE, above the joins), but which table
an optimizer may then filter first depends on its side of each join; the queries it was
measured on (TPC-H Q7 and Q19, TPC-DS Q13 and Q48) join inner, and the rule is kept short.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_checks import defined_names, source_items
from dau_scheduler.arms.polars_functions import COMPARISONS
from dau_scheduler.rewrite.block_parts import conjuncts, disjuncts

#: Nodes a constant may be made of: literals, their signs, sums and products, and casts of them.
_CONSTANT_PARTS = (
    exp.Literal,
    exp.Null,
    exp.Boolean,
    exp.Neg,
    exp.Paren,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Cast,
    exp.DataType,
    exp.DataTypeParam,
)


def _constant(node: exp.Expr | None) -> bool:
    return node is not None and all(isinstance(n, _CONSTANT_PARTS) for n in node.walk())


def _column_of(node: exp.Expr | None, names: set[str]) -> str | None:
    """The table (one of ``names``) of ``node`` where it is a bare qualified column."""
    bare = isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier)
    return node.table if bare and node.table in names else None  # type: ignore[union-attr]


def _table_of(term: exp.Expr, names: set[str]) -> str | None:
    """The one table of ``names`` whose columns ``term`` reads, where ``term`` cannot fail on
    any row (module docstring); else None."""
    node = term.unnest()
    if isinstance(node, exp.Not):
        return _table_of(node.this, names)
    if isinstance(node, (exp.And, exp.Or)):
        left, right = _table_of(node.this, names), _table_of(node.expression, names)
        return left if left is not None and left == right else None
    if isinstance(node, COMPARISONS):  # (a bare column against a constant)
        for column, other in ((node.this, node.expression), (node.expression, node.this)):
            table = _column_of(column, names)
            if table is not None and _constant(other):
                return table
        return None
    if isinstance(node, exp.In):
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            return None
        if node.args.get("field") is not None or not node.expressions:
            return None
        if not all(_constant(value) for value in node.expressions):
            return None
        return _column_of(node.this, names)
    if isinstance(node, exp.Between):
        if _constant(node.args.get("low")) and _constant(node.args.get("high")):
            return _column_of(node.this, names)
        return None
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return _column_of(node.this, names)
    return None


def joined_inner(select: exp.Select) -> bool:
    """Whether ``select``'s FROM holds only tables and derived tables, joined by inner, cross
    or comma joins."""
    if select.args.get("from_") is None or select.args.get("laterals"):
        return False
    items = source_items(select)
    if len(items) < 2 or not all(isinstance(i, (exp.Table, exp.Subquery)) for i in items):
        return False
    for join in select.args.get("joins") or []:
        if join.side or join.kind not in ("", "INNER", "CROSS"):
            return False
        if join.args.get("method") or join.args.get("using"):
            return False  # (NATURAL, ASOF, POSITIONAL; USING's columns are read unqualified)
    return True


def _implied(condition: exp.Expr, names: set[str]) -> list[exp.Expr]:
    """The conditions on one table each that ``condition``, an OR, implies (module docstring),
    other than ``condition`` itself."""
    branches = disjuncts(condition)
    if len(branches) < 2:
        return []
    per_branch = []
    for branch in branches:
        tables: dict[str, list[exp.Expr]] = {}
        for term in conjuncts(branch):
            table = _table_of(term, names)
            if table is not None:
                tables.setdefault(table, []).append(term)
        per_branch.append(tables)
    found: list[exp.Expr] = []
    for table in sorted(set(per_branch[0])):
        if not all(table in tables for tables in per_branch):
            continue
        terms = [tables[table] for tables in per_branch]
        if all(len(t) == len(conjuncts(b)) for t, b in zip(terms, branches, strict=True)):
            return []  # (the OR reads this one table alone: it is applied to it as written)
        found.append(
            exp.paren(exp.or_(*[exp.paren(exp.and_(*[t.copy() for t in ts])) for ts in terms]))
        )
    return found


def imply_table_conditions(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each block's WHERE given the one-table conditions its ORs imply (module
    docstring), in place."""
    for select in tree.find_all(exp.Select):
        where = select.args.get("where")
        if where is None or not joined_inner(select):
            continue
        names = defined_names(select)
        terms = conjuncts(where.this)
        added = [
            implied
            for term in terms
            if isinstance(term.unnest(), exp.Or)
            for implied in _implied(term, names)
            if implied.unnest() not in [t.unnest() for t in terms]
        ]
        if added:
            select.set("where", exp.Where(this=exp.and_(where.this.copy(), *added)))
    return tree


__all__ = ["imply_table_conditions", "joined_inner"]
