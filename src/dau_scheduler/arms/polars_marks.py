"""What the Polars arm's data lets through that its checks would otherwise refuse: marks put
on the partial's tree before ``polars_checks.refuse_divergent`` reads it. A bare column of a base
table casts to its own stored decimal digits exactly; ``upper``/``lower`` of a column holding
only ASCII text cases it as DuckDB does; ``strftime`` of a column whose years are all within 1
to 9999 writes them as DuckDB does; ``FIRST`` reads the one value per group of a subquery the
host computed (``polars_hoist``). The marks are read through sqlglot's scopes, so a
CTE's or subquery's computed output is never taken for a stored column."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp


def decimal_scale(data_type: exp.DataType) -> int:
    """The scale of a DECIMAL type (0 where it names none)."""
    params = data_type.expressions
    return int(params[1].name) if len(params) > 1 else 0


#: ``meta`` key on a column of a base table: the decimal scale it is stored at. The arm holds
#: decimals at ``DECIMAL_SCALE`` digits and types them so (sqlglot's own decimal arithmetic
#: keeps the first operand's scale, ``a * b`` of two DECIMAL(7, 2) typed DECIMAL(7, 2), so
#: only a wide type keeps a rounding cast of a computed value refused); a bare column's
#: digits past its stored scale are zeros, which a cast to that many digits drops exactly.
STORED_SCALE = "dau_stored_scale"
#: ``meta`` key on such a column: its stored DECIMAL's precision.
STORED_PRECISION = "dau_stored_precision"


def mark_stored_scales(tree: exp.Expr, stored: dict[str, dict[str, str]]) -> None:
    """Mark each column of ``tree`` read from a base table with the decimal scale ``stored``
    (table -> column -> SQL type as the data has it) gives it (:data:`STORED_SCALE`)."""
    from sqlglot.optimizer.scope import traverse_scope

    for scope in traverse_scope(tree):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if not isinstance(source, exp.Table):
                continue  # a CTE's or subquery's output may be computed
            kind = stored.get(source.name.lower(), {}).get(column.name)
            if kind is not None and kind.upper().startswith("DECIMAL"):
                data_type = exp.DataType.build(kind)
                column.meta[STORED_SCALE] = decimal_scale(data_type)
                params = data_type.expressions
                column.meta[STORED_PRECISION] = int(params[0].name) if params else 18


#: ``meta`` key on an ``upper``/``lower`` call of a column whose values are all ASCII: the
#: engines case ASCII letters alike (Polars cases ß, ligatures and İ into several letters,
#: DuckDB keeps one). On a ``strpos`` of such a column by a text literal: Polars counts bytes,
#: DuckDB characters, which are the same there (NULL: polars_functions.ascii_position).
ASCII_ONLY = "dau_ascii_only"


def mark_ascii_cases(tree: exp.Expr, ascii_only: Callable[[str, str], bool]) -> None:
    """Mark (:data:`ASCII_ONLY`) each ``upper(c)``/``lower(c)``, ``strpos(c, 'text')`` and
    ``c ILIKE 'pattern'`` (an ASCII pattern, no ESCAPE) of ``tree`` whose column ``c`` of a base
    table holds only ASCII text (``ascii_only(table, column)``, the arm's data)."""
    from sqlglot.optimizer.scope import traverse_scope

    for scope in traverse_scope(tree):
        for column in scope.columns:
            call = column.parent
            if not isinstance(call, (exp.Upper, exp.Lower, exp.StrPosition, exp.ILike)):
                continue
            if call.this is not column or not _by_text_literal(call):
                continue
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table) and ascii_only(source.name.lower(), column.name):
                call.meta[ASCII_ONLY] = True


def _by_text_literal(call: exp.Expr) -> bool:
    """Not a ``strpos`` or ``ILIKE``, or one of a text literal alone (no start, no occurrence;
    an ILIKE's pattern all ASCII, without ESCAPE)."""
    if isinstance(call, exp.ILike):
        pattern = call.expression
        return (
            isinstance(pattern, exp.Literal)
            and pattern.is_string
            and pattern.this.isascii()
            and not isinstance(call.parent, exp.Escape)
        )
    if not isinstance(call, exp.StrPosition):
        return True
    needle = call.args.get("substr")
    others = [k for k, v in call.args.items() if v is not None and k not in ("this", "substr")]
    return isinstance(needle, exp.Literal) and needle.is_string and not others


#: ``meta`` key on a ``strftime`` of a date or timestamp column whose years are all within 1
#: to 9999, where Polars writes ``%Y``, ``%G`` and ``%y`` as DuckDB does (it writes '+12000'
#: and '-0001' for years outside).
PLAIN_YEARS = "dau_plain_years"


def mark_plain_years(tree: exp.Expr, plain_years: Callable[[str, str], bool]) -> None:
    """Mark (:data:`PLAIN_YEARS`) each ``strftime(c, ...)`` of ``tree`` whose column ``c`` of a
    base table holds only years 1 to 9999 (``plain_years(table, column)``, the arm's data)."""
    from sqlglot.optimizer.scope import traverse_scope

    for scope in traverse_scope(tree):
        for column in scope.columns:
            call = column.parent
            if not isinstance(call, exp.TimeToStr) or call.this is not column:
                continue
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table) and plain_years(source.name.lower(), column.name):
                call.meta[PLAIN_YEARS] = True


#: ``meta`` key on a column of a base table that holds no NaN (a DOUBLE or FLOAT column, read
#: once by the arm): compared as IEEE compares it, it compares as DuckDB does (``polars_gpu``).
NAN_FREE = "dau_nan_free"


def mark_nan_free_columns(tree: exp.Expr, nan_free: Callable[[str, str], bool]) -> None:
    """Mark (:data:`NAN_FREE`) each column of ``tree`` read from a base table whose values hold
    no NaN (``nan_free(table, column)``, the arm's data)."""
    from sqlglot.optimizer.scope import traverse_scope

    for scope in traverse_scope(tree):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table) and nan_free(source.name.lower(), column.name):
                column.meta[NAN_FREE] = True


#: ``meta`` key on the ``FIRST(v)`` that reads a host-computed subquery's value
#: (``polars_hoist``): one row per group, so the first is the value.
HOST_LOOKUP = "dau_host_lookup"
#: ``meta`` key on a cast the translation writes to make Polars raise where DuckDB raises on
#: overflow (integer arithmetic computed wide and cast back, a decimal product narrowed to
#: DuckDB's digits): the GPU engine's casts do not check (``polars_gpu``).
OVERFLOW_CHECK = "dau_overflow_check"
#: ``meta`` key on a decimal product the data does not bound within the arm's 38 digits: Polars
#: raises where it overflows them on the CPU, the GPU engine wraps around (``polars_gpu``).
UNBOUNDED = "dau_unbounded_product"


__all__ = [
    "ASCII_ONLY",
    "HOST_LOOKUP",
    "NAN_FREE",
    "OVERFLOW_CHECK",
    "PLAIN_YEARS",
    "STORED_PRECISION",
    "STORED_SCALE",
    "UNBOUNDED",
    "decimal_scale",
    "mark_ascii_cases",
    "mark_nan_free_columns",
    "mark_plain_years",
    "mark_stored_scales",
]
