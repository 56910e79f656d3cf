"""``x IN (SELECT ...)`` and ``x NOT IN (SELECT ...)`` in a WHERE, written as the EXISTS that
Polars plans as a semi or an anti join.

Polars' SQL writes an IN of a subquery beside a join as a list built of the subquery's rows and
a ``list.contains`` over it, which the GPU engine cannot run (cudf-polars 26.10: TPC-H Q16 and
Q18 on the H200, 2026-12-04), where it plans ``EXISTS (SELECT 1 FROM c WHERE t.a = c.k)``, with
``c`` a table or a CTE, as a semi join both engines run. So where the term is one of a WHERE's
conjuncts (an IN: or reached from them through AND, OR and parentheses alone), ``x`` a column
of the block's own sources and the subquery uncorrelated, the subquery becomes a CTE
``__dau_inN(__dau_in)`` and the term an EXISTS over it. The same rows pass:

- ``x IN (S)`` holds, in a WHERE, where some value of S equals ``x`` (a NULL on either side
  equals nothing): the semi join's rows.
- ``x NOT IN (S)`` holds where S is empty, or where ``x`` is not NULL, no value of S equals it
  and S holds no NULL: the anti join's rows (which keep a NULL ``x``) where
  ``count(*) = 0 OR (x IS NOT NULL AND count(*) - count(__dau_in) = 0)`` over S.

Polars finds an EXISTS's outer column by its name alone (``u.n`` beside ``t.n`` read ``t.n``:
``probes/outer_joins.py`` seed 3551 drew it from this rewrite), so such a column is then given
a name of its own (``polars_correlation.name_shared_outer_columns``). Left as it was (and so
for the GPU engine to refuse) where ``x`` is an expression (Polars plans an EXISTS only on a
column), the subquery reads an outer column or a CTE of another scope, a NOT IN is not one of
the WHERE's conjuncts, or an IN sits under a NOT or any other expression than AND, OR and
parentheses (:func:`_positive_ins`; an IN under an OR was left as an IN until the thirty-seventh
session).

For the GPU engine alone, a correlated NOT IN among a WHERE's conjuncts is written as three NOT
EXISTS (:func:`correlated_not_ins_as_exists`, thirty-ninth session); Polars' CPU engine runs its
``list.contains`` as it is.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_checks import source_items
from dau_scheduler.arms.polars_correlation import outer_name_shared, renamable_source
from dau_scheduler.rewrite.block_parts import conjuncts

#: The CTEs this writes, and the one column each holds.
PREFIX = "__dau_in"
COLUMN = "__dau_in"


def _defined_inside(node: exp.Expr) -> set[str]:
    """The lower-cased names ``node``'s own FROMs, JOINs and WITHs define."""
    names = {t.alias_or_name.lower() for t in node.find_all(exp.Table)}
    names |= {s.alias.lower() for s in node.find_all(exp.Subquery) if s.alias}
    names |= {c.alias_or_name.lower() for c in node.find_all(exp.CTE)}
    return names


def _uncorrelated(subquery: exp.Subquery, outer_ctes: set[str], top_ctes: set[str]) -> bool:
    """Whether ``subquery`` reads only its own sources, and tables or top-level CTEs (a CTE
    of another scope would not be in sight of a top-level one)."""
    inside = _defined_inside(subquery.this)
    for column in subquery.find_all(exp.Column):
        if not column.table or column.table.lower() not in inside:
            return False
    own = {c.alias_or_name.lower() for c in subquery.find_all(exp.CTE)}
    read = {t.name.lower() for t in subquery.find_all(exp.Table)}
    return not (read & outer_ctes - own - top_ctes)


def _own_names(select: exp.Select) -> set[str]:
    """The lower-cased names ``select``'s own FROM and JOINs define."""
    return {item.alias_or_name.lower() for item in source_items(select)}


def _top_cte_of(node: exp.Expr, with_: exp.With | None) -> int | None:
    """The index of the top-level CTE ``node`` sits in, if it does."""
    if with_ is None:
        return None
    parent: exp.Expr | None = node
    while parent is not None:
        if isinstance(parent, exp.CTE) and parent.parent is with_:
            return with_.expressions.index(parent)
        parent = parent.parent
    return None


def _exists(column: exp.Column, name: str) -> exp.Exists:
    key = exp.column(COLUMN, table=name, quoted=True)
    select = exp.select("1").from_(exp.to_table(name, quoted=True))
    return exp.Exists(this=select.where(exp.EQ(this=column.copy(), expression=key)))


def reads_a_set(select: exp.Select) -> bool:
    """Whether ``select`` reads one of the CTEs this writes, alone."""
    items = source_items(select)
    return (
        len(items) == 1
        and isinstance(items[0], exp.Table)
        and items[0].name.startswith(PREFIX)
        and not select.args.get("joins")
    )


def set_test(term: exp.Expr) -> tuple[exp.Column, str] | None:
    """The outer column and the CTE of ``term`` where it is a semi join :func:`_exists` wrote
    (``EXISTS (SELECT 1 FROM __dau_inN WHERE x = __dau_inN.__dau_in)``), else None."""
    inner = term.this if isinstance(term, exp.Exists) else None
    if not isinstance(inner, exp.Select) or not reads_a_set(inner):
        return None
    if any(select is not inner for select in inner.find_all(exp.Select)):
        return None
    test = inner.args.get("where")
    test = test.this.unnest() if test is not None else None
    if not isinstance(test, exp.EQ):
        return None
    name = inner.args["from_"].this.name
    for outer, key in ((test.this, test.expression), (test.expression, test.this)):
        if (
            isinstance(outer, exp.Column)
            and isinstance(key, exp.Column)
            and key.table == inner.args["from_"].this.alias_or_name
            and key.name == COLUMN
            and not outer.table.startswith(PREFIX)
        ):
            return outer, name
    return None


def _scalar(name: str, value: str) -> exp.Subquery:
    return exp.select(value).from_(exp.to_table(name, quoted=True)).subquery()


def _not_in(column: exp.Column, name: str) -> exp.Expr:
    """The NOT IN's terms (module docstring) over the CTE ``name``."""
    empty = exp.EQ(this=_scalar(name, "COUNT(*)"), expression=exp.Literal.number(0))
    nulls = exp.EQ(
        this=_scalar(name, f'COUNT(*) - COUNT("{COLUMN}")'), expression=exp.Literal.number(0)
    )
    present = exp.and_(exp.Not(this=exp.Is(this=column.copy(), expression=exp.Null())), nulls)
    return exp.and_(
        exp.Not(this=_exists(column, name)), exp.Paren(this=exp.or_(empty, exp.Paren(this=present)))
    )


def in_subqueries_as_exists(tree: exp.Expr, schema: dict[str, dict[str, str]]) -> exp.Expr:
    """``tree`` with each IN or NOT IN of the kind the module docstring describes written as
    an EXISTS over a CTE; ``tree`` itself where there is none. ``schema`` (table -> column ->
    type) tells which sources hold a column's name: Polars finds the EXISTS's outer column by
    its name alone, so a column whose name another source may hold must be one
    ``polars_correlation.name_shared_outer_columns`` can name apart (it runs after this), or
    its IN stays an IN."""
    if not isinstance(tree, exp.Select):
        return tree
    with_ = tree.args.get("with_")
    if with_ is not None and with_.args.get("recursive"):
        return tree
    top = {c.alias_or_name.lower() for c in (with_.expressions if with_ else [])}
    all_ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    count = 0
    # Inner blocks first: an outer subquery moved into a CTE carries their rewrites with it.
    for select in reversed(list(tree.find_all(exp.Select))):
        where = select.args.get("where")
        if where is None:
            continue
        own = _own_names(select)
        negated = [t for t in conjuncts(where.this) if isinstance(t, exp.Not)]
        for term in [*negated, *_positive_ins(where.this)]:
            node = term.this.unnest() if isinstance(term, exp.Not) else term
            query = node.args.get("query") if isinstance(node, exp.In) else None
            column = node.this if isinstance(node, exp.In) else None
            if (
                not isinstance(query, exp.Subquery)
                or not isinstance(column, exp.Column)
                or (column.table or "").lower() not in own
                or not _uncorrelated(query, all_ctes - top, top)
                or (
                    outer_name_shared(column, select, schema)
                    and renamable_source(column, select) is None
                )
            ):
                continue
            name = f"{PREFIX}{count}"
            count += 1
            cte = exp.CTE(
                this=query.this.copy(),
                alias=exp.TableAlias(
                    this=exp.to_identifier(name, quoted=True),
                    columns=[exp.to_identifier(COLUMN, quoted=True)],
                ),
            )
            if with_ is None:
                with_ = exp.With(expressions=[])
                tree.set("with_", with_)
            ctes = list(with_.expressions)
            at = _top_cte_of(select, with_)
            ctes.insert(len(ctes) if at is None else at, cte)
            with_.set("expressions", ctes)
            top.add(name)
            if isinstance(term, exp.Not):
                term.replace(exp.Paren(this=_not_in(column, name)))
            else:
                term.replace(_exists(column, name))
    return tree


def correlated_not_ins_as_exists(tree: exp.Expr) -> exp.Expr:
    """``tree`` (the GPU engine's partial) with each correlated ``x NOT IN (SELECT v.y FROM v
    WHERE W)`` among a WHERE's conjuncts written as the three NOT EXISTS it holds as: where
    no row of the subquery's holds ``v.y = x``, none holds a NULL ``v.y``, and ``x`` is not
    NULL or the subquery holds no row. Polars plans a correlated NOT IN as a ``list.contains``,
    which the GPU engine does not translate, and each NOT EXISTS as an anti join it does; the
    correlation stays a comparison of two columns among W's AND terms, where Polars reads it
    (``polars_correlation.refuse_undecorrelated`` refuses the rest after this). Only for a
    bare column ``x`` of the block's own sources and a subquery of one bare column over its
    own sources with no grouping, aggregate, window, DISTINCT, LIMIT or set operation."""
    for select in list(tree.find_all(exp.Select)):
        where = select.args.get("where")
        if where is None:
            continue
        own = _own_names(select)
        for term in conjuncts(where.this):
            node = term.this.unnest() if isinstance(term, exp.Not) else None
            query = node.args.get("query") if isinstance(node, exp.In) else None
            column = node.this if isinstance(node, exp.In) else None
            inner = query.this if isinstance(query, exp.Subquery) else None
            if (
                not isinstance(query, exp.Subquery)
                or not isinstance(column, exp.Column)
                or (column.table or "").lower() not in own
                or not isinstance(inner, exp.Select)
                or not _one_column_rows(inner)
                or _uncorrelated(query, set(), set())
            ):
                continue
            value = inner.expressions[0].unalias()

            def exists_not(*conditions: exp.Expr, inner: exp.Select = inner) -> exp.Not:
                rows = inner.copy()
                rows.set("expressions", [exp.Literal.number(1)])
                for condition in conditions:
                    rows = rows.where(condition, copy=False)
                return exp.Not(this=exp.Exists(this=rows))

            unknown = exp.Is(this=column.copy(), expression=exp.Null())
            terms = [
                exists_not(exp.EQ(this=value.copy(), expression=column.copy())),
                exists_not(exp.Is(this=value.copy(), expression=exp.Null())),
                exp.Paren(this=exp.or_(exp.Not(this=unknown), exists_not())),
            ]
            term.replace(exp.Paren(this=exp.and_(*terms)))
    return tree


def _one_column_rows(select: exp.Select) -> bool:
    """Whether ``select`` gives one bare column of its own sources per row it reads."""
    if len(select.expressions) != 1 or not isinstance(select.expressions[0].unalias(), exp.Column):
        return False
    value = select.expressions[0].unalias()
    parts = ("group", "having", "qualify", "limit", "offset", "distinct", "with_", "order")
    own = _own_names(select)
    return (
        not any(select.args.get(part) for part in parts)
        and (value.table or "").lower() in own
        and not select.find(exp.AggFunc, exp.Window, exp.Union, exp.Intersect, exp.Except)
    )


def _positive_ins(condition: exp.Expr) -> list[exp.In]:
    """The INs ``condition`` reaches through AND, OR and parentheses alone: where it decides
    which rows a WHERE keeps, an IN's NULL (no value of S equals ``x``, and ``x`` or a value of
    S is NULL) keeps a row exactly where its FALSE would (``NULL OR c`` is ``c`` or NULL, as
    ``FALSE OR c`` is ``c``), so the EXISTS's FALSE may stand for it (TPC-DS Q45's
    ``ca_zip IN (...) OR i_item_id IN (SELECT ...)``: Polars plans an EXISTS under an OR as a
    left join it counts matches over, which the GPU engine translates)."""
    if isinstance(condition, (exp.And, exp.Or)):
        return [*_positive_ins(condition.this), *_positive_ins(condition.expression)]
    if isinstance(condition, exp.Paren):
        return _positive_ins(condition.this)
    return [condition] if isinstance(condition, exp.In) else []


__all__ = [
    "COLUMN",
    "PREFIX",
    "correlated_not_ins_as_exists",
    "in_subqueries_as_exists",
    "reads_a_set",
    "set_test",
]
