"""MIN and MAX of floating-point values on the Polars arm, with NaN ranked as DuckDB ranks it.

DuckDB orders NaN above every number, infinity included, and finds it equal to itself: the MAX
of a group holding a NaN is NaN, its MIN is NaN only where every value counted is. Polars' MIN
and MAX skip NaN unless a group holds nothing else (measured on Polars 1.44: MAX of 1.0 and NaN
is 1.0). So, where the engine finds NaN equal to NaN as DuckDB does (Polars' CPU engine; the
GPU engine's comparisons are IEEE's, and there the extremum stays refused), an aggregate

    MAX(x)  becomes  CASE WHEN COUNT(CASE WHEN x = NaN THEN 1 END) > 0 THEN NaN
                          ELSE MAX(CASE WHEN x = NaN THEN NULL ELSE x END) END
    MIN(x)  becomes  CASE WHEN COUNT(x) > COUNT(CASE WHEN x = NaN THEN NULL ELSE x END)
                          AND COUNT(CASE WHEN x = NaN THEN NULL ELSE x END) = 0 THEN NaN
                          ELSE MIN(CASE WHEN x = NaN THEN NULL ELSE x END) END

The inner MIN and MAX never see a NaN, so how Polars folds one (in a group, across its
streaming engine's morsels) does not matter. Left alone, and so refused by name
(``polars_checks._float_extremum``): a window's MIN or MAX, and GREATEST and LEAST.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_checks import SPECIAL_VALUE
from dau_scheduler.rewrite.moments import NAN_BLIND

_FLOATS = (exp.DType.DOUBLE, exp.DType.FLOAT)


def _typed(node: exp.Expr, kind: exp.DataType) -> exp.Expr:
    """``node`` annotated as ``kind`` (what the checks after this rewrite read)."""
    node.type = kind.copy()
    return node


def _nan(kind: exp.DataType) -> exp.Expr:
    """NaN of ``kind`` (DOUBLE or FLOAT), written as both engines read it."""
    constant = exp.Cast(this=exp.Literal.string("nan"), to=kind.copy())
    constant.meta[SPECIAL_VALUE] = True
    return _typed(constant, kind)


def _is_nan(value: exp.Expr, kind: exp.DataType) -> exp.Expr:
    return exp.EQ(this=_typed(exp.Paren(this=value.copy()), kind), expression=_nan(kind))


def _without_nan(value: exp.Expr, kind: exp.DataType) -> exp.Expr:
    """``value``, NULL where it is NaN."""
    case = exp.Case(ifs=[exp.If(this=_is_nan(value, kind), true=exp.Null())], default=value.copy())
    return _typed(case, kind)


def _count(value: exp.Expr) -> exp.Count:
    return exp.Count(this=value)


def nan_ranked_extremum(node: exp.Expr) -> exp.Expr:
    """An aggregate MIN or MAX of a DOUBLE or FLOAT (the types ``checked_arithmetic``
    annotated) written as the module docstring says; anything else as it is."""
    if not isinstance(node, (exp.Max, exp.Min)) or node.expressions:
        return node
    if isinstance(node.parent, (exp.Window, exp.Filter)) or node.meta.get(NAN_BLIND):
        return node
    value = node.this
    kind = value.type if isinstance(value, exp.Expr) else None
    if kind is None or not kind.is_type(*_FLOATS):
        return node
    kind = exp.DataType.build(kind.this)
    inner = _typed(node.__class__(this=_without_nan(value, kind)), kind)
    inner.meta[NAN_BLIND] = True  # (it sees no NaN: polars_checks lets it through)
    if isinstance(node, exp.Max):
        nans = exp.Case(ifs=[exp.If(this=_is_nan(value, kind), true=exp.Literal.number(1))])
        has_nan: exp.Expr = exp.GT(this=_count(nans), expression=exp.Literal.number(0))
    else:
        numbers = _count(_without_nan(value, kind))
        has_nan = exp.and_(
            exp.GT(this=_count(value.copy()), expression=numbers.copy()),
            exp.EQ(this=numbers, expression=exp.Literal.number(0)),
        )
    rewritten = _typed(exp.Case(ifs=[exp.If(this=has_nan, true=_nan(kind))], default=inner), kind)
    return _typed(exp.Paren(this=rewritten), kind)


def nan_ranked_extrema(tree: exp.Expr) -> exp.Expr:
    """Every aggregate MIN and MAX of a floating-point value in ``tree``, NaN ranked as DuckDB
    ranks it (:func:`nan_ranked_extremum`)."""
    return tree.transform(nan_ranked_extremum, copy=False)


__all__ = ["nan_ranked_extrema", "nan_ranked_extremum"]
