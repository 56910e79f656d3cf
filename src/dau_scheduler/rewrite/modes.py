"""``mode(x)`` and ``histogram(x)`` split: a group's most frequent value, or each value with
its count, folded from per-value counts.

Each arm groups its rows by the block's keys and ``x`` as well (as a DISTINCT aggregate's
argument is: ``aggregates.DISTINCT_KINDS``) and counts ``x``. A value's count over all rows is
the sum of the arms' counts, so the final query reads the partials folded once more by every
partial key (the block's ``refold_sql``, the fold streamed execution runs), and takes the value
of the largest count (``arg_max``; a NULL ``x`` counts 0, as ``mode`` skips NULLs), or maps
each value counted to its count, keys sorted as DuckDB's histogram sorts them.

Where two values tie for the largest count, DuckDB's answer is its own pick (the value its
threads met first), which no split can promise: the final query raises :data:`MODE_TIE` and the
query is answered unsplit (``merge.fold_error``). Over floats ``-0.0`` and ``0.0`` are one value
whose spelling is the first to arrive, so ``mode`` of a FLOAT or DOUBLE is refused
(``partial_types.numbers_only``); an INTERVAL partial key is refused as every one is.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from dau_scheduler.rewrite.aggregates import MERGE_STEPS, aggregate_kind, distinct_argument
from dau_scheduler.rewrite.fold import PARTIALS, FoldCall
from dau_scheduler.rewrite.merge_step import MergeStep

#: The aggregate kinds (``aggregates.aggregate_kind``) this module folds: both read per-value
#: counts (a histogram's keys sorted, as DuckDB's are).
MODE = "mode"
HISTOGRAM = "histogram"
COUNTED = (MODE, HISTOGRAM)
#: What the final query raises where two values tie for a group's largest count.
MODE_TIE = "dau-scheduler: mode over values tied for the largest count"


def counted_argument(call: exp.Expr) -> exp.Expr | None:
    """The argument of a plain ``mode(x)`` or ``histogram(x)`` (no DISTINCT, FILTER, ORDER BY
    or bins), or None."""
    if isinstance(call, exp.Mode) and not call.expressions:
        argument = call.this
    elif isinstance(call, exp.Anonymous) and call.name.lower() == HISTOGRAM:
        argument = call.expressions[0] if len(call.expressions) == 1 else None
    else:
        return None
    if isinstance(argument, (exp.Distinct, exp.Order)):
        return None
    return argument if isinstance(argument, exp.Expr) else None


def refuse_mixed_counts(calls: Sequence[exp.Expr], extras: Sequence[exp.Expr], sets: bool) -> None:
    """Refuse a block whose ``mode()`` or ``histogram()`` the final query cannot read one row a
    value of: beside
    grouping sets (``sets``: the final groups coarser than the partial) or beside another
    extra partial key (``extras``: a DISTINCT aggregate's or another mode's argument)."""
    from dau_scheduler.rewrite.block_parts import Refuse

    if any(counted_argument(call) is not None for call in calls) and (len(extras) > 1 or sets):
        raise Refuse(
            "mode() or histogram() beside grouping sets, a DISTINCT aggregate or a mode() or "
            "histogram() of another value"
        )


def counted_key_calls(calls: Sequence[exp.Expr], keys: Sequence[exp.Expr]) -> list[FoldCall]:
    """A ``FoldCall`` of kind ``mode`` or ``histogram`` for each partial key such a call of
    ``calls`` reads (``keys``: the partial's keys): its type is checked once bound
    (``partial_types.numbers_only``)."""
    found = {
        (aggregate_kind(call), keys.index(argument))
        for call in calls
        if (argument := counted_argument(call)) is not None
    }
    return [FoldCall(kind, (f"__dau_g{index}",)) for kind, index in sorted(found)]


def key_argument(call: exp.Expr) -> exp.Expr | None:
    """What a call adds to the partial's keys: a DISTINCT aggregate's argument
    (``aggregates.DISTINCT_KINDS``) or a ``mode``'s or ``histogram``'s, else None."""
    return distinct_argument(call) or counted_argument(call)


def merge_step(kind: str, argument: exp.Expr | None, keys: Sequence[exp.Expr]) -> MergeStep:
    """How a call of ``kind`` splits: its registered step, or a ``mode``'s or ``histogram``'s
    over ``argument``, one of the partial's ``keys``."""
    if kind not in COUNTED:
        return MERGE_STEPS[kind]
    assert argument is not None  # (one with FILTER, ORDER BY or bins is refused before)
    return counted_step(keys.index(argument), kind)


def refolded(kind: str) -> str:
    """The kind a call's partial columns fold as into one partial (a mode's count: summed)."""
    return "count" if kind in COUNTED else kind


def counted_step(key: int, kind: str) -> MergeStep:
    """How ``mode(x)`` or ``histogram(x)`` (``kind``) splits, ``key`` the index of the partial
    key holding ``x``: each arm counts ``x`` (its counts refold as a count's, by summing); the
    final query picks the value of the largest count (:func:`mode_merge`) or maps each value to
    its count (:func:`histogram_merge`). No fold in pyarrow: the final query reads refolded
    partials (:func:`read_refolded`)."""

    def partials(call: exp.Expr) -> list[exp.Expr]:
        argument = counted_argument(call)
        assert argument is not None
        return [exp.Count(this=argument.copy())]

    value = exp.column(f"__dau_g{key}")
    merge = mode_merge if kind == MODE else histogram_merge
    return MergeStep(partials, lambda columns: merge(value, columns[0]), None, None)


def mode_merge(value: exp.Column, count: exp.Expr) -> exp.Expr:
    """The final query's ``mode``: the value of the largest summed count, raising on a tie."""
    from dau_scheduler.rewrite.dialect import DIALECT

    x, c = value.sql(dialect=DIALECT), count.sql(dialect=DIALECT)
    text = (
        f"CASE WHEN MAX({c}, 2)[1] = MAX({c}, 2)[2] THEN ERROR('{MODE_TIE}') "
        f"ELSE ARG_MAX({x}, {c}) END"
    )
    built: exp.Expr = exp.maybe_parse(text, dialect=DIALECT)
    return built


def histogram_merge(value: exp.Column, count: exp.Expr) -> exp.Expr:
    """The final query's ``histogram``: each value with its summed count, the keys in order
    (DuckDB's are sorted), NULL where no value was counted (a NULL ``x`` counts 0)."""
    from dau_scheduler.rewrite.dialect import DIALECT

    x, c = value.sql(dialect=DIALECT), count.sql(dialect=DIALECT)
    counted = f"FILTER (WHERE {c} > 0)"
    text = (
        f"CASE WHEN MAX({c}) > 0 THEN MAP(LIST({x} ORDER BY {x}) {counted}, "
        f"LIST({c} ORDER BY {x}) {counted}) END"
    )
    built: exp.Expr = exp.maybe_parse(text, dialect=DIALECT)
    return built


def read_refolded(final: exp.Select, refold_sql: str) -> None:
    """``final`` reading the partials folded by every partial key (one row per value)."""
    from dau_scheduler.rewrite.dialect import DIALECT

    folded: exp.Expr = exp.maybe_parse(refold_sql, dialect=DIALECT)
    source = exp.Subquery(this=folded, alias=exp.TableAlias(this=exp.to_identifier(PARTIALS)))
    final.set("from_", exp.From(this=source))


__all__ = [
    "COUNTED",
    "HISTOGRAM",
    "MODE",
    "MODE_TIE",
    "counted_argument",
    "counted_key_calls",
    "counted_step",
    "histogram_merge",
    "key_argument",
    "merge_step",
    "mode_merge",
    "read_refolded",
    "refolded",
    "refuse_mixed_counts",
]
