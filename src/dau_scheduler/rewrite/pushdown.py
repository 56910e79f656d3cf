"""Filters the query applies to a split block's groups or output, applied to its rows as well.

DuckDB pushes such filters down when it plans the unsplit query; the partial query each arm runs
holds only the split block, so a filter left above it (in the block's HAVING or in the WHERE of
the block that reads it as a derived table) would reach the partial too late. DuckDB's
test/sql/optimizer/plan/test_filter_pushdown_large.test: ``SELECT i, k, SUM(j) FROM vals1,
vals2 GROUP BY i, k HAVING i = k AND i < 5`` grouped 50M rows per arm where DuckDB groups five.

Only filters that select whole groups or whole output rows by values the block's rows already
hold are copied, and the filters stay where they were, so the answer cannot change:

- a HAVING conjunct with no aggregate, window or subquery whose columns all sit inside GROUP BY
  keys (no grouping sets: ``HAVING k IS NULL`` would also keep ROLLUP's total row);
- a conjunct of the enclosing block's WHERE over this derived table's columns alone, where each
  column is a GROUP BY key of the block, a DISTINCT ON key of a DISTINCT ON block (another
  output would pick another row of the key: issue9241.test) or an output of a DISTINCT or
  row-level block, and the
  derived table is not on the nullable side of an outer join. Not through LIMIT, OFFSET, windows
  or QUALIFY, which depend on the rows the filter would remove;
- the same where the block is a branch of a set operation (UNION [ALL], INTERSECT, EXCEPT, nested)
  that is the derived table: a row-level condition holds of equal rows alike, so it selects the
  same rows of each branch as of the whole. The derived table's columns are the first branch's
  names, matched to the block's outputs by position, and only where the block's output has the
  set operation's own type (a branch's INTEGER under a VARCHAR union compares otherwise: '05'
  equals 5 as an integer, not as text), which the binder reads. A partitioned view, ``FROM
  (SELECT * FROM s23 UNION ALL SELECT * FROM s24) s WHERE s.d > 900``, had each arm pass all of
  s23's rows back for the final query to filter.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from dau_scheduler.rewrite.block_parts import conjuncts, distinct_on_keys, is_aggregate
from dau_scheduler.rewrite.blocks import grouping_keys
from dau_scheduler.rewrite.volatility import nondeterministic


def _row_filter(condition: exp.Expr, names: frozenset[str]) -> bool:
    """A condition a row can be tested by alone: no subquery, aggregate or window, and no
    function whose value changes per call."""
    return not any(
        isinstance(node, (exp.Subquery, exp.Query, exp.Exists, exp.Window))
        or is_aggregate(node, names)
        or nondeterministic(node)
        for node in condition.walk()
    )


def _only_keys(condition: exp.Expr, keys: list[exp.Expr]) -> bool:
    """Whether every column of ``condition`` sits inside one of the GROUP BY ``keys``."""
    probe = condition.copy()

    def blank(node: exp.Expr) -> exp.Expr:
        return exp.Null() if any(node == key for key in keys) else node

    return not any(True for _ in probe.transform(blank).find_all(exp.Column))


def _having_filters(block: exp.Select, names: frozenset[str]) -> list[exp.Expr]:
    group, having = block.args.get("group"), block.args.get("having")
    if group is None or having is None:
        return []
    keys, sets = grouping_keys(group)
    if sets or not keys:
        return []
    return [
        c.copy() for c in conjuncts(having.this) if _row_filter(c, names) and _only_keys(c, keys)
    ]


#: Reads a query's output types without running it (``reading.Binder``'s second item).
Types = Callable[[str], list[str]]


#: A set operation's arguments that line its branches up otherwise than by position.
_BY_NAME_FORMS = ("by_name", "side", "kind", "on")


def _set_operation_top(block: exp.Select) -> exp.Expr:
    """The outermost set operation ``block`` is a branch of, or the block itself."""
    node: exp.Expr = block
    while isinstance(node.parent, exp.SetOperation):
        node = node.parent
    return node


def _first_branch(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.SetOperation):
        node = node.this
    return node


def _outer_filters(
    block: exp.Select, names: frozenset[str], types: Types | None = None
) -> list[exp.Expr]:
    top = _set_operation_top(block)
    same_type: set[int] = set()  # the block's output positions typed as the set operation's
    if top is not block:
        first = _first_branch(top)
        if types is None or not isinstance(first, exp.Select):
            return []
        if any(op.args.get(k) for op in top.find_all(exp.SetOperation) for k in _BY_NAME_FORMS):
            return []  # UNION BY NAME (DuckDB) lines the branches up by name, not position
        if any(
            op.args.get(k) for op in top.find_all(exp.SetOperation) for k in ("limit", "offset")
        ):
            return []  # a LIMIT over the set operation keeps rows the filter would remove
        if any(isinstance(p.unalias(), exp.Star) for p in (*first.expressions, *block.expressions)):
            return []
        try:
            whole, own = types(top.sql(dialect="duckdb")), types(block.sql(dialect="duckdb"))
        except Exception:  # noqa: BLE001 - not bindable alone (a correlated branch): no push
            return []
        if not len(first.expressions) == len(block.expressions) == len(whole) == len(own):
            return []
        same_type = {i for i, (kind, its) in enumerate(zip(whole, own, strict=True)) if kind == its}
    wrapper = top.parent
    if not isinstance(wrapper, exp.Subquery) or not isinstance(
        wrapper.parent, (exp.From, exp.Join)
    ):
        return []
    outer = wrapper.parent.parent
    if not isinstance(outer, exp.Select) or outer.args.get("where") is None:
        return []
    for join in outer.args.get("joins") or []:
        side = (join.side or "").upper()
        if side in ("RIGHT", "FULL") or (join is wrapper.parent and side == "LEFT"):
            return []  # the derived table's rows may come back NULL-extended
    if any(block.args.get(k) is not None for k in ("limit", "offset", "qualify")):
        return []
    if any(isinstance(node, exp.Window) for node in block.find_all(exp.Window)):
        return []
    group = block.args.get("group")
    keys, sets = grouping_keys(group)
    if sets or (group is None and any(is_aggregate(n, names) for n in block.walk())):
        return []
    # The derived table's names: the block's own, or in a set operation the first branch's.
    named = block.expressions if top is block else _first_branch(top).expressions
    counts: dict[str, int] = {}
    for projection in named:
        counts[projection.alias_or_name] = counts.get(projection.alias_or_name, 0) + 1
    outputs: dict[str, exp.Expr] = {}
    for i, projection in enumerate(block.expressions):
        name = named[i].alias_or_name
        if isinstance(projection.unalias(), exp.Star) or not projection.alias_or_name:
            return []
        expression = projection.unalias()
        if group is not None and not any(expression == key for key in keys):
            continue  # an aggregate's output, or a key's function: not filtered here
        if top is not block and (i not in same_type or counts[name] > 1):
            continue  # another type above, or a name that does not say which output
        outputs[name] = expression
    keys_on = distinct_on_keys(block)
    if keys_on:
        # DISTINCT ON picks a row per key: a filter over other outputs picks another row.
        outputs = {n: e for n, e in outputs.items() if any(e == key for key in keys_on)}
    alias = wrapper.alias_or_name
    pushed: list[exp.Expr] = []
    for condition in conjuncts(outer.args["where"].this):
        columns = list(condition.find_all(exp.Column))
        if (
            not columns
            or not _row_filter(condition, names)
            or any(c.table != alias or c.name not in outputs for c in columns)
        ):
            continue

        def inline(node: exp.Expr) -> exp.Expr:
            if isinstance(node, exp.Column):
                return outputs[node.name].copy()
            return node

        pushed.append(condition.copy().transform(inline))
    return pushed


def push_filters(
    block: exp.Select, names: frozenset[str], types: Types | None = None
) -> exp.Select:
    """``block`` with the filters the module docstring lists added to its WHERE (in place);
    ``types`` reads a query's output types (without it nothing is pushed into a set operation's
    branch)."""
    pushed = _having_filters(block, names) + _outer_filters(block, names, types)
    if pushed:
        where = block.args.get("where")
        block.set("where", exp.Where(this=exp.and_(*([where.this] if where else []), *pushed)))
    return block


__all__ = ["push_filters"]
