"""Where a split cuts a query (DESIGN.md section 4, step 3): the *split block* of each
occurrence of the split table, the query block reading it in its FROM on a row-linear path,
lifted through row-level derived tables; or why an occurrence has none."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, build_scope

from dau_scheduler.rewrite import complement
from dau_scheduler.rewrite.block_parts import (
    Refuse,
    aggregate_calls,
    distinct_on_keys,
    function_name,
    own_nodes,
)
from dau_scheduler.rewrite.occurrence import occurrence_refusal
from dau_scheduler.rewrite.row_windows import row_window_refusal
from dau_scheduler.rewrite.volatility import nondeterministic

#: The parts of a join the row-linear rules below understand; a join with any other is refused.
_JOIN_ARGS = frozenset({"this", "on", "side", "kind", "using", "method"})


def block_refusal(
    select: exp.Select, source: exp.Expr, table: str, names: frozenset[str]
) -> str | None:
    """Why ``source`` (a FROM item of ``select``) is not on a row-linear path, or None."""
    from_ = select.args.get("from_") or select.args.get("from")
    joins = list(select.args.get("joins") or [])
    position = -1 if from_ is not None and from_.this is source else None
    for index, join in enumerate(joins):
        if join.this is source:
            position = index
    if position is None:
        return f"{table} is not read in the FROM of its query block"
    cte = select.find_ancestor(exp.CTE)
    own = cte.alias_or_name if cte is not None else ""  # (its step read whole: 2 rows for 5)
    if own and any(t.name.lower() == own.lower() for t in select.find_all(exp.Table)):
        return f"{table} is read in the recursive step of CTE {own}"
    for index, join in enumerate(joins):
        unknown = sorted(k for k, v in join.args.items() if v and k not in _JOIN_ARGS)
        if unknown:  # NEAREST k BY ..., ASOF's match condition, ...: default deny
            return f"{table} is in a block with a join that has {', '.join(unknown)}"
        kind, method = (join.kind or "").upper(), join.method
        if (
            method
            or isinstance(join.this, exp.Lateral)
            or kind not in {"", "INNER", "CROSS", "OUTER", "SEMI", "ANTI"}
        ):
            return f"{table} is in a block with a {method or kind or 'LATERAL'} join"
        if index == position and kind in {"SEMI", "ANTI"}:
            return f"{table} is the inner side of a {kind} JOIN"
    # Rows no row of the split table matched depend on all of them: the host adds them once.
    outer = complement.refusal(select, position, table, isinstance(source, exp.Table))
    if outer is not None:
        return outer
    # A grouped block's windows run over its groups, which the final query holds whole; so does
    # its QUALIFY, a filter on them.
    aggregating = grouped(select, names)
    if not aggregating:  # a row block's windows and QUALIFY run in the final query (row_windows)
        windows = row_window_refusal(select, table)
        if windows is not None:
            return windows
    # A row block's DISTINCT ON is kept by the final query over every arm's rows (row_block).
    if aggregating and distinct_on_keys(select):
        return f"the block reading {table} uses DISTINCT ON over its groups"
    for node in own_nodes(select):
        if nondeterministic(node):
            return f"the non-deterministic function {function_name(node)}() reads {table}'s rows"
    return None


def grouped(select: exp.Select, names: frozenset[str]) -> bool:
    """An aggregating block, whose groups do not depend on the order of its input rows."""
    return select.args.get("group") is not None or bool(aggregate_calls(select, names))


def is_plain(select: exp.Select, names: frozenset[str]) -> bool:
    """A row-level block: no aggregation, DISTINCT, LIMIT, OFFSET or window."""
    return not (
        aggregate_calls(select, names)
        or select.args.get("group")
        or select.args.get("distinct")
        or select.args.get("limit")
        or select.args.get("offset")
        or any(isinstance(node, exp.Window) for node in own_nodes(select))
    )


@dataclass
class Candidate:
    table: str
    occurrence: exp.Table
    block: exp.Select


def _scopes_by_block(root: Scope) -> dict[int, Scope]:
    return {id(scope.expression): scope for scope in root.traverse()}


def find_block(
    occurrence: exp.Table, scope: Scope, scopes: dict[int, Scope], names: frozenset[str], table: str
) -> exp.Select:
    """The split block for one occurrence, lifted through row-level derived tables."""
    block = scope.expression
    if not isinstance(block, exp.Select):
        raise Refuse(f"{table} is read by a {type(block).__name__}, not a SELECT block")
    if scope.external_columns:
        raise Refuse(f"the block reading {table} is a correlated subquery (run once per outer row)")
    reason = block_refusal(block, occurrence, table, names)
    if reason:
        raise Refuse(reason)
    while is_plain(block, names) and not complement.decided_joins(
        block, complement.position(block, occurrence)
    ):
        wrapper = block.parent
        if not isinstance(wrapper, exp.Subquery) or not isinstance(
            wrapper.parent, (exp.From, exp.Join)
        ):
            break
        outer = wrapper.parent.parent
        outer_scope = scopes.get(id(outer))
        if not isinstance(outer, exp.Select) or outer_scope is None:
            break
        if outer_scope.external_columns or block_refusal(outer, wrapper, table, names):
            break
        if block.args.get("order") is not None and not grouped(outer, names):
            # The outer rows keep this block's order (DuckDB's LIMIT over an ordered derived
            # table takes its first rows); lifted, each arm would order only its own rows.
            break
        block = outer
    return block


def candidates(tree: exp.Expr, table: str, names: frozenset[str]) -> Iterator[Candidate | str]:
    root = build_scope(tree)
    if root is None:
        yield "the query has no analysable scope"
        return
    scopes = _scopes_by_block(root)

    def depth(scope: Scope) -> int:
        level = 0
        while scope.parent is not None:
            scope, level = scope.parent, level + 1
        return level

    # Outermost occurrences first: the split block should hold the query's work, not a subquery
    # whose result the final query then joins against the whole table (TPC-H Q18).
    ordered = sorted(enumerate(root.traverse()), key=lambda item: (depth(item[1]), item[0]))
    for _, scope in ordered:
        for _alias, (node, source) in scope.selected_sources.items():
            if not isinstance(source, exp.Table) or source.name.lower() != table:
                continue
            if not isinstance(node, exp.Table):
                continue
            why = occurrence_refusal(table, node)
            if why is not None:
                yield why
                continue
            try:
                yield Candidate(table, node, find_block(node, scope, scopes, names, table))
            except Refuse as refusal:
                yield str(refusal)


__all__ = ["Candidate", "block_refusal", "candidates", "find_block", "grouped", "is_plain"]
