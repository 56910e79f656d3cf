"""Aggregates no fixed-size partial determines (``median``, ``quantile_cont``, ...), computed
by the final query over every arm's rows.

A median needs every value of its group at once, so no arm can fold a partial of it
(``merge.AGGREGATE_REFUSALS``). The arms still do the block's row work: each reads its rows,
joins and filters them, and passes the columns the grouped block reads; the final query groups
and aggregates those rows as the block does (decision 032). A median, a quantile and a median
absolute deviation are functions of the multiset of their values (DuckDB sorts them), so the
arms' rows, in any order, give DuckDB's value exactly; so do COUNT, MIN, MAX, the boolean and
bitwise folds, and the DISTINCT counts beside them. A SUM or AVG of an integer or decimal
column is exact in any order too. Over floating-point values a sum's or a mean's last
bits follow the order of additions, which the final query's is not: the final query's call is
marked (:func:`mark_inexact`, once the partial's types are bound) and ``decisions`` refuses the
block where that value decides something (a HAVING, an ORDER BY broken by a later key, a
DISTINCT, a query around the block), not where it is an output. ``mode`` and ``entropy``, whose
ties or sums follow arrival, the variances and correlations (one that cancels moves past the
tolerance with the order of the rows), sketches, and an ORDER BY inside a call keep the block's
refusal.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from dau_scheduler.rewrite import decisions
from dau_scheduler.rewrite.aggregates import aggregate_kind
from dau_scheduler.rewrite.block_parts import Refuse, aggregate_calls
from dau_scheduler.rewrite.blocks import BuiltBlock, build_aggregate, output_index
from dau_scheduler.rewrite.fold import PARTIALS
from dau_scheduler.rewrite.overflow import FLOATS, guarded
from dau_scheduler.rewrite.partial_types import INTEGER
from dau_scheduler.rewrite.row_windows import FinalColumns

#: Aggregates the final query computes over the arms' rows: their value is the same for every
#: order of the same values (module docstring).
HOLISTIC = frozenset({"median", "quantile", "quantile_cont", "quantile_disc", "mad"})
#: Aggregates taken beside a holistic one: the same for any order of the rows (the kinds whose
#: fold is a pick, but ``mode`` and ``histogram``, whose ties or map follow the rows' arrival).
BESIDE = decisions.EXACT_KINDS - {"mode", "histogram"}
#: Taken beside one, their final call marked where its last bits may follow the order of the
#: rows (:func:`mark_inexact`; exact over an integer or decimal argument, which DuckDB adds in a
#: HUGEINT): ``decisions`` refuses the block where such a value decides. (Not
#: the moments: a variance, covariance or correlation that cancels, `corr` of nearly
#: uncorrelated pairs, moves past the tolerance with the order of the rows, where the fold of
#: partials refuses it as ill-conditioned; the probe of the fifty-fifth session found one.)
ADDED = frozenset({"sum", "avg", "mean", "sum_distinct", "avg_distinct", "mean_distinct"})
_DECIMAL = "DECIMAL"
#: ``meta`` key on the final query's call of an :data:`ADDED` kind.
_ADDED_KIND = "dau_final_added"
#: The block's clauses the final query keeps (rewritten over the partial's columns); the rest
#: (FROM, joins, WHERE) run in each arm.
_FINAL_CLAUSES = ("group", "having", "qualify", "windows", "distinct", "limit", "offset")
_ARM_CLAUSES = ("from_", "joins", "where", "laterals")


def build_final_aggregates(block: exp.Select, names: frozenset[str], refused: Refuse) -> BuiltBlock:
    """The partial (the block's rows, filtered, the columns it reads) and final (the block's
    grouping and aggregates over them) of a grouped block with a holistic aggregate; raises
    ``refused`` (the aggregate fold's own refusal) where the block is not one to take. A query
    around the block may read its rows: ``decisions`` follows a marked value out to it."""
    calls = aggregate_calls(block, names)
    kinds = [aggregate_kind(call) for call in calls]
    if not any(kind in HOLISTIC for kind in kinds):
        raise refused
    for call, kind in zip(calls, kinds, strict=True):
        inner = call.this if isinstance(call, exp.Filter) else call
        ordered = any(isinstance(arg, exp.Order) for arg in inner.iter_expressions())
        if ordered or kind not in HOLISTIC | BESIDE | ADDED:
            raise refused
    unknown = [
        key
        for key, value in block.args.items()
        if value is not None
        and value != []
        and key not in ("expressions", "order", "with_", *_FINAL_CLAUSES, *_ARM_CLAUSES)
    ]
    if unknown:
        raise Refuse(
            f"{refused}; the block's {', '.join(unknown)} is not carried to the final query"
        )

    carried = FinalColumns("an expression grouped over every arm's rows")
    outputs = [p.alias_or_name for p in block.expressions]
    final = exp.Select(
        expressions=[
            exp.alias_(carried.final(p.unalias()), name, quoted=True)
            for p, name in zip(block.expressions, outputs, strict=True)
        ]
    ).from_(PARTIALS)
    for key in _FINAL_CLAUSES:
        value = block.args.get(key)
        if value is None:
            continue
        if isinstance(value, list):
            final.set(key, [carried.final(v) for v in value])
        elif key in ("limit", "offset"):
            final.set(key, value.copy())
        else:
            final.set(key, carried.final(value))
    order = block.args.get("order")
    if order is not None:
        items: list[exp.Expr] = []
        for ordered in order.expressions:
            index = output_index(block, ordered.this)
            item = ordered.copy()
            # An output by position or alias: the final query's output at that position (two
            # outputs may share a name).
            item.set(
                "this",
                exp.Literal.number(index + 1) if index is not None else carried.final(ordered.this),
            )
            items.append(item)
        final.set("order", exp.Order(expressions=items))
    if not carried.projections:
        # count(*) alone reads no column: the arms pass one constant per row.
        carried.projections.append(exp.alias_(exp.Literal.number(1), "__dau_w0"))

    # Each sum's or mean's argument goes to the probe as the block reads it, so that DuckDB
    # binds its type (an integer's or decimal's sum is exact: :func:`mark_inexact`).
    originals = {p.alias: p.this for p in carried.projections}
    probed: list[exp.Expr] = []
    for call in aggregate_calls(final, names):
        kind = aggregate_kind(call)
        if kind in ADDED:
            argument = _argument(call)
            call.meta[_ADDED_KIND] = (kind, len(probed) if argument is not None else None)
            if argument is not None:
                probed.append(_over(argument, originals))

    partial = block.copy()
    partial.set("expressions", carried.projections)
    for key in (*_FINAL_CLAUSES, "order"):
        partial.set(key, None)
    return BuiltBlock(partial, final, [], probed, ordered=False)


def _argument(call: exp.Expr) -> exp.Expr | None:
    """A one-argument call's argument (inside its FILTER and DISTINCT), else None."""
    inner = call.this if isinstance(call, exp.Filter) else call
    if isinstance(inner, exp.Anonymous):  # mean(x): sqlglot keeps its arguments in a list
        if len(inner.expressions) != 1:
            return None
        argument = inner.expressions[0]
    elif inner.expressions:
        return None
    else:
        argument = inner.this
    if isinstance(argument, exp.Distinct):
        argument = argument.expressions[0] if len(argument.expressions) == 1 else None
    return argument if isinstance(argument, exp.Expr) else None


def _over(argument: exp.Expr, originals: dict[str, exp.Expr]) -> exp.Expr:
    """``argument``, read over the partial's carried columns, as the block reads it."""

    def original(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in originals:
            return originals[node.name].copy()
        return node

    return argument.transform(original)


def mark_inexact(final: exp.Expr, probed: Sequence[str]) -> None:
    """Mark (``decisions.INEXACT``) each call of the final query that adds up the arms' rows
    and may differ from DuckDB's in its last bits: a sum or mean but of an
    integer or decimal argument (``probed``: the types DuckDB bound for the arguments the
    block's probe carried, :func:`build_final_aggregates`); and guard each floating-point one
    against values near the double's limit (:func:`overflow.guarded`)."""
    marked: list[tuple[exp.Expr, str, str]] = []
    for call in final.walk():
        kind, index = call.meta.pop(_ADDED_KIND, (None, None))
        if kind is not None:
            marked.append((call, kind, probed[index] if index is not None else ""))
    for call, kind, typed in marked:
        if INTEGER.match(typed) or typed.startswith(_DECIMAL):
            continue
        call.meta[decisions.INEXACT] = kind
        call.meta[decisions.OVER_ROWS] = True
        if typed in FLOATS or not typed:
            call.replace(guarded(call))  # (a type bound otherwise, an INTERVAL: no guard)


def build_grouped(
    block: exp.Select, names: frozenset[str], *, nested: bool, floats: frozenset[str] = frozenset()
) -> BuiltBlock:
    """A grouped block's halves: its aggregates folded from the arms' partials
    (``blocks.build_aggregate``; ``floats`` as there), else, for a median, over the arms' rows."""
    try:
        return build_aggregate(block, names, nested=nested, floats=floats)
    except Refuse as refused:
        return build_final_aggregates(block, names, refused)


__all__ = [
    "ADDED",
    "BESIDE",
    "HOLISTIC",
    "build_final_aggregates",
    "build_grouped",
    "mark_inexact",
]
