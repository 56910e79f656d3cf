"""The final query's outputs: each cast to the unsplit query's type and named as DuckDB names
it (a set operation at the top inside a SELECT that does so), and the partial columns read back
at the types Arrow does not keep (JSON, UUID)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlglot import exp
from sqlglot.errors import SqlglotError

from dau_scheduler.rewrite.block_parts import Refuse
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.fold import PARTIALS
from dau_scheduler.rewrite.order_all import order_by_all


def _cast(node: exp.Expr, to: exp.DataType) -> exp.Expr:
    if isinstance(node, exp.Cast) and node.to == to:
        return node
    return exp.Cast(this=node, to=to)


def cast_outputs(final: exp.Expr, columns: Sequence[str], types: Sequence[str]) -> exp.Expr:
    """Cast every output to the unsplit query's type and name it as DuckDB names it."""

    def target(type_name: str) -> exp.DataType:
        try:
            return exp.DataType.build(type_name, dialect=DIALECT)
        except (SqlglotError, ValueError) as exc:
            raise Refuse(f"output type {type_name} cannot be expressed for the final cast") from exc

    if (
        isinstance(final, exp.Select)
        and len(final.expressions) == len(columns)
        and not any(isinstance(p, exp.Star) for p in final.expressions)
    ):
        renamed = {
            p.alias: name
            for p, name in zip(final.expressions, columns, strict=True)
            if p.alias and p.alias != name
        }
        final.set(
            "expressions",
            [
                exp.alias_(_cast(p.unalias(), target(t)), name, quoted=True)
                for p, name, t in zip(final.expressions, columns, types, strict=True)
            ],
        )
        order = final.args.get("order")
        if order is not None and renamed:
            # ORDER BY may name an output by the alias qualify gave it; follow the rename.
            for column in list(order.find_all(exp.Column)):
                if not column.table and column.name in renamed:
                    column.replace(exp.column(renamed[column.name], quoted=True))
        return final
    if isinstance(final, exp.SetOperation):
        return _cast_set_operation(final, columns, [target(t) for t in types])
    raise Refuse("the query's top level is not a plain SELECT list the final cast can wrap")


#: Partial column types DuckDB writes to Arrow as another type, and reads back as that one
#: (alone or inside a list, struct or map). JSON and UUID leave as plain text: the final query
#: reads such a column as its type again (a cast from VARCHAR to JSON checks the text and
#: keeps it as it is; to UUID it reads DuckDB's own writing of the UUID back). Read as text,
#: a UUID key hashed apart from the UUID (``SELECT u, hash(u) FROM t GROUP BY u``, and
#: ``typeof`` said VARCHAR; forty-fourth session).
_RETYPED = re.compile(r"\b(JSON|UUID)\b")


def partials_typed(
    final: exp.Expr, partial_columns: Sequence[str], partial_types: Sequence[str]
) -> exp.Expr:
    """``final`` reading each partial column of a type in ``_RETYPED`` as that type."""
    retyped = [
        exp.alias_(
            exp.Cast(this=exp.column(c, quoted=True), to=exp.DataType.build(t, dialect=DIALECT)),
            c,
            quoted=True,
        )
        for c, t in zip(partial_columns, partial_types, strict=True)
        if _RETYPED.search(t)
    ]
    if not retyped:
        return final
    for table in list(final.find_all(exp.Table)):
        if table.name == PARTIALS and not table.db and not table.catalog:
            read = exp.Select(expressions=[exp.Star(replace=[r.copy() for r in retyped])])
            table.replace(
                exp.Subquery(
                    this=read.from_(PARTIALS),
                    alias=exp.TableAlias(this=exp.to_identifier(table.alias_or_name)),
                )
            )
    return final


def _cast_set_operation(
    final: exp.SetOperation, columns: Sequence[str], types: Sequence[exp.DataType]
) -> exp.Select:
    """A set operation at the top, cast and named in a SELECT around it: ``SELECT CAST(__dau_c0
    AS T) AS name, ... FROM (a UNION b) AS __dau_top(__dau_c0, ...)``, its outputs read by
    position (DuckDB's order, BY NAME too). Its CTEs, ORDER BY, LIMIT and OFFSET move to the
    SELECT, an ORDER BY by output name as the output's position (what ORDER BY over a set
    operation can name); the operation itself is unchanged."""
    if len(final.named_selects) != len(columns):
        raise Refuse(
            "the query's top level is a set operation whose outputs the first query does not "
            "list (BY NAME with columns only one side has, or a *)"
        )
    order = final.args.get("order")
    if order is not None:
        order.set("expressions", order_by_all(order, len(columns)))
        # An output named as DuckDB names it (after the first query), else as sqlglot does.
        named = [[name.lower() for name in columns], [n.lower() for n in final.named_selects]]
        for term in order.expressions:
            key = term.this
            if isinstance(key, exp.Literal) and not key.is_string:
                continue
            found = next(
                (
                    names.index(key.name.lower())
                    for names in named
                    if isinstance(key, exp.Column) and names.count(key.name.lower()) == 1
                ),
                None,
            )
            if found is not None and not key.table:
                key.replace(exp.Literal.number(found + 1))
                continue
            raise Refuse(
                f"ORDER BY {key.sql(dialect=DIALECT)} over the top-level set operation names no "
                "output by name or position"
            )
    moved = {key: final.args.get(key) for key in ("with_", "order", "limit", "offset")}
    for key in moved:
        final.set(key, None)
    inner = [f"__dau_c{i}" for i in range(len(columns))]
    wrapper = exp.Select(
        expressions=[
            exp.alias_(exp.Cast(this=exp.column(c, quoted=True), to=t), name, quoted=True)
            for c, name, t in zip(inner, columns, types, strict=True)
        ]
    ).from_(
        exp.Subquery(
            this=final,
            alias=exp.TableAlias(
                this=exp.to_identifier("__dau_top"),
                columns=[exp.to_identifier(c, quoted=True) for c in inner],
            ),
        )
    )
    for key, value in moved.items():
        if value is not None:
            wrapper.set(key, value)
    return wrapper


__all__ = ["cast_outputs", "partials_typed"]
