"""The CTEs a partial query reads, attached to it: those of the query around the split block
that the partial names, and those they name in turn, in the query's order.

Only what is read: a CTE the partial never names may hold what a device arm cannot run (TPC-DS
Q23's ``best_ss_customer``, beside the ``frequent_ss_items`` block that splits), and the CTE the
block itself sits in is never one of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp


def _names_read(nodes: Sequence[exp.Expr]) -> set[str]:
    return {
        t.name.lower()
        for node in nodes
        for t in node.find_all(exp.Table)
        if not t.db and not t.catalog
    }


def ctes_read(nodes: Sequence[exp.Expr], with_: exp.With) -> list[exp.CTE]:
    """Copies of the CTEs of ``with_`` that ``nodes`` read, directly or through one another, in
    ``with_``'s order. A CTE's name shadowed inside ``nodes`` still counts as read: one CTE too
    many is harmless."""
    ctes = {cte.alias_or_name.lower(): cte for cte in with_.expressions}
    wanted: set[str] = set()
    pending = list(_names_read(nodes) & ctes.keys())
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.add(name)
            pending.extend(_names_read([ctes[name].this]) & ctes.keys())
    return [cte.copy() for cte in with_.expressions if cte.alias_or_name.lower() in wanted]


def attach_ctes(partial: exp.Select, tree: exp.Expr, block: exp.Select) -> None:
    """Give ``partial`` (the split ``block``'s partial query) the CTEs it reads, in place. Where
    the block is the whole query, its own WITH keeps only those; else the query's are put
    before the block's own WITH, which stays whole (its names shadow the query's)."""
    own = partial.args.get("with_")
    own = own if isinstance(own, exp.With) else None
    body = partial.copy()
    body.set("with_", None)
    if block is tree:
        if own is None:
            return
        kept = ctes_read([body], own)
        partial.set(
            "with_",
            exp.With(expressions=kept, recursive=own.args.get("recursive")) if kept else None,
        )
        return
    outer = tree.args.get("with_")
    if not isinstance(outer, exp.With):
        return
    own_ctes = list(own.expressions) if own is not None else []
    own_names = {cte.alias_or_name.lower() for cte in own_ctes}
    read = [
        c for c in ctes_read([body, *own_ctes], outer) if c.alias_or_name.lower() not in own_names
    ]
    if not read:
        return
    recursive = bool(outer.args.get("recursive")) or bool(own and own.args.get("recursive"))
    partial.set(
        "with_",
        exp.With(expressions=[*read, *(c.copy() for c in own_ctes)], recursive=recursive or None),
    )


__all__ = ["attach_ctes", "ctes_read"]
