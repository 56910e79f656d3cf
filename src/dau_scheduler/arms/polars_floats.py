"""Floating-point values on the Polars arm as DuckDB computes them: ``round`` of a DOUBLE with
halves away from zero (:func:`round_half_away`), and MIN and MAX with NaN ranked as DuckDB
ranks it (:func:`nan_ranked_extrema`).

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
from dau_scheduler.arms.polars_gpu import NAN_SAFE
from dau_scheduler.rewrite.moments import NAN_BLIND


def _typed(node: exp.Expr, kind: exp.DataType) -> exp.Expr:
    """``node`` annotated as ``kind`` (what the checks after this rewrite read)."""
    node.type = kind.copy()
    return node


def special_value(text: str, kind: exp.DataType) -> exp.Expr:
    """'nan', 'inf' or '-inf' as a ``kind`` (DOUBLE or FLOAT), written as both engines read it
    (:data:`~dau_scheduler.arms.polars_checks.SPECIAL_VALUE` lets the cast through)."""
    constant = exp.Cast(this=exp.Literal.string(text), to=kind.copy())
    constant.meta[SPECIAL_VALUE] = True
    return _typed(constant, kind)


def _nan(kind: exp.DataType) -> exp.Expr:
    return special_value("nan", kind)


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
    if kind is None or not kind.is_type(*exp.DataType.FLOAT_TYPES):
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


def round_half_away(node: exp.Expr) -> exp.Expr:
    """``round(x)`` of a DOUBLE as DuckDB computes it (C's round: halves away from zero), from
    floor and ceil: ``x - floor(x)`` is exact for x >= 0, so 0.49999999999999994 stays 0; NaN,
    the infinities and -0.0 come back as they are. Polars' own round takes halves to even."""
    # round(x, n) stays refused (polars_checks): DuckDB rounds 2.675 to 2.67 (the double below
    # 2.675), where C's round of 2.675 * 100.0 (267.5 in doubles) gives 2.68.
    if not isinstance(node, exp.Round) or node.args.get("decimals") is not None:
        return node
    kind = node.this.type
    if kind is None or not kind.is_type(exp.DType.DOUBLE):
        return node
    x = exp.Paren(this=node.this)
    down, up = exp.Floor(this=x.copy()), exp.Ceil(this=x.copy())
    half = exp.Literal.number(0.5)
    one = exp.Literal.number(1)
    above = exp.If(
        this=exp.GTE(this=exp.Sub(this=x.copy(), expression=down.copy()), expression=half),
        true=exp.Add(this=down.copy(), expression=one.copy()),
    )
    below = exp.If(
        this=exp.GTE(this=exp.Sub(this=up.copy(), expression=x.copy()), expression=half),
        true=exp.Sub(this=up.copy(), expression=one.copy()),
    )
    rounded = exp.Case(
        ifs=[
            exp.If(
                this=exp.GTE(this=x.copy(), expression=exp.Literal.number(0)),
                true=exp.Case(ifs=[above], default=down.copy()),
            ),
            exp.If(
                this=exp.LT(this=x.copy(), expression=exp.Literal.number(0)),
                true=exp.Case(ifs=[below], default=up.copy()),
            ),
        ],
        default=x.copy(),
    )
    rounded.type = kind  # what the checks after this one read (a cast of it to text)
    for comparison in rounded.find_all(exp.GTE, exp.LT):
        comparison.meta[NAN_SAFE] = True  # (NaN reaches the default, or NaN + 1: NaN either way)
    return rounded


__all__ = ["nan_ranked_extrema", "nan_ranked_extremum", "round_half_away", "special_value"]
