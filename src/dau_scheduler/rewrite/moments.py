"""The moment aggregates: the variance family (decision 020) and the covariance, correlation and
regression family (decision 021). Each arm computes counts, means, sample variances (and a
sample covariance) of its rows; the final query rebuilds each partial row's central moments and
folds a group's rows with Chan's pairwise combine, the combine DuckDB uses for its own
per-thread states, then finalizes as DuckDB does. Moments too ill-conditioned to fold within
``compare.FLOAT_REL`` make the final query raise :data:`ILL_CONDITIONED`, and the Session
answers unsplit.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence

import sqlglot
from sqlglot import exp

from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.merge_step import MergeStep, argument, with_filter

#: Marks a MIN whose NaN handling cannot change the answer (the Polars arm, which skips NaN in
#: MIN, may compute it): the moments read it only where the arm's mean is finite, so NaN-free.
NAN_BLIND = "dau_nan_blind"

#: Raised by the final query (DuckDB's ``error()``) for moments too ill-conditioned to fold
#: within ``compare.FLOAT_REL``, or not finite where DuckDB's answer depends on the rows' order;
#: the Session answers such a query unsplit.
ILL_CONDITIONED = "dau-scheduler: ill-conditioned moments"
#: The bound on an estimated relative error's factor over ``eps`` above which a statistic is
#: ill-conditioned: ``|mean| / stddev`` for a variance. Every way of computing it, DuckDB's
#: included, is then off by about ``eps * |mean| / stddev`` relative (measured here: values
#: 1e9 + {0, 1e-3, 2e-3} give 6.77949e-07 exactly and 6.77953e-07 from DuckDB, and DuckDB's own
#: answer over 3M such rows moves by 1.7e-8 between 1 and 4 threads). At 1e6 that is about
#: 1e-10, inside the 1e-9 the split answer is held to.
CONDITION_LIMIT = 1e6


_FIELD = re.compile(r"\b__r\.(\w+)")


@functools.lru_cache(maxsize=256)
def _parsed(sql: str) -> exp.Expr:
    return sqlglot.parse_one(sql, read=DIALECT)


def _parse(sql: str) -> exp.Expr:
    # Templates are parsed once; each use gets its own copy (transform() rebuilds the tree).
    return _parsed(sql).copy()


def fill_template(template: str, names: Mapping[str, exp.Expr]) -> exp.Expr:
    """The template with each unqualified column named in ``names`` replaced by its expression."""

    def put(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in names:
            return names[node.name].copy()
        return node

    return _parse(template).transform(put, copy=False)


def _field(struct: exp.Expr, name: str) -> exp.Expr:
    return exp.Anonymous(this="struct_extract", expressions=[struct, exp.Literal.string(name)])


def _over(reduced: exp.Expr, template: str, value: str | None = None) -> exp.Expr:
    """The template over the combined moments: ``__r.f`` is their field ``f`` and ``__value``
    is ``value``. The moments are bound once, as a lambda's parameter, so the final query holds
    their fold once however often the statistic and its guard read them."""
    body = template.replace("__value", f"({value})") if value is not None else template
    body = _FIELD.sub(r"__dau_r['\1']", body)
    bound = _parse(f"list_transform([__dau_moments], lambda __dau_r: {body})[1]")

    def put(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.name == "__dau_moments":
            return reduced.copy()
        return node

    return bound.transform(put, copy=False)


def _extreme(value: exp.Expr, cls: type[exp.Func] = exp.Min) -> exp.Expr:
    """The MIN (or ``cls``, MAX) of ``value``, marked as read where NaN cannot matter."""
    extreme = cls(this=value.copy())
    extreme.meta[NAN_BLIND] = True
    return extreme


def _guarded(value: str, ill: Sequence[str]) -> str:
    return f"CASE WHEN {' OR '.join(ill)} THEN error('{ILL_CONDITIONED}') ELSE {value} END"


# --- The variance family: (count, mean, M2) ---------------------------------------------------


def _moment_partials(call: exp.Expr) -> list[exp.Expr]:
    # Each arm's count, mean, sample variance, least and greatest value of the argument as
    # DOUBLE (as DuckDB's own variance reads it); the Polars arm has VARIANCE and AVG but no
    # VAR_POP. The extremes tell an arm that saw an infinity from one whose sum overflowed.
    arg = exp.Cast(this=argument(call).copy(), to=exp.DataType.build("DOUBLE"))
    return [
        with_filter(exp.Count(this=argument(call).copy()), call),
        with_filter(exp.Avg(this=arg.copy()), call),
        with_filter(exp.Variance(this=arg.copy()), call),
        with_filter(_extreme(arg), call),
        with_filter(_extreme(arg, exp.Max), call),
    ]


#: Chan's pairwise combine of (count, mean, M2) moments, as DuckDB combines its own variance
#: states across threads (``STDDevBaseOperation::Combine``), folded over a group's partial rows.
#: An arm's M2 is its sample variance times (count - 1). An arm whose mean is not finite saw an
#: infinity or NaN, or its sum overflowed. One that saw one (``seen``: an extreme not finite, as
#: an infinity or DuckDB's NaN is; or a NaN mean over values too small to overflow, as Polars'
#: MIN and MAX skip NaN) makes DuckDB's running M2 NaN (its finalize shows it from two rows on,
#: which a one-row arm's variance (NULL) would hide), so such an arm's M2 is NaN. An arm whose
#: values are all one value (one row, or a variance of 0) takes that value, its MIN, as its
#: mean: DuckDB's running mean is then exactly that value, while AVG's sum may round (a group of
#: 1/3.0s), and a difference of an ulp between two arms' means would make M2 a tiny non-zero
#: where DuckDB's is 0.
_MOMENTS = """list_reduce(
  list({'n': CAST(__n AS DOUBLE),
        'mean': CASE WHEN isfinite(__mean) AND (__n = 1 OR __var = 0) THEN __min
                     ELSE __mean END,
        'm2': CASE WHEN NOT isfinite(__mean) THEN CAST('nan' AS DOUBLE)
                   WHEN __n > 1 THEN __var * (__n - 1) ELSE CAST(0 AS DOUBLE) END,
        'seen': NOT isfinite(__min) OR NOT isfinite(__max)
                OR (isnan(__mean) AND greatest(abs(__min), abs(__max)) < 1e140)})
    FILTER (WHERE __n > 0),
  lambda a, b: {'n': a['n'] + b['n'],
                'mean': a['mean'] + b['n'] / (a['n'] + b['n']) * (b['mean'] - a['mean']),
                'm2': a['m2'] + b['m2'] + (b['mean'] - a['mean']) * (b['mean'] - a['mean'])
                      * b['n'] * a['n'] / (a['n'] + b['n']),
                'seen': a['seen'] OR b['seen']})"""
# (Fields as a['n'], not a.n: DuckDB 2.0 binds a lambda's a.n in HAVING as a column n.)

#: The unsplit statistic from the combined moments ``__r``, as DuckDB finalizes each: the sample
#: ones are NULL below two values; the population ones are 0 for one value, NULL for none; the
#: standard error of the mean is NULL for none.
_FINISH = {
    "samp": "CASE WHEN __r.n > 1 THEN __r.m2 / (__r.n - 1) END",
    "pop": "CASE WHEN __r.n > 1 THEN __r.m2 / __r.n WHEN __r.n = 1 THEN CAST(0 AS DOUBLE) END",
    "sem": "CASE WHEN __r.n > 0 THEN sqrt(__r.m2 / __r.n) / sqrt(__r.n) END",
}
#: Ill-conditioned where ``|mean| / stddev > CONDITION_LIMIT``.
_VARIANCE_ILL = f"__r.m2 > 0 AND __r.mean * __r.mean * __r.n > {CONDITION_LIMIT**2:.0e} * __r.m2"
#: Not finite over two values or more though no arm saw an infinity or NaN: an arm's AVG whose
#: sum overflowed (finite values near 1e308) reads as an infinity, where DuckDB's running mean
#: stays finite and its M2 gives inf (NaN split: found by ``probes/aggregates.py``); an M2 that
#: overflows is inf or -inf by the rows' order (``variance`` of 1e308 and -1e308 is -inf). The
#: unsplit query answers. (Where an arm saw one, DuckDB's answer is NaN, as the fold's.)
_VARIANCE_FINITE = "__r.n > 1 AND NOT isfinite(__r.mean + __r.m2) AND NOT __r.seen"


def _moments(cols: Sequence[exp.Expr]) -> exp.Expr:
    names = ("__n", "__mean", "__var", "__min", "__max")
    return fill_template(_MOMENTS, dict(zip(names, cols, strict=True)))


def _merge_variance(kind: str, root: bool) -> Callable[[Sequence[exp.Expr]], exp.Expr]:
    def merge(cols: Sequence[exp.Expr]) -> exp.Expr:
        guards = [_VARIANCE_FINITE, _VARIANCE_ILL]
        value = _over(_moments(cols), _guarded("__value", guards), _FINISH[kind])
        return exp.Sqrt(this=value) if root else value

    return merge


def _refold_moments(cols: Sequence[exp.Expr]) -> list[exp.Expr]:
    # Back to (count, mean, sample variance, least and greatest value): the partial columns
    # the arms compute.
    reduced = _moments(cols)
    return [
        exp.Sum(this=cols[0].copy()),
        _field(reduced, "mean"),
        _over(reduced, _FINISH["samp"]),
        exp.Min(this=cols[3].copy()),
        exp.Max(this=cols[4].copy()),
    ]


VARIANCE_STEPS: dict[str, MergeStep] = {
    kind: MergeStep(_moment_partials, _merge_variance(form, root), None, None, _refold_moments)
    for kind, (form, root) in {
        "var_samp": ("samp", False),
        "variance": ("samp", False),
        "var_pop": ("pop", False),
        "stddev": ("samp", True),
        "stddev_samp": ("samp", True),
        "stddev_pop": ("pop", True),
        "sem": ("sem", False),
    }.items()
}


# --- The covariance family: (count, mean x, mean y, M2 x, M2 y, co-moment C) over pairs --------


def pair_argument(call: exp.Expr, role: str) -> exp.Expr:
    """``y`` or ``x`` of a two-argument aggregate ``f(y, x)`` as DOUBLE, NULL unless both are not
    NULL: DuckDB's binary aggregates read only the rows where both arguments are."""
    inner = call.this if isinstance(call, exp.Filter) else call
    y, x = inner.this, inner.expression
    both = exp.and_(
        exp.Not(this=exp.Is(this=y.copy(), expression=exp.Null())),
        exp.Not(this=exp.Is(this=x.copy(), expression=exp.Null())),
    )
    value = exp.Cast(this=(y if role == "y" else x).copy(), to=exp.DataType.build("DOUBLE"))
    return exp.Case(ifs=[exp.If(this=both, true=value)])


def as_unary(call: exp.Expr, role: str, cls: type[exp.Func]) -> exp.Expr:
    """``cls`` over one role of a two-argument call, under the call's FILTER: ``regr_avgx(y, x)``
    is ``avg`` of the pairs' ``x``."""
    return with_filter(cls(this=pair_argument(call, role)), call)


def _co_moment_partials(call: exp.Expr) -> list[exp.Expr]:
    # Each arm's pair count, means, sample variances, sample covariance and least values (the
    # Polars arm has COVAR_SAMP and VARIANCE but no VAR_POP).
    x, y = pair_argument(call, "x"), pair_argument(call, "y")
    return [
        with_filter(exp.Count(this=x.copy()), call),
        with_filter(exp.Avg(this=x.copy()), call),
        with_filter(exp.Avg(this=y.copy()), call),
        with_filter(exp.Variance(this=x.copy()), call),
        with_filter(exp.Variance(this=y.copy()), call),
        with_filter(exp.CovarSamp(this=y.copy(), expression=x.copy()), call),
        with_filter(_extreme(x), call),
        with_filter(_extreme(y), call),
    ]


#: Chan's combine of the co-moments (DuckDB's ``CovarOperation::Combine`` and
#: ``STDDevBaseOperation::Combine``). As for a variance, a constant arm takes its MIN as its
#: mean; its co-moment is then exactly 0 (DuckDB's is: the deviations are 0), where a sample
#: covariance computed another way may be an ulp off. Non-finite values are left to the guard.
_CO_MOMENTS = """list_reduce(
  list({'n': CAST(__n AS DOUBLE),
        'mx': CASE WHEN isfinite(__mx) AND (__n = 1 OR __vx = 0) THEN __minx ELSE __mx END,
        'my': CASE WHEN isfinite(__my) AND (__n = 1 OR __vy = 0) THEN __miny ELSE __my END,
        'm2x': CASE WHEN __n > 1 THEN __vx * (__n - 1) ELSE CAST(0 AS DOUBLE) END,
        'm2y': CASE WHEN __n > 1 THEN __vy * (__n - 1) ELSE CAST(0 AS DOUBLE) END,
        'c': CASE WHEN __n > 1 AND __vx <> 0 AND __vy <> 0 THEN __c * (__n - 1)
                  ELSE CAST(0 AS DOUBLE) END})
    FILTER (WHERE __n > 0),
  lambda a, b: {'n': a['n'] + b['n'],
                'mx': a['mx'] + b['n'] / (a['n'] + b['n']) * (b['mx'] - a['mx']),
                'my': a['my'] + b['n'] / (a['n'] + b['n']) * (b['my'] - a['my']),
                'm2x': a['m2x'] + b['m2x'] + (b['mx'] - a['mx']) * (b['mx'] - a['mx'])
                       * b['n'] * a['n'] / (a['n'] + b['n']),
                'm2y': a['m2y'] + b['m2y'] + (b['my'] - a['my']) * (b['my'] - a['my'])
                       * b['n'] * a['n'] / (a['n'] + b['n']),
                'c': a['c'] + b['c'] + (b['mx'] - a['mx']) * (b['my'] - a['my'])
                     * b['n'] * a['n'] / (a['n'] + b['n'])})"""

_SX = "sqrt(__r.m2x / __r.n)"
_SY = "sqrt(__r.m2y / __r.n)"
_COV = "__r.c / __r.n"
_VARX = "__r.m2x / __r.n"
_NAN = "CAST('nan' AS DOUBLE)"

#: Each kind from the combined co-moments ``__r``, as DuckDB finalizes it (``covar.hpp``,
#: ``corr.hpp``, ``regression/*``): NULL for no pairs; a zero spread makes corr and the slope
#: NaN, the intercept and r2 NULL, and r2 1 where only y is constant.
_CO_FINISH = {
    "covar_pop": f"CASE WHEN __r.n > 0 THEN {_COV} END",
    "covar_samp": "CASE WHEN __r.n > 1 THEN __r.c / (__r.n - 1) END",
    "regr_sxy": "CASE WHEN __r.n > 0 THEN __r.c END",
    "regr_sxx": "CASE WHEN __r.n > 0 THEN __r.m2x END",
    "regr_syy": "CASE WHEN __r.n > 0 THEN __r.m2y END",
    "corr": f"CASE WHEN __r.n > 0 THEN CASE WHEN {_SX} * {_SY} <> 0 "
    f"THEN {_COV} / ({_SX} * {_SY}) ELSE {_NAN} END END",
    "regr_slope": f"CASE WHEN __r.n > 0 THEN CASE WHEN {_VARX} <> 0 "
    f"THEN {_COV} / ({_VARX}) ELSE {_NAN} END END",
    "regr_intercept": f"CASE WHEN __r.n > 0 AND {_VARX} <> 0 "
    f"THEN __r.my - {_COV} / ({_VARX}) * __r.mx END",
    "regr_r2": f"CASE WHEN __r.n > 0 AND {_VARX} <> 0 THEN CASE WHEN __r.m2y / __r.n = 0 "
    f"THEN CAST(1 AS DOUBLE) ELSE pow({_COV} / ({_SX} * {_SY}), 2) END END",
}

_KX = "(CASE WHEN __r.m2x > 0 THEN abs(__r.mx) * sqrt(__r.n / __r.m2x) ELSE 0 END)"
_KY = "(CASE WHEN __r.m2y > 0 THEN abs(__r.my) * sqrt(__r.n / __r.m2y) ELSE 0 END)"
#: When each kind is ill-conditioned, as relative-error estimates over ``eps`` against
#: ``CONDITION_LIMIT``. A co-moment ``C`` is off by about ``eps * (1 + kx + ky) * sqrt(M2x *
#: M2y)`` (``k = |mean| / stddev``) as DuckDB and Polars' CPU engine compute it, and by ``eps *
#: (1 + kx) * (1 + ky) * sqrt(M2x * M2y)`` from the plain sums the GPU engine's partial adds
#: (``arms.polars_gpu.covariances_as_sums``), which the guard takes: large against ``C`` when x
#: and y are nearly uncorrelated; an intercept ``my - slope * mx`` adds the error of ``my`` and
#: that of the slope times ``mx``, which may cancel. Where a spread is exactly 0 the co-moment
#: is exactly 0.
_LIMIT = f"{CONDITION_LIMIT:.0e}"
_KXY = f"(1 + {_KX}) * (1 + {_KY})"
_CO_ILL = {
    "c": f"__r.m2x > 0 AND __r.m2y > 0 AND {_KXY} * sqrt(__r.m2x) * sqrt(__r.m2y) "
    f"> {_LIMIT} * abs(__r.c)",
    "x": f"__r.m2x > 0 AND __r.mx * __r.mx * __r.n > {CONDITION_LIMIT**2:.0e} * __r.m2x",
    "y": f"__r.m2y > 0 AND __r.my * __r.my * __r.n > {CONDITION_LIMIT**2:.0e} * __r.m2y",
    "intercept": f"__r.m2x > 0 AND abs(__r.my) + abs(__r.c / __r.m2x * __r.mx) * (1 + {_KX}) "
    f"+ abs(__r.mx) * {_KXY} * sqrt(__r.m2y / __r.m2x) > {_LIMIT} * abs(__value)",
    # DuckDB's running co-moment over an infinity is inf or NaN by the rows' order.
    "finite": "NOT isfinite(__r.mx + __r.my + __r.m2x + __r.m2y + __r.c)",
    "finite_x": "NOT isfinite(__r.mx + __r.m2x)",
    "finite_y": "NOT isfinite(__r.my + __r.m2y)",
}
_CO_GUARDS = {
    "covar_pop": ("finite", "c"),
    "covar_samp": ("finite", "c"),
    "regr_sxy": ("finite", "c"),
    "corr": ("finite", "c"),
    "regr_slope": ("finite", "c"),
    "regr_r2": ("finite", "c"),
    "regr_intercept": ("finite", "intercept"),
    "regr_sxx": ("finite_x", "x"),
    "regr_syy": ("finite_y", "y"),
}


def _co_moments(cols: Sequence[exp.Expr]) -> exp.Expr:
    names = ("__n", "__mx", "__my", "__vx", "__vy", "__c", "__minx", "__miny")
    return fill_template(_CO_MOMENTS, dict(zip(names, cols, strict=True)))


def _merge_co_moments(kind: str) -> Callable[[Sequence[exp.Expr]], exp.Expr]:
    ill = [_CO_ILL[name] for name in _CO_GUARDS[kind]]

    def merge(cols: Sequence[exp.Expr]) -> exp.Expr:
        return _over(_co_moments(cols), _guarded("__value", ill), _CO_FINISH[kind])

    return merge


def _refold_co_moments(cols: Sequence[exp.Expr]) -> list[exp.Expr]:
    # Back to the eight partial columns the arms compute.
    reduced = _co_moments(cols)
    sample = "CASE WHEN __r.n > 1 THEN __r.{} / (__r.n - 1) END"
    return [
        exp.Sum(this=cols[0].copy()),
        _field(reduced, "mx"),
        _field(reduced.copy(), "my"),
        _over(reduced, sample.format("m2x")),
        _over(reduced, sample.format("m2y")),
        _over(reduced, sample.format("c")),
        exp.Min(this=cols[6].copy()),
        exp.Min(this=cols[7].copy()),
    ]


CO_MOMENT_STEPS: dict[str, MergeStep] = {
    kind: MergeStep(_co_moment_partials, _merge_co_moments(kind), None, None, _refold_co_moments)
    for kind in _CO_FINISH
}

__all__ = [
    "CONDITION_LIMIT",
    "CO_MOMENT_STEPS",
    "ILL_CONDITIONED",
    "NAN_BLIND",
    "VARIANCE_STEPS",
    "as_unary",
    "fill_template",
    "pair_argument",
]
