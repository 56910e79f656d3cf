"""How the Polars arm writes a partial's joins so that Polars' SQL reads them as DuckDB does.

Polars joins only on equalities between the joined item and the sources before it, plans a
comma join it cannot pair up as a cross join, and reads a comma before an explicit join
otherwise than DuckDB. So comma joins become inner joins on the WHERE equalities that link
them, outward from the split table (:func:`join_explicitly`); an inner or left join's
conditions on the joined table alone become a filter on that table
(:func:`filter_joined_table`); an inner join's other conditions go to WHERE
(:func:`inner_conditions_to_where`); a left join's conditions on the sources before it go
into its keys (:func:`mask_preceding_conditions`); the parentheses around an ON go
(:func:`flat_join_condition`); and any condition left that is not a pair of keys is refused
(:func:`refuse_unpaired_conditions`). An inner join with no pair of keys at all (an inequality,
a BETWEEN, an OR, ``ON TRUE``) becomes a cross join under WHERE, which Polars plans as an IEJoin
or a nested loop join (:func:`inner_conditions_to_where`).
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.block_parts import conjuncts
from dau_scheduler.rewrite.comma_scopes import is_comma
from dau_scheduler.rewrite.planner import PLACEHOLDER


def sources(node: exp.Expr) -> set[str]:
    return {c.table for c in node.find_all(exp.Column) if c.table}


def _explicit_joins(select: exp.Select) -> exp.Select:
    """Comma joins as INNER JOIN ... ON, starting from the split table.

    Polars plans a comma join it cannot pair up as a CROSS JOIN (TPC-H Q9: part x supplier), so the
    WHERE equalities that link two sources become ON conditions, joining outward from the split
    table one connected source at a time. For inner joins ON and WHERE are the same filter.
    """
    from_ = select.args.get("from_")
    joins = list(select.args.get("joins") or [])
    if (
        from_ is None
        or not joins
        or any(
            j.args.get("on") or j.args.get("using") or j.side or j.kind or j.method for j in joins
        )
    ):
        return select
    items = [from_.this, *[j.this for j in joins]]
    names = [item.alias_or_name for item in items]
    if len(set(names)) != len(names) or not all(names):
        return select
    where = select.args.get("where")
    terms = conjuncts(where.this) if where is not None else []
    start = next(
        (
            i
            for i, item in enumerate(items)
            if isinstance(item, exp.Table) and item.name == PLACEHOLDER
        ),
        0,
    )
    joined, order, used = {names[start]}, [start], set()
    conditions: dict[int, list[exp.Expr]] = {}
    remaining = [i for i in range(len(items)) if i != start]

    def links_to(i: int) -> list[int]:
        # Only equalities go to ON (Polars takes no OR there); everything else stays in WHERE.
        return [
            k
            for k, c in enumerate(terms)
            if k not in used
            and isinstance(c, exp.EQ)
            and names[i] in sources(c)
            and len(sources(c)) == 2
            and sources(c) <= joined | {names[i]}
        ]

    while remaining:
        pick = next((i for i in remaining if links_to(i)), None)
        if pick is None:
            return select  # a source no equality reaches: leave the query as written
        links = links_to(pick)
        used.update(links)
        conditions[pick] = [terms[k] for k in links]
        joined.add(names[pick])
        order.append(pick)
        remaining.remove(pick)
    rebuilt = select.copy()
    rebuilt.set("from_", exp.From(this=items[start].copy()))
    rebuilt.set(
        "joins",
        [
            exp.Join(
                this=items[i].copy(), kind="INNER", on=exp.and_(*[c.copy() for c in conditions[i]])
            )
            for i in order[1:]
        ],
    )
    rest = [terms[k].copy() for k in range(len(terms)) if k not in used]
    rebuilt.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
    return rebuilt


def _commas_as_cross_joins(select: exp.Select) -> exp.Select:
    """``FROM a, e JOIN d ON c`` as ``FROM a CROSS JOIN e JOIN d ON c``: Polars reads a comma
    before an explicit join otherwise than DuckDB (``GROUP BY d.k`` over ``dc_a, e JOIN dc_d``
    counted 20 rows a group where DuckDB counts 300). The two are the same rows for the inner,
    left, semi and anti joins after the comma (a cross join commutes with them); a right or
    full join there would keep its unmatched rows once instead of once per row before the
    comma, and is refused."""
    joins = select.args.get("joins") or []
    commas = [join for join in joins if is_comma(join)]
    if not commas or len(commas) == len(joins):
        return select  # no comma, or only commas (``_explicit_joins`` pairs those up)
    after = joins[joins.index(commas[0]) :]
    for join in after:
        if join.side in {"RIGHT", "FULL"} or join.kind in {"FULL", "OUTER"} or join.method:
            raise SqlError(
                f"{join.sql(dialect='duckdb')} after a comma in FROM: the Polars arm writes "
                "the comma as a CROSS JOIN, which that join does not commute with"
            )
    for join in commas:
        join.set("kind", "CROSS")
    return select


def join_explicitly(tree: exp.Expr) -> exp.Expr:
    """``_explicit_joins`` on every SELECT, subqueries before the blocks holding them (a
    transform would not descend into a block it has just rebuilt: TPC-H Q2's subquery)."""
    for select in reversed(list(tree.find_all(exp.Select))):
        rebuilt = _explicit_joins(_commas_as_cross_joins(select))
        if rebuilt is not select:
            if select is tree:
                return rebuilt
            select.replace(rebuilt)
    return tree


#: (side, kind) of the joins whose joined table a condition on it alone may filter first.
_INNER_JOINS = {("", ""), ("", "INNER")}
_LEFT_JOINS = {("LEFT", ""), ("LEFT", "OUTER")}
_SEMI_JOINS = {("", "SEMI"), ("LEFT", "SEMI")}
_ANTI_JOINS = {("", "ANTI"), ("LEFT", "ANTI")}
_FILTERABLE_JOINS = _INNER_JOINS | _LEFT_JOINS | _SEMI_JOINS | _ANTI_JOINS
_RIGHT_JOINS = {("RIGHT", ""), ("RIGHT", "OUTER")}


def filter_joined_table(node: exp.Expr) -> exp.Expr:
    """Conditions in an inner, left, semi or anti join's ON that read only the joined table, as
    a filter on that table: ``LEFT JOIN t ON a.k = t.k AND t.c NOT LIKE 'x'`` becomes
    ``LEFT JOIN (SELECT * FROM t WHERE t.c NOT LIKE 'x') AS t ON a.k = t.k``.

    Polars joins only on equalities (TPC-H Q13). The two forms are the same join: such a condition
    decides which of the joined table's rows can match, and a left join keeps every row of its
    left side either way (a semi or anti join keeps or drops it by whether one matches). A right
    or full join preserves the joined table, so it is left alone.
    """
    if not isinstance(node, exp.Join) or (node.side, node.kind) not in _FILTERABLE_JOINS:
        return node
    table, on = node.this, node.args.get("on")
    if not isinstance(table, (exp.Table, exp.Subquery)) or on is None:
        return node
    name = table.alias_or_name
    terms = conjuncts(on)
    own = [
        c
        for c in terms
        if sources(c) == {name}
        and not c.find(exp.Subquery, exp.Select)
        and not (
            isinstance(c, exp.EQ) and all(isinstance(s, exp.Column) for s in c.iter_expressions())
        )
    ]
    if not own or len(own) == len(terms):
        return node
    joined = node.copy()
    joined.set("this", _filtered(table, name, own, node.parent))
    joined.set("on", exp.and_(*[c.copy() for c in terms if c not in own]))
    return joined


def filter_right_join_source(select: exp.Expr) -> exp.Expr:
    """A block's first join, a RIGHT join, with ON conditions on the FROM table alone: that
    table filtered first, ``FROM u RIGHT JOIN t ON u.k = t.k AND u.s = 'a'`` as ``FROM (SELECT
    ... FROM u WHERE u.s = 'a') AS u RIGHT JOIN t ON u.k = t.k``. The FROM table's rows only
    match or not (the RIGHT join keeps every row of ``t`` either way), as a LEFT join's joined
    table's do (:func:`filter_joined_table`); Polars joins only on equalities."""
    joins = (select.args.get("joins") or []) if isinstance(select, exp.Select) else []
    from_ = select.args.get("from_") if isinstance(select, exp.Select) else None
    if not joins or from_ is None or (joins[0].side, joins[0].kind) not in _RIGHT_JOINS:
        return select
    source, on = from_.this, joins[0].args.get("on")
    if not isinstance(source, (exp.Table, exp.Subquery)) or on is None:
        return select
    name = source.alias_or_name
    terms = conjuncts(on)
    own = [c for c in terms if sources(c) == {name} and not c.find(exp.Subquery, exp.Select)]
    if not own or len(own) == len(terms):
        return select
    from_.set("this", _filtered(source, name, own, select))
    joins[0].set("on", exp.and_(*[c.copy() for c in terms if c not in own]))
    return select


def _filtered(
    source: exp.Expr, name: str, conditions: list[exp.Expr], select: exp.Expr | None
) -> exp.Subquery:
    """``source`` (named ``name``) under ``conditions``, as a derived table of the same name
    whose outputs are the columns of it that ``select`` reads."""
    read: list[exp.Expr] = [*_read_columns(select, name)] or [exp.Star()]
    inner = exp.select(*read).from_(source.copy()).where(exp.and_(*[c.copy() for c in conditions]))
    return exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(name)))


def _read_columns(select: exp.Expr | None, name: str) -> list[exp.Column]:
    """The columns of ``name`` that ``select`` reads, each once, as the filtered table's own
    outputs: named, sqlglot types them from the table's schema (under ``SELECT *`` it could
    not, and a SUM over one was refused as one that might wrap around)."""
    found: dict[str, exp.Column] = {}
    for column in select.find_all(exp.Column) if isinstance(select, exp.Select) else ():
        if column.table == name and column.name not in found:
            found[column.name] = exp.Column(
                this=column.this.copy(), table=column.args["table"].copy()
            )
    return list(found.values())


def flat_join_condition(node: exp.Expr) -> exp.Expr:
    """A join's ON without the parentheses around it, which Polars' SQL does not read
    ("unsupported SQL join constraint"); an OR inside keeps its own."""
    on = node.args.get("on") if isinstance(node, exp.Join) else None
    if on is None or not isinstance(on, exp.Paren):
        return node
    flat = node.copy()
    flat.set("on", exp.and_(*[c.copy() for c in conjuncts(on)]))
    return flat


def _is_key_pair(condition: exp.Expr, name: str) -> bool:
    """An equality between an expression of the joined item ``name`` alone and one of the
    sources before it alone: a pair of join keys as Polars reads them."""
    if not isinstance(condition, exp.EQ):
        return False
    sides = [sources(side) for side in (condition.this, condition.expression)]
    return all(sides) and {name} in sides and not any(name in s for s in sides if s != {name})


def _keeps_unmatched_right(joins: list[exp.Join]) -> bool:
    """Whether a right or full join is among ``joins``: it keeps the rows of its right side a
    filter on the sources before it would remove, so such a filter cannot move past it."""
    return any((j.side or "").upper() in ("RIGHT", "FULL") for j in joins)


def inner_conditions_to_where(select: exp.Expr) -> exp.Expr:
    """An inner join's conditions that are not key pairs, and a semi join's on the sources
    before it alone, moved to its block's WHERE (for an inner join ON and WHERE are the same
    filter; a semi join keeps a row that meets such a condition and has a match; Polars
    evaluates only key pairs in ON). An inner join with no pair of keys (``ON a.x < b.lo``,
    ``ON TRUE``, an OR) becomes a CROSS JOIN under its conditions in WHERE, as a comma join is:
    Polars plans an inequality there as an IEJoin, and ``polars_joins.unkeyed_joins`` bounds
    the pairs it may hold."""
    joins = (select.args.get("joins") or []) if isinstance(select, exp.Select) else []
    if not joins or _keeps_unmatched_right(joins):
        return select  # a right or full join after it would keep rows WHERE then removes
    start = select.args.get("from_")
    before = {start.this.alias_or_name} if start is not None else set()
    moved: list[exp.Expr] = []
    for join in joins:
        on, name = join.args.get("on"), join.this.alias_or_name
        kind = (join.side, join.kind)
        before.add(name)
        if on is None or kind not in _INNER_JOINS | _SEMI_JOINS:
            continue
        conditions = conjuncts(on)
        keys = [c for c in conditions if _is_key_pair(c, name)]
        going = [c for c in conditions if c not in keys]
        if kind in _SEMI_JOINS:
            going = [c for c in going if name not in sources(c) and not c.find(exp.Subquery)]
        elif not keys:  # an inner join without a pair of keys: a cross join under its conditions
            moved += [c.copy() for c in conditions]
            join.set("on", None)
            join.set("kind", "CROSS")
            continue
        if not keys or not going:
            continue  # no pair of keys left to join on, or nothing to move (refused below)
        moved += [c.copy() for c in going]
        join.set("on", exp.and_(*[c.copy() for c in conditions if c not in going]))
    if moved:
        where = select.args.get("where")
        select.set("where", exp.Where(this=exp.and_(*([where.this] if where else []), *moved)))
    return select


def semi_joins_as_exists(select: exp.Expr) -> exp.Expr:
    """A semi or anti join with a condition other than a pair of keys, as the EXISTS or NOT
    EXISTS it is: ``FROM t SEMI JOIN u ON t.k = u.k AND t.n < u.n`` becomes ``FROM t WHERE
    EXISTS (SELECT 1 FROM u WHERE t.k = u.k AND t.n < u.n)`` (the same rows of ``t``, each once;
    a condition that is NULL matches nothing either way). Polars' SQL joins a semi or anti join
    on key pairs alone ("not supported with non-equi join conditions") and decorrelates such an
    EXISTS (``polars_correlation`` refuses what it would not). Left alone where the block has a
    right or full join, which a filter on ``t`` would not commute with."""
    if not isinstance(select, exp.Select) or select.args.get("from_") is None:
        return select
    joins = list(select.args.get("joins") or [])
    if _keeps_unmatched_right(joins):
        return select
    kept, tests = [], []
    for join in joins:
        on, kind = join.args.get("on"), (join.side, join.kind)
        name = join.this.alias_or_name
        if (
            on is None
            or kind not in _SEMI_JOINS | _ANTI_JOINS
            or not isinstance(join.this, (exp.Table, exp.Subquery))
            or all(_is_key_pair(c, name) for c in conjuncts(on))
        ):
            kept.append(join)
            continue
        inner = exp.select(exp.Literal.number(1)).from_(join.this.copy()).where(on.copy())
        found: exp.Expr = exp.Exists(this=inner)
        tests.append(exp.Not(this=found) if kind in _ANTI_JOINS else found)
    if not tests:
        return select
    select.set("joins", kept or None)
    where = select.args.get("where")
    select.set("where", exp.Where(this=exp.and_(*([where.this] if where else []), *tests)))
    return select


def mask_preceding_conditions(select: exp.Expr) -> exp.Expr:
    """A left join's conditions on the sources before it alone, written into its keys:
    ``LEFT JOIN u ON t.k = u.k AND t.n > 0`` becomes ``LEFT JOIN u ON CASE WHEN t.n > 0 THEN
    t.k END = u.k``. A row of ``t`` the condition fails matches nothing either way (a NULL key
    matches no key) and is kept with NULLs; Polars takes no such condition in ON, and WHERE
    would drop the row. Left alone (and so refused) where the join has no pair of keys, or the
    condition holds a subquery or an IN (Polars 1.44 panics on an IN inside a join key:
    "assertion failed: !eos.internally_observed_orders()"). A semi or anti join is written as
    an EXISTS, where Polars takes no such key: a semi join's go to WHERE
    (:func:`inner_conditions_to_where`), an anti join's stay refused."""
    if not isinstance(select, exp.Select) or select.args.get("from_") is None:
        return select
    before = {select.args["from_"].this.alias_or_name}
    for join in select.args.get("joins") or []:
        name, on = join.this.alias_or_name, join.args.get("on")
        if on is not None and (join.side, join.kind) in _LEFT_JOINS:
            conditions = conjuncts(on)
            keys = [c for c in conditions if _is_key_pair(c, name)]
            preceding = [
                c
                for c in conditions
                if c not in keys
                and sources(c) <= before
                and not c.find(exp.Subquery, exp.Select, exp.In)
            ]
            if keys and preceding:
                test = exp.and_(*[c.copy() for c in preceding])
                masked = []
                for key in keys:
                    pair = key.copy()
                    side = "this" if sources(pair.this) != {name} else "expression"
                    value = pair.args[side]
                    pair.set(side, exp.Case(ifs=[exp.If(this=test.copy(), true=value.copy())]))
                    masked.append(pair)
                rest = [c.copy() for c in conditions if c not in keys and c not in preceding]
                join.set("on", exp.and_(*masked, *rest))
        before.add(name)
    return select


def refuse_unpaired_conditions(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a join condition that is not an equality between an expression of
    the joined item and one of the sources before it. Polars' SQL takes every ``=`` in ON as a
    pair of join keys and finds a column by its name on the left first: ``ON t2.i = 5`` joined
    on the left's ``i`` (DuckDB's test/sql/optimizer/plan/test_filter_pushdown_large.test
    returned every row of t2); ``a.k = 1`` or an OR has no pair of keys at all."""
    for join in tree.find_all(exp.Join):
        on = join.args.get("on")
        if on is None:
            continue
        name = join.this.alias_or_name
        for condition in conjuncts(on):
            if _is_key_pair(condition, name):
                continue
            written = condition.sql(dialect="duckdb")
            if (
                (join.side, join.kind) in _LEFT_JOINS
                and name in sources(condition)
                and isinstance(condition, (exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NEQ))
            ):
                raise SqlError(
                    f"join condition {written}: Polars 1.44 runs a left join on it, but lets "
                    "the joined item's columns of it into the block's outputs (a SELECT "
                    "DISTINCT over such a join counted 7 rows where DuckDB counts 4)"
                )
            raise SqlError(
                f"join condition {written}: the Polars arm joins only on equalities between "
                "the joined item and the sources before it"
            )


__all__ = [
    "filter_joined_table",
    "filter_right_join_source",
    "mask_preceding_conditions",
    "semi_joins_as_exists",
    "flat_join_condition",
    "inner_conditions_to_where",
    "join_explicitly",
    "refuse_unpaired_conditions",
    "sources",
]
