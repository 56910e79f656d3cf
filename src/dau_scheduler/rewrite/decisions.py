"""Where a value folded from the arms' partials would decide something in the final query.

A floating-point SUM, an AVG (DuckDB divides in a long double; the fold in a double), a
variance or a covariance folded from partials differs from DuckDB's unsplit value in its last
bits: the order of the additions is another one. As an output of the answer that is within
the stated tolerance. As something the final query decides on, it is not: ``o.y >= (SELECT
avg(g.x) FROM g)`` with ``g`` split kept 1,000 rows where DuckDB keeps 1,500 (the average
0.1 folded, 0.09999999999999809 in DuckDB, and a third of ``o.y`` is 0.1), and so could a
HAVING, a join condition, a GROUP BY, a CASE's condition or a rounding of it. Such a candidate
block is refused (``planner``), and the planner tries the next one.

An ORDER BY whose last key is such a value, with or without a LIMIT, is no decision here: it
orders two rows otherwise only where DuckDB's values are equal (any order of them is DuckDB's
too) or lie within a few units in the last place, which DuckDB's own thread schedule reorders
as well. Followed by another key it decides: DuckDB breaks the tie of equal values by that key,
the fold's values need not be equal. A comparison with a constant or another row decides too:
data whose values equal their mean (tenths, prices) puts the value exactly on the boundary.

``mark`` puts :data:`INEXACT` on each fold of such a kind; :func:`decision` follows each marked
value up the final query: through arithmetic, casts to floating-point types, CASE values and
outer aggregates it stays a value; reaching the answer's own outputs it is an output; anything
else that reads it (a comparison, a condition, a grouping, a join, a cast to another type, a
top-k, a set operation, a function) decides on it. A derived table's or CTE's column is followed
to where the query reads it by that name.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.dialect import DIALECT

#: ``meta`` key on a fold whose value may differ from DuckDB's in its last bits.
INEXACT = "dau_inexact"

#: ``meta`` key beside :data:`INEXACT` on an aggregate the final query computes over the arms'
#: rows (``final_aggregates``), not folds from their partials.
OVER_ROWS = "dau_over_rows"

#: ``meta`` key on an AVG folded from integer sums: its integer sum and count are DuckDB's, and
#: the one division rounds equal means to equal doubles (DuckDB's long double division rounds
#: them alike too), so it keeps DuckDB's ties, and an ORDER BY may break them by a later key.
KEEPS_TIES = "dau_keeps_ties"

#: Aggregate kinds whose fold is the unsplit value exactly, whatever its type: a pick, not a sum.
EXACT_KINDS = frozenset(
    {
        "min",
        "max",
        "min_distinct",
        "max_distinct",
        "count",
        "count_star",
        "count_distinct",
        "bool_and",
        "bool_or",
        "bit_and",
        "bit_or",
        "bit_xor",
        "regr_count",
        "mode",
        "histogram",
    }
)

#: Arithmetic: continuous in its operands, and NULL where one is.
ARITHMETIC = (exp.Paren, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg)

#: Expressions through which a value stays a value (continuous in it, or an aggregate of it).
_VALUE_OF = (
    *ARITHMETIC,
    exp.Abs,
    exp.Sqrt,
    exp.Ln,
    exp.Exp,
    exp.Pow,
    exp.Alias,
    exp.Case,
    exp.Coalesce,
    exp.Greatest,
    exp.Least,
    exp.AggFunc,
    exp.Window,
    exp.Ordered,
)

#: ``meta`` key on a row block's final form (``SELECT __dau_c0 AS ... FROM __dau_partials``):
#: the query above it folds the arms' rows in another order than DuckDB folds the table's.
ROWS = "dau_rows"

#: Aggregates whose value depends on the order of the rows they fold: always (DuckDB updates a
#: running mean for the moments), or over floating-point values (a sum, a mean).
_ORDERED_ALWAYS = (
    exp.Variance,
    exp.VariancePop,
    exp.Stddev,
    exp.StddevPop,
    exp.StddevSamp,
    exp.CovarSamp,
    exp.CovarPop,
    exp.Corr,
)
_ORDERED_OVER_FLOATS = (exp.Sum, exp.Avg)

#: Every aggregate whose last bits may depend on the order of the values it folds.
FLOAT_FOLDS = (*_ORDERED_OVER_FLOATS, *_ORDERED_ALWAYS)

#: How deep :func:`decision` follows a value through derived tables and CTEs.
_DEPTH = 8


def mark(fold: exp.Cast, kind: str, integers: bool = False) -> None:
    """Mark ``fold`` (an aggregate's fold, cast to the unsplit aggregate's type) where its
    value may differ from DuckDB's: a floating-point type and a kind that adds up; an AVG whose
    partial sums are ``integers`` as keeping ties (:data:`KEEPS_TIES`)."""
    if kind not in EXACT_KINDS and fold.to.is_type(*exp.DataType.FLOAT_TYPES):
        fold.meta[INEXACT] = kind
        if integers and kind in ("avg", "mean"):
            fold.meta[KEEPS_TIES] = True


def decision(final: exp.Expr) -> str | None:
    """Why a marked fold of ``final`` decides something (None where each is an output)."""
    for node in final.walk():
        kind = node.meta.get(INEXACT)
        if kind:
            why = _follow(node, final, _DEPTH, bool(node.meta.get(KEEPS_TIES)))
            if why is not None:
                made = (
                    "the final query computes over the arms' rows"
                    if node.meta.get(OVER_ROWS)
                    else "folded from the arms' partials"
                )
                return (
                    f"{why} decides on a floating-point {kind.upper()} {made}, whose last bits "
                    "differ from DuckDB's (another order of additions): a row could go the "
                    "other way"
                )
    return None


def row_decision(final: exp.Expr, floats: list[bool]) -> str | None:
    """Why the query above a row block's final form (marked :data:`ROWS`) decides on an
    aggregate it folds over the arms' rows (None where none does): a sum or mean of the
    floating-point outputs (``floats``, by position), or a variance of any, folded in the order
    of the arms' partials, not of DuckDB's scan. ``WITH g AS (SELECT k, x * 2 AS x FROM g)
    SELECT count(*) FROM o WHERE o.y >= (SELECT avg(g.x) FROM g WHERE g.k = o.k)`` with ``g``
    split counted 646 rows where DuckDB counts 367 (the partials read in two Arrow chunks)."""
    rows = next((node for node in final.walk() if node.meta.get(ROWS)), None)
    if not isinstance(rows, exp.Select) or rows is final:
        return None
    for position, floating in enumerate(floats):
        for use in _uses(rows, position, final, _DEPTH):
            why = _fold_of(use, floating, final, _DEPTH)
            if why is not None:
                return why
    return None


def _uses(query: exp.Query, position: int, root: exp.Expr, depth: int) -> list[exp.Expr]:
    """Where the query above reads a nested query's output at ``position``: the columns that
    name it (a derived table's or CTE's, through a UNION ALL), or a scalar subquery itself."""
    holder = query.parent
    if depth == 0 or holder is None:
        return []
    if isinstance(holder, exp.SetOperation):
        return _uses(holder, position, root, depth) if holder is not root else []
    if isinstance(holder, exp.Subquery) and not isinstance(holder.parent, (exp.From, exp.Join)):
        return [holder]
    if not isinstance(holder, (exp.Subquery, exp.CTE)):
        return []
    return _reads_of(holder, _output_name(query, position), root)


def _output_name(query: exp.Query, position: int) -> str:
    """The name of a query's output at ``position`` (a set operation's: its first branch's)."""
    first = query
    while isinstance(first, exp.SetOperation):
        first = first.this
    outputs = first.expressions if isinstance(first, exp.Select) else []
    return outputs[position].alias_or_name if position < len(outputs) else ""


def _reads_of(source: exp.Subquery | exp.CTE, name: str, root: exp.Expr) -> list[exp.Expr]:
    """The columns of ``root`` that read output ``name`` of a derived table or CTE: a CTE is
    read by its name, under whatever alias each reference gives it."""
    names = {source.alias_or_name} | {
        table.alias_or_name
        for table in root.find_all(exp.Table)
        if isinstance(source, exp.CTE) and table.name == source.alias_or_name and not table.db
    }
    return [c for c in root.find_all(exp.Column) if c.table in names and c.name == name]


def _fold_of(use: exp.Expr, floating: bool, root: exp.Expr, depth: int) -> str | None:
    """What decides on an order-dependent aggregate of the rows value ``use`` reads, following
    it out of the queries that pass it on as an output."""
    child, parent = use, use.parent
    while parent is not None:
        if isinstance(parent, exp.AggFunc):
            if isinstance(parent, _ORDERED_ALWAYS) or (
                floating and isinstance(parent, _ORDERED_OVER_FLOATS)
            ):
                why = _follow(parent, root, depth)
                if why is not None:
                    kind = type(parent).__name__.upper()
                    return (
                        f"{why} decides on a {kind} the final query folds over the arms' rows, "
                        "in another order than DuckDB's scan (other last bits): a row could go "
                        "the other way"
                    )
            return None
        if isinstance(parent, exp.Div) or (
            isinstance(parent, exp.Cast) and parent.to.is_type(*exp.DataType.FLOAT_TYPES)
        ):
            floating = True
        if isinstance(parent, exp.Select):
            if child.arg_key != "expressions" or depth == 0:
                return None  # compared or joined as it is: the same value as DuckDB's
            index = parent.expressions.index(child)
            for further in _uses(parent, index, root, depth - 1):
                why = _fold_of(further, floating, root, depth - 1)
                if why is not None:
                    return why
            return None
        child, parent = parent, parent.parent
    return None


def _follow(node: exp.Expr, root: exp.Expr, depth: int, ties: bool = False) -> str | None:
    """What decides on ``node``'s value on its way up to ``root``, or None."""
    if depth == 0:
        return "a query nested past what the check follows"
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.Select) and child.arg_key == "expressions":
            alias = child.alias_or_name if isinstance(child, exp.Alias) else ""
            if parent.args.get("distinct") is not None:
                return "a SELECT DISTINCT"
            why = _read_by_name(parent, alias, parent.expressions.index(child) + 1, ties)
            if why is not None or parent is root:
                return why
            return _leave(parent, parent.expressions.index(child), root, depth, ties)
        if isinstance(parent, exp.Order):
            if isinstance(parent.parent, exp.Window):
                return "a window's ORDER BY"
            return None if ties else _tie_broken(parent, child)
        if isinstance(parent, exp.If):
            if child.arg_key == "this":
                return "a CASE condition"
        elif isinstance(parent, exp.Window) and child.arg_key != "this":
            return "a window's PARTITION BY"
        elif isinstance(parent, (exp.Cast, exp.TryCast)):
            if not parent.to.is_type(*exp.DataType.FLOAT_TYPES):
                return f"a cast to {parent.to.sql(dialect=DIALECT)}"
        elif not isinstance(parent, _VALUE_OF) or isinstance(parent, exp.Predicate):
            return _named(parent)
        child, parent = parent, parent.parent
    return None


def _named(node: exp.Expr) -> str:
    if isinstance(node, (exp.Where, exp.Having, exp.Qualify, exp.Group, exp.Join)):
        return node.key.upper()
    if isinstance(node, exp.Predicate):
        clause = node.find_ancestor(exp.Where, exp.Having, exp.Qualify, exp.Join, exp.If)
        return f"a comparison in {_named(clause)}" if clause is not None else "a comparison"
    if isinstance(node, exp.If):
        return "a CASE condition"
    if isinstance(node, exp.Distinct):
        return "a DISTINCT aggregate"
    return type(node).__name__


def _tie_broken(order: exp.Order, ordered: exp.Expr) -> str | None:
    """An ORDER BY key followed by another: DuckDB's equal values are ordered by the next key,
    the fold's may differ in their last bits and order the rows by those instead
    (``ORDER BY avg(x), k LIMIT 3`` over groups of equal data gave another k)."""
    if ordered is not order.expressions[-1]:
        return "an ORDER BY that breaks its ties by a later key"
    return None


def _read_by_name(select: exp.Select, alias: str, position: int, ties: bool) -> str | None:
    """What of ``select`` itself reads its output ``alias`` (at 1-based ``position``): DuckDB
    lets WHERE, GROUP BY, HAVING and QUALIFY name an output, and ORDER BY name or number it."""
    for key in ("where", "group", "having", "qualify"):
        clause = select.args.get(key)
        if clause is None or not alias:
            continue
        for column in clause.find_all(exp.Column):
            if not column.table and column.name == alias:
                return _named(clause)
    order = select.args.get("order")
    if not isinstance(order, exp.Order) or ties:
        return None
    for ordered in order.expressions:
        key = ordered.this
        named = isinstance(key, exp.Column) and not key.table and alias and key.name == alias
        if named or (key.is_int and int(key.name) == position):
            why = _tie_broken(order, ordered)
            if why is not None:
                return why
    return None


def _leave(query: exp.Query, position: int, root: exp.Expr, depth: int, ties: bool) -> str | None:
    """Follow a nested query's output at ``position`` out of it: a scalar subquery's value goes
    on up; a UNION ALL's branch becomes the union's output there; a derived table's or CTE's
    column goes to every column of its name read by that source's name; a set operation that
    compares rows (UNION, INTERSECT, EXCEPT), an IN or an EXISTS decides."""
    holder = query.parent
    if isinstance(holder, exp.SetOperation):
        if not isinstance(holder, exp.Union) or holder.args.get("distinct"):
            return f"a {holder.key.upper()} (it compares rows)"
        return None if holder is root else _leave(holder, position, root, depth, ties)
    if isinstance(holder, exp.Subquery) and not isinstance(holder.parent, (exp.From, exp.Join)):
        if isinstance(holder.parent, (exp.In, exp.Exists, exp.Any, exp.All)):
            return _named(holder.parent)
        return _follow(holder, root, depth, ties)
    if isinstance(holder, (exp.Subquery, exp.CTE)):
        alias = _output_name(query, position)
        if not holder.alias_or_name or not alias:
            return "a nested query's unnamed output"
        for column in _reads_of(holder, alias, root):
            why = _follow(column, root, depth - 1, ties)
            if why is not None:
                return why
        return None
    return _named(holder) if holder is not None else None


__all__ = [
    "ARITHMETIC",
    "EXACT_KINDS",
    "FLOAT_FOLDS",
    "INEXACT",
    "OVER_ROWS",
    "ROWS",
    "decision",
    "mark",
    "row_decision",
]
