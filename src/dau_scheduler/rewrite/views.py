"""A query over views, read as the same query over their definitions (decision 022).

DuckDB binds a view as the subquery its definition is, under the view's column names. A
view in the Session's place (the database and schema its tables live in) is written here as
that subquery, so a split sees the tables the view reads. Nothing is inlined when that could
read a name differently than DuckDB does: a view named like a CTE of the query, a view body
that reads a name the query defines as a CTE (a CTE does not reach into a view), a reference
with more than a name and an alias (a sample, a time-travel clause), or a definition sqlglot
cannot read. The rewritten query is bound again by the planner, which refuses it when its
types are not the original's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dau_scheduler.rewrite.dialect import DIALECT

#: Views of views are inlined this deep; deeper ones are left as they are (and refused).
MAX_DEPTH = 8
#: The parts of a reference to a view that inlining keeps.
_REFERENCE_ARGS = frozenset({"this", "alias", "db", "catalog"})


@dataclass(frozen=True)
class View:
    """A persistent view: its definition as DuckDB keeps it (``CREATE VIEW ...``) and the
    names of its output columns, in order."""

    name: str
    sql: str
    columns: tuple[str, ...]


#: Looks up views by lower-case name in the Session's place; names that are no view are left
#: out of the answer.
ViewLookup = Callable[[Collection[str]], Mapping[str, View]]


def in_place(table: exp.Table, place: tuple[str, str]) -> bool:
    """Whether ``table`` names something in ``place`` (database, schema), as DuckDB resolves a
    bare, schema- or catalog-qualified name from there."""
    database, own = (part.lower() for part in place)
    catalog, db = table.catalog.lower(), table.db.lower()
    if catalog:
        return catalog == database and db == own
    if db == database:  # ``memory.t``: that catalog's default schema, main
        return own == "main"
    return not db or db == own  # a bare name, or ``s.t``: schema s of the current database


def namesake_elsewhere(
    tree: exp.Expr, schema: dict[str, dict[str, str]], place: tuple[str, str]
) -> exp.Table | None:
    """A table reference qualified with another schema or database than ``place`` whose bare
    name is one of the Session's tables (``s1.t`` beside ``main.t``: DuckDB's
    export_database.test), or None. Everything here matches tables by their bare names."""
    for table in tree.find_all(exp.Table):
        if table.name.lower() in schema and not in_place(table, place):
            return table
    return None


#: DuckDB keeps ``INTERVAL '3' MONTH`` in a view's definition as
#: ``to_months(CAST(trunc(CAST('3' AS DOUBLE)) AS INTEGER))`` (seconds and milliseconds without
#: the ``trunc``). Read back, those calls are the literals they were, which every arm reads.
_INTERVAL_UNITS = {
    "to_years": "YEAR",
    "to_months": "MONTH",
    "to_weeks": "WEEK",
    "to_days": "DAY",
    "to_hours": "HOUR",
    "to_minutes": "MINUTE",
    "to_seconds": "SECOND",
    "to_milliseconds": "MILLISECOND",
    "to_microseconds": "MICROSECOND",
}
_WHOLE = re.compile(r"^-?\d{1,6}$")


def _whole_literal(node: exp.Expr) -> str | None:
    """``N`` where ``node`` is ``CAST(N AS DOUBLE)`` of a whole-number literal, else None."""
    if not (isinstance(node, exp.Cast) and node.to.is_type(exp.DType.DOUBLE)):
        return None
    literal = node.this
    if isinstance(literal, exp.Neg) and isinstance(literal.this, exp.Literal):
        text = "-" + str(literal.this.this)
    elif isinstance(literal, exp.Literal):
        text = str(literal.this)
    else:
        return None
    return text if _WHOLE.match(text) else None


def _interval_literal(call: exp.Func) -> exp.Interval | None:
    if isinstance(call, exp.Anonymous):
        name, arguments = str(call.this).lower(), call.expressions
    elif isinstance(call, exp.ToDays):  # the one of them sqlglot knows by name
        name, arguments = "to_days", [call.this]
    else:
        return None
    unit = _INTERVAL_UNITS.get(name)
    if unit is None or len(arguments) != 1:
        return None
    argument = arguments[0]
    if (
        isinstance(argument, exp.Cast)
        and argument.to.is_type(exp.DType.INT, exp.DType.BIGINT)
        and isinstance(argument.this, exp.Trunc)
        and not argument.this.args.get("decimals")
    ):
        argument = argument.this.this
    whole = _whole_literal(argument)
    if whole is None:
        return None
    return exp.Interval(this=exp.Literal.string(whole), unit=exp.var(unit))


def unchanged(views: tuple[View, ...], lookup: ViewLookup) -> bool:
    """Whether ``views`` (those a plan read) are still defined as they were."""
    if not views:
        return True
    now = lookup({view.name.lower() for view in views})
    return all(now.get(view.name.lower()) == view for view in views)


def _body(view: View) -> exp.Query | None:
    try:
        create = sqlglot.parse_one(view.sql, read=DIALECT)
    except SqlglotError:
        return None
    body = create.expression if isinstance(create, exp.Create) else None
    if not isinstance(body, exp.Query):
        return None
    for call in list(body.find_all(exp.Anonymous, exp.ToDays)):
        literal = _interval_literal(call)
        if literal is not None:
            call.replace(literal)
    return body


def _cte_names(tree: exp.Expr) -> set[str]:
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def _references(tree: exp.Expr, known: Collection[str], place: tuple[str, str]) -> list[exp.Table]:
    """References that may name a view: not a Session table, not a CTE name, in ``place``."""
    ctes = _cte_names(tree)
    found = []
    for table in tree.find_all(exp.Table):
        name = table.name.lower()
        if (
            not isinstance(table.this, exp.Identifier)
            or not name
            or name in known
            or name in ctes
            or not in_place(table, place)
            or {key for key, value in table.args.items() if value} - _REFERENCE_ARGS
        ):
            continue
        found.append(table)
    return found


def _as_subquery(table: exp.Table, view: View, body: exp.Query) -> exp.Subquery:
    alias = table.args.get("alias")
    renamed = [column.name for column in alias.columns] if alias is not None else []
    columns = renamed + list(view.columns[len(renamed) :])
    name = alias.this if alias is not None and alias.this is not None else table.this
    return exp.Subquery(
        this=body,
        alias=exp.TableAlias(
            this=name.copy(),
            columns=[exp.to_identifier(column, quoted=True) for column in columns],
        ),
    )


@dataclass(frozen=True)
class Inlined:
    """A query with its views read as their definitions: the query, the views inlined, and
    why nothing was inlined where a view could not be (None when every view was)."""

    tree: exp.Expr
    views: tuple[View, ...] = ()
    refusal: str | None = None
    #: Every view the query reads, inlined or not (a plan over them is stale once one changes).
    seen: tuple[View, ...] = ()


def inline_views(
    tree: exp.Expr, known: Collection[str], place: tuple[str, str], lookup: ViewLookup
) -> Inlined:
    """``tree`` with its references to views of ``place`` replaced by their definitions; the
    views it inlined; ``tree`` itself, no views and the reason where anything could read
    differently (module docstring). ``known`` are the Session's tables; ``tree`` is not
    changed."""
    inlined = tree.copy()
    used: dict[str, View] = {}
    seen: dict[str, View] = {}

    def found() -> tuple[View, ...]:
        return tuple(seen[name] for name in sorted(seen))

    for depth in range(MAX_DEPTH + 1):
        references = _references(inlined, known, place)
        views = lookup({table.name.lower() for table in references}) if references else {}
        references = [table for table in references if table.name.lower() in views]
        seen.update(views)
        if not references:
            break
        if depth == MAX_DEPTH:
            why = f"the query reads views nested over {MAX_DEPTH} deep"
            return Inlined(tree, refusal=why, seen=found())
        outer_ctes = _cte_names(inlined)
        for table in references:
            view = views[table.name.lower()]
            body = _body(view)
            if body is None:
                why = f"the definition of view {view.name} is not read"
                return Inlined(tree, refusal=why, seen=found())
            reads = {t.name.lower() for t in body.find_all(exp.Table)} - _cte_names(body)
            shadowed = sorted(reads & outer_ctes)
            if shadowed:
                return Inlined(
                    tree,
                    refusal=(
                        f"view {view.name} reads {shadowed[0]}, which the query defines as a "
                        "CTE; DuckDB reads the table for the view, not the CTE"
                    ),
                    seen=found(),
                )
            table.replace(_as_subquery(table, view, body))
            used[view.name.lower()] = view
    return Inlined(inlined, tuple(used[name] for name in sorted(used)), seen=found())
