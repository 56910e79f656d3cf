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
And Polars finds an outer reference by its column's name alone among the joined outer rows, so
``u.n`` reads ``t.n`` in ``FROM t JOIN u ... WHERE EXISTS (... v.n = u.n)`` (a join keeps the
first source's ``n`` by that name): :func:`name_shared_outer_columns` gives such a reference
a name of its own (thirty-fifth session; ``probes/correlated_joins.py`` drew 18 wrong in 200
on main).
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_checks import defined_names, reads_outer_columns, source_items
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.block_parts import conjuncts, disjuncts

#: The comparisons Polars decorrelates between an inner and an outer column (each checked
#: against DuckDB over NULLs in both, in scalar, EXISTS, NOT EXISTS and IN subqueries).
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def common_conjuncts_first(node: exp.Expr) -> exp.Expr:
    """A WHERE that is an OR whose every branch holds the same term ``a``, as ``a AND (...)``.

    ``(a AND x) OR (a AND y)`` is ``a AND (x OR y)`` in SQL's three-valued logic too (AND
    distributes over OR there), and a branch left with no other term is true: ``(a AND x) OR
    a`` is ``a``. Terms are compared as written (sqlglot's structural equality)."""
    where = node.args.get("where") if isinstance(node, exp.Select) else None
    if where is None:
        return node
    branches = [conjuncts(branch) for branch in disjuncts(where.this)]
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


def refuse_aggregated_correlation(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a correlated subquery inside an aggregate (its argument or its
    FILTER). Polars decorrelates it into a join on each row, then reads it in a grouped query
    as the group's first value: ``count(*) FILTER (WHERE EXISTS (SELECT 1 FROM u WHERE u.k =
    t.k AND u.j > 4)) ... GROUP BY t.k`` counted 1 a group where DuckDB counted 91 (fortieth
    session; wrong on main where the reference was a group key), and a scalar one failed as it
    ran ("aggregation 'item' expected no or a single value")."""
    for node in tree.find_all(exp.AggFunc, exp.Filter):
        for inner in node.find_all(exp.Select):
            if reads_outer_columns(inner):
                raise SqlError(
                    f"{node.sql(dialect='duckdb')[:80]}: a correlated subquery inside an "
                    "aggregate, which Polars reads as its group's first value"
                )


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
        from_ = select.args.get("from_")
        if select.args.get("joins") and (from_ is None or other.table != from_.this.alias_or_name):
            # Polars 1.44: (SELECT count(*) FROM u JOIN v ON u.k = v.k WHERE v.m = t.n) was 0
            # for every row of t (DuckDB: 4, 2, ...); on u's column, or FROM v JOIN u, right.
            raise SqlError(
                f"{column.sql(dialect='duckdb')}: a subquery with a join compares it with a "
                "column of a table other than its first, which Polars answers wrongly"
            )


def _source_names(
    item: exp.Expr, ctes: dict[str, exp.CTE], schema: dict[str, dict[str, str]]
) -> set[str] | None:
    """The lower-cased column names a FROM or JOIN item gives (None where unknown)."""
    alias = item.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return {c.name.lower() for c in alias.columns}
    if isinstance(item, exp.Table) and item.name.lower() in ctes:
        cte = ctes[item.name.lower()]
        if cte.args["alias"].columns:
            return {c.name.lower() for c in cte.args["alias"].columns}
        item = cte.this
    elif isinstance(item, exp.Table):
        held = schema.get(item.name) or schema.get(item.name.lower())
        return {c.lower() for c in held} if held is not None else None
    select = item.this if isinstance(item, exp.Subquery) else item
    if not isinstance(select, exp.Select) or _outputs_star(select):
        return None
    return {e.alias_or_name.lower() for e in select.expressions}


def _outputs_star(select: exp.Select) -> bool:
    """Whether ``select`` outputs ``*`` or ``t.*`` (columns it does not name)."""
    return any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        for e in select.expressions
    )


def outer_name_shared(
    column: exp.Column, outer: exp.Select, schema: dict[str, dict[str, str]]
) -> bool:
    """Whether ``column`` (of a source of ``outer``) may be read as another source's column of
    its name where a subquery of ``outer`` reads it: another source of ``outer`` may hold the
    name, and ``column``'s is not the FROM item ahead of joins that keep its names."""
    ctes = {c.alias_or_name.lower(): c for c in outer.root().find_all(exp.CTE)}
    items = source_items(outer)
    name = column.name.lower()
    others = [i for i in items if i.alias_or_name != column.table]
    if not any((names := _source_names(i, ctes, schema)) is None or name in names for i in others):
        return False
    from_ = outer.args.get("from_")
    first = from_ is not None and from_.this.alias_or_name == column.table
    joins = outer.args.get("joins") or []
    keeping = all(j.side not in {"RIGHT", "FULL"} and j.kind != "FULL" for j in joins)
    return not (first and keeping)


def _shared_outer_references(
    tree: exp.Expr, schema: dict[str, dict[str, str]]
) -> list[tuple[exp.Column, exp.Select]]:
    """Each subquery's reference to a column of the query around it that Polars may read as
    another source's column of that name (:func:`outer_name_shared`), with that query."""
    found = []
    for column in list(tree.find_all(exp.Column)):
        if not column.table:
            continue
        levels, own = _outer_levels(column)
        if levels != 1 or own is None:
            continue
        outer = own.parent
        while outer is not None and not (
            isinstance(outer, exp.Select) and column.table in defined_names(outer)
        ):
            outer = outer.parent
        if isinstance(outer, exp.Select) and outer_name_shared(column, outer, schema):
            found.append((column, outer))
    return found


def renamable_source(column: exp.Column, outer: exp.Select) -> exp.Expr | None:
    """The source of ``outer`` that ``column`` reads, where :func:`name_shared_outer_columns`
    can give it a column of its own: a table or a derived table, ``outer`` outputting no star
    (None otherwise)."""
    item = next((i for i in source_items(outer) if i.alias_or_name == column.table), None)
    renamable = isinstance(item, (exp.Table, exp.Subquery)) and not _outputs_star(outer)
    return item if renamable else None


def name_shared_outer_columns(tree: exp.Expr, schema: dict[str, dict[str, str]]) -> exp.Expr:
    """``tree`` with each outer reference :func:`_shared_outer_references` finds given a name
    of its own: its source ``u`` read as ``(SELECT *, u.n AS __dau_o0 FROM u) AS u`` and the
    reference as ``u.__dau_o0``, which Polars cannot read as another source's column. Refused
    by name where the query around it outputs a star (the new column would be an output) or
    the source is neither a table nor a derived table. A wrapper named like a table the query
    reads elsewhere (``u AS v`` beside the table ``v``) is refused after the rewrites
    (``polars_sql``: Polars would read that table as the wrapper)."""
    wrappers: dict[int, tuple[exp.Expr, dict[str, tuple[exp.Identifier, str]]]] = {}
    count = 0
    for column, outer in _shared_outer_references(tree, schema):
        item = renamable_source(column, outer)
        if item is None:
            raise SqlError(
                f"{column.sql(dialect='duckdb')}: a subquery reads a column of the query "
                "around it whose name another of that query's sources may hold, which Polars "
                "may read as that source's column"
            )
        names = wrappers.setdefault(id(item), (item, {}))[1]
        if column.name.lower() not in names:
            names[column.name.lower()] = (column.this.copy(), f"__dau_o{count}")
            count += 1
        new = names[column.name.lower()][1]
        column.replace(exp.column(new, table=exp.to_identifier(column.table, quoted=True)))
    for item, names in wrappers.values():
        alias = exp.to_identifier(item.alias_or_name, quoted=True)
        extra = [
            exp.alias_(exp.Column(this=name.copy(), table=alias.copy()), new, quoted=True)
            for name, new in names.values()
        ]
        inner = exp.select(exp.Star(), *extra).from_(item.copy())
        item.replace(exp.Subquery(this=inner, alias=exp.TableAlias(this=alias)))
    return tree


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
        if not reads_outer_columns(select):
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
    "refuse_aggregated_correlation",
    "refuse_deep_correlation",
    "outer_name_shared",
    "refuse_empty_group_forms",
    "name_shared_outer_columns",
    "renamable_source",
    "refuse_undecorrelated",
]
