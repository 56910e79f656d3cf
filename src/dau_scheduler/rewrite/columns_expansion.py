"""``COLUMNS(...)`` in a SELECT's outputs, written out one column at a time.

DuckDB expands ``max(COLUMNS(*))``, ``sum(COLUMNS('i|x'))``, ``COLUMNS(* EXCLUDE (s)) + 1``,
``COLUMNS(u.*)`` and ``COLUMNS(lambda c: ...)`` into one output per matching column of the
SELECT's FROM clause, each named after its column (or all after the output's alias). The split
reads a query one expression an output, so such a query was refused. Here DuckDB itself says
which columns an expansion matches (a ``SELECT COLUMNS(...) FROM <the same FROM> LIMIT 0``
bound, never run: its regex and lambda rules are DuckDB's own), and each output is written
once per column, aliased with DuckDB's name for it.

A column is named bare only where that name is one column of the FROM clause (a USING join's
merged column counts once), and through its table where the expansion is of ``t.*``. The
written query must bind to the unsplit query's very names and types, or the query is kept as
it was (and refused as before). Left as they are: ``COLUMNS`` outside the outputs (WHERE,
GROUP BY, ORDER BY), the unpacking ``*COLUMNS(...)``, two different ``COLUMNS`` in one output,
a star with REPLACE or RENAME (an output that is not a column), and any expansion DuckDB cannot
bind on its own (a lateral or correlated FROM).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlglot import exp

from dau_scheduler.rewrite.columns import UNANALYSABLE
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.reading import Binder


class _Unexpandable(Exception):
    """This query's COLUMNS(...) is left as written."""


def _own_columns_nodes(projection: exp.Expr) -> list[exp.Columns]:
    """The COLUMNS(...) of ``projection`` outside any subquery in it."""
    found = []
    for node in projection.walk(prune=lambda n: isinstance(n, exp.Query) and n is not projection):
        if isinstance(node, exp.Columns):
            found.append(node)
    return found


def ctes_around(select: exp.Expr) -> list[exp.CTE]:
    """The CTEs ``select`` may read, outermost first (an inner one of a name shadows)."""
    levels: list[list[exp.CTE]] = []
    node: exp.Expr | None = select
    while node is not None:
        with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
        if isinstance(with_, exp.With) and node is not select:
            levels.append(list(with_.expressions))
        node = node.parent
    seen: dict[str, exp.CTE] = {}
    for level in reversed(levels):
        for cte in level:
            seen[cte.alias_or_name.lower()] = cte
    return list(seen.values())


def _probe(select: exp.Select, outputs: Sequence[exp.Expr]) -> str:
    """``SELECT <outputs> <select's FROM and joins> LIMIT 0``, with the CTEs it may read."""
    probe = exp.Select(expressions=[o.copy() for o in outputs])
    for key in ("from_", "joins", "with_"):
        value = select.args.get(key)
        if value is not None:
            probe.set(key, [v.copy() for v in value] if isinstance(value, list) else value.copy())
    ctes = ctes_around(select)
    if ctes:
        inner = probe.args.get("with_")
        own = list(inner.expressions) if isinstance(inner, exp.With) else []
        names = {c.alias_or_name.lower() for c in own}
        kept = [c.copy() for c in ctes if c.alias_or_name.lower() not in names]
        probe.set("with_", exp.With(expressions=[*kept, *own]))
    probe.set("limit", exp.Limit(expression=exp.Literal.number(0)))
    return probe.sql(dialect=DIALECT)


def _bind_names(binder: Binder, sql: str) -> list[str]:
    try:
        names, _, _ = binder(sql)
    except (ValueError, RuntimeError) as exc:  # SplitError is a ValueError
        raise _Unexpandable(str(exc)) from exc
    return list(names)


def _targets(select: exp.Select, columns: exp.Columns, binder: Binder) -> list[exp.Column]:
    """The columns ``columns`` expands to in ``select``, as references that read them."""
    star = columns.this
    if columns.args.get("unpack"):
        raise _Unexpandable("an unpacked COLUMNS")
    if isinstance(star, exp.Star) and (star.args.get("replace") or star.args.get("rename")):
        raise _Unexpandable("a star with REPLACE or RENAME")
    if select.args.get("from_") is None:
        raise _Unexpandable("no FROM clause")
    names = _bind_names(binder, _probe(select, [columns]))
    if isinstance(star, exp.Column) and isinstance(star.this, exp.Star) and star.table:
        table = star.args["table"]
        return [exp.column(name, table=table.copy(), quoted=True) for name in names]
    every = Counter(name.lower() for name in _bind_names(binder, _probe(select, [exp.Star()])))
    if any(every[name.lower()] != 1 for name in names):
        raise _Unexpandable("a name two columns of the FROM clause carry")
    return [exp.column(name, quoted=True) for name in names]


def _expand_select(select: exp.Select, binder: Binder) -> bool:
    outputs: list[exp.Expr] = []
    changed = False
    for projection in select.expressions:
        found = _own_columns_nodes(projection)
        if not found:
            outputs.append(projection)
            continue
        if len({node.sql(dialect=DIALECT) for node in found}) != 1:
            raise _Unexpandable("two different COLUMNS in one output")
        targets = _targets(select, found[0], binder)
        alias = projection.alias if isinstance(projection, exp.Alias) else None
        body = projection.this if isinstance(projection, exp.Alias) else projection
        for target in targets:
            written = body.copy()
            for node in _own_columns_nodes(written):
                if node is written:
                    written = target.copy()
                else:
                    node.replace(target.copy())
            outputs.append(exp.alias_(written, alias or target.name, quoted=True))
        changed = True
    if changed:
        select.set("expressions", outputs)
    return changed


def expand_columns(
    tree: exp.Expr, binder: Binder, names: Sequence[str], types: Sequence[str]
) -> exp.Expr:
    """``tree`` with each SELECT's ``COLUMNS(...)`` outputs written out (see the module), or
    ``tree`` itself where it has none or its expansion is left as written. ``names`` and
    ``types``: the unsplit query's bound outputs, which the written query must repeat."""
    if not any(isinstance(node, exp.Columns) for node in tree.walk()):
        return tree
    written = tree.copy()
    try:
        # Inner SELECTs first: an outer probe reads a derived table's outputs as written.
        selects = sorted(written.find_all(exp.Select), key=lambda s: -s.depth)
        if not any([_expand_select(select, binder) for select in selects]):
            return tree
        bound_names, bound_types, _ = binder(written.sql(dialect=DIALECT))
    except (_Unexpandable, ValueError, RuntimeError, *UNANALYSABLE):
        return tree
    if list(bound_names) != list(names) or list(bound_types) != list(types):
        return tree
    return written


__all__ = ["expand_columns"]
