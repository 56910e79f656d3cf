"""Outer joins a later filter makes inner: the rewrite step :func:`simplify_outer_joins`.

An outer join adds rows whose other side is all NULL: ``t RIGHT JOIN u`` adds each ``u`` row
no ``t`` row matched, with every column of ``t`` NULL. A condition applied after the join that
cannot hold where a side's columns are all NULL (``WHERE t.n > 0``, or a later inner join on
``t.k = v.k``) removes every such row again, so the join is the same rows with that side not
preserved: a RIGHT join becomes an inner one, a FULL join a LEFT or RIGHT one, a LEFT join an
inner one. Optimizers do the same (DuckDB's filter pushdown does).

The planner cannot split a table an outer join pairs with unmatched rows of another (whether a
row of ``u`` is unmatched depends on every row of ``t``; decision in ``planner._block_refusal``),
so ``SELECT ... FROM t FULL JOIN u ON ... WHERE t.n > 0`` was refused though it reads ``t`` row
by row: its ``t`` is the preserved side of a LEFT join once the FULL join is simplified.

A condition counts only where it is NULL or false whenever the side's columns are NULL, judged
on its form alone: a comparison, LIKE, BETWEEN or IN whose operand reaches one of the side's
columns through arithmetic, casts, negation and parentheses only, or ``IS NOT NULL`` of such an
operand, as one of the WHERE's conjuncts or of a later inner or semi join's ON in the same FROM
item (after a comma, the join's left side is only the tables since that comma). Anything else
(COALESCE, CASE, ``||``, functions, IS NULL, OR, a subquery) leaves the join as written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlglot import exp

from dau_scheduler.rewrite.block_parts import conjuncts
from dau_scheduler.rewrite.comma_scopes import is_comma

#: Operators NULL in, NULL out on either operand: comparisons, LIKE and arithmetic.
_COMPARED = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike)
_NULL_IN_NULL_OUT = (*_COMPARED, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv)


def _null_when_null(node: exp.Expr, names: frozenset[str]) -> bool:
    """Whether ``node`` is NULL wherever every column of the tables ``names`` is NULL."""
    if isinstance(node, exp.Column):
        return node.table in names
    if isinstance(node, (exp.Paren, exp.Neg, exp.Cast, exp.Not)):
        return _null_when_null(node.this, names)
    if isinstance(node, _NULL_IN_NULL_OUT):
        return any(_null_when_null(side, names) for side in (node.this, node.expression))
    if isinstance(node, exp.Between):
        return _null_when_null(node.this, names)
    if isinstance(node, exp.In):
        # ``NULL IN (SELECT ...)`` is false over no rows: only a list of values counts.
        return (
            not node.args.get("query")
            and bool(node.expressions)
            and (_null_when_null(node.this, names))
        )
    return False


def _rejects(condition: exp.Expr, names: frozenset[str]) -> bool:
    """Whether ``condition`` is NULL or false wherever every column of ``names`` is NULL."""
    if isinstance(condition, exp.Not) and isinstance(condition.this, exp.Is):
        test = condition.this
        return isinstance(test.expression, exp.Null) and _null_when_null(test.this, names)
    return _null_when_null(condition, names)


def _filters_after(select: exp.Select, index: int) -> list[exp.Expr]:
    """The conditions that apply to the rows of ``select``'s join ``index`` and those before
    it: its WHERE's conjuncts and the ON conjuncts of the inner and semi joins after it."""
    found: list[exp.Expr] = []
    for join in (select.args.get("joins") or [])[index + 1 :]:
        if is_comma(join):
            break  # a new FROM item: its joins do not read this one's rows
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        on = join.args.get("on")
        if on is not None and not side and kind in {"", "INNER", "SEMI"}:
            found += conjuncts(on)
    where = select.args.get("where")
    return found + (conjuncts(where.this) if where is not None else [])


def _any_rejects(conditions: Iterable[exp.Expr], names: frozenset[str]) -> bool:
    return any(_rejects(c, names) for c in conditions)


def _simplify_block(select: exp.Select) -> bool:
    """Simplify ``select``'s outer joins in place; whether any changed."""
    from_ = select.args.get("from_")
    joins = select.args.get("joins") or []
    if from_ is None:
        return False
    changed = False
    before = {from_.this.alias_or_name}
    for index, join in enumerate(joins):
        right = join.this.alias_or_name
        if is_comma(join):
            # A comma starts a FROM item of its own (DuckDB binds ``a, e RIGHT JOIN d`` as
            # ``a`` times ``e RIGHT JOIN d``): a filter on ``a`` leaves ``d``'s unmatched rows.
            before = {right}
            continue
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        if (
            side in {"LEFT", "RIGHT", "FULL"}
            and kind in {"", "OUTER"}  # not a LEFT SEMI, ASOF or POSITIONAL join
            and join.args.get("on") is not None
            and right
        ):
            after = _filters_after(select, index)
            keep_left = side in {"LEFT", "FULL"} and not _any_rejects(after, frozenset({right}))
            keep_right = side in {"RIGHT", "FULL"} and not _any_rejects(after, frozenset(before))
            kept = {(True, True): "FULL", (True, False): "LEFT", (False, True): "RIGHT"}.get(
                (keep_left, keep_right)
            )
            if kept != side:
                join.set("side", kept)
                join.set("kind", join.kind if kept and join.kind else None)
                changed = True
        before.add(right)
    return changed


def simplify_outer_joins(tree: exp.Expr, schema: Mapping[str, Mapping[str, str]]) -> exp.Expr:
    """Every block's outer joins with the side a later filter empties no longer preserved (see
    the module's text). Joins with USING or NATURAL are left as written."""
    for select in tree.find_all(exp.Select):
        if any(j.args.get("using") or j.method for j in select.args.get("joins") or []):
            continue
        while _simplify_block(select):
            pass
    return tree


__all__ = ["simplify_outer_joins"]
