"""Aggregate kinds and their merge steps: kind -> (partial aggregates, merge over partial columns).

A kind is DuckDB's lower-case function name (``count(*)`` is ``count_star``; a DISTINCT aggregate
is ``<name>_distinct``). Only kinds registered here are split; everything else is refused by
:func:`dau_scheduler.merge.check_split` with the reason from ``AGGREGATE_REFUSALS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from dau_scheduler.lazy import LazyModule, int64_scalar
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.merge_step import MergeStep
from dau_scheduler.rewrite.merge_step import argument as _argument
from dau_scheduler.rewrite.merge_step import with_filter as _with_filter
from dau_scheduler.rewrite.moments import (
    CO_MOMENT_STEPS,
    NAN_BLIND,
    VARIANCE_STEPS,
    as_unary,
)
from dau_scheduler.rewrite.overflow import GUARDED, bounded, float_kind
from dau_scheduler.rewrite.power_moments import POWER_MOMENT_STEPS

if TYPE_CHECKING:
    import numpy as np
    import pyarrow.compute as pc
else:
    np = LazyModule("numpy")
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
    if inner.args.get("count") is not None:
        # min(x, n), max(x, n), arg_max(x, y, n): a list of the n least or greatest, another
        # aggregate than min or max (the fold read it as min: a cast of a value to a list
        # failed, found by catalog_check).
        name = f"{name}_n"
    return f"{name}_distinct" if distinct else name


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


def _as_is(cols: Sequence[pa.Array]) -> pa.Array:
    return cols[0]


#: Arrow's 0, made once: a Python literal passed to pyarrow.compute is converted on every call
#: (~0.3 ms), and the first conversion imports pandas (``dau_scheduler.lazy``).
_ZERO = int64_scalar(0)


def _zero_if_null(cols: Sequence[pa.Array]) -> pa.Array:
    # COUNT is 0, never NULL, even when no partial row exists at all.
    return pc.fill_null(cols[0], _ZERO)


def _merge_pair_count(cols: Sequence[exp.Expr]) -> exp.Expr:
    return exp.Cast(this=_merge_count(cols), to=exp.DataType.build("UINTEGER", dialect=DIALECT))


def _pair_count(cols: Sequence[pa.Array]) -> pa.Array:
    return pc.cast(_zero_if_null(cols), pa.uint32())


def exact_doubles(values: pa.Array) -> pa.Array:
    """Integers or decimals as doubles, each correctly rounded, as DuckDB's CAST gives them.
    pyarrow's own cast of a decimal is not (2,416 of 200,000 random DECIMAL(38, 2) values a
    unit in the last place off), so without this the fast fold's AVG of decimals had other
    last bits than the same fold in DuckDB's final query."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_integer(values.type):
        bounds = pc.min_max(values)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if low is None or (low >= -(2**53) and high <= 2**53):  # all exact (or all NULL)
            return pc.cast(values, pa.float64())
    elif not pa.types.is_decimal(values.type):
        raise TypeError(f"exact_doubles takes integers or decimals, not {values.type}")
    elif pa.types.is_decimal128(values.type) and values.type.scale <= 22:
        return _decimal128_doubles(values)
    return pa.array([None if v is None else float(v) for v in values.to_pylist()], pa.float64())


def _decimal128_doubles(values: pa.Array) -> pa.Array:
    # Below 2^53 the unscaled value is an exact double, and so is 10^scale up to 10^22: one
    # IEEE division of the two is the correctly rounded quotient. Larger values go through
    # Python's Decimal, whose float() is correctly rounded too. Buffers in and out: pyarrow's
    # conversions from and to numpy arrays import pandas (tests/test_strategies.py).
    words = np.frombuffer(values.buffers()[1], dtype="<i8")
    words = words[2 * values.offset : 2 * (values.offset + len(values))].reshape(-1, 2)
    low, high = words[:, 0], words[:, 1]
    small = (high == (low >> 63)) & (low <= 2**53) & (low >= -(2**53))
    doubles = low.astype(np.float64) / 10.0**values.type.scale
    for index in np.flatnonzero(~small):
        value = values[int(index)].as_py()  # None in a null's slot, whatever its bytes
        doubles[index] = 0.0 if value is None else float(Decimal(value))
    out = pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(doubles)])
    if values.null_count == 0:
        return out
    return pc.if_else(pc.is_valid(values), out, pa.nulls(len(values), pa.float64()))


def _ratio(cols: Sequence[pa.Array]) -> pa.Array:
    # As _merge_avg: DOUBLE sum over the merged count, NULL when no value was counted; an exact
    # sum converted as DuckDB's CAST converts it, so both folds give the same last bits.
    total = cols[0]
    if pa.types.is_integer(total.type) or pa.types.is_decimal(total.type):
        total = exact_doubles(total)
    else:
        total = pc.cast(total, pa.float64())
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


def _bitwise(cls: type[exp.Func]) -> MergeStep:
    """A bitwise fold (``bit_and``, ``bit_or``, ``bit_xor``): associative and commutative, so
    the fold of the arms' folds is the fold of every value; NULL partials (an empty or all-NULL
    arm) are skipped as NULL values are. pyarrow has no such hash aggregate: the final query
    folds, and streamed partials refold with the same call."""
    merge = _merge_with(cls)
    return MergeStep(_same(cls), merge, None, None, refold=lambda cols: [merge(cols)])


MERGE_STEPS.update(
    bit_and=_bitwise(exp.BitwiseAndAgg),
    bit_or=_bitwise(exp.BitwiseOrAgg),
    bit_xor=_bitwise(exp.BitwiseXorAgg),
)
MERGE_STEPS.update(VARIANCE_STEPS)
MERGE_STEPS.update(CO_MOMENT_STEPS)
MERGE_STEPS.update(POWER_MOMENT_STEPS)


def _on_pairs(
    partials: Callable[[exp.Expr], list[exp.Expr]], role: str, cls: type[exp.Func]
) -> Callable[[exp.Expr], list[exp.Expr]]:
    """A one-argument step's partials over one role of ``f(y, x)``'s pairs (``as_unary``)."""
    return lambda call: partials(as_unary(call, role, cls))


# The regression aggregates over the pairs alone: a count (DuckDB's is UINTEGER) and two means.
MERGE_STEPS["regr_count"] = MergeStep(
    _on_pairs(_count_partials, "x", exp.Count), _merge_pair_count, ("sum",), _pair_count
)
MERGE_STEPS["regr_avgx"] = MergeStep(
    _on_pairs(_avg_partials, "x", exp.Avg), _merge_avg, ("sum", "sum"), _ratio
)
MERGE_STEPS["regr_avgy"] = MergeStep(
    _on_pairs(_avg_partials, "y", exp.Avg), _merge_avg, ("sum", "sum"), _ratio
)
# The same over a float argument, with the partial that finds a sum near overflow (overflow.py).
MERGE_STEPS.update({float_kind(kind): bounded(MERGE_STEPS[kind]) for kind in GUARDED})

#: Aggregates whose value the order of their input cannot change: an ORDER BY inside them is
#: harmless. Any other ordered aggregate (``sum(x ORDER BY y)`` over doubles, ``string_agg``,
#: ``list``) is refused: each arm would order only its own rows.
ORDER_INSENSITIVE = frozenset(
    {"min", "max", "count", "count_star", "bool_and", "bool_or", "bit_and", "bit_or", "bit_xor"}
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
        "sem_distinct",
    }
)


#: Every kind a split through SQL (the final query) merges (``mode``, ``histogram``:
#: rewrite/modes.py).
SQL_MERGEABLE = frozenset(MERGE_STEPS) | DISTINCT_KINDS | {"mode", "histogram"}


def distinct_node(call: exp.Expr) -> exp.Distinct | None:
    """The DISTINCT node of an aggregate call (an argument of one sqlglot does not know:
    ``sem(DISTINCT x)``), or None."""
    if isinstance(call, exp.Anonymous):
        inner = call.expressions[0] if call.expressions else None
    else:
        inner = call.this if isinstance(call, exp.Func) else None
    return inner if isinstance(inner, exp.Distinct) else None


def distinct_argument(call: exp.Expr) -> exp.Expr | None:
    """The one argument of a DISTINCT aggregate of ``DISTINCT_KINDS`` without FILTER, or None."""
    if isinstance(call, exp.Filter) or aggregate_kind(call) not in DISTINCT_KINDS:
        return None
    distinct = distinct_node(call)
    if distinct is None or len(distinct.expressions) != 1:
        return None
    argument: exp.Expr = distinct.expressions[0]
    return argument


__all__ = [
    "DISTINCT_KINDS",
    "MERGE_STEPS",
    "NAN_BLIND",
    "ORDER_INSENSITIVE",
    "SQL_MERGEABLE",
    "MergeStep",
    "aggregate_kind",
    "distinct_argument",
    "distinct_node",
    "exact_doubles",
]
