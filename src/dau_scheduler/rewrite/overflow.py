"""Floating-point sums near the double's limit: where the order of the additions decides the answer.

Below overflow a float sum's order moves only its last bits (``compare.FLOAT_REL``). Near it the
order decides more: DuckDB adds 1e308, 0.1, -inf, 1e308 to -inf, while an arm holding the two
1e308s alone overflows to +inf and the fold adds -inf to it: NaN (``probes/aggregates.py`` seed
5502). No order of additions overflows while the finite values' magnitudes added stay below
1.8e308, and a NaN or an infinity among the values then gives the same answer in every order
(NaN, or the one sign of infinity, or NaN for both signs). So a group whose finite magnitudes
may add to :data:`NEAR` (1e150: far below the limit, far above any sum a test or a warehouse
holds) is answered unsplit.

Two places add floats in another order than DuckDB's own plan:

- the fold of partial sums (SUM, AVG and the regression means over DOUBLE or FLOAT): each arm
  sends one more partial, the greatest magnitude of its finite values (:func:`bounded`), and the
  fold raises :data:`NEAR_OVERFLOW` where the arms' add up to :data:`NEAR_MAGNITUDE` (a table
  holds fewer than 2**63 rows, so below it their magnitudes add to less than ``NEAR``). A
  greatest value, not a sum of magnitudes: Polars' SUM over a CASE cost 1.95x the partial of
  four float sums where MAX cost 1.38x (TPC-H SF 1 lineitem, one thread);
- a final query that adds the values itself (a DISTINCT sum over the partial's distinct values, a
  sum beside a median over the arms' rows): the call is wrapped (:func:`guarded`) to raise where
  its finite values' greatest magnitude times the group's rows reaches ``NEAR``.

Which calls add floats is known once DuckDB binds the partial: a sum's partial column is DOUBLE
for a DOUBLE or FLOAT argument, and an integer or decimal one is exact in every order. The planner
builds the block again with those calls' steps (:func:`float_calls`), but for a value the types
of the columns it reads bound below ``NEAR_MAGNITUDE`` (:func:`magnitude_bound`: a decimal made a
DOUBLE), or DuckDB's statistics of it do, as the data stand (:func:`stats_probe`: a DOUBLE
column's min and max; the plan holds while they say the same, ``compiling.plan_holds``); every
other query keeps one partial per sum. The guard costs a grouped MAX per sum: 2x on the Polars
arm over quotients no statistics bound, nothing where they bound them (docs/benchmarks.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import sqlglot
from sqlglot import exp

from dau_scheduler.errors import FoldError
from dau_scheduler.lazy import LazyModule
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.merge_step import MergeStep
from dau_scheduler.rewrite.moments import NAN_BLIND

if TYPE_CHECKING:
    import pyarrow.compute as pc
else:
    pc = LazyModule("pyarrow.compute")

#: What a final query raises where a float sum's values come near the double's limit
#: (``merge.fold_error`` answers the query unsplit).
NEAR_OVERFLOW = "dau-scheduler: a floating-point sum near overflow"
#: The finite magnitudes' total at which some order of the additions may overflow (module
#: docstring).
NEAR = 1e150
#: The greatest finite magnitude at which the fold of partial sums answers unsplit: 2**63 rows
#: of values below it add to less than :data:`NEAR` (1e131 * 2**63 = 9.2e149).
NEAR_MAGNITUDE = 1e131
#: Kinds whose fold adds the arms' float partial sums.
GUARDED = frozenset({"sum", "avg", "mean", "regr_avgx", "regr_avgy"})
#: DISTINCT kinds whose final query adds the distinct values itself.
GUARDED_DISTINCT = frozenset({"sum_distinct", "avg_distinct", "mean_distinct"})
FLOATS = frozenset({"DOUBLE", "FLOAT", "REAL"})
#: ``meta`` key on the MAX of a float sum's magnitude partial. DuckDB may fold its ``isfinite``
#: by a Parquet file's statistics, which skip NaN, and take a NaN in: the MAX is NaN then, and
#: so is the sum in every order, so no refusal of extrema over such files needs to read it
#: (``refusals.parquet_float_extremum``).
MAGNITUDE = "dau_float_magnitude"
_SUFFIX = "@float"


def float_kind(kind: str) -> str:
    """The merge-step kind of ``kind`` (one of :data:`GUARDED`) over a float argument."""
    return f"{kind}{_SUFFIX}"


@dataclass(frozen=True)
class Sum:
    """A call of a block that adds values: its SQL, the partial column whose bound type says
    whether it adds floats (its partial sum, or a DISTINCT call's key), and the value each arm
    adds (None for a DISTINCT call, which the final query adds)."""

    text: str
    column: str
    value: exp.Expr | None


def summed(first: exp.Expr) -> exp.Expr:
    """The value a step's first partial, ``sum(x)`` (under its FILTER), adds: ``x``."""
    total = first.this if isinstance(first, exp.Filter) else first
    assert isinstance(total, exp.Sum), first.sql(dialect=DIALECT)
    value: exp.Expr = total.this
    return value


def read_columns(sums: Sequence[Sum], types: Mapping[str, str]) -> list[exp.Column]:
    """The columns the values of the float ones of ``sums`` read (``types``: the bound
    partial's), each once: what :func:`float_calls` needs typed."""
    found: dict[str, exp.Column] = {}
    for call in sums:
        if call.value is not None and types.get(call.column, "") in FLOATS:
            for column in call.value.find_all(exp.Column):
                found.setdefault(column.sql(dialect=DIALECT), column)
    return list(found.values())


def float_calls(
    sums: Sequence[Sum], types: Mapping[str, str], typed: Mapping[str, str]
) -> frozenset[str]:
    """Which of a block's summing calls add floats that may come near the limit: their partial
    column bound as a float (``types``), and their value not bounded below
    :data:`NEAR_MAGNITUDE` by the types of the columns it reads (``typed``: column SQL -> DuckDB
    type). ``sum(l_quantity::DOUBLE)`` over a DECIMAL(15, 2) is below 1e13 on every row, and
    carries nothing more; a DOUBLE column's values are bounded by nothing."""
    return frozenset(
        call.text
        for call in sums
        if types.get(call.column, "") in FLOATS
        and (call.value is None or magnitude_bound(call.value, typed) >= NEAR_MAGNITUDE)
    )


#: The greatest magnitude of each numeric type's values (a FLOAT's finite ones).
_TYPE_BOUNDS = {
    "BOOLEAN": 1.0,
    "TINYINT": 2.0**7,
    "UTINYINT": 2.0**8,
    "SMALLINT": 2.0**15,
    "USMALLINT": 2.0**16,
    "INTEGER": 2.0**31,
    "UINTEGER": 2.0**32,
    "BIGINT": 2.0**63,
    "UBIGINT": 2.0**64,
    "HUGEINT": 2.0**127,
    "UHUGEINT": 2.0**128,
    "FLOAT": 3.5e38,
    "REAL": 3.5e38,
}
_DECIMAL = re.compile(r"^DECIMAL\((\d+),\s*(\d+)\)$")


def _type_bound(type_name: str) -> float:
    if (decimal := _DECIMAL.match(type_name)) is not None:
        return 10.0 ** (int(decimal.group(1)) - int(decimal.group(2)))
    return _TYPE_BOUNDS.get(type_name, math.inf)


def magnitude_bound(value: exp.Expr, typed: Mapping[str, str]) -> float:
    """An upper bound on ``value``'s magnitude on any row, from the types of the columns it
    reads (``typed``), through casts, signs, ``abs``, sums, differences, products, a division
    by a number of magnitude 1 or more, and the values a CASE, IF or COALESCE may take;
    infinity for anything else (a DOUBLE column, a function, a subquery)."""
    node = value.unnest()
    if isinstance(node, exp.Column):
        return _type_bound(typed.get(node.sql(dialect=DIALECT), ""))
    if isinstance(node, exp.Null):
        return 0.0
    if isinstance(node, exp.Literal):
        try:
            return math.inf if node.is_string else abs(float(node.this))
        except ValueError:
            return math.inf
    if isinstance(node, (exp.Cast, exp.Neg, exp.Abs)):
        return magnitude_bound(node.this, typed)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        left, right = (magnitude_bound(side, typed) for side in (node.this, node.expression))
        return left * right if isinstance(node, exp.Mul) else left + right
    if isinstance(node, exp.Div):
        divisor = node.expression.unnest()
        number = isinstance(divisor, exp.Literal) and not divisor.is_string
        if number and abs(float(divisor.this)) >= 1:
            return magnitude_bound(node.this, typed)
        return math.inf
    if isinstance(node, exp.Case):
        values = [branch.args.get("true") for branch in node.args.get("ifs") or []]
        values.append(node.args.get("default"))
    elif isinstance(node, exp.If):
        values = [node.args.get("true"), node.args.get("false")]
    elif isinstance(node, exp.Coalesce):
        values = [node.this, *node.expressions]
    else:
        return math.inf
    return max((magnitude_bound(v, typed) for v in values if v is not None), default=0.0)


def _magnitudes(first: exp.Expr) -> exp.Expr:
    """A step's first partial ``sum(x)`` (under its FILTER) as the greatest magnitude of ``x``'s
    finite values."""
    greatest = first.copy()
    value = summed(greatest)
    finite = exp.Anonymous(this="isfinite", expressions=[value.copy()])
    bound = exp.Max(this=exp.Case(ifs=[exp.If(this=finite, true=exp.Abs(this=value.copy()))]))
    bound.meta[NAN_BLIND] = True  # (it sees no NaN: an arm may skip NaN in MAX, or rank it)
    bound.meta[MAGNITUDE] = True
    if isinstance(greatest, exp.Filter):
        greatest.set("this", bound)
        return greatest
    return bound


def _raise_near(bound: exp.Expr, value: exp.Expr, near_at: float = NEAR) -> exp.Expr:
    near = exp.GTE(this=bound, expression=exp.Literal.number(f"{near_at:.0e}"))
    error = exp.Anonymous(this="error", expressions=[exp.Literal.string(NEAR_OVERFLOW)])
    return exp.Case(ifs=[exp.If(this=near, true=error)], default=value)


def bounded(step: MergeStep) -> MergeStep:
    """``step`` (a sum's or a mean's, its first partial the sum) with one more partial, the
    greatest finite magnitude, whose fold raises where the arms' reach :data:`NEAR_MAGNITUDE`.
    The arms' greatest magnitudes are added, not compared, when folded (a bound still; the fast
    fold and the refold then sum the column, and pyarrow's MIN and MAX of floats are not
    DuckDB's)."""
    assert step.arrow is not None and step.finish is not None
    finish = step.finish

    def partials(call: exp.Expr) -> list[exp.Expr]:
        own = step.partials(call)
        return [*own, _magnitudes(own[0])]

    def merge(cols: Sequence[exp.Expr]) -> exp.Expr:
        bound = exp.Sum(this=cols[-1].copy())
        return _raise_near(bound, step.merge(cols[:-1]), NEAR_MAGNITUDE)

    def finished(cols: Sequence[pa.Array]) -> pa.Array:
        greatest = pc.max(cols[-1]).as_py()
        if greatest is not None and greatest >= NEAR_MAGNITUDE:
            raise FoldError(NEAR_MESSAGE)
        return finish(cols[:-1])

    return MergeStep(partials, merge, (*step.arrow, "sum"), finished)


#: What a source may not hold for :func:`stats_probe` to read its first row at no cost (a join
#: builds its hash table first; a filter may scan every row before one passes; a grouped or
#: ordered derived table computes all of itself).
_COSTLY = (
    exp.Join,
    exp.Where,
    exp.Group,
    exp.Having,
    exp.Qualify,
    exp.Order,
    exp.Limit,
    exp.Offset,
    exp.Distinct,
    exp.AggFunc,
    exp.Window,
    exp.SetOperation,
    exp.Lateral,
    exp.Unnest,
    exp.TableSample,
    exp.With,
)


def stats_probe(partial: exp.Select, split: exp.Table, values: Sequence[exp.Expr]) -> str | None:
    """A query of DuckDB's statistics of ``values`` (float sums' values in the scope of
    ``partial``, whose split table occurrence is ``split``) over the block's source, the
    block's filter left out (a bound of more rows bounds the rows it keeps):
    ``SELECT system.main.stats(v0), ... FROM source LIMIT 1``. DuckDB works them out from its
    tables' and Parquet files' min and max, through casts and arithmetic, before it reads a
    row; where a value's bound is known and below :data:`NEAR_MAGNITUDE` its sum needs no
    magnitude partial (``compiling.magnitudes_below``). None where reading the source's first
    row may cost more than a scan's first vector (a join, a filter, a grouped derived table:
    :data:`_COSTLY`), or a value reads a subquery or an aggregate."""
    source = partial.args.get("from_")
    if source is None or partial.args.get("joins") or partial.args.get("laterals"):
        return None
    if any(isinstance(node, _COSTLY) for node in source.walk()):
        return None
    tables = list(source.find_all(exp.Table))
    if len(tables) != 1 or tables[0] is not split:
        return None
    inner = (exp.Select, exp.Subquery, exp.AggFunc, exp.Window)
    if any(value.find(*inner) is not None for value in values):
        return None
    # (DuckDB's own stats(), by its catalog's name: a user's macro may be named stats)
    reads = ", ".join(
        f"system.main.stats({value.sql(dialect=DIALECT)}) AS __dau_m{i}"
        for i, value in enumerate(values)
    )
    return f"SELECT {reads} {source.sql(dialect=DIALECT)} LIMIT 1"


def stats_bound(stats: object) -> float:
    """The greatest magnitude DuckDB's ``stats()`` of a value allows (its min and max: a
    dict since DuckDB 2, a text ``[Min: x, Max: y]`` before); infinity where they are
    unknown, not numbers, or not finite (an infinity among the values; a NaN, which DuckDB
    ranks above every number)."""
    low: object
    high: object
    if isinstance(stats, dict):
        low, high = stats.get("min"), stats.get("max")
    elif isinstance(stats, str):
        found = re.search(r"\[Min: ([^,\]]+), Max: ([^\]]+)\]", stats)
        low, high = found.groups() if found else (None, None)
    else:
        return math.inf
    try:
        ends = [float(str(end)) for end in (low, high)]
    except ValueError:
        return math.inf
    if not all(math.isfinite(end) for end in ends):
        return math.inf
    return max(abs(end) for end in ends)


#: The refusal a near-overflow sum answers with (the final query's :data:`NEAR_OVERFLOW`, or
#: the fast fold's own check).
NEAR_MESSAGE = (
    "a floating-point SUM or AVG over values near the double's limit: whether it overflows "
    "follows the order of the additions, and the fold's is not DuckDB's"
)


def guarded(call: exp.Expr) -> exp.Expr:
    """``call`` (a floating-point SUM or AVG the final query computes over values it holds)
    raising :data:`NEAR_OVERFLOW` where its finite values' greatest magnitude times the group's
    rows reaches :data:`NEAR`."""
    inner = call.this if isinstance(call, exp.Filter) else call
    condition = call.expression.this if isinstance(call, exp.Filter) else None
    arguments: list[exp.Expr] = []
    for argument in inner.iter_expressions():
        if isinstance(argument, exp.Distinct):
            arguments.extend(argument.expressions)
        elif not isinstance(argument, exp.Order):
            arguments.append(argument)
    magnitudes = []
    for argument in arguments:
        value = f"CAST(({argument.sql(dialect=DIALECT)}) AS DOUBLE)"
        where = f"isfinite({value})"
        if condition is not None:
            where += f" AND ({condition.sql(dialect=DIALECT)})"
        magnitudes.append(f"max(abs({value})) FILTER (WHERE {where})")
    greatest = magnitudes[0] if len(magnitudes) == 1 else f"greatest({', '.join(magnitudes)})"
    bound = sqlglot.parse_one(f"{greatest} * count(*)", dialect=DIALECT)
    guarded_call = call.copy()
    guarded_call.meta.update(call.meta)
    return _raise_near(bound, guarded_call)


__all__ = [
    "FLOATS",
    "GUARDED",
    "GUARDED_DISTINCT",
    "MAGNITUDE",
    "NEAR",
    "NEAR_MAGNITUDE",
    "NEAR_MESSAGE",
    "NEAR_OVERFLOW",
    "Sum",
    "bounded",
    "float_calls",
    "float_kind",
    "guarded",
    "magnitude_bound",
    "read_columns",
    "stats_bound",
    "stats_probe",
    "summed",
]
