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

And sqlglot read four spellings otherwise than DuckDB's parser (forty-seventh session; each a
wrong answer once a rewrite set something beside it, ``tests/slt/number_spellings.test``):
``1e0+1`` as one number, ``.5`` as ``0.5`` (another type, another text), the cast after a
typed literal (``DATE '2020-01-01'::VARCHAR``) as the string's, and the prefix ``@`` as taking
bitwise operators and ``||``. Each is read here as DuckDB reads it.

sqlglot lower-cases every name as the rewrite qualifies the query, as DuckDB compares them; but
DuckDB reads a quoted name that is no table's, ``FROM 'Data/T.parquet'``, as a path, case and
all (fifty-first session: a path with capitals would have been read as another file). A quoted
table name with capitals keeps its spelling in what is written back.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from sqlglot import TokenType, exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.expressions import INTERVAL_STRING_RE
from sqlglot.expressions.core import POSITION_META_KEYS
from sqlglot.tokenizer_core import Token

#: Meta key set on an ``Ordered`` whose NULLS FIRST / NULLS LAST was written in the query.
EXPLICIT_NULLS = "dau_explicit_nulls"
#: Meta key set on an ``Interval`` read from one string (``INTERVAL '2 days'``): the amount and
#: unit it was read as and the string, written back as it was while they are unchanged.
IN_STRING = "dau_interval_in_string"
#: Meta key set on a quoted table name with capitals: its spelling as written, which the SQL
#: written for the arms keeps (a path DuckDB reads by its text; case matters there).
AS_WRITTEN = "dau_as_written"


def _keep_path_case(table: exp.Table) -> None:
    """Note the spelling of a quoted table name with capitals, such as a Parquet file read
    inline (``FROM 'Data/X.parquet'``): sqlglot lower-cases names as DuckDB compares them, but
    DuckDB reads a path that is no table's name as written, and so must every arm's SQL."""
    name = table.this
    if (
        isinstance(name, exp.Identifier)
        and name.quoted
        and not table.args.get("db")
        and name.this != name.this.lower()
    ):
        name.meta[AS_WRITTEN] = name.this


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


#: A number token sqlglot ran on past its exponent: ``1e2+1`` (DuckDB's ``1e2 + 1``), the
#: sign that follows the exponent's digits taken as the exponent's.
_EXPONENT_RUN = re.compile(r"[0-9_.]*[eE][0-9_]+(?=[+-][0-9])")


@contextlib.contextmanager
def sqlglot_quiet() -> Iterator[None]:
    """sqlglot's warnings held back ("falling back to parsing as a Command"): where the caller
    reads the tree it gets, that tree is the answer, not news for the user's log."""
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


#: What may follow a PIVOT statement: its rows' order and cut.
_AFTER_PIVOT = frozenset({TokenType.ORDER_BY, TokenType.LIMIT, TokenType.OFFSET, TokenType.FETCH})


class DauDuckDB(DuckDB):
    """DuckDB's SQL, with what sqlglot would write otherwise kept through a parse and a write:
    an explicit NULL order, an interval in one string, list sorts, a struct of one field,
    containment in a list, ``.5``, a JSON literal; and numbers, typed literals and ``@`` read
    as DuckDB reads them."""

    class Tokenizer(DuckDB.Tokenizer):
        def tokenize(self, sql: str) -> list[Token]:
            """sqlglot reads ``x * 1e2+1`` as ``x * (1e2+1)``, one number (and ``1e2+1.5e1``
            as the number ``1e2+1.5`` beside a name ``e1``). The tree then holds a product
            DuckDB never computes; a rewrite that set anything beside it would change the
            query. Here the number ends at its exponent's digits and the rest is read
            again (the comments after it with it)."""
            tokens: list[Token] = super().tokenize(sql)
            for index, token in enumerate(tokens):
                if token.token_type != TokenType.NUMBER:
                    continue
                run = _EXPONENT_RUN.match(sql, token.start, token.end + 1)
                if run is None:
                    continue
                sign = run.end()
                number = Token(
                    TokenType.NUMBER,
                    run.group().replace("_", ""),
                    token.line,
                    token.col,
                    token.start,
                    sign - 1,
                )
                signed = Token(
                    TokenType.PLUS if sql[sign] == "+" else TokenType.DASH,
                    sql[sign],
                    token.line,
                    token.col,
                    sign,
                    sign,
                )
                rest = type(self)(self.dialect).tokenize(sql[sign + 1 :])
                for later in rest:  # (lines and columns: for sqlglot's messages only)
                    later.start += sign + 1
                    later.end += sign + 1
                    if later.line == 1:
                        later.col += token.col
                    later.line += token.line - 1
                return [*tokens[:index], number, signed, *rest]
            return tokens

    class Parser(DuckDB.Parser):  # type: ignore[misc,valid-type]
        FUNCTIONS: ClassVar[dict[str, Callable[..., exp.Expr]]] = {
            **DuckDB.Parser.FUNCTIONS,
            **{n: _as_written(n) for n in _AS_WRITTEN},
        }

        def _parse(
            self,
            parse_method: Callable[[Any], exp.Expr | None],
            raw_tokens: list[Any],
            sql: str | None = None,
        ) -> list[exp.Expr | None]:
            # sqlglot notes each identifier's line, column and offsets (for its own error
            # messages), and every copy of a tree copies those dicts one by one: over half of
            # what the rewrite's copies cost. Nothing here reads them.
            trees: list[exp.Expr | None] = super()._parse(parse_method, raw_tokens, sql)
            for tree in trees:
                for node in tree.walk() if tree is not None else ():
                    meta = node._meta
                    if meta:
                        for key in POSITION_META_KEYS:
                            meta.pop(key, None)
                        if not meta:
                            node._meta = None
                    if isinstance(node, exp.Table):
                        _keep_path_case(node)
            return trees

        #: DuckDB's prefix ``@`` (abs) takes sums and products but not bitwise operators nor
        #: ``||``: ``@ -5 & 3`` is abs(-5) & 3, 1; sqlglot read abs(-5 & 3), 3.
        NO_PAREN_FUNCTION_PARSERS: ClassVar[dict[str, Callable[..., exp.Expr]]] = {
            **DuckDB.Parser.NO_PAREN_FUNCTION_PARSERS,
            "@": lambda self: exp.Abs(this=self._parse_term()),
        }

        def _parse_simplified_pivot(self, is_unpivot: bool | None = None) -> exp.Expr:
            # DuckDB takes an ORDER BY, LIMIT or OFFSET after a PIVOT or UNPIVOT statement (its
            # rows ordered and cut as a SELECT * over it would); sqlglot stopped there.
            pivot: exp.Expr = super()._parse_simplified_pivot(is_unpivot)
            if not self._match_set(_AFTER_PIVOT, advance=False):
                return pivot
            wrapped = exp.Select(expressions=[exp.Star()]).from_(exp.Subquery(this=pivot))
            found: exp.Expr = self._parse_query_modifiers(wrapped)
            return found

        #: JSON '{"a": 1}' is the text as written; sqlglot wrote json('{"a": 1}'), which
        #: DuckDB minifies ('{"a":1}'). Every typed literal is read as the cast it is.
        TYPE_LITERAL_PARSERS: ClassVar[dict[Any, Any]] = {}

        #: The string of a typed literal (``DATE '2020-01-01'``) whose casts, brackets and
        #: arrows after it are the typed value's: None inside ``_parse_type`` until one is.
        _typed_string: exp.Expr | bool | None = False

        def _parse_type(
            self, parse_interval: bool = True, fallback_to_identifier: bool = False
        ) -> exp.Expr | None:
            # DuckDB reads DATE '2020-01-01'::VARCHAR as the date made text; sqlglot cast the
            # string to text and that to a date (compared with '2020-1-1' the date is equal
            # and the text is not: 1,000 rows for 500). The string's operators are held back
            # (:meth:`_parse_column_ops`) and applied to the typed value here.
            outer, self._typed_string = self._typed_string, None
            try:
                parsed: exp.Expr | None = super()._parse_type(
                    parse_interval, fallback_to_identifier
                )
                string = self._typed_string
                if isinstance(string, exp.Expr):
                    self._typed_string = False
                    if parsed is not string and (parsed is None or parsed.this is not string):
                        self.raise_error("a typed literal's operators could not be placed")
                    parsed = super()._parse_column_ops(parsed)
                return parsed
            finally:
                self._typed_string = outer

        def _parse_column_ops(self, this: exp.Expr | None) -> exp.Expr | None:
            if (
                self._typed_string is None
                and isinstance(this, exp.Literal)
                and this.is_string
                and self._after_type(self._index - 2)
            ):
                self._typed_string = this
                return this
            found: exp.Expr | None = super()._parse_column_ops(this)
            return found

        def _after_type(self, index: int) -> bool:
            """Whether the token at ``index`` ends a type: its keyword, the parenthesis closing
            its sizes or fields (``DECIMAL(9, 2)``), the brackets of a list (``INT[]``), or
            ``WITH TIME ZONE``."""
            tokens = self._tokens
            closing = {
                TokenType.R_PAREN: TokenType.L_PAREN,
                TokenType.R_BRACKET: TokenType.L_BRACKET,
            }
            while index >= 0 and tokens[index].token_type in closing:
                opening, depth = closing[tokens[index].token_type], 0
                while index >= 0:
                    kind = tokens[index].token_type
                    depth += (kind in closing) - (kind in closing.values())
                    if depth == 0 and kind == opening:
                        break
                    index -= 1
                index -= 1  # the token before the opening one
            words = [t.text.upper() for t in tokens[max(0, index - 2) : index + 1]]
            if (
                words[-2:] == ["TIME", "ZONE"]
                and len(words) == 3
                and words[0] in ("WITH", "WITHOUT")
            ):
                index -= 3
            return index >= 0 and tokens[index].token_type in self.TYPE_TOKENS

        def _parse_primary(self) -> exp.Expr | None:
            # ``.5`` is DuckDB's DECIMAL(1,1), its text '.5'; sqlglot wrote ``0.5``, a
            # DECIMAL(2,1) whose text is '0.5' (``.5 || s`` another string). Kept as written.
            # (No primary parser starts at a dot, so this is where sqlglot reads it too.)
            if self._match_pair(TokenType.DOT, TokenType.NUMBER):
                return exp.Literal.number(f".{self._prev.text}")
            primary: exp.Expr | None = super()._parse_primary()
            return primary

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
        def identifier_sql(self, expression: exp.Identifier) -> str:
            written = expression.meta.get(AS_WRITTEN) if expression._meta else None
            if written is not None and expression.this == written.lower():
                # (the path as written, where only sqlglot's lower-casing changed it)
                expression = exp.Identifier(this=written, quoted=True)
            text: str = super().identifier_sql(expression)
            return text

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

__all__ = ["AS_WRITTEN", "DIALECT", "EXPLICIT_NULLS", "IN_STRING", "DauDuckDB"]
