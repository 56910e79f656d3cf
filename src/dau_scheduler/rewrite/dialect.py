"""The SQL dialect the rewrite reads and writes: DuckDB's, keeping what the user wrote about
NULL order.

sqlglot's DuckDB dialect takes ``NULLS LAST`` as DuckDB's default and drops it when it writes the
query back. On a connection with ``SET default_null_order = 'nulls_first'`` that turns
``ORDER BY i NULLS LAST`` into ``ORDER BY i``, which puts the NULLs first: a wrong answer
(DuckDB's ``test/sql/order/test_nulls_first.test``). Here an ``ORDER BY`` item that says its NULL
order keeps saying it; one that does not is written without it, so the connection's own setting
still decides it, as it does for the unsplit query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

#: Meta key set on an ``Ordered`` whose NULLS FIRST / NULLS LAST was written in the query.
EXPLICIT_NULLS = "dau_explicit_nulls"


class DauDuckDB(DuckDB):
    """DuckDB's SQL, with an explicit NULL order kept through a parse and a write."""

    class Parser(DuckDB.Parser):  # type: ignore[misc,valid-type]
        def _parse_ordered(
            self, parse_method: Callable[[], exp.Expr | None] | None = None
        ) -> exp.Ordered | None:
            ordered: exp.Ordered | None = super()._parse_ordered(parse_method)
            if ordered is not None and self._index >= 2:
                nulls, which = self._tokens[self._index - 2], self._tokens[self._index - 1]
                if nulls.text.upper() == "NULLS" and which.text.upper() in ("FIRST", "LAST"):
                    ordered.meta[EXPLICIT_NULLS] = True
            return ordered

    class Generator(DuckDB.Generator):  # type: ignore[misc,valid-type]
        def ordered_sql(self, expression: exp.Ordered) -> str:
            text: str = super().ordered_sql(expression)
            if (
                expression.meta.get(EXPLICIT_NULLS)
                and not expression.args.get("nulls_first")
                and not text.endswith(" NULLS LAST")
            ):
                text += " NULLS LAST"
            return text


#: What ``read=`` and ``dialect=`` take wherever the rewrite parses or writes SQL.
DIALECT: Any = DauDuckDB

__all__ = ["DIALECT", "EXPLICIT_NULLS", "DauDuckDB"]
