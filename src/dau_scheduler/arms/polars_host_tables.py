"""CTEs, derived tables and IN lists the host computes for the Polars arm, where the arm cannot
compute them itself: a CTE or subquery of the partial that reads whole tables only (never the
split rows) and that Polars cannot run as DuckDB does (a window function, TPC-DS Q44 and Q70;
a join matching many rows to many past ``polars_facts.MANY_PAIRS`` rows, or beside another;
anything else the translation refuses).

Such a subquery's rows are the same for every arm, so the host computes them once per query with
DuckDB, the engine whose answer the split must equal, and the arm reads them as a table,
``__dau_host_<digest>`` (``polars_hoist.HostValues`` holds it):

- a CTE ``c AS (SELECT ...)`` becomes ``c AS (SELECT ... FROM __dau_host_...)``, and a derived
  table ``(SELECT ...) AS t`` becomes ``__dau_host_... AS t``, its columns named as the
  query's outputs (or the alias's column list);
- ``x IN (SELECT ...)`` becomes ``x IN (SELECT v FROM __dau_host_...)``.

The host runs the subquery on its own, with the partial's CTEs it reads written before it. It
binds there only where it is uncorrelated: a column of an outer query resolves, in the whole
query, to the nearest enclosing source of its name, and every source inside the subquery is
there too, so one that resolves outside finds nothing and the host declines (the subquery then
stays, and the partial is refused as before). A subquery the arm runs by itself is left to it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from sqlglot import exp

from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.planner import PLACEHOLDER


def top_ctes(tree: exp.Expr) -> dict[str, exp.CTE]:
    """The top-level CTEs of the partial, by lower-cased name."""
    with_ = tree.args.get("with_")
    return {cte.alias_or_name.lower(): cte for cte in (with_.expressions if with_ else [])}


def is_recursive(tree: exp.Expr) -> bool:
    """Whether the partial's WITH is ``WITH RECURSIVE``."""
    with_ = tree.args.get("with_")
    return bool(with_ is not None and with_.args.get("recursive"))


def _reads(node: exp.Expr) -> set[str]:
    """The lower-cased names of the tables ``node`` reads."""
    return {table.name.lower() for table in node.find_all(exp.Table)}


def ctes_needed(query: exp.Expr, ctes: dict[str, exp.CTE]) -> list[str] | None:
    """The partial's CTEs ``query`` reads, directly or through each other, in the order they
    are written; None where one of them (or ``query``) reads the split rows."""
    wanted: set[str] = set()
    todo = [query]
    while todo:
        node = todo.pop()
        names = _reads(node)
        if PLACEHOLDER in names:
            return None
        for name in names & ctes.keys() - wanted:
            wanted.add(name)
            todo.append(ctes[name].this)
    return [name for name in ctes if name in wanted]


def _names(named: exp.Subquery | exp.CTE, query: exp.Query) -> tuple[str, ...] | None:
    """The column names the derived table or CTE ``named`` gives its readers: its alias's
    column list, or its outputs' names; None where they are not plain, distinct names."""
    alias = named.args.get("alias")
    listed = alias.columns if isinstance(alias, exp.TableAlias) else []
    names = [c.name for c in listed] if listed else [s.alias_or_name for s in query.selects]
    lowered = [n.lower() for n in names]
    if not names or "" in lowered or "*" in lowered or len(set(lowered)) < len(names):
        return None
    return tuple(names)


def standalone(
    query: exp.Query, ctes: dict[str, exp.CTE], needed: list[str], recursive: bool
) -> exp.Query | None:
    """``query`` with the partial's CTEs it reads written before it, ``WITH RECURSIVE`` where
    the partial's is (None where it has CTEs of its own besides)."""
    alone = query.copy()
    if not needed:
        return alone
    if alone.args.get("with_") is not None:
        return None
    written = [ctes[name].copy() for name in needed]
    alone.set("with_", exp.With(expressions=written, recursive=recursive or None))
    return alone


def host_sql(query: exp.Query, names: tuple[str, ...]) -> str:
    """The host's query: ``query``'s rows under ``names``."""
    columns = [exp.to_identifier(name, quoted=True) for name in names]
    pinned = exp.select("*").from_(
        exp.Subquery(
            this=query,
            alias=exp.TableAlias(this=exp.to_identifier("__dau_rows"), columns=columns),
        )
    )
    return pinned.sql(dialect=DIALECT)


def table_name(sql: str, prefix: str) -> str:
    """The name of the host's table of ``sql``'s rows."""
    return prefix + hashlib.sha256(sql.encode()).hexdigest()[:16]


def _kind(subquery: exp.Subquery) -> str | None:
    """``"table"`` for a derived table in FROM or a JOIN, ``"in"`` for an IN list, else None."""
    parent = subquery.parent
    if isinstance(parent, (exp.From, exp.Join)) and parent.this is subquery:
        return "table"
    if isinstance(parent, exp.In) and parent.args.get("query") is subquery:
        return "in"
    return None


def hoist_tables(
    tree: exp.Expr,
    runs_alone: Callable[[exp.Query], bool],
    accept: Callable[[str, str, tuple[str, ...]], bool],
    prefix: str,
) -> tuple[exp.Expr, list[str]]:
    """``tree`` (the partial, a copy the caller owns) with each CTE, derived table and IN list
    of the kinds above that the arm does not run by itself (``runs_alone``) and the host takes
    (``accept(name, sql, names)``: it ran it over no rows) read from the host's table; and the
    names of those tables. CTEs are taken first, then subqueries, outer ones before the ones
    inside them; CTEs no longer read are dropped."""
    ctes = top_ctes(tree)
    written = {name: cte.copy() for name, cte in ctes.items()}  # as the host reads them
    recursive = is_recursive(tree)
    taken: list[str] = []

    def take(query: exp.Query, names: tuple[str, ...] | None, within: exp.CTE | None) -> str:
        needed = ctes_needed(query, written)
        if names is None or needed is None or not in_scope(within, needed, tree):
            return ""
        alone = standalone(query, written, needed, recursive)
        if alone is None or runs_alone(alone.copy()):
            return ""
        sql = host_sql(alone, names)
        name = table_name(sql, prefix)
        if not accept(name, sql, names):
            return ""
        if name not in taken:
            taken.append(name)
        return name

    for cte in list(ctes.values()):
        query = cte.this
        names = _names(cte, query) if isinstance(query, exp.Query) else None
        if names is not None and (name := take(query, names, cte)):
            columns = [
                exp.Column(this=exp.to_identifier(n, quoted=True), table=exp.to_identifier(name))
                for n in names
            ]
            cte.set("this", exp.select(*columns).from_(name))
    done: list[exp.Expr] = []
    for subquery in list(tree.find_all(exp.Subquery)):
        query = subquery.this
        kind = _kind(subquery)
        if (
            kind is None
            or not isinstance(query, exp.Query)
            or any(_inside(subquery, d) for d in done)
        ):
            continue
        if kind == "table":
            names = _names(subquery, query)
        else:
            names = ("v",) if len(query.selects) == 1 else None
        name = take(query, names, subquery.find_ancestor(exp.CTE))
        if not name:
            continue
        done.append(subquery)
        if kind == "table":
            alias = subquery.args.get("alias")
            table = exp.to_table(name)
            if isinstance(alias, exp.TableAlias):
                table.set("alias", exp.TableAlias(this=alias.this.copy()))
            subquery.replace(table)
        else:
            subquery.set("this", exp.select(exp.column("v", table=name)).from_(name))
    if taken:
        drop_unread_ctes(tree)
    return tree, taken


def in_scope(within: exp.CTE | None, needed: list[str], tree: exp.Expr) -> bool:
    """Whether the CTEs ``needed`` are all visible in the body of ``within`` (a top-level CTE:
    those written before it; never in a recursive WITH, whose CTEs read themselves), or in the
    query's body (``within`` None: any of them)."""
    with_ = tree.args.get("with_")
    if with_ is None or within is None:
        return True
    if with_.args.get("recursive"):
        return False
    order = [c.alias_or_name.lower() for c in with_.expressions]
    here = next((i for i, c in enumerate(with_.expressions) if c is within), -1)
    return here >= 0 and all(order.index(name) < here for name in needed)


def _inside(node: exp.Expr, ancestor: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


def drop_unread_ctes(tree: exp.Expr) -> None:
    """Drop the top-level CTEs nothing reads any more (a CTE read only by subqueries the host
    now computes would still be planned, and its joins checked, on the arm)."""
    with_ = tree.args.get("with_")
    while with_ is not None:
        rest = tree.copy()
        rest.set("with_", None)
        read = _reads(rest)
        for cte in with_.expressions:
            read |= _reads(cte.this) - {cte.alias_or_name.lower()}
        kept = [cte for cte in with_.expressions if cte.alias_or_name.lower() in read]
        if len(kept) == len(with_.expressions):
            return
        with_.set("expressions", kept)
        if not kept:
            tree.set("with_", None)
            return


__all__ = [
    "ctes_needed",
    "drop_unread_ctes",
    "hoist_tables",
    "host_sql",
    "in_scope",
    "is_recursive",
    "standalone",
    "table_name",
    "top_ctes",
]
