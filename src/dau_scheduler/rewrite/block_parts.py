"""Reading a query block: its aggregate calls, its own nodes, the names of its outputs, its
constant LIMIT, its conjunctions; and :class:`Refuse`, how the planner abandons a candidate block
with a reason. What :mod:`dau_scheduler.rewrite.blocks` and the arms' translations share."""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from dau_scheduler.rewrite.dialect import DIALECT


def conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The terms of a conjunction, through parentheses: ``(a = b AND c = d)`` is two terms
    (TPC-DS Q40 and Q72 write their join conditions in parentheses)."""
    inner = condition.unnest()
    if isinstance(inner, exp.And):
        return [*conjuncts(inner.this), *conjuncts(inner.expression)]
    return [inner]


def disjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The branches of a disjunction, through parentheses."""
    inner = condition.unnest()
    if isinstance(inner, exp.Or):
        return [*disjuncts(inner.this), *disjuncts(inner.expression)]
    return [inner]


def distinct_on_keys(select: exp.Select) -> list[exp.Expr]:
    """The keys of a block's DISTINCT ON (none for another block)."""
    distinct = select.args.get("distinct")
    on = distinct.args.get("on") if isinstance(distinct, exp.Distinct) else None
    if on is None:
        return []
    return list(on.expressions) if isinstance(on, exp.Tuple) else [on]


class Refuse(Exception):
    """Raised inside the planner to abandon one candidate with a reason."""


def own_nodes(root: exp.Expr) -> Iterator[exp.Expr]:
    """The nodes of ``root`` that belong to its own query block (nested queries excluded)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        for child in node.iter_expressions():
            if isinstance(child, (exp.Query, exp.Subquery)):
                continue
            stack.append(child)


def is_aggregate(node: exp.Expr, aggregate_names: frozenset[str]) -> bool:
    if isinstance(node, exp.Filter):
        return is_aggregate(node.this, aggregate_names)
    if isinstance(node, (exp.Grouping, exp.GroupingId)):
        return False  # which grouping set a row belongs to: a function of the keys, not the rows
    if isinstance(node, exp.AggFunc):
        return True
    return isinstance(node, exp.Anonymous) and str(node.this).lower() in aggregate_names


def aggregate_calls(select: exp.Select, names: frozenset[str]) -> list[exp.Expr]:
    """Aggregate calls of this block (in SELECT, HAVING, QUALIFY, ORDER BY), outermost call
    only."""
    calls: list[exp.Expr] = []
    roots = [*select.expressions]
    for key in ("having", "qualify", "order"):
        if select.args.get(key) is not None:
            roots.append(select.args[key])
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Window):
            # The window's own function runs over the block's output rows; the aggregates in its
            # arguments, PARTITION BY and ORDER BY are the block's (rank() OVER (ORDER BY sum(x))).
            stack.extend(reversed(list(window_parts(node))))
            continue
        if is_aggregate(node, names):
            calls.append(node)
            continue
        if isinstance(node, (exp.Query, exp.Subquery)):
            continue
        stack.extend(reversed(list(node.iter_expressions())))
    return calls


def window_parts(window: exp.Window) -> Iterator[exp.Expr]:
    """What a window reads from its block's rows: its function's arguments, PARTITION BY and
    ORDER BY (not the function itself, which runs over those rows)."""
    yield from window.this.iter_expressions()
    for key, value in window.args.items():
        if key == "this":
            continue
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, exp.Expr):
                yield part


def function_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql(dialect=DIALECT).split("(", 1)[0].strip().lower()


def output_name(call: exp.Expr, block: exp.Select) -> str:
    node: exp.Expr | None = call
    while node is not None and node.parent is not block:
        node = node.parent
    if node is None:
        return "?"
    if node.arg_key == "expressions":
        return node.alias_or_name or node.sql(dialect=DIALECT)
    return (node.arg_key or "?").upper()


def literal_int(node: exp.Expr | None, what: str) -> int:
    if node is None:
        return 0
    value = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else node
    if node.args.get("limit_options") and node.args["limit_options"].args.get("percent"):
        raise Refuse(f"{what} ... PERCENT (a share of all the rows, which no arm holds)")
    if isinstance(value, exp.Literal) and value.is_int:
        return int(value.this)
    raise Refuse(f"{what} is not a constant integer")


__all__ = [
    "Refuse",
    "aggregate_calls",
    "conjuncts",
    "disjuncts",
    "distinct_on_keys",
    "function_name",
    "is_aggregate",
    "literal_int",
    "output_name",
    "own_nodes",
    "window_parts",
]
