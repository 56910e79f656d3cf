"""The SQL dialect the rewrite reads and writes: DuckDB's, keeping what the user wrote about
NULL order and how an interval was written.

sqlglot's DuckDB dialect takes ``NULLS LAST`` as DuckDB's default and drops it when it writes the
query back. On a connection with ``SET default_null_order = 'nulls_first'`` that turns
``ORDER BY i NULLS LAST`` into ``ORDER BY i``, which puts the NULLs first: a wrong answer
(DuckDB's ``test/sql/order/test_nulls_first.test``). Here an ``ORDER BY`` item that says its NULL
order keeps saying it; one that does not is written without it, so the connection's own setting
still decides it, as it does for the unsplit query.

sqlglot reads ``INTERVAL '2 days'`` as ``INTERVAL '2' DAYS`` and writes it so; DuckDB reads the
second form as ``to_days(trunc(CAST('2' AS DOUBLE)))``, the same value for a whole number but a
different query (the front-end check in ``rewrite/reading.py`` refused it as an added ``trunc``).
It also read ``INTERVAL '14 months ago'`` as ``INTERVAL '14' MONTHS``, the sign lost. Here an
interval written as one string is written back as one string, and a string sqlglot would split
leaving text behind is kept whole, without a unit (no rewrite step reads its amount).

sqlglot reads ``list_sort(l, 'DESC', 'NULLS LAST')`` as a sort without a NULL order and writes
``ARRAY_REVERSE_SORT(l)``, whose NULLs go where ``default_null_order`` puts them: first, on a
connection set so (a wrong answer). The list sorts are kept here as the calls they were. And
``(x,)``, a struct of one field, was written ``(x)``, the value itself; it keeps its comma.
``x IN [1, NULL]`` (list containment: false for 2) was written ``x IN (1, NULL)`` (NULL for 2,
so ``NOT`` it filters every row out); it keeps its brackets. ``log2(x)`` and ``log10(x)`` were
written ``log(2, x)`` and ``log(10, x)``, which DuckDB computes as a ratio of logarithms, a bit
off ``log2`` for a third of the integers; they are kept as written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import TokenType, exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.expressions import INTERVAL_STRING_RE

#: Meta key set on an ``Ordered`` whose NULLS FIRST / NULLS LAST was written in the query.
EXPLICIT_NULLS = "dau_explicit_nulls"
#: Meta key set on an ``Interval`` read from one string (``INTERVAL '2 days'``): the amount and
#: unit it was read as and the string, written back as it was while they are unchanged.
IN_STRING = "dau_interval_in_string"


def _as_written(name: str) -> Callable[[list[exp.Expr]], exp.Expr]:
    def build(args: list[exp.Expr]) -> exp.Expr:
        return exp.Anonymous(this=name, expressions=args)

    return build


#: Calls read as written, not as sqlglot's model of them (which loses their arguments).
_AS_WRITTEN = (
    "LIST_SORT",
    "ARRAY_SORT",
    "LIST_REVERSE_SORT",
    "ARRAY_REVERSE_SORT",
    "LOG2",
    "LOG10",
)


class DauDuckDB(DuckDB):
    """DuckDB's SQL, with what sqlglot would write otherwise kept through a parse and a write:
    an explicit NULL order, an interval in one string, list sorts, a struct of one field,
    containment in a list."""

    class Parser(DuckDB.Parser):  # type: ignore[misc,valid-type]
        FUNCTIONS: ClassVar[dict[str, Callable[..., exp.Expr]]] = {
            **DuckDB.Parser.FUNCTIONS,
            **{n: _as_written(n) for n in _AS_WRITTEN},
        }

        def _parse_ordered(
            self, parse_method: Callable[[], exp.Expr | None] | None = None
        ) -> exp.Ordered | None:
            ordered: exp.Ordered | None = super()._parse_ordered(parse_method)
            if ordered is not None and self._index >= 2:
                nulls, which = self._tokens[self._index - 2], self._tokens[self._index - 1]
                if nulls.text.upper() == "NULLS" and which.text.upper() in ("FIRST", "LAST"):
                    ordered.meta[EXPLICIT_NULLS] = True
            return ordered

        def _parse_in(self, this: exp.Expr | None, alias: bool = False) -> exp.In:
            # x IN [1, NULL] is list containment (false where 2 is not found), x IN (1, NULL)
            # the SQL predicate (NULL): sqlglot wrote the one as the other.
            if self._curr is not None and self._curr.token_type == TokenType.L_BRACKET:
                contained: exp.In = self.expression(exp.In(this=this, field=self._parse_bitwise()))
                return contained
            found: exp.In = super()._parse_in(this, alias)
            return found

        def _parse_interval_span(
            self, this: exp.Expr, parse_function_unit: bool = True
        ) -> exp.Interval:
            written = this.name if this is not None and this.is_string else None
            interval: exp.Interval = super()._parse_interval_span(this, parse_function_unit)
            unit = interval.args.get("unit")
            if written is None or interval.this is this or not isinstance(unit, exp.Var):
                return interval
            if not INTERVAL_STRING_RE.fullmatch(written):  # '14 months ago': kept whole
                return exp.Interval(this=exp.Literal.string(written))
            interval.meta[IN_STRING] = (interval.this.name, unit.name, written)
            return interval

    class Generator(DuckDB.Generator):  # type: ignore[misc,valid-type]
        def interval_sql(self, expression: exp.Interval) -> str:
            this, unit = expression.this, expression.args.get("unit")
            written = expression.meta.get(IN_STRING)
            if (
                isinstance(this, exp.Literal)
                and isinstance(unit, exp.Var)
                and written is not None
                and written[:2] == (this.name, unit.name)
            ):
                return f"INTERVAL {self.sql(exp.Literal.string(written[2]))}"
            text: str = super().interval_sql(expression)
            return text

        def tuple_sql(self, expression: exp.Tuple) -> str:
            # (x,) is a struct of one field; sqlglot wrote it (x), the value itself.
            text: str = super().tuple_sql(expression)
            if (
                len(expression.expressions) == 1
                and not isinstance(expression.parent, exp.Values)
                and text.endswith(")")
            ):
                return f"{text[:-1]},)"
            return text

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

__all__ = ["DIALECT", "EXPLICIT_NULLS", "IN_STRING", "DauDuckDB"]
