"""The partial and final halves of an aggregating split block: what each arm computes, and how
the final query re-derives the block's outputs from the merged partials (a block without
aggregation is :mod:`dau_scheduler.rewrite.row_block`'s; what reads a block,
:mod:`dau_scheduler.rewrite.block_parts`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlglot import exp

from dau_scheduler.errors import SplitError
from dau_scheduler.merge import MergeRule, check_split
from dau_scheduler.rewrite import modes, overflow
from dau_scheduler.rewrite.aggregates import (
    DISTINCT_KINDS,
    MERGE_STEPS,
    ORDER_INSENSITIVE,
    aggregate_kind,
    distinct_node,
)
from dau_scheduler.rewrite.block_parts import (
    Refuse,
    aggregate_calls,
    is_aggregate,
    literal_int,
    output_name,
)
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.fold import (
    PARTIALS,
    FastFold,
    FastRows,
    FoldCall,
    raise_check_for,
    refold_sql_for,
)


@dataclass
class BuiltBlock:
    partial: exp.Select
    replacement: exp.Select
    aggregates: list[tuple[str, str]]
    probe_extra: list[exp.Expr]
    ordered: bool
    fast: FastFold | FastRows | None = None
    refold_sql: str | None = None
    calls: tuple[FoldCall, ...] = ()
    raise_check: exp.Select | None = None  # CompiledSplit.raise_check_sql
    sums: tuple[overflow.Sum, ...] = ()  # the calls that add values (overflow.py)


def replace_outside_subqueries(
    node: exp.Expr, fun: Callable[[exp.Expr], exp.Expr | None]
) -> exp.Expr:
    """Copy ``node`` with ``fun``'s replacements, not descending into nested queries."""

    def visit(current: exp.Expr) -> exp.Expr:
        replacement = fun(current)
        if replacement is not None:
            return replacement
        if isinstance(current, (exp.Query, exp.Subquery)):
            return current.copy()
        return current

    return node.transform(visit)


def _block_sources(block: exp.Select) -> set[str]:
    """The names the block's FROM and joins read (aliases, else table names)."""
    from_ = block.args.get("from_") or block.args.get("from")
    items = [from_.this if from_ is not None else None]
    items += [j.this for j in block.args.get("joins") or []]
    return {item.alias_or_name for item in items if item is not None}


def refuse_correlated_references(
    block: exp.Select,
    rows: frozenset[str] | None = None,
    keys: list[exp.Expr] | None = None,
    calls: Sequence[exp.Expr] = (),
) -> None:
    """Refuse a block whose SELECT, HAVING or ORDER BY holds a subquery that refers to the
    block's own tables: the final query reads the merged partials, not those tables.

    ``rows``: the block does not aggregate, and these are the engine's aggregate names. Its
    outputs and ORDER BY keys are computed in the partial, row by row, where those tables are
    read, so such a subquery is refused only where an aggregate or window inside it reads the
    block's columns: ``SELECT (SELECT max(a)) FROM t`` aggregates t's rows (SQL binds an
    aggregate of outer columns to the outer query), which no arm's partial can.

    ``keys``: the block's GROUP BY keys (no grouping sets). A subquery whose every reference
    to the block is one of them, and no aggregate or window inside it reads the block, is
    kept: each group's key is a column of the merged partials, which the final query's
    subquery reads in its place (:func:`keys_for_correlated`; ``HAVING count(*) > (SELECT
    count(*) FROM u WHERE u.n = t.n)``).

    ``calls``: the block's aggregate calls. A subquery inside one of them, or inside one of the
    ``keys``, is computed by each arm's partial, row by row, where those tables are read
    (``sum(x * (SELECT r FROM u WHERE u.k = t.k))``, ``count(*) FILTER (WHERE EXISTS ...)``,
    ``GROUP BY (SELECT ...)``), and is kept."""
    sources = _block_sources(block)
    roots = [*block.expressions, block.args.get("having"), block.args.get("order")]
    for root in roots:
        if root is None:
            continue
        for sub in root.find_all(exp.Subquery, exp.Exists):
            if _in_partial(sub, root, calls, keys or []):
                continue
            inner = {t.alias_or_name for t in sub.find_all(exp.Table)}

            def outer(node: exp.Expr, inner: set[str] = inner) -> list[exp.Column]:
                return [
                    c
                    for c in node.find_all(exp.Column)
                    if c.table and c.table in sources and c.table not in inner
                ]

            if rows is not None:
                for node in sub.find_all(exp.Window, exp.AggFunc, exp.Anonymous):
                    window = isinstance(node, exp.Window)
                    if (window or is_aggregate(node, rows)) and outer(node):
                        column = outer(node)[0]
                        raise Refuse(
                            f"a subquery in the SELECT or ORDER BY aggregates {column.table}."
                            f"{column.name} of the split block (an aggregate of outer columns "
                            "belongs to the outer query)"
                        )
                continue
            outside = outer(sub)
            folded = [
                node for node in sub.find_all(exp.Window, exp.AggFunc, exp.Anonymous) if outer(node)
            ]
            if outside and keys and not folded and all(c in keys for c in outside):
                continue  # the group's keys, read from the partials (keys_for_correlated)
            if outside:
                raise Refuse(
                    f"a subquery in the SELECT, HAVING or ORDER BY refers to {outside[0].table}."
                    f"{outside[0].name} of the split block, which the final query does not read"
                )


def _in_partial(
    node: exp.Expr, root: exp.Expr, calls: Sequence[exp.Expr], keys: list[exp.Expr]
) -> bool:
    """Whether ``node`` (under ``root``) sits in one of the aggregate ``calls`` or is or sits in
    one of the grouping ``keys``: what each arm's partial computes."""
    current: exp.Expr | None = node
    while current is not None:
        if any(current is call for call in calls) or current in keys:
            return True
        if current is root:
            return False
        current = current.parent
    return False


_GROUPING_SETS = (exp.Rollup, exp.Cube, exp.GroupingSets)


def grouping_keys(group: exp.Group | None) -> tuple[list[exp.Expr], bool]:
    """The distinct key expressions of a GROUP BY, through ROLLUP, CUBE and GROUPING SETS, and
    whether it has any of those.

    Such a block is split on its finest grouping: each arm groups its rows by every key, and the
    final query groups the merged partials by the block's own grouping sets. Each set's group
    is a union of finest groups, which the aggregates' merge steps fold as they fold the arms'.
    """
    keys: list[exp.Expr] = []
    sets = False

    def add(node: exp.Expr) -> None:
        nonlocal sets
        if isinstance(node, _GROUPING_SETS):
            sets = True
            for part in node.expressions:
                add(part)
        elif isinstance(node, (exp.Tuple, exp.Paren)):
            for part in node.iter_expressions():
                add(part)
        elif node not in keys:
            keys.append(node)

    for expression in group.expressions if group is not None else []:
        add(expression)
    return keys, sets


def _positions_read(block: exp.Select, keys: list[exp.Expr], grouping_sets: bool) -> list[exp.Expr]:
    """The keys with each integer left in GROUP BY read as the output at that position: sqlglot
    leaves ``GROUP BY 2`` as it is where output 2 is a constant (``SELECT count(*), 7 ...``),
    and that constant is the key's value (SQLite's select tests)."""
    if not any(isinstance(key, exp.Literal) and key.is_int for key in keys):
        return keys
    if grouping_sets:
        raise Refuse("GROUP BY a position under grouping sets or parentheses")
    read = []
    for key in keys:
        if isinstance(key, exp.Literal) and key.is_int:
            position = int(key.name)
            if not 1 <= position <= len(block.expressions):
                raise Refuse(f"GROUP BY {position}: no output at that position")
            key = block.expressions[position - 1].unalias()
        read.append(key)
    return read


def _group_by_all_keys(block: exp.Select, names: frozenset[str]) -> list[exp.Expr]:
    """The keys ``GROUP BY ALL`` groups by, as DuckDB's binder picks them: each output that
    reads a column of the block and no aggregate (a constant output, or an uncorrelated
    subquery, is no key; DuckDB rejects an output that mixes both, and a window)."""
    keys: list[exp.Expr] = []
    for item in block.expressions:
        value = item.unalias()
        aggregated = [n for n in value.walk() if is_aggregate(n, names)]
        inside = {id(c) for call in aggregated for c in call.find_all(exp.Column)}
        reads = any(
            column.find_ancestor(exp.Select) is block and id(column) not in inside
            for column in value.find_all(exp.Column)
        )
        if not reads:
            continue
        if aggregated or value.find(exp.Window) is not None:
            raise Refuse(
                f"GROUP BY ALL over {output_name(item, block)}: an output mixing a "
                "column with an aggregate or window"
            )
        if value not in keys:
            keys.append(value)
    return keys


def _reads_anything(node: exp.Expr) -> bool:
    """Whether the expression reads a column or a subquery (else it is a constant)."""
    return any(isinstance(n, (exp.Column, exp.Subquery, exp.Select)) for n in node.walk())


def keys_for_correlated(sub: exp.Expr, block: exp.Select, keys: list[exp.Expr]) -> exp.Expr | None:
    """A copy of ``sub`` (a subquery of the block's SELECT, HAVING or ORDER BY) reading each
    reference to one of the block's grouping ``keys`` as the partials' column of that key
    (``__dau_g<i>``), or None where it refers to none (see refuse_correlated_references)."""
    sources = _block_sources(block)
    inner = {t.alias_or_name for t in sub.find_all(exp.Table)}
    copy = sub.copy()
    found = False
    for column in list(copy.find_all(exp.Column)):
        if column.table in sources and column.table not in inner and column in keys:
            column.replace(exp.column(f"__dau_g{keys.index(column)}"))
            found = True
    return copy if found else None


def build_aggregate(
    block: exp.Select,
    names: frozenset[str],
    *,
    nested: bool = False,
    floats: frozenset[str] = frozenset(),
) -> BuiltBlock:
    """The partial and final queries of a grouped block. ``nested``: a query around the block
    reads its rows, and its filters may drop groups. ``floats``: the SQL of the summing calls
    that add floats (``overflow.float_calls`` of a first build's bound partial)."""
    calls = aggregate_calls(block, names)
    for call in calls:
        kind = aggregate_kind(call)
        inner = call.this if isinstance(call, exp.Filter) else call
        ordered = any(isinstance(arg, exp.Order) for arg in inner.iter_expressions())
        if ordered and kind not in ORDER_INSENSITIVE:
            raise Refuse(
                f"{kind}(... ORDER BY ...) in {output_name(call, block)}: an ordered aggregate "
                "whose value depends on the order of all rows"
            )
    group = block.args.get("group")
    by_all = group is not None and bool(group.args.get("all")) and not group.expressions
    if by_all:
        keys, grouping_sets = _group_by_all_keys(block, names), False
    else:
        keys, grouping_sets = grouping_keys(group)
        # GROUP BY () or GROUP BY (a, b): the partial groups by the plain keys, the final as
        # written.
        grouping_sets = grouping_sets or (group is not None and keys != list(group.expressions))
        keys = _positions_read(block, keys, grouping_sets)
    refuse_correlated_references(block, keys=None if grouping_sets else keys, calls=calls)
    # DISTINCT aggregates' and mode()'s arguments become keys of the partial only (modes.py).
    distinct_of = {call.sql(dialect=DIALECT): modes.key_argument(call) for call in calls}
    extras: list[exp.Expr] = []
    for argument in distinct_of.values():
        if argument is not None and argument not in keys and argument not in extras:
            extras.append(argument)
    modes.refuse_mixed_counts(calls, extras, grouping_sets)
    partial_keys = keys + extras
    aggregates: list[tuple[str, str]] = []
    checked: list[tuple[str, str]] = []
    for call in calls:
        pair = (output_name(call, block), aggregate_kind(call))
        if isinstance(call, exp.Filter) and pair[1] in DISTINCT_KINDS:
            raise Refuse(
                f"{pair[1]} with FILTER in {pair[0]}: the partial's distinct values do not "
                "keep which rows passed the filter"
            )
        if pair not in aggregates:
            aggregates.append(pair)
        if distinct_of[call.sql(dialect=DIALECT)] is None and pair not in checked:
            checked.append(pair)
    try:
        check_split(
            MergeRule("this query", combine=list, mergeable=frozenset(MERGE_STEPS)), checked
        )
    except SplitError as exc:
        raise Refuse(str(exc)) from None

    projections: list[exp.Expr] = [
        exp.alias_(key.copy(), f"__dau_g{i}") for i, key in enumerate(partial_keys)
    ]
    merged: dict[str, tuple[exp.Expr, int]] = {}
    probe_extra: list[exp.Expr] = []
    fold_calls: list[FoldCall] = []
    partial_names: dict[str, str] = {}
    raising: list[exp.Expr] = []  # where an unsplit finalize raises (MergeStep.raises)
    sums: list[overflow.Sum] = []
    for call in calls:
        text = call.sql(dialect=DIALECT)
        if text in merged:
            continue
        argument = distinct_of[text]
        kind = aggregate_kind(call)
        if argument is not None and kind not in modes.COUNTED:
            # The same aggregate over the partial's column of distinct values.
            on_values = call.copy()
            column = exp.column(f"__dau_g{partial_keys.index(argument)}")
            distinct = distinct_node(on_values)
            assert distinct is not None
            distinct.set("expressions", [column])
            if kind in overflow.GUARDED_DISTINCT:
                sums.append(overflow.Sum(text, column.name, None))
                on_values = overflow.guarded(on_values) if text in floats else on_values
            merged[text] = (on_values, len(probe_extra))
            probe_extra.append(exp.alias_(call.copy(), f"__dau_t{len(probe_extra)}"))
            continue
        if kind in overflow.GUARDED and text in floats:
            kind = overflow.float_kind(kind)
        step = modes.merge_step(kind, argument, partial_keys)
        columns = []
        partials = step.partials(call)
        for partial in partials:
            text_partial = partial.sql(dialect=DIALECT)
            name = partial_names.get(text_partial, f"__dau_p{len(projections) - len(partial_keys)}")
            if text_partial not in partial_names:  # arms compute each distinct partial once
                partial_names[text_partial] = name
                projections.append(exp.alias_(partial, name))
            columns.append(exp.column(name))
        merged[text] = (step.merge(columns), len(probe_extra))
        if kind in overflow.GUARDED:
            sums.append(overflow.Sum(text, columns[0].name, overflow.summed(partials[0])))
        if step.raises is not None:
            raising.append(step.raises(columns))
        fold_calls.append(FoldCall(modes.refolded(kind), tuple(c.name for c in columns)))
        probe_extra.append(exp.alias_(call.copy(), f"__dau_t{len(probe_extra)}"))

    partial = block.copy()
    partial.set("expressions", projections)
    for key in ("having", "qualify", "order", "limit", "offset", "distinct"):
        partial.set(key, None)
    constant = [not _reads_anything(key) for key in partial_keys]
    if grouping_sets or extras or any(constant) or by_all:
        # A constant key is grouped by its output's name: DuckDB reads an integer constant in
        # GROUP BY as a position (``count(DISTINCT 7)`` made ``GROUP BY 7``).
        flat = exp.Group(
            expressions=[
                exp.column(f"__dau_g{i}") if constant[i] else key.copy()
                for i, key in enumerate(partial_keys)
            ]
        )
        partial.set("group", flat if partial_keys else None)

    aliases = {p.alias for p in block.expressions if p.alias}

    def fold(node: exp.Expr) -> exp.Expr | None:
        if isinstance(node, exp.Window):
            return fold_window(node)
        if isinstance(node, (exp.Subquery, exp.Exists)):
            if node in keys:  # a key the partial computed (GROUP BY (SELECT ...))
                return exp.column(f"__dau_g{keys.index(node)}")
            return keys_for_correlated(node, block, keys)
        if is_aggregate(node, names):
            expression, index = merged[node.sql(dialect=DIALECT)]
            # Typed once the partial is bound: the merged value takes the unsplit aggregate's type.
            cast = exp.Cast(this=expression.copy(), to=exp.DataType.build("UNKNOWN"))
            cast.meta["dau_cast"] = index
            cast.meta["dau_kind"] = aggregate_kind(node)  # (decisions.mark, once typed)
            return cast
        for i, key in enumerate(keys):
            if node == key:
                return exp.column(f"__dau_g{i}")
        if isinstance(node, exp.Column):
            if not node.table and node.name in aliases:
                return None
            raise Refuse(f"column {node.sql(dialect=DIALECT)} is neither grouped nor aggregated")
        return None

    def fold_window(window: exp.Window) -> exp.Expr:
        """The window over the final query's rows: its function kept, what it reads folded."""
        if not isinstance(window.this, exp.Func) or isinstance(window.this, exp.Filter):
            raise Refuse(f"window {window.sql(dialect=DIALECT)} over a grouped block")
        folded = window.copy()
        for node, skip in ((folded.this, None), (folded, "this")):
            for key, value in list(node.args.items()):
                if key == skip:
                    continue
                if isinstance(value, exp.Expr):
                    node.set(key, replace_outside_subqueries(value, fold))
                elif isinstance(value, list):
                    node.set(key, [replace_outside_subqueries(v, fold) for v in value])
        return folded

    replacement = exp.Select(
        expressions=[replace_outside_subqueries(p, fold) for p in block.expressions]
    ).from_(PARTIALS, copy=False)  # the folded outputs may be large (moments): no copy
    if grouping_sets and group is not None:
        replacement.set("group", replace_outside_subqueries(group, fold))
    elif keys:
        group_keys = [exp.column(f"__dau_g{i}") for i in range(len(keys))]
        replacement = replacement.group_by(*group_keys, copy=False)
    filtered = nested or any(block.args.get(k) is not None for k in ("having", "qualify"))
    raise_check = raise_check_for(replacement, raising) if raising and filtered else None
    for key in ("having", "qualify", "order"):
        if block.args.get(key) is not None:
            replacement.set(key, replace_outside_subqueries(block.args[key], fold))
    for key in ("limit", "offset", "distinct"):
        if block.args.get(key) is not None:
            replacement.set(key, block.args[key].copy())
    simple = not grouping_sets and not any(a is not None for a in distinct_of.values())
    fast = fast_fold_for(block, keys, list(merged), fold_calls, names) if simple else None
    partial_columns = [p.alias for p in projections[len(partial_keys) :]]
    refold = refold_sql_for(len(partial_keys), partial_columns, fold_calls)
    if counted := modes.counted_key_calls(calls, partial_keys):  # one row a value before the pick
        modes.read_refolded(replacement, refold)
    return BuiltBlock(
        partial,
        replacement,
        aggregates,
        probe_extra,
        ordered=False,
        fast=fast,
        refold_sql=refold,
        calls=(*fold_calls, *counted),
        raise_check=raise_check,
        sums=tuple(sums),
    )


def output_index(block: exp.Select, target: exp.Expr) -> int | None:
    """Which output an ORDER BY item names: a position (``ORDER BY 2``), the same expression,
    or an output alias."""
    if isinstance(target, exp.Literal) and target.is_int:
        position = int(target.this)
        if 1 <= position <= len(block.expressions):
            return position - 1
        raise Refuse(f"ORDER BY {position}: the query has {len(block.expressions)} outputs")
    for i, projection in enumerate(block.expressions):
        if projection.unalias() == target:
            return i
        if isinstance(target, exp.Column) and not target.table and projection.alias == target.name:
            return i
    return None


def fast_fold_for(
    block: exp.Select,
    keys: list[exp.Expr],
    call_texts: list[str],
    calls: list[FoldCall],
    names: frozenset[str],
) -> FastFold | None:
    """The pyarrow fold for this block, when its shape allows one (see ``rewrite.fold``)."""
    if any(block.args.get(k) is not None for k in ("having", "distinct", "qualify")):
        return None
    if any(MERGE_STEPS[call.kind].arrow is None for call in calls):
        return None
    outputs: list[tuple[str, int]] = []
    for projection in block.expressions:
        expression = projection.unalias()
        key = next((i for i, k in enumerate(keys) if expression == k), None)
        if key is not None:
            outputs.append(("key", key))
        elif is_aggregate(expression, names):
            outputs.append(("agg", call_texts.index(expression.sql(dialect=DIALECT))))
        else:
            return None
    order: list[tuple[int, bool]] = []
    if block.args.get("order") is not None:
        for ordered in block.args["order"].expressions:
            if ordered.args.get("nulls_first"):
                return None
            target = ordered.this
            index = output_index(block, target)
            if index is None:
                return None
            order.append((index, bool(ordered.args.get("desc"))))
    try:
        limit = literal_int(block.args.get("limit"), "LIMIT") if block.args.get("limit") else None
        offset = literal_int(block.args.get("offset"), "OFFSET")
    except Refuse:
        return None
    return FastFold(
        tuple(f"__dau_g{i}" for i in range(len(keys))),
        tuple(calls),
        tuple(outputs),
        tuple(order),
        limit,
        offset,
    )
