"""Where an answer depends on the order rows arrive in, outside what the merge rules decide.

The merge rules refuse an order-sensitive aggregate of the split block itself (``merge``). The
rest of the query runs in the final query, over the folded partials, or in each arm, and those
plans are not DuckDB's unsplit plan: rows reach an aggregate or a window in another order. A
``string_agg(k, ',')`` over a join the split only filters (its IN subquery split) gave 'a,b'
where DuckDB gives 'b,a' (found by ``make fuzz``, twenty-fifth session). SQL leaves that order
open, but the answer is held to DuckDB's, so a query whose value depends on it is refused by
name: an aggregate that keeps or picks rows by arrival (``string_agg``, ``list``, ``first``,
``any_value``, ``arg_min`` on ties, ...) without an ORDER BY of its own, a window function
that numbers, picks or gathers rows (``row_number``, ``lag``, ``first_value``, such an
aggregate OVER ...) without an ORDER BY in its window, or with one whose keys may tie (a ROWS
frame's aggregate too; not where the keys hold a grouped block's GROUP BY keys), and a
DISTINCT ON without an ORDER BY past its keys. Anywhere in the query: a grouped split
block's own windows run in the final query too. Such an aggregate still splits over one
ordered derived table (``test_inner_order.py``); a window or a DISTINCT ON does not (DuckDB
partitions their rows on several threads: `lag(v) OVER (PARTITION BY k % 2)` over an ordered
derived table gave other values split than unsplit, on both devices).

An ORDER BY with ties elsewhere (a query's last ORDER BY, an aggregate's own ORDER BY) leaves
the order among the tied rows to the engine, in DuckDB's unsplit plan as in the split's (its
thread schedule reorders them too); it is taken as written.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler import merge
from dau_scheduler.rewrite.block_parts import (
    aggregate_calls,
    distinct_on_keys,
    is_aggregate,
    own_nodes,
)
from dau_scheduler.rewrite.dialect import DIALECT

#: Aggregates whose value keeps or picks rows in the order they arrive: the merge rules' own
#: (``merge.BY_ARRIVAL``) and DuckDB's ``arg_min_null``/``arg_max_null``. By name
#: (:func:`_name`: sqlglot reads ``min_by``, ``argmin`` as ``arg_min``, ``list`` as ``array_agg``).
BY_ARRIVAL = merge.BY_ARRIVAL | {"arg_min_null", "arg_max_null"}

#: Window functions whose value depends on the order of the window's rows.
_BY_POSITION = frozenset(
    {"row_number", "first_value", "last_value", "nth_value", "lag", "lead", "ntile"}
)


def _orders_itself(call: exp.Expr) -> bool:
    """Whether an aggregate call orders its own input (``string_agg(x, ',' ORDER BY y)``)."""
    inner = call.this if isinstance(call, (exp.Filter, exp.IgnoreNulls, exp.RespectNulls)) else call
    return inner.find(exp.Order) is not None


def _name(node: exp.Expr) -> str:
    """A call's name, lower case, as DuckDB reads it (without writing SQL: sqlglot warns about
    an IGNORE NULLS it would write outside a window)."""
    if isinstance(node, exp.Filter):
        return _name(node.this)
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    if isinstance(node, exp.GroupConcat):
        return "string_agg"  # DuckDB's name; sqlglot's first is GROUP_CONCAT
    if isinstance(node, exp.Func):
        return type(node).sql_names()[0].lower()
    return node.key


def arrival_dependence(tree: exp.Expr, names: frozenset[str]) -> str | None:
    """Why ``tree``'s answer depends on the order rows arrive in (see the module), or None;
    ``names`` are the engine's aggregate functions."""
    windowed: set[int] = set()  # a window's own function (and its IGNORE NULLS), seen there
    for node in tree.walk():
        if id(node) in windowed or isinstance(node, (exp.IgnoreNulls, exp.RespectNulls)):
            continue
        if isinstance(node, exp.Window):
            function = node.this
            windowed.add(id(function))
            if isinstance(function, (exp.IgnoreNulls, exp.RespectNulls)):
                function = function.this
                windowed.add(id(function))
            name = _name(function)
            by_arrival = name in _BY_POSITION or _by_arrival(function, names)
            block = node.find_ancestor(exp.Select)
            if by_arrival and node.args.get("order") is None:
                return (
                    f"the query's window function {name}() has no ORDER BY in its window"
                    f"{_text(node)}: its value {_WHY}"
                )
            rows = isinstance(spec := node.args.get("spec"), exp.WindowSpec) and (
                str(spec.args.get("kind") or "").lower() == "rows"
            )
            if (
                (by_arrival or (rows and is_aggregate(function, names)))
                and node.args.get("order") is not None
                and not _unique_keys(node, block)
            ):
                return (
                    f"the query's window function {name}() orders its window by keys that may "
                    f"tie{_text(node)}: its value among tied rows {_WHY}"
                )
        elif isinstance(node, exp.Select) and _picks_by_arrival(node):
            return (
                "the query's DISTINCT ON has no ORDER BY past its keys"
                f"{_text(node.args['distinct'])}: which row it keeps {_WHY}"
            )
        elif _by_arrival(node, names) and not _ordered_input(node.find_ancestor(exp.Select), tree):
            return (
                f"the query's aggregate {_name(node)}() has no ORDER BY of its own"
                f"{_text(node)} and reads no ordered rows: its value {_WHY}"
            )
    return None


_WHY = "depends on the order rows arrive in, which the split's plans do not keep"


def _ordered_input(
    block: exp.Expr | None, tree: exp.Expr, scans: bool = False, depth: int = 0
) -> bool:
    """Whether ``block`` reads rows in an order DuckDB keeps and the split keeps too: one
    ordered derived table or CTE (the ordered block is split, its ORDER BY in the final
    query; ``test_inner_order.py``), through plain projections and filters. With ``scans``
    (for a LIMIT, which takes rows by DuckDB's batch indices), also one table read plainly
    (its order: the device's leading rows first) and a UNION ALL of such branches; not for an
    aggregate or a window, which read a scan's batches on several threads (the final query's
    partials come in several: `list(k)` over a UNION ALL gave another order than DuckDB's
    over one row group)."""
    if depth > 64:
        return False
    if isinstance(block, exp.Union) and not block.args.get("distinct") and scans:
        return all(_ordered(b, tree, scans, depth + 1) for b in (block.this, block.expression))
    if not isinstance(block, exp.Select):
        return False
    from_ = block.args.get("from_")
    if from_ is None or block.args.get("joins") or block.args.get("laterals"):
        return False
    source = from_.this
    ctes = {cte.alias_or_name: cte.this for cte in tree.find_all(exp.CTE)}
    if isinstance(source, exp.Table) and not source.db and source.name in ctes:
        return _ordered(ctes[source.name], tree, scans, depth + 1)
    if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
        return scans and _plain_scan(block)
    return isinstance(source, exp.Subquery) and _ordered(source, tree, scans, depth + 1)


def _ordered(query: exp.Expr, tree: exp.Expr, scans: bool, depth: int) -> bool:
    """Whether ``query``'s rows come in an order DuckDB keeps: its own ORDER BY, or a plain
    block (no grouping, DISTINCT, aggregate or window) over such rows."""
    while isinstance(query, exp.Subquery):
        query = query.this
    if isinstance(query, exp.Query) and query.args.get("order") is not None:
        return True
    if isinstance(query, exp.Select) and (
        any(query.args.get(k) for k in ("group", "distinct", "having", "qualify"))
        or any(n.find(exp.AggFunc, exp.Window) for n in query.expressions)
    ):
        return False
    return _ordered_input(query, tree, scans, depth)


def _unique_keys(window: exp.Window, block: exp.Select | None) -> bool:
    """Whether the window's PARTITION BY and ORDER BY keys hold every GROUP BY key of the
    grouped block it runs in (TPC-DS Q47's ``rank() OVER (PARTITION BY ... ORDER BY d_year,
    d_moy)``), or every output naming a key of the one grouped derived table its block reads:
    one row per key, so no two rows tie. Keys are compared as written."""
    if block is None:
        return False
    order = window.args.get("order")
    parts = [
        *(window.args.get("partition_by") or []),
        *(o.this for o in (order.expressions if order else [])),
    ]
    held = {key.sql(dialect=DIALECT) for key in parts}
    keys = _group_keys(block)
    if keys:
        return {key.sql(dialect=DIALECT) for key in keys} <= held
    from_ = block.args.get("from_")
    source = from_.this if from_ is not None and not block.args.get("joins") else None
    inner = source.this if isinstance(source, exp.Subquery) else None
    if not isinstance(inner, exp.Select):
        return False
    keys = _group_keys(inner)
    if not keys:
        return False
    outputs = {e.unalias().sql(dialect=DIALECT): e.alias_or_name for e in inner.expressions}
    names = {part.name for part in parts if isinstance(part, exp.Column)}
    return all(outputs.get(key.sql(dialect=DIALECT)) in names for key in keys)


def _group_keys(select: exp.Select) -> list[exp.Expr]:
    """A block's GROUP BY keys, none where it has no GROUP BY or grouping sets."""
    group = select.args.get("group")
    if group is None or any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
        return []
    return list(group.expressions)


def _picks_by_arrival(select: exp.Select) -> bool:
    """A DISTINCT ON that keeps a row per key by arrival: no ORDER BY past its keys (ties of the
    keys themselves are DuckDB's pick)."""
    on = distinct_on_keys(select)
    if not on:
        return False
    keys = {key.sql(dialect=DIALECT) for key in on}
    order = select.args.get("order")
    past = (
        [o for o in order.expressions if o.this.sql(dialect=DIALECT) not in keys] if order else []
    )
    return not past


def _by_arrival(node: exp.Expr, names: frozenset[str]) -> bool:
    return is_aggregate(node, names) and _name(node) in BY_ARRIVAL and not _orders_itself(node)


def unordered_limit(
    tree: exp.Expr, block: exp.Select, grouped: bool, names: frozenset[str]
) -> str | None:
    """Why a LIMIT or OFFSET without an ORDER BY takes other rows than DuckDB's unsplit plan
    would, or None. Such a LIMIT takes rows in the order the plan makes them, and only one
    order is kept by the split: a plain row block's (``block``, not ``grouped``: no join, no
    subquery), which reads the table in its order, the device's leading rows first. Elsewhere
    the order is the plan's: the fold gives a grouped block's groups in another order than
    DuckDB's hash table (``SELECT k, sum(x) FROM t GROUP BY k LIMIT 3``: three other groups);
    a join's rows come in an order the build side decides, and the engines and the arms'
    smaller inputs decide it otherwise (``SELECT s FROM t JOIN d USING (k) LIMIT 5`` on the
    Polars arm; a query filtered by an IN over the split block's groups on both devices). A
    block reading rows in an order both keep (:func:`_ordered_input`: an ordered derived table,
    plain scans and their UNION ALL) takes DuckDB's rows. ``tree`` is the whole query,
    ``block`` the split block in it. A query of one row at most (an aggregate without GROUP BY,
    TPC-DS Q28, Q32, Q38, Q97: ``LIMIT 100``) has one order."""
    for query in tree.find_all(exp.Query):
        if query.args.get("order") is not None:
            continue
        if not (query.args.get("limit") or query.args.get("offset")):
            continue
        if not any(inner is block for inner in query.find_all(exp.Select)):
            continue  # its rows are the same for every arm and the final query
        if query is block and not grouped and _plain_scan(block):
            continue
        if _one_row(query, names) or _only_counted(query, names):
            continue
        if query is not block and _ordered_input(query, tree, scans=True):
            continue
        return (
            f"the query takes rows by LIMIT or OFFSET without an ORDER BY ({_clause(query)}) "
            "in an order the split's plans do not keep (the fold's groups, a join's rows, a "
            "window's rows)"
        )
    return None


def per_arm_limit(block: exp.Select, names: frozenset[str]) -> str | None:
    """Why a query the arms each run takes rows by LIMIT or OFFSET that another run may take
    otherwise, or None. Such a query is one inside the split block (``block``; the block's
    own LIMIT is folded once, in the final query), and each arm runs it on its own engine (a
    host table computed for the Polars arm is another run of it too), so the arms would read
    other rows:

    - under an ORDER BY its rows may tie on, each engine breaks the ties its own way: ``WHERE
      i IN (SELECT i FROM t ORDER BY v LIMIT 10)``, v tied at the tenth row, counted 11 rows
      split on the Polars arm, ``i = (SELECT i ... LIMIT 1)`` 2. Harmless where the ORDER BY
      holds every output (tied rows are alike) or every GROUP BY key (no two rows tie);
    - without an ORDER BY, rows come in the order the plan makes them, which differs between
      engines past a plain scan: ``WHERE v IN (SELECT v FROM t GROUP BY v LIMIT 40)`` counted
      1,192 rows for 1,200, a join's rows alike (:func:`unordered_limit` for the block's own).

    Past both: a query of one row at most, one whose rows are only counted, an EXISTS
    without OFFSET."""
    for query in block.find_all(exp.Select, exp.SetOperation):
        if query is block or not (query.args.get("limit") or query.args.get("offset")):
            continue
        if isinstance(query.parent, exp.Exists) and not query.args.get("offset"):
            continue
        if _one_row(query, names) or _only_counted(query, names):
            continue
        order = query.args.get("order")
        if order is None:
            if _plain_rows(query, names):
                continue
            return (
                f"a subquery takes rows by {_clause(query)} without an ORDER BY, in an order "
                "each arm's engine makes its own (a join's, a GROUP BY's)"
            )
        if _total_order(query, order):
            continue
        return (
            f"a subquery takes rows by {_clause(query)} under an ORDER BY its rows may tie on "
            f"({order.sql(dialect=DIALECT).strip()}): each arm would break the ties its own way"
        )
    return None


def _plain_rows(query: exp.Query, names: frozenset[str]) -> bool:
    """A block of one table's rows in its order, which every engine reads alike."""
    if not isinstance(query, exp.Select) or not _plain_scan(query):
        return False
    return not (query.args.get("group") or aggregate_calls(query, names))


def _total_order(query: exp.Query, order: exp.Order) -> bool:
    """Whether ``order``'s keys hold every output of ``query`` (by position, name or
    expression) or every GROUP BY key of a plainly grouped one."""
    outputs = query.selects
    keys: set[str] = set()
    for ordered in order.expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) and key.is_int and 0 < int(key.name) <= len(outputs):
            key = outputs[int(key.name) - 1]
        elif isinstance(key, exp.Column) and not key.table:
            key = next((o for o in outputs if o.alias_or_name == key.name), key)
        keys |= {key.unalias().sql(dialect=DIALECT), key.alias_or_name} - {""}
    if all(o.unalias().sql(dialect=DIALECT) in keys or o.alias_or_name in keys for o in outputs):
        return True  # (an expression has no name: "" stands for no key)
    group = query.args.get("group")
    if group is None or not group.expressions:
        return False
    if any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
        return False
    return all(g.sql(dialect=DIALECT) in keys for g in group.expressions)


def _one_row(query: exp.Expr, names: frozenset[str], depth: int = 0) -> bool:
    """Whether ``query`` gives one row at most: a block that aggregates with no GROUP BY, no
    window and no UNNEST in its outputs, or a block joining only such blocks."""
    while isinstance(query, exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Select) or depth > 64:
        return False
    if query.args.get("group") is not None or query.args.get("laterals"):
        return False
    if any(isinstance(node, exp.Window) for node in own_nodes(query)):
        return False
    if aggregate_calls(query, names):
        return not any(node.find(exp.Unnest, exp.Explode) for node in query.expressions)
    from_ = query.args.get("from_")
    items = [from_.this] if from_ is not None else []
    items += [join.this for join in query.args.get("joins") or []]
    return bool(items) and all(_one_row(item, names, depth + 1) for item in items)


def _plain_scan(block: exp.Select) -> bool:
    """A block reading one table in its order: no join, no DISTINCT, no subquery in its FROM
    or WHERE (an IN there is a semi join, which may build on either side; one in its LIMIT or
    its outputs is a value), no window or QUALIFY (their rows come in the window's order,
    which the final query's window over the arms' rows makes otherwise)."""
    if block.args.get("joins") or block.args.get("laterals") or block.args.get("distinct"):
        return False
    if block.args.get("qualify") or any(isinstance(n, exp.Window) for n in own_nodes(block)):
        return False
    parts = [block.args.get("from_"), block.args.get("where")]
    return not any(part.find(exp.Select, exp.SetOperation) for part in parts if part)


def _only_counted(query: exp.Query, names: frozenset[str]) -> bool:
    """Whether the rows ``query`` takes are only counted: it is the one FROM item of a block
    whose outputs are ``count(*)`` and read no column (``SELECT count(*) FROM (SELECT DISTINCT
    i FROM t LIMIT 15)``: as many rows whichever it takes)."""
    parent = query.parent
    if not isinstance(parent, exp.Subquery) or not isinstance(parent.parent, exp.From):
        return False
    reader = parent.parent.parent
    if not isinstance(reader, exp.Select) or reader.args.get("joins"):
        return False
    if any(reader.args.get(k) for k in ("where", "group", "having", "qualify", "distinct")):
        return False
    calls = aggregate_calls(reader, names)
    counts = all(isinstance(c, exp.Count) and isinstance(c.this, exp.Star) for c in calls)
    return bool(calls) and counts and not any(e.find(exp.Column) for e in reader.expressions)


def _text(node: exp.Expr) -> str:
    """`` (the call as SQL)``, or nothing where sqlglot would warn writing it."""
    return "" if node.find(exp.IgnoreNulls, exp.RespectNulls) else f" ({node.sql(dialect=DIALECT)})"


def _clause(query: exp.Query) -> str:
    parts = [query.args[k].sql(dialect=DIALECT) for k in ("limit", "offset") if query.args.get(k)]
    return " ".join(parts)


__all__ = ["BY_ARRIVAL", "arrival_dependence", "per_arm_limit", "unordered_limit"]
