"""A semi or anti join on one table's column applied to that table before the block's joins,
for the Polars arm.

``polars_semijoins`` writes ``x IN (SELECT ...)`` as ``EXISTS (SELECT 1 FROM __dau_inN WHERE
t.x = __dau_inN.__dau_in)`` over a CTE of the subquery's rows (and NOT IN as a NOT EXISTS with
the CTE's counts), which Polars plans as a semi (anti) join. Polars applies it where the WHERE
stands, after every join of the block: TPC-H Q18 (``o_orderkey IN (SELECT l_orderkey ...
HAVING sum(l_quantity) > 300)``, 57 orders of 1.5M) joined all of ``lineitem`` to ``orders``
and ``customer`` first; with the semi join applied to ``orders`` before the joins its device
arm ran 3x faster on SF 1 (sixty-second session). DuckDB's optimizer plans it so itself.

:func:`semijoins_first` writes such a block ::

    SELECT ... FROM l JOIN t ON ... JOIN c ON ... WHERE EXISTS (... t.x ...) AND rest

as ::

    SELECT ... FROM l JOIN (SELECT * FROM t WHERE EXISTS (... t.x ...)) AS t ON ... JOIN c
    ON ... WHERE rest

The derived table keeps the table's name and every column under its own name, so every other
reference reads it as before. In a block of inner, cross and comma joins a condition on one
table's rows keeps the same rows of the join whether it is applied before the join or after
(each joined row keeps or drops with its row of ``t``), NULLs included. Only terms whose every
subquery reads one of those CTEs alone, and whose every other column is ``t``'s, move; a
block is left as written otherwise (``polars_implied`` has the same rule for its joins), and
so is a table whose name another table, alias or CTE of the query holds: Polars reads such a
table as the derived one (``polars_forms.refuse_shadowing_aliases`` names the class).

The split table's semi joins stay where they are: its rows are the ones the other tables'
conditions cut through the joins, and a semi join over a large set is then cheaper after them.
TPC-DS Q95 (``ws1``, two IN sets built over ``web_sales`` itself, beside a date range, a state
and a site) ran 7% slower with them first, TPC-H Q16 (an anti join on ``partsupp`` against a
few suppliers) 1.8x faster; with no row counts here the rule keeps the known regression out.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_checks import defined_names, source_items
from dau_scheduler.arms.polars_implied import joined_inner
from dau_scheduler.arms.polars_semijoins import PREFIX
from dau_scheduler.rewrite.block_parts import conjuncts
from dau_scheduler.rewrite.planner import PLACEHOLDER


def _reads_a_set(select: exp.Select) -> bool:
    """Whether ``select`` reads one of ``polars_semijoins``' CTEs alone."""
    items = source_items(select)
    return (
        len(items) == 1
        and isinstance(items[0], exp.Table)
        and items[0].name.startswith(PREFIX)
        and not select.args.get("joins")
    )


def _one_table_semijoin(term: exp.Expr, names: set[str]) -> str | None:
    """The one table of ``names`` a semi or anti join ``term`` (module docstring) tests the
    rows of, or None for any other term."""
    selects = list(term.find_all(exp.Select))
    if not selects or not all(_reads_a_set(select) for select in selects):
        return None
    tables = set()
    for column in term.find_all(exp.Column):
        if not column.table:
            if column.find_ancestor(exp.Select) is None:
                return None
        elif not column.table.startswith(PREFIX):
            tables.add(column.table)
    found = tables.pop() if len(tables) == 1 else None
    return found if found in names else None


def _named_elsewhere(item: exp.Table, tree: exp.Expr) -> bool:
    """Whether a table or CTE other than ``item`` is named like ``item``'s alias in ``tree``:
    Polars reads a table named like a derived table as the derived one (a count of ``u`` in a
    scalar subquery counted the semi join's rows: 996 for 676)."""
    alias = item.alias_or_name.lower()
    return any(
        table is not item and alias in (table.name.lower(), table.alias_or_name.lower())
        for table in tree.find_all(exp.Table)
    ) or any(cte.alias_or_name.lower() == alias for cte in tree.find_all(exp.CTE))


def _semijoins_moved(select: exp.Select, tree: exp.Expr) -> bool:
    """Whether ``select``'s one-table semi and anti joins were moved onto their tables (in
    place)."""
    where = select.args.get("where")
    if where is None or not joined_inner(select):
        return False
    names = defined_names(select)
    tables = {
        item.alias_or_name: item
        for item in source_items(select)
        if isinstance(item, exp.Table)
        and isinstance(item.this, exp.Identifier)
        and item.name != PLACEHOLDER  # (the split table: below)
        and not _named_elsewhere(item, tree)
    }
    moving: dict[str, list[exp.Expr]] = {}
    rest = []
    for term in conjuncts(where.this):
        table = _one_table_semijoin(term, names)
        if table is not None and table in tables:
            moving.setdefault(table, []).append(term)
        else:
            rest.append(term)
    if not moving:
        return False
    for name, terms in moving.items():
        item = tables[name]
        rows = exp.Select(expressions=[exp.Star()]).from_(item.copy())
        rows = rows.where(exp.and_(*[t.copy() for t in terms]), copy=False)
        alias = exp.TableAlias(this=exp.to_identifier(name, quoted=True))
        item.replace(exp.Subquery(this=rows, alias=alias))
    select.set("where", exp.Where(this=exp.and_(*[t.copy() for t in rest])) if rest else None)
    return True


def semijoins_first(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each block's one-table semi and anti joins applied to their tables before
    the block's joins (module docstring), in place."""
    for select in list(tree.find_all(exp.Select)):
        _semijoins_moved(select, tree)
    return tree


__all__ = ["semijoins_first"]
