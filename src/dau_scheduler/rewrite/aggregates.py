"""Aggregate kinds and their merge steps: kind -> (partial aggregates, merge over partial columns).

A kind is DuckDB's lower-case function name (``count(*)`` is ``count_star``; a DISTINCT aggregate
is ``<name>_distinct``). Only kinds registered here are split; everything else is refused by
:func:`dau_scheduler.merge.check_split` with the reason from ``AGGREGATE_REFUSALS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import sqlglot
from sqlglot import exp

from dau_scheduler.lazy import LazyModule, int64_scalar
from dau_scheduler.rewrite.dialect import DIALECT

if TYPE_CHECKING:
    import pyarrow.compute as pc
else:
    pc = LazyModule("pyarrow.compute")  # imported at the first fold, not by every import

# sqlglot renders these under another dialect's name; DuckDB's own name is the kind.
_NAMES: dict[type[exp.Expr], str] = {exp.GroupConcat: "string_agg"}


def aggregate_kind(node: exp.Expr) -> str:
    """DuckDB's lower-case name for an aggregate call (``count_star``, ``sum_distinct``, ...)."""
    inner = node.this if isinstance(node, exp.Filter) else node
    if isinstance(inner, exp.Count) and (inner.this is None or isinstance(inner.this, exp.Star)):
        return "count_star"  # COUNT(*) and DuckDB's COUNT()
    if isinstance(inner, exp.Anonymous):
        name = str(inner.this).lower()
    elif type(inner) in _NAMES:
        name = _NAMES[type(inner)]
    else:
        name = inner.sql(dialect=DIALECT).split("(", 1)[0].strip().lower()
    distinct = isinstance(inner.this, exp.Distinct) if isinstance(inner, exp.Func) else False
    if isinstance(inner, exp.Anonymous):  # sem(DISTINCT x): the DISTINCT is an argument
        distinct = any(isinstance(arg, exp.Distinct) for arg in inner.expressions)
    return f"{name}_distinct" if distinct else name


def _argument(node: exp.Expr) -> exp.Expr:
    inner = node.this if isinstance(node, exp.Filter) else node
    if isinstance(inner, exp.Anonymous):  # sem(x): a name sqlglot does not know
        argument: exp.Expr = inner.expressions[0]
        return argument
    return inner.this if isinstance(inner, exp.Func) else inner


def _with_filter(agg: exp.Expr, original: exp.Expr) -> exp.Expr:
    """Carry the original call's FILTER (WHERE ...) clause onto a partial aggregate."""
    if isinstance(original, exp.Filter):
        return exp.Filter(this=agg, expression=original.expression.copy())
    return agg


@dataclass(frozen=True)
class MergeStep:
    """How one aggregate kind splits.

    ``partials(call)`` are the aggregates each arm computes over its rows; ``merge(columns)`` folds
    those partial columns (one per partial, all arms' rows together) into the unsplit value, as
    SQL for the final query. ``arrow`` and ``finish`` are the same fold in pyarrow, for the fast
    path: one hash aggregate per partial column (NULL when a group saw no non-NULL partial), then
    ``finish`` turns the folded columns into the value. Empty-range and all-NULL behaviour is
    stated per step below and matches DuckDB.

    A step whose partial columns do not fold one column at a time (the moments of a variance)
    has no ``arrow`` fold: such a block always folds in DuckDB, and ``refold(columns)`` gives
    the expressions that fold partial rows back into one partial row of the same columns.
    """

    partials: Callable[[exp.Expr], list[exp.Expr]]
    merge: Callable[[Sequence[exp.Expr]], exp.Expr]
    arrow: tuple[str, ...] | None
    finish: Callable[[Sequence[pa.Array]], pa.Array] | None
    refold: Callable[[Sequence[exp.Expr]], list[exp.Expr]] | None = None


def _sum_partials(call: exp.Expr) -> list[exp.Expr]:
    return [_with_filter(exp.Sum(this=_argument(call).copy()), call)]


def _count_partials(call: exp.Expr) -> list[exp.Expr]:
    return [_with_filter(exp.Count(this=_argument(call).copy()), call)]


def _count_star_partials(call: exp.Expr) -> list[exp.Expr]:
    return [_with_filter(exp.Count(this=exp.Star()), call)]


def _same(cls: type[exp.Func]) -> Callable[[exp.Expr], list[exp.Expr]]:
    def partials(call: exp.Expr) -> list[exp.Expr]:
        return [_with_filter(cls(this=_argument(call).copy()), call)]

    return partials


def _merge_sum(cols: Sequence[exp.Expr]) -> exp.Expr:
    # SUM over partial sums: NULL when every partial is NULL (no rows, or only NULLs), as SUM is.
    return exp.Sum(this=cols[0].copy())


def _merge_count(cols: Sequence[exp.Expr]) -> exp.Expr:
    # Counts add; with no partial rows at all (both arms empty) COUNT is still 0.
    return exp.Coalesce(this=exp.Sum(this=cols[0].copy()), expressions=[exp.Literal.number(0)])


def _merge_with(cls: type[exp.Func]) -> Callable[[Sequence[exp.Expr]], exp.Expr]:
    def merge(cols: Sequence[exp.Expr]) -> exp.Expr:
        # The statistic of the partials; NULL partials (empty or all-NULL arms) are ignored.
        return cls(this=cols[0].copy())

    return merge


def _avg_partials(call: exp.Expr) -> list[exp.Expr]:
    arg = _argument(call)
    return [
        _with_filter(exp.Sum(this=arg.copy()), call),
        _with_filter(exp.Count(this=arg.copy()), call),
    ]


def _merge_avg(cols: Sequence[exp.Expr]) -> exp.Expr:
    # A ratio of merged sums, never a mean of means; NULL when no non-NULL value was seen.
    total, count = exp.Sum(this=cols[0].copy()), exp.Sum(this=cols[1].copy())
    ratio = exp.Div(
        this=exp.Cast(this=total, to=exp.DataType.build("DOUBLE")),
        expression=count.copy(),
    )
    return exp.If(
        this=exp.GT(
            this=exp.Coalesce(this=count, expressions=[exp.Literal.number(0)]),
            expression=exp.Literal.number(0),
        ),
        true=ratio,
        false=exp.Null(),
    )


#: Marks a MIN whose NaN handling cannot change the answer (the Polars arm, which skips NaN in
#: MIN, may compute it): the moments read it only where the arm's mean is finite, so NaN-free.
NAN_BLIND = "dau_nan_blind"


def _moment_partials(call: exp.Expr) -> list[exp.Expr]:
    # Each arm's count, mean, sample variance and least value of the argument as DOUBLE (as
    # DuckDB's own variance reads it); the Polars arm has VARIANCE and AVG but no VAR_POP.
    arg = exp.Cast(this=_argument(call).copy(), to=exp.DataType.build("DOUBLE"))
    least = exp.Min(this=arg.copy())
    least.meta[NAN_BLIND] = True
    return [
        *_count_partials(call),
        _with_filter(exp.Avg(this=arg.copy()), call),
        _with_filter(exp.Variance(this=arg), call),
        _with_filter(least, call),
    ]


#: Chan's pairwise combine of (count, mean, M2) moments, as DuckDB combines its own variance
#: states across threads (``STDDevBaseOperation::Combine``), folded over a group's partial rows.
#: An arm's M2 is its sample variance times (count - 1). An arm whose mean is not finite saw an
#: infinity or NaN: DuckDB's running M2 is then NaN (its finalize shows it from two rows on),
#: which a one-row arm's variance (NULL) would hide, so such an arm's M2 is NaN. An arm whose
#: values are all one value (one row, or a variance of 0) takes that value, its MIN, as its
#: mean: DuckDB's running mean is then exactly that value, while AVG's sum may round (a group of
#: 1/3.0s), and a difference of an ulp between two arms' means would make M2 a tiny non-zero
#: where DuckDB's is 0.
_MOMENTS = """list_reduce(
  list({'n': CAST(__n AS DOUBLE),
        'mean': CASE WHEN isfinite(__mean) AND (__n = 1 OR __var = 0) THEN __min
                     ELSE __mean END,
        'm2': CASE WHEN NOT isfinite(__mean) THEN CAST('nan' AS DOUBLE)
                   WHEN __n > 1 THEN __var * (__n - 1) ELSE CAST(0 AS DOUBLE) END})
    FILTER (WHERE __n > 0),
  lambda a, b: {'n': a['n'] + b['n'],
                'mean': a['mean'] + b['n'] / (a['n'] + b['n']) * (b['mean'] - a['mean']),
                'm2': a['m2'] + b['m2'] + (b['mean'] - a['mean']) * (b['mean'] - a['mean'])
                      * b['n'] * a['n'] / (a['n'] + b['n'])})"""
# (Fields as a['n'], not a.n: DuckDB 2.0 binds a lambda's a.n in HAVING as a column n.)

#: The unsplit statistic from the combined moments ``__r``, as DuckDB finalizes each: the sample
#: ones are NULL below two values; the population ones are 0 for one value, NULL for none; the
#: standard error of the mean is NULL for none.
_FINISH = {
    "samp": "CASE WHEN __r.n > 1 THEN __r.m2 / (__r.n - 1) END",
    "pop": "CASE WHEN __r.n > 1 THEN __r.m2 / __r.n WHEN __r.n = 1 THEN CAST(0 AS DOUBLE) END",
    "sem": "CASE WHEN __r.n > 0 THEN sqrt(__r.m2 / __r.n) / sqrt(__r.n) END",
}


def _parse(sql: str) -> exp.Expr:
    return sqlglot.parse_one(sql, read=DIALECT)


def _moments(cols: Sequence[exp.Expr]) -> exp.Expr:
    names = {"__n": cols[0], "__mean": cols[1], "__var": cols[2], "__min": cols[3]}
    template = _parse(_MOMENTS)

    def put(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in names:
            return names[node.name].copy()
        return node

    return template.transform(put)


def _field(struct: exp.Expr, name: str) -> exp.Expr:
    return exp.Anonymous(this="struct_extract", expressions=[struct, exp.Literal.string(name)])


#: Raised by the final query (DuckDB's ``error()``) for moments too ill-conditioned to fold
#: within ``compare.FLOAT_REL``; the Session answers such a query unsplit.
ILL_CONDITIONED = "dau-scheduler: ill-conditioned variance"
#: ``|mean| / stddev`` above which a variance is ill-conditioned. Every way of computing it,
#: DuckDB's included, is then off by about ``eps * |mean| / stddev`` relative (measured here:
#: values 1e9 + {0, 1e-3, 2e-3} give 6.77949e-07 exactly and 6.77953e-07 from DuckDB, and
#: DuckDB's own answer over 3M such rows moves by 1.7e-8 between 1 and 4 threads). At 1e6 that
#: is about 1e-10, inside the 1e-9 the split answer is held to.
CONDITION_LIMIT = 1e6
_GUARD = (
    f"CASE WHEN __r.m2 > 0 AND __r.mean * __r.mean * __r.n > {CONDITION_LIMIT**2:.0e} * __r.m2 "
    f"THEN error('{ILL_CONDITIONED}') ELSE __value END"
)


def _finished(kind: str, cols: Sequence[exp.Expr], *, guarded: bool = False) -> exp.Expr:
    reduced = _moments(cols)

    def put(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.table == "__r":
            return _field(reduced.copy(), node.name)
        if isinstance(node, exp.Column) and node.name == "__value":
            return _parse(_FINISH[kind]).transform(put)
        return node

    return _parse(_GUARD if guarded else _FINISH[kind]).transform(put)


def _merge_variance(kind: str, root: bool) -> Callable[[Sequence[exp.Expr]], exp.Expr]:
    def merge(cols: Sequence[exp.Expr]) -> exp.Expr:
        value = _finished(kind, cols, guarded=True)
        return exp.Sqrt(this=value) if root else value

    return merge


def _refold_moments(cols: Sequence[exp.Expr]) -> list[exp.Expr]:
    # Back to (count, mean, sample variance, least value): the partial columns the arms compute.
    return [
        exp.Sum(this=cols[0].copy()),
        _field(_moments(cols), "mean"),
        _finished("samp", cols),
        exp.Min(this=cols[3].copy()),
    ]


def _as_is(cols: Sequence[pa.Array]) -> pa.Array:
    return cols[0]


#: Arrow's 0, made once: a Python literal passed to pyarrow.compute is converted on every call
#: (~0.3 ms), and the first conversion imports pandas (``dau_scheduler.lazy``).
_ZERO = int64_scalar(0)


def _zero_if_null(cols: Sequence[pa.Array]) -> pa.Array:
    # COUNT is 0, never NULL, even when no partial row exists at all.
    return pc.fill_null(cols[0], _ZERO)


def _ratio(cols: Sequence[pa.Array]) -> pa.Array:
    # As _merge_avg: DOUBLE sum over the merged count, NULL when no value was counted.
    total = pc.cast(cols[0], pa.float64())
    count = pc.fill_null(cols[1], _ZERO)
    positive = pc.greater(count, _ZERO)
    ratio = pc.divide(total, pc.cast(count, pa.float64()))
    return pc.if_else(positive, ratio, pa.nulls(len(ratio), pa.float64()))


#: The registry: aggregate kind -> merge step. Register, don't branch.
MERGE_STEPS: dict[str, MergeStep] = {
    "sum": MergeStep(_sum_partials, _merge_sum, ("sum",), _as_is),
    "count": MergeStep(_count_partials, _merge_count, ("sum",), _zero_if_null),
    "count_star": MergeStep(_count_star_partials, _merge_count, ("sum",), _zero_if_null),
    "min": MergeStep(_same(exp.Min), _merge_with(exp.Min), ("min",), _as_is),
    "max": MergeStep(_same(exp.Max), _merge_with(exp.Max), ("max",), _as_is),
    "avg": MergeStep(_avg_partials, _merge_avg, ("sum", "sum"), _ratio),
    "mean": MergeStep(_avg_partials, _merge_avg, ("sum", "sum"), _ratio),
    "bool_and": MergeStep(_same(exp.LogicalAnd), _merge_with(exp.LogicalAnd), ("all",), _as_is),
    "bool_or": MergeStep(_same(exp.LogicalOr), _merge_with(exp.LogicalOr), ("any",), _as_is),
}
# The variance family: (count, mean, M2) moments, combined as DuckDB combines its own states.
for _kind, (_form, _root) in {
    "var_samp": ("samp", False),
    "variance": ("samp", False),
    "var_pop": ("pop", False),
    "stddev": ("samp", True),
    "stddev_samp": ("samp", True),
    "stddev_pop": ("pop", True),
    "sem": ("sem", False),
}.items():
    MERGE_STEPS[_kind] = MergeStep(
        _moment_partials, _merge_variance(_form, _root), None, None, _refold_moments
    )

#: DISTINCT aggregates the split computes exactly: each arm groups its rows by the argument as
#: well, so the partial holds each (keys, value) once per arm, and the final query applies the
#: aggregate to the distinct values of the merged partials. A value both arms saw is one value
#: there. The partial is as large as the number of distinct (keys, value) pairs.
DISTINCT_KINDS = frozenset(
    {
        "count_distinct",
        "sum_distinct",
        "avg_distinct",
        "mean_distinct",
        "min_distinct",
        "max_distinct",
        # DuckDB's own variance of the same distinct values (only their order may differ).
        "var_samp_distinct",
        "variance_distinct",
        "var_pop_distinct",
        "stddev_distinct",
        "stddev_samp_distinct",
        "stddev_pop_distinct",
    }
)


#: Every kind a split through SQL (the final query) merges.
SQL_MERGEABLE = frozenset(MERGE_STEPS) | DISTINCT_KINDS

__all__ = [
    "DISTINCT_KINDS",
    "MERGE_STEPS",
    "NAN_BLIND",
    "SQL_MERGEABLE",
    "MergeStep",
    "aggregate_kind",
]
