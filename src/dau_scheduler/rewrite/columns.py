"""The columns of each base table a query reads, from sqlglot's qualified reading of it."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.dialect import DIALECT


def query_columns(sql: str, schema: dict[str, dict[str, str]]) -> dict[str, set[str]]:
    """The columns of each base table the query reads (``SELECT *`` reads them all)."""
    try:
        tree = qualify(
            sqlglot.parse_one(sql, read=DIALECT),
            schema=dict(schema),
            dialect=DIALECT,
            validate_qualify_columns=False,
        )
    except SqlglotError as exc:
        raise SqlError(f"cannot read the columns this query uses: {exc}") from exc
    out: dict[str, set[str]] = {}
    for scope in traverse_scope(tree):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table) and source.name.lower() in schema:
                out.setdefault(source.name.lower(), set()).add(column.name.lower())
    return out


__all__ = ["query_columns"]
