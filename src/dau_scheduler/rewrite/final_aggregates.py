"""Aggregates no fixed-size partial determines (``median``, ``quantile_cont``, ...), computed
by the final query over every arm's rows.

A median needs every value of its group at once, so no arm can fold a partial of it
(``merge.AGGREGATE_REFUSALS``). The arms still do the block's row work: each reads its rows,
joins and filters them, and passes the columns the grouped block reads; the final query groups
and aggregates those rows as the block does (decision 032). A median, a quantile and a median
absolute deviation are functions of the multiset of their values (DuckDB sorts them), so the
arms' rows, in any order, give DuckDB's value exactly; so do COUNT, MIN and MAX, and the
DISTINCT counts beside them. Any other aggregate in the block (a floating-point SUM or AVG,
whose last bits follow the order of additions, ``mode`` and ``entropy``, whose ties or sums
follow arrival) keeps the block's refusal, as does an ORDER BY inside a call.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.aggregates import aggregate_kind
from dau_scheduler.rewrite.blocks import (
    BuiltBlock,
    Refuse,
    aggregate_calls,
    build_aggregate,
    output_index,
)
from dau_scheduler.rewrite.fold import PARTIALS
from dau_scheduler.rewrite.row_windows import FinalColumns

#: Aggregates the final query computes over the arms' rows: their value is the same for every
#: order of the same values (module docstring).
HOLISTIC = frozenset({"median", "quantile", "quantile_cont", "quantile_disc", "mad"})
#: Aggregates taken beside a holistic one (the same for any order of the rows).
BESIDE = frozenset({"count", "count_star", "min", "max", "count_distinct"})
#: Taken beside one only as outputs of a query's outermost block: over floating-point values
#: their last bits follow the order of additions, which the final query's is not (an output
#: within the comparison's tolerance, as any split sum; never a filter, an order or a pick).
OUTPUT_ONLY = frozenset({"sum", "avg", "mean"})
#: The block's clauses the final query keeps (rewritten over the partial's columns); the rest
#: (FROM, joins, WHERE) run in each arm.
_FINAL_CLAUSES = ("group", "having", "qualify", "windows", "distinct", "limit", "offset")
_ARM_CLAUSES = ("from_", "joins", "where", "laterals")


def _output_only(call: exp.Expr, block: exp.Select) -> bool:
    """Whether ``call`` is inside one of ``block``'s outputs, outside any window, and no
    ORDER BY of the block names that output."""
    node: exp.Expr | None = call
    while node is not None and node.parent is not block:
        if isinstance(node.parent, exp.Window):
            return False
        node = node.parent
    if node is None or node.arg_key != "expressions":
        return False
    order = block.args.get("order")
    named = [output_index(block, o.this) for o in order.expressions] if order is not None else []
    return block.expressions.index(node) not in named


def build_final_aggregates(
    block: exp.Select, names: frozenset[str], refused: Refuse, *, nested: bool
) -> BuiltBlock:
    """The partial (the block's rows, filtered, the columns it reads) and final (the block's
    grouping and aggregates over them) of a grouped block with a holistic aggregate; raises
    ``refused`` (the aggregate fold's own refusal) where the block is not one to take.
    ``nested``: a query around the block reads its rows."""
    calls = aggregate_calls(block, names)
    kinds = [aggregate_kind(call) for call in calls]
    if not any(kind in HOLISTIC for kind in kinds):
        raise refused
    for call, kind in zip(calls, kinds, strict=True):
        inner = call.this if isinstance(call, exp.Filter) else call
        ordered = any(isinstance(arg, exp.Order) for arg in inner.iter_expressions())
        taken = kind in HOLISTIC | BESIDE or (
            kind in OUTPUT_ONLY
            and not nested
            and block.args.get("distinct") is None
            and _output_only(call, block)
        )
        if ordered or not taken:
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

    partial = block.copy()
    partial.set("expressions", carried.projections)
    for key in (*_FINAL_CLAUSES, "order"):
        partial.set(key, None)
    return BuiltBlock(partial, final, [], [], ordered=False)


def build_grouped(block: exp.Select, names: frozenset[str], *, nested: bool) -> BuiltBlock:
    """A grouped block's halves: its aggregates folded from the arms' partials
    (``blocks.build_aggregate``), else, for a median, over the arms' rows."""
    try:
        return build_aggregate(block, names, nested=nested)
    except Refuse as refused:
        return build_final_aggregates(block, names, refused, nested=nested)


__all__ = ["BESIDE", "HOLISTIC", "build_final_aggregates", "build_grouped"]
