"""The partial and final halves of a block without aggregation: each arm's rows, concatenated
(a LIMIT becomes a top-k per arm, an ORDER BY is done again over the arms' rows)."""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.blocks import (
    BuiltBlock,
    Refuse,
    literal_int,
    order_by_all,
    orders_by_all,
    output_index,
    refuse_correlated_references,
)
from dau_scheduler.rewrite.fold import PARTIALS, FastRows


def build_rows(block: exp.Select, names: frozenset[str]) -> BuiltBlock:
    """A block without aggregation: each arm's rows, concatenated in arm order (top-k per arm)."""
    refuse_correlated_references(block, rows=names)
    projections = [
        exp.alias_(p.unalias().copy(), f"__dau_c{i}") for i, p in enumerate(block.expressions)
    ]
    outputs = [p.alias_or_name for p in block.expressions]
    limit, offset = block.args.get("limit"), block.args.get("offset")
    order = block.args.get("order")
    final_order: list[exp.Ordered] = []
    hidden = 0
    if order is not None:
        if orders_by_all(order) and any(p.find(exp.Star) for p in block.expressions):
            raise Refuse("ORDER BY ALL over a star (its outputs are not known here)")
        for ordered in order_by_all(order, len(block.expressions)):
            target = ordered.this
            index = output_index(block, target)
            if index is None:
                name = f"__dau_o{hidden}"
                hidden += 1
                projections.append(exp.alias_(target.copy(), name))
            else:
                name = f"__dau_c{index}"
            final_ordered = ordered.copy()
            final_ordered.set("this", exp.column(name))
            final_order.append(final_ordered)

    partial = block.copy()
    partial.set("expressions", projections)
    partial.set("offset", None)
    if limit is not None:
        total = literal_int(limit, "LIMIT") + literal_int(offset, "OFFSET")
        partial.set("limit", exp.Limit(expression=exp.Literal.number(total)))
        if final_order:
            # Per-arm top-k: order by the partial's own output columns, as the final does.
            partial.set("order", exp.Order(expressions=[o.copy() for o in final_order]))
    else:
        partial.set("order", None)

    replacement = exp.Select(
        expressions=[
            exp.alias_(exp.column(f"__dau_c{i}"), name, quoted=True)
            for i, name in enumerate(outputs)
        ]
    ).from_(PARTIALS)
    if block.args.get("distinct") is not None:
        replacement.set("distinct", block.args["distinct"].copy())
    if final_order:
        replacement.set("order", exp.Order(expressions=final_order))
    for key in ("limit", "offset"):
        if block.args.get(key) is not None:
            replacement.set(key, block.args[key].copy())
    fast = None
    if block.args.get("distinct") is None and not any(
        o.args.get("nulls_first") for o in final_order
    ):
        try:
            fast = FastRows(
                tuple(f"__dau_c{i}" for i in range(len(outputs))),
                tuple((o.this.name, bool(o.args.get("desc"))) for o in final_order),
                literal_int(limit, "LIMIT") if limit is not None else None,
                literal_int(offset, "OFFSET"),
            )
        except Refuse:
            fast = None
    return BuiltBlock(partial, replacement, [], [], ordered=order is None, fast=fast)
