"""The partial and final halves of a block without aggregation: each arm's rows, concatenated
(a LIMIT becomes a top-k per arm, an ORDER BY is done again over the arms' rows).

A DISTINCT ON keeps, per key, the first row by the ORDER BY; the arms pass their rows (with
the keys and ORDER BY values) and the final query keeps that row over all of them. Where rows
of a key tie on every ORDER BY value and differ in an output, DuckDB's pick among them is its
own (its threads decide), so no split can promise DuckDB's row: the final query raises
:data:`TIED_PICK` there and the query is answered unsplit (``merge.fold_error``).
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.block_parts import Refuse, distinct_on_keys, literal_int
from dau_scheduler.rewrite.blocks import BuiltBlock, output_index, refuse_correlated_references
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.fold import PARTIALS, FastRows
from dau_scheduler.rewrite.order_all import order_by_all, orders_by_all
from dau_scheduler.rewrite.row_windows import FinalColumns, windowed

#: What the final query of a DISTINCT ON raises where rows tie on its keys and ORDER BY values
#: but differ in an output (module docstring).
TIED_PICK = "dau-scheduler: DISTINCT ON rows tied on every ORDER BY value"


def build_rows(block: exp.Select, names: frozenset[str]) -> BuiltBlock:
    """A block without aggregation: each arm's rows, concatenated in arm order (top-k per arm)."""
    refuse_correlated_references(block, rows=names)
    # Windowed outputs, QUALIFY and ORDER BY items run in the final query (row_windows).
    windows = windowed(block) or block.args.get("qualify") is not None
    carried = FinalColumns()
    finals = {i: carried.final(p.unalias()) for i, p in enumerate(block.expressions) if windowed(p)}
    projections = [
        exp.alias_(p.unalias().copy(), f"__dau_c{i}")
        for i, p in enumerate(block.expressions)
        if i not in finals
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
            final_ordered = ordered.copy()
            if index in finals:
                final_ordered.set("this", finals[index].copy())
            elif index is None and windowed(target):
                final_ordered.set("this", carried.final(target))
            elif index is None:
                final_ordered.set("this", exp.column(f"__dau_o{hidden}"))
                projections.append(exp.alias_(target.copy(), f"__dau_o{hidden}"))
                hidden += 1
            else:
                final_ordered.set("this", exp.column(f"__dau_c{index}"))
            final_order.append(final_ordered)

    on = _distinct_on(block)
    if on and windows:
        raise Refuse("DISTINCT ON beside a window function over the split rows")
    qualify = block.args.get("qualify")
    final_qualify = carried.final(qualify.this) if qualify is not None else None
    projections += carried.projections
    keys: list[exp.Expr] = []
    for j, on_key in enumerate(on):
        index = output_index(block, on_key)
        if index is None:
            projections.append(exp.alias_(on_key.copy(), f"__dau_k{j}"))
        keys.append(exp.column(f"__dau_k{j}" if index is None else f"__dau_c{index}"))

    partial = block.copy()
    partial.set("expressions", projections)
    partial.set("offset", None)
    if on or windows:
        # Every arm's rows: a key's first row by the ORDER BY, a window's rows, may be any arm's.
        for key in ("distinct", "limit", "order", "qualify"):
            partial.set(key, None)
    elif limit is not None:
        total = literal_int(limit, "LIMIT") + literal_int(offset, "OFFSET")
        partial.set("limit", exp.Limit(expression=exp.Literal.number(total)))
        if final_order:
            # Per-arm top-k: order by the partial's own output columns, as the final does.
            partial.set("order", exp.Order(expressions=[o.copy() for o in final_order]))
    else:
        partial.set("order", None)

    replacement = exp.Select(
        expressions=[
            exp.alias_(finals.get(i, exp.column(f"__dau_c{i}")), name, quoted=True)
            for i, name in enumerate(outputs)
        ]
    ).from_(PARTIALS)
    if final_qualify is not None:
        replacement.set("qualify", exp.Qualify(this=final_qualify))
    if on:
        replacement.set("distinct", exp.Distinct(on=exp.Tuple(expressions=keys)))
        replacement.set("qualify", exp.Qualify(this=_tie_guard(keys, final_order, len(outputs))))
    elif block.args.get("distinct") is not None:
        replacement.set("distinct", block.args["distinct"].copy())
    if final_order:
        replacement.set("order", exp.Order(expressions=final_order))
    for key in ("limit", "offset"):
        if block.args.get(key) is not None:
            replacement.set(key, block.args[key].copy())
    fast = None
    if (
        not windows
        and block.args.get("distinct") is None
        and not any(o.args.get("nulls_first") for o in final_order)
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


def _distinct_on(block: exp.Select) -> list[exp.Expr]:
    """A DISTINCT ON's keys (none for another block), refused where one is a constant or star."""
    keys = distinct_on_keys(block)
    for key in keys:
        if isinstance(key, exp.Literal) or key.find(exp.Star):
            raise Refuse(f"DISTINCT ON ({key.sql(dialect=DIALECT)}): a constant or star key")
    return keys


def _tie_guard(keys: list[exp.Expr], order: list[exp.Ordered], outputs: int) -> exp.Expr:
    """True for every row, or :data:`TIED_PICK` raised where a key's first rows by ``order``
    (rank 1 in its partition) differ in an output: such a row ranks past 1 when the outputs
    break the ORDER BY's ties (``dense_rank``). Two sorts of the partials: 1.4x the DISTINCT ON
    alone over TPC-H SF 1's 779K rows (a MIN and MAX of the outputs as a struct over each tie's
    partition were 10x)."""

    def ranked(function: str, ordered: list[exp.Ordered]) -> exp.Window:
        return exp.Window(
            this=exp.Anonymous(this=function),
            partition_by=[key.copy() for key in keys],
            order=exp.Order(expressions=ordered),
        )

    by_outputs = [exp.Ordered(this=exp.column(f"__dau_c{i}")) for i in range(outputs)]
    first = ranked("rank", [o.copy() for o in order])
    broken = ranked("dense_rank", [*(o.copy() for o in order), *by_outputs])
    differ = exp.and_(
        exp.EQ(this=first, expression=exp.Literal.number(1)),
        exp.GT(this=broken, expression=exp.Literal.number(1)),
    )
    raised = exp.Anonymous(this="error", expressions=[exp.Literal.string(TIED_PICK)])
    return exp.Case(ifs=[exp.If(this=differ, true=raised)], default=exp.true())
