"""Correlated subqueries on the Polars arm: the forms Polars 1.44 decorrelates as DuckDB
answers them, and the rest refused by name before any arm runs (each raises ``SqlError``).

Polars answers a subquery that reads a column of the query around it by turning it into a join
on the comparisons that link the two. It finds them only among its WHERE's AND terms, and only
as a comparison of two bare columns: ``u.k = t.k``, ``u.n > t.k``. Anywhere else it does not
fail but reads the outer reference as the inner table's column of that name, so ``u.k = t.k``
inside an OR held for every row (thirty-third session: 33 of 90 forms wrong in
``tests/slt/correlated_references.test``; ``probes/subqueries.py`` drew 14 wrong in 900 once it
drew such ORs). :func:`refuse_undecorrelated` refuses those forms; a term every branch of an
OR repeats is taken out of the OR first (:func:`common_conjuncts_first`: TPC-DS Q41).
:func:`refuse_deep_correlation` refuses a reference two queries out and
:func:`refuse_empty_group_forms` the values Polars gives wrongly where no inner row matches.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_checks import defined_names
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.blocks import conjuncts

#: The comparisons Polars decorrelates between an inner and an outer column (each checked
#: against DuckDB over NULLs in both, in scalar, EXISTS, NOT EXISTS and IN subqueries).
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def _disjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The branches of a disjunction, through parentheses."""
    inner = condition.unnest()
    if isinstance(inner, exp.Or):
        return [*_disjuncts(inner.this), *_disjuncts(inner.expression)]
    return [inner]


def common_conjuncts_first(node: exp.Expr) -> exp.Expr:
    """A WHERE that is an OR whose every branch holds the same term ``a``, as ``a AND (...)``.

    ``(a AND x) OR (a AND y)`` is ``a AND (x OR y)`` in SQL's three-valued logic too (AND
    distributes over OR there), and a branch left with no other term is true: ``(a AND x) OR
    a`` is ``a``. Terms are compared as written (sqlglot's structural equality)."""
    where = node.args.get("where") if isinstance(node, exp.Select) else None
    if where is None:
        return node
    branches = [conjuncts(branch) for branch in _disjuncts(where.this)]
    if len(branches) < 2:
        return node
    common = [term for term in branches[0] if all(term in other for other in branches[1:])]
    if not common:
        return node
    rests = [[term for term in terms if term not in common] for terms in branches]
    factored = [term.copy() for term in common]
    if all(rests):
        factored.append(exp.paren(exp.or_(*[exp.and_(*[t.copy() for t in r]) for r in rests])))
    node.set("where", exp.Where(this=exp.and_(*factored)))
    return node


def _outer_levels(column: exp.Column) -> tuple[int, exp.Select | None]:
    """How many queries out ``column``'s table is defined (0: its own query), and its own query;
    ``(0, None)`` where no query around it defines the table (a CTE's or the engine's name)."""
    levels, node, own = 0, column.parent, None
    while node is not None:
        if isinstance(node, exp.Select):
            own = own or node
            if column.table in defined_names(node):
                return levels, own
            levels += 1
        node = node.parent
    return 0, None


def refuse_undecorrelated(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a reference to the query one level out that is not an operand of
    a comparison of two bare columns, the other of the subquery's own tables, among the AND
    terms of the subquery's WHERE (module docstring), or that sits in a subquery which is a
    branch of a set operation."""
    for column in tree.find_all(exp.Column):
        if not column.table:
            continue
        levels, select = _outer_levels(column)
        if levels != 1 or select is None:
            continue
        where = select.args.get("where")
        comparison = column.parent
        other = (
            (comparison.expression if comparison.this is column else comparison.this)
            if isinstance(comparison, _COMPARISONS)
            else None
        )
        if (
            where is None
            or other is None
            or not isinstance(other, exp.Column)
            or other.table not in defined_names(select)
            or not any(term is comparison for term in conjuncts(where.this))
            or not isinstance(select.parent, (exp.Subquery, exp.Exists))
        ):
            raise SqlError(
                f"{column.sql(dialect='duckdb')}: a subquery reads a column of the query around "
                "it outside a comparison of two columns among its WHERE's AND terms, which "
                "Polars answers as the subquery's own column of that name"
            )


def refuse_deep_correlation(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a column that a subquery reads from a query two or more levels
    out. Polars 1.44 answers such a subquery wrongly: ``WHERE (SELECT max(i2.i) FROM i2 WHERE
    i2.i = (SELECT min(i3.i) FROM i3 WHERE i3.i > b1.i)) IS NOT NULL`` kept no row of b1 where
    DuckDB keeps two (a reference one level out is answered right)."""
    for column in tree.find_all(exp.Column):
        levels = _outer_levels(column)[0] if column.table else 0
        if levels >= 2:
            raise SqlError(
                f"{column.sql(dialect='duckdb')}: a subquery reads a column of a query "
                f"{levels} levels out, which Polars answers wrongly"
            )


def refuse_empty_group_forms(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a correlated subquery Polars answers wrongly where the outer row
    matches no inner row: one whose value is an expression over an aggregate that need not be
    NULL over NULL (``SUM(x) IS NULL``, ``COALESCE(SUM(x), 0)``: NULL for TRUE and 0, DuckDB's
    test_count_star_subquery.test at share 0.7), and one with a LIMIT or OFFSET (``(SELECT
    CASE WHEN t.a = 11 THEN b END FROM t LIMIT 1)``: 22 for NULL, test_scalar_subquery.test).
    A bare aggregate's value, EXISTS and IN were found right."""
    for select in tree.find_all(exp.Select):
        if select is tree:
            continue
        own = defined_names(select)
        correlated = any(
            column.table and column.table not in own
            for column in select.find_all(exp.Column)
            if column.find_ancestor(exp.Select) is select
        )
        if not correlated:
            continue
        if select.args.get("limit") is not None or select.args.get("offset") is not None:
            raise SqlError(
                f"{select.sql(dialect='duckdb')[:80]}: a correlated subquery with LIMIT or "
                "OFFSET, which Polars answers wrongly"
            )
        if select.args.get("group") is not None:
            continue
        for item in select.expressions:
            value = item.this if isinstance(item, exp.Alias) else item
            if isinstance(value, exp.AggFunc) or value.find(exp.AggFunc) is None:
                continue
            lenient = value.find(*_NOT_NULL_STRICT)
            if lenient is not None:
                raise SqlError(
                    f"{value.sql(dialect='duckdb')}: {type(lenient).__name__} over an aggregate "
                    "in a correlated subquery, which Polars answers wrongly where no row matches"
                )


#: Expressions whose value over NULL may be other than NULL (and COUNT, which is 0 over no
#: rows): over a correlated subquery's aggregate where no inner row matches, Polars gives NULL
#: (``COUNT(*) + 1``: NULL for 1; ``GREATEST(MAX(x), 0)``: NULL for 0; ``... OR TRUE``). An
#: expression NULL gives NULL for (``0.2 * AVG(x)``, TPC-H Q17) is answered right.
_NOT_NULL_STRICT = (
    exp.Count,
    exp.Is,
    exp.Coalesce,
    exp.Case,
    exp.If,
    exp.Or,
    exp.And,
    exp.Xor,
    exp.Greatest,
    exp.Least,
    exp.Nullif,
    exp.Concat,
    exp.ConcatWs,
)


__all__ = [
    "common_conjuncts_first",
    "refuse_deep_correlation",
    "refuse_empty_group_forms",
    "refuse_undecorrelated",
]
