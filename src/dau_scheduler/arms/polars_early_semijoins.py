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

A subquery correlated with the block that equates a column of its own table ``r`` with the
column ``t.x`` a semi join of the block tests (TPC-H Q20: ``ps_availqty > (SELECT 0.5 *
sum(l_quantity) FROM lineitem WHERE l_partkey = ps_partkey ...)`` beside ``ps_partkey IN
(SELECT p_partkey FROM part WHERE p_name LIKE 'forest%')``) reads ``r`` with the set's rows
alone, as above: an outer row the semi join drops is dropped whatever the subquery gives, and
for a row it keeps, ``t.x`` is in the set, so every row of ``r`` the subquery's condition
keeps is too. Only a subquery among the WHERE's conjuncts that holds no query of its own and
is an EXISTS's or gives one row of aggregates whatever it reads; Polars then groups the year
of ``lineitem`` over a few thousand parts, not over all of them (Q20's device arm 6-7x faster).

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
from dau_scheduler.arms.polars_semijoins import COLUMN, PREFIX, reads_a_set, set_test
from dau_scheduler.rewrite.block_parts import conjuncts
from dau_scheduler.rewrite.planner import PLACEHOLDER


def _one_table_semijoin(term: exp.Expr, names: set[str]) -> str | None:
    """The one table of ``names`` a semi or anti join ``term`` (module docstring) tests the
    rows of, or None for any other term."""
    selects = list(term.find_all(exp.Select))
    if not selects or not all(reads_a_set(select) for select in selects):
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
        _restrict(tables[name], terms)
    select.set("where", exp.Where(this=exp.and_(*[t.copy() for t in rest])) if rest else None)
    return True


def _restrict(item: exp.Table, terms: list[exp.Expr]) -> None:
    """``item`` read as a derived table of its name holding its rows that ``terms`` keep."""
    rows = exp.Select(expressions=[exp.Star()]).from_(item.copy())
    rows = rows.where(exp.and_(*[t.copy() for t in terms]), copy=False)
    alias = exp.TableAlias(this=exp.to_identifier(item.alias_or_name, quoted=True))
    item.replace(exp.Subquery(this=rows, alias=alias))


def _semijoin_sets(select: exp.Select) -> dict[tuple[str, str], str]:
    """``(table, column)`` -> the CTE of each semi join among ``select``'s WHERE's conjuncts
    that tests a bare column of one of its tables (``polars_semijoins.set_test``)."""
    where, names, sets = select.args.get("where"), defined_names(select), {}
    for term in conjuncts(where.this) if where is not None else []:
        found = set_test(term)
        if found is not None and found[0].table in names:
            sets[(found[0].table, found[0].name)] = found[1]
    return sets


def _one_row_or_exists(query: exp.Select) -> bool:
    """Whether ``query`` is an EXISTS's, or gives one row of aggregates whatever rows it
    reads, and holds no query of its own."""
    if any(s is not query for s in query.find_all(exp.Select)):
        return False
    if isinstance(query.parent, exp.Exists):
        return True
    parts = ("group", "having", "qualify", "limit", "offset", "distinct")
    return not any(query.args.get(part) for part in parts) and all(
        output.find(exp.AggFunc) is not None and output.find(exp.Window) is None
        for output in query.expressions
    )


def _semijoins_shared(select: exp.Select, tree: exp.Expr) -> None:
    """Each correlated subquery among ``select``'s WHERE's conjuncts that equates a column of
    one of its own tables with a column a semi join of ``select`` tests reads that table's
    rows in the set alone (in place): an outer row the semi join drops is dropped whatever
    the subquery gives, and for one it keeps, the subquery's rows hold a value of the set."""
    sets = _semijoin_sets(select)
    if not sets:
        return
    for query in list(select.args["where"].find_all(exp.Select)):
        where = query.args.get("where")
        if (
            query.parent_select is not select  # (a query nested deeper reads its own scope)
            or where is None
            or reads_a_set(query)  # (a semi join itself)
            or not _one_row_or_exists(query)
        ):
            continue
        items = {
            item.alias_or_name: item
            for item in source_items(query)
            if isinstance(item, exp.Table)
            and isinstance(item.this, exp.Identifier)
            and not _named_elsewhere(item, tree)
        }
        own = defined_names(query)  # (a column of a name the query defines is its own)
        restricted: dict[str, list[exp.Expr]] = {}
        for term in conjuncts(where.this):
            if not isinstance(term, exp.EQ):
                continue
            for mine, outer in ((term.this, term.expression), (term.expression, term.this)):
                if (
                    isinstance(mine, exp.Column)
                    and isinstance(outer, exp.Column)
                    and mine.table in items
                    and outer.table not in own
                    and (outer.table, outer.name) in sets
                ):
                    name = sets[(outer.table, outer.name)]
                    key = exp.column(COLUMN, table=name, quoted=True)
                    test = exp.EQ(this=mine.copy(), expression=key)
                    check = exp.select("1").from_(exp.to_table(name, quoted=True)).where(test)
                    restricted.setdefault(mine.table, []).append(exp.Exists(this=check))
        for table, terms in restricted.items():
            _restrict(items[table], terms)


def semijoins_first(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each block's one-table semi and anti joins applied to their tables before
    the block's joins, and their sets shared with the block's correlated subqueries (module
    docstring), in place."""
    for select in list(tree.find_all(exp.Select)):
        _semijoins_shared(select, tree)
    for select in list(tree.find_all(exp.Select)):
        _semijoins_moved(select, tree)
    return tree


__all__ = ["semijoins_first"]
