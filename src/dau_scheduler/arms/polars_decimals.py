"""DuckDB's overflow check on decimal products, made on the Polars arm.

DuckDB types ``a * b`` over decimals as DECIMAL(p1 + p2, s1 + s2), but where that width passes
18 and neither operand is wider than 18 it keeps the product in 64 bits, DECIMAL(18, s1 + s2),
and raises an overflow where the product needs more digits; likewise at 38. The Polars arm holds
decimals at 38 digits (``polars_sql.DECIMAL_SCALE`` of them fractional), so
``d * 1000000000`` over a DECIMAL(10, 2) answered where DuckDB raises. :func:`mark_checked_products`
types the partial's products as DuckDB does, before the translation rewrites their operands,
and marks each one DuckDB checks; :func:`check_products` then casts each marked product, after
the translation, to as many integer digits as DuckDB's type holds, strictly, and back.

The typing reads columns of base tables (their stored types), integer and decimal literals,
``+``, ``-``, ``*``, a sign, ``abs`` and casts to integers and decimals: what a product's operand
is in TPC-H and TPC-DS; tests/test_error_parity.py compares it with DuckDB's ``typeof`` over
random expressions. Any other operand (a CASE, COALESCE, ``round``, a column of a derived table
or CTE) is typed by DuckDB itself: ``typeof`` of the operand with a typed NULL in each column's
place (:func:`_probed`). A product that neither tells is refused: one typed by neither was
computed at the arm's scale where DuckDB keeps more digits (``CASE ... END * 0.0000001 <> 0``
counted 2,175 rows for 2,970).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Protocol

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.optimizer.scope import Scope

from dau_scheduler.arms import integer_types
from dau_scheduler.arms.duckdb_types import typeof
from dau_scheduler.arms.polars_marks import OVERFLOW_CHECK, UNBOUNDED, decimal_scale
from dau_scheduler.arms.polars_temporal import plain_timestamp_column
from dau_scheduler.arms.polars_values import CALENDAR_MICROSECONDS
from dau_scheduler.errors import SqlError

#: ``meta`` key on a product DuckDB checks for overflow: the integer digits its type holds.
CHECKED_DIGITS = "dau_checked_digits"
#: ``meta`` key on a column of a base table: its type as the data has it.
_STORED_TYPE = "dau_stored_type"
#: ``meta`` key on a column of a base table: the largest magnitude of its values (the arm's
#: data), where known.
_MAGNITUDE = "dau_magnitude"
#: ``meta`` key on a SUM or COUNT over base tables only: the most rows it can see (the product
#: of the tables' row counts: a join makes no more pairs).
_ROWS = "dau_rows"


class DataBounds(Protocol):
    """What the arm's data says of a value's size: a numeric column's largest magnitude and a
    table's rows, or None where it cannot say (a user's connection's rows, read as each query
    runs)."""

    def magnitude(self, table: str, column: str) -> Decimal | None: ...

    def rows(self, table: str) -> int | None: ...


#: DuckDB's decimal width of each integer type (``GetDecimalProperties``).
_WIDTHS = {
    exp.DType.TINYINT: 3,
    exp.DType.SMALLINT: 5,
    exp.DType.INT: 10,
    exp.DType.BIGINT: 19,
    exp.DType.INT128: 38,
    exp.DType.UTINYINT: 3,
    exp.DType.USMALLINT: 5,
    exp.DType.UINT: 10,
    exp.DType.UBIGINT: 20,
}

#: (width, scale, the integer type where the value is an integer).
_Typed = tuple[int, int, exp.DataType | None]


def _integer(data_type: exp.DataType) -> _Typed | None:
    width = _WIDTHS.get(data_type.this)
    return None if width is None else (width, 0, data_type)


def _of_type(data_type: exp.DataType) -> _Typed | None:
    if data_type.is_type(exp.DType.DECIMAL):
        params = data_type.expressions
        width = int(params[0].name) if params else 18
        return width, decimal_scale(data_type), None
    return _integer(data_type)


def _literal(node: exp.Literal, negative: bool) -> _Typed | None:
    text = node.this
    if node.is_int:
        value = -int(text) if negative else int(text)
        name = integer_types.literal_type_alone(value)
        return _integer(exp.DataType.build(name, dialect="duckdb"))
    if "e" in text.lower() or text.count(".") != 1:
        return None  # a DOUBLE
    digits = sum(ch.isdigit() for ch in text)
    scale = len(text.partition(".")[2])
    return (digits, scale, None) if 0 < digits <= 38 else None


def duckdb_type(node: exp.Expr) -> _Typed | None:
    """DuckDB's type of ``node`` as (width, scale, integer type or None), or None where this
    cannot tell (see the module docstring)."""
    if isinstance(node, exp.Paren):
        return duckdb_type(node.this)
    if isinstance(node, exp.Column):
        stored = node.meta.get(_STORED_TYPE)
        return None if stored is None else _of_type(exp.DataType.build(stored, dialect="duckdb"))
    if isinstance(node, exp.Literal) and not node.is_string:
        return _literal(node, negative=False)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return None if node.this.is_string else _literal(node.this, negative=True)
    if isinstance(node, (exp.Neg, exp.Abs)):
        return duckdb_type(node.this)
    if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
        return _of_type(node.to)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        left, right = duckdb_type(node.this), duckdb_type(node.expression)
        if left is None or right is None:
            return None
        if left[2] is not None and right[2] is not None:
            found = integer_types.result_type(node, left[2], right[2])
            return None if found is None else _integer(found)
        if isinstance(node, exp.Mul):
            return _product(left, right)
        scale = max(left[1], right[1])
        return min(max(left[0] - left[1], right[0] - right[1]) + scale + 1, 38), scale, None
    return None


def _probed(node: exp.Expr) -> exp.DataType | None:
    """DuckDB's own type of ``node``: its ``typeof`` with a NULL of each column's stored type in
    the column's place (and of each scalar subquery's type in the subquery's), or None where a
    column's or subquery's type is not known, ``node`` holds another subquery, or DuckDB cannot
    bind it alone."""
    probe = node.copy()
    while (subquery := probe.find(exp.Subquery)) is not None:  # a scalar one: its value's type
        select = subquery.this
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            return None
        found = _data_type(_typed(select.expressions[0].unalias()))
        if found is None:
            return None
        null = exp.Cast(this=exp.null(), to=found)
        if subquery is probe:
            return found
        subquery.replace(null)
    if probe.find(exp.Select) is not None:
        return None
    try:
        for column in list(probe.find_all(exp.Column)):
            stored = column.meta.get(_STORED_TYPE)
            if stored is None:
                return None
            null = exp.Cast(this=exp.null(), to=exp.DataType.build(stored, dialect="duckdb"))
            if column is probe:
                return null.to
            column.replace(null)
        written = typeof(probe.sql(dialect="duckdb"))
        return None if written is None else exp.DataType.build(written, dialect="duckdb")
    except (ParseError, ValueError):  # a type sqlglot cannot read
        return None


def _typed(node: exp.Expr) -> _Typed | exp.DataType | None:
    """DuckDB's type of ``node``: (width, scale, integer type or None) for a decimal or an
    integer, another type as it is, None where neither :func:`duckdb_type` nor DuckDB tells."""
    found = duckdb_type(node)
    if found is not None:
        return found
    probed = _probed(node)
    if probed is None:
        return None
    return _of_type(probed) or probed


def _product(left: _Typed, right: _Typed) -> _Typed | None:
    width, scale = left[0] + right[0], left[1] + right[1]
    if scale > 38:
        return None  # DuckDB refuses to bind it
    if width > 18 and max(left[0], right[0]) <= 18 and scale < 18:
        return 18, scale, None
    return min(width, 38), scale, None


def bound(node: exp.Expr) -> Decimal | None:
    """The largest magnitude ``node`` may take over the arm's data, from its columns' (marked
    :data:`_MAGNITUDE`), its numeric literals, signs, ``abs``, ``+``, ``-``, ``*``, casts to an
    integer or a decimal (one more in the last digit it keeps, for its rounding), MIN, MAX and
    AVG of a bounded value, SUM and COUNT over base tables (:data:`_ROWS`), a scalar
    subquery's one output, and what picks one of bounded values (COALESCE, NULLIF, CASE, IF,
    GREATEST, LEAST: their largest); None for anything else. (It bounds a value; the type
    Polars computes it in is ``integer_types.result_type``'s, DuckDB's own where a literal is
    among the values: ``duckdb_types.binder_type``.)"""
    if isinstance(node, (exp.Paren, exp.Neg, exp.Abs, exp.Min, exp.Max, exp.Avg, exp.Alias)):
        return bound(node.this)
    if isinstance(node, exp.Subquery):  # a scalar subquery: its one output's
        select = node.this
        one = isinstance(select, exp.Select) and len(select.expressions) == 1
        return bound(select.expressions[0]) if one else None
    if isinstance(node, (exp.Sum, exp.Count)):
        rows = node.meta.get(_ROWS)
        inner = Decimal(1) if isinstance(node, exp.Count) else bound(node.this)
        return None if rows is None or inner is None else inner * rows
    if isinstance(node, exp.Column):
        found = node.meta.get(_MAGNITUDE)
        return found if isinstance(found, Decimal) else None
    if isinstance(node, exp.Literal) and (not node.is_string or isinstance(node.parent, exp.Cast)):
        try:
            return abs(Decimal(node.this))
        except InvalidOperation:
            return None  # (a text that is no number)
    if _timestamp_microseconds(node):
        return Decimal(CALENDAR_MICROSECONDS)
    if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
        inner = bound(node.this)
        if inner is None or not node.to.is_type(*exp.DataType.INTEGER_TYPES, exp.DType.DECIMAL):
            return None
        # (its rounding moves a value by at most the last digit it keeps)
        return inner + Decimal(1).scaleb(-decimal_scale(node.to))
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        left, right = bound(node.this), bound(node.expression)
        if left is None or right is None:
            return None
        return left * right if isinstance(node, exp.Mul) else left + right
    values = _picked_values(node)
    if values is not None:  # a value one of them is (or NULL)
        found = [bound(value) for value in values]
        return None if not found or None in found else max(v for v in found if v is not None)
    return None


def _timestamp_microseconds(node: exp.Expr) -> bool:
    """A plain TIMESTAMP column cast to a BIGINT (the arm's date arithmetic writes it): its
    microseconds since 1970, within Polars' calendar for every row the arm holds."""
    return (
        isinstance(node, exp.Cast)
        and node.to.is_type(exp.DType.BIGINT)
        and plain_timestamp_column(node.this)
    )


def _picked_values(node: exp.Expr) -> list[exp.Expr] | None:
    """The values ``node`` picks its own from: COALESCE's and GREATEST's and LEAST's
    arguments, NULLIF's first, a CASE's or IF's branches; None for any other node."""
    if isinstance(node, (exp.Coalesce, exp.Greatest, exp.Least)):
        return [node.this, *node.expressions]
    if isinstance(node, exp.Nullif):
        return [node.this]
    if isinstance(node, exp.Case):
        branches = [when.args.get("true") for when in node.args.get("ifs") or []]
        default = node.args.get("default")
        found = [*branches, *([default] if default is not None else [])]
        return None if any(b is None for b in found) else found
    if isinstance(node, exp.If):
        false = node.args.get("false")
        return [node.args["true"], *([false] if false is not None else [])]
    return None


def _mark_rows(scope: Scope, bounds: DataBounds) -> None:
    """Mark each SUM and COUNT of ``scope``'s own SELECT with the most rows it can see
    (:data:`_ROWS`), where every source of the scope is a base table whose rows are known."""
    select = scope.expression
    if not isinstance(select, exp.Select) or not scope.sources:
        return
    rows = 1
    for source in scope.sources.values():
        counted = bounds.rows(source.name.lower()) if isinstance(source, exp.Table) else None
        if counted is None:
            return
        rows *= counted
    for aggregate in select.find_all(exp.Sum, exp.Count):
        if aggregate.find_ancestor(exp.Select) is select:
            aggregate.meta[_ROWS] = rows


def within(node: exp.Expr, digits: int) -> bool:
    """Whether the data bounds ``node`` under ``10 ** digits`` (:func:`bound`)."""
    return fits(node, Decimal(10) ** digits)


def fits(node: exp.Expr, limit: Decimal | int) -> bool:
    """Whether the data bounds ``node`` under ``limit`` (:func:`bound`)."""
    found = bound(node)
    return found is not None and found < limit


def mark_checked_products(
    tree: exp.Expr,
    stored: dict[str, dict[str, str]],
    scale: int,
    bounds: DataBounds | None = None,
) -> None:
    """Mark each product of ``tree`` that DuckDB checks for overflow (:data:`CHECKED_DIGITS`),
    with the stored types of base tables' columns (``stored``: table -> column -> type), but
    one the data bounds within DuckDB's digits (``bounds``: :func:`bound`), which cannot
    overflow; and each decimal product
    the data does not bound within the arm's digits (:data:`UNBOUNDED`).
    A product DuckDB keeps at more fractional digits than the arm's ``scale`` is refused: the
    arm would drop them (``0.0000001 * 0.0000001`` was 0, so ``-c <> 1e-14`` skipped the zeros)."""
    from sqlglot.optimizer.scope import traverse_scope

    if tree.find(exp.Mul, *_ONE_TYPE) is None and bounds is None:
        return
    for scope in traverse_scope(tree):  # (a derived table's scope before the one reading it)
        for column in scope.columns:
            source = scope.sources.get(column.table)
            kind = None
            if isinstance(source, exp.Table):
                kind = stored.get(source.name.lower(), {}).get(column.name)
            elif isinstance(source, Scope) and isinstance(source.expression, exp.Select):
                kind = _output_type(source.expression, column.name)
            if kind is not None:
                column.meta[_STORED_TYPE] = kind
            if isinstance(source, exp.Table) and bounds is not None:
                found = bounds.magnitude(source.name.lower(), column.name)
                if found is not None:
                    column.meta[_MAGNITUDE] = found
        if bounds is not None:
            _mark_rows(scope, bounds)
    refuse_rounded_common_decimals(tree)
    for product in tree.find_all(exp.Mul):
        typed = _typed(product)
        if typed is None:
            raise SqlError(
                f"{product.sql(dialect='duckdb')}: a product whose DuckDB type the Polars arm "
                "cannot tell, so not whether DuckDB keeps more decimal digits than it computes"
            )
        if isinstance(typed, exp.DataType) or typed[2] is not None:
            continue  # not a decimal
        if typed[1] > scale:
            raise SqlError(
                f"{product.sql(dialect='duckdb')}: a product of {typed[1]} decimal digits, more "
                f"than the {scale} the Polars arm computes exactly"
            )
        if not within(product, 38 - scale):
            product.meta[UNBOUNDED] = True
        left, right = _typed(product.this), _typed(product.expression)
        if not isinstance(left, tuple) or not isinstance(right, tuple):
            continue  # (a decimal beside a NULL or a text: not narrowed)
        digits = typed[0] - typed[1]
        if typed[0] < left[0] + right[0] and not within(product, digits):
            product.meta[CHECKED_DIGITS] = digits  # DuckDB narrowed the width, and checks it


#: Where DuckDB gives values one type by its "max logical type" rule (a comparison with a
#: subquery's values, a set operation's column, and the values COALESCE, GREATEST, LEAST, CASE
#: and IF pick among), as opposed to a comparison's own binding.
_ONE_TYPE = (
    exp.Coalesce,
    exp.Greatest,
    exp.Least,
    exp.Case,
    exp.If,
    exp.In,
    exp.Any,
    exp.All,
    exp.SetOperation,
)


def _one_typed_values(node: exp.Expr) -> list[exp.Expr]:
    """The values ``node`` gives one type (:data:`_ONE_TYPE`), or none: an IN's, ANY's or
    ALL's value and the subquery's one output; each output of a set operation of two SELECTs
    with its partner."""
    if isinstance(node, exp.In):
        query = node.args.get("query")
        select = query.this if isinstance(query, exp.Subquery) else query
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            return []
        return [node.this, select.expressions[0].unalias()]
    if isinstance(node, (exp.Any, exp.All)):
        comparison, inner = node.parent, node.this
        select = inner.this if isinstance(inner, exp.Subquery) else inner
        if not isinstance(comparison, exp.Binary) or not isinstance(select, exp.Select):
            return []
        other = comparison.left if comparison.right is node else comparison.right
        return [other, *(e.unalias() for e in select.expressions[:1])]
    return _picked_values(node) or []


def _combined(values: list[_Typed | exp.DataType | None]) -> tuple[int, int] | None:
    """DuckDB's digits (integer, fractional) of one decimal type for ``values`` (CombineEqual-
    Decimal; an integer beside a decimal as its width of integer digits), None where no value is
    a decimal or one is of another type (a float, text: DuckDB picks that)."""
    typed = [v for v in values if isinstance(v, tuple)]
    if len(typed) < len(values) or all(v[2] is not None for v in typed):
        return None
    return max(w - sc for w, sc, _ in typed), max(sc for _, sc, _ in typed)


def refuse_rounded_common_decimals(tree: exp.Expr) -> None:
    """Refuse values DuckDB gives one decimal type of more than 38 digits (its integer digits
    and fractional digits each the most of the values'): it keeps the integer digits and rounds
    the fraction (``d2 IN (SELECT dw FROM u)`` over a DECIMAL(6, 2) and a DECIMAL(38, 0)
    compares 0.50 as 1: 1,750 rows where the arm counted 1,375; ``coalesce(d2, dw)`` is
    1 for 0.50), or, beside an integer, raises where a value overflows. The arm compares the
    values as they are. A value whose type neither the stored types nor DuckDB tells, beside a
    decimal, is refused too."""
    for node in tree.find_all(*_ONE_TYPE):
        if isinstance(node, exp.SetOperation):
            left, right = node.left, node.right
            if not isinstance(left, exp.Select) or not isinstance(right, exp.Select):
                continue
            pairs = [
                [a.unalias(), b.unalias()]
                for a, b in zip(left.expressions, right.expressions, strict=False)
            ]
        else:
            pairs = [_one_typed_values(node)]
        for values in pairs:
            present = [v for v in values if not isinstance(v.unnest(), exp.Null)]
            typed = [_typed(v) for v in present]
            if len(present) < 2 or not any(isinstance(t, tuple) and t[2] is None for t in typed):
                continue
            found = _combined(typed) if None not in typed else (39, 0)
            if found is not None and sum(found) > 38:
                raise SqlError(
                    f"{node.sql(dialect='duckdb')[:200]}: decimal values given one type of more "
                    "than 38 digits (DuckDB rounds their fractions, or raises; the Polars arm "
                    "compares them as they are), or of a type the arm cannot tell"
                )


def _data_type(typed: _Typed | exp.DataType | None) -> exp.DataType | None:
    if isinstance(typed, tuple):
        return typed[2] or exp.DataType.build(f"DECIMAL({typed[0]}, {typed[1]})")
    return typed


def _output_type(select: exp.Select, name: str) -> str | None:
    """DuckDB's type of the output ``name`` of a derived table's ``select``, as SQL."""
    for projection in select.expressions:
        if projection.alias_or_name == name:
            found = _data_type(_typed(projection.unalias()))
            return None if found is None else found.sql("duckdb")
    return None


def check_products(tree: exp.Expr, scale: int) -> exp.Expr:
    """Each marked product of the translated ``tree`` (computed at ``scale`` fractional digits)
    cast to as many integer digits as DuckDB's type holds, strictly (Polars raises where DuckDB
    does), then back to 38 digits."""
    for product in reversed(list(tree.find_all(exp.Mul))):
        digits = product.meta.pop(CHECKED_DIGITS, None)
        if digits is None or digits + scale > 38:
            continue  # past 38 digits Polars raises on its own, before DuckDB would
        narrow = exp.DataType.build(f"DECIMAL({digits + scale}, {scale})")
        wide = exp.DataType.build(f"DECIMAL(38, {scale})")
        narrowed = exp.Cast(this=product.copy(), to=narrow)
        narrowed.meta[OVERFLOW_CHECK] = True
        checked = exp.Cast(this=narrowed, to=wide)
        if product is tree:
            return checked
        product.replace(checked)
    return tree


__all__ = [
    "CHECKED_DIGITS",
    "DataBounds",
    "bound",
    "within",
    "check_products",
    "duckdb_type",
    "mark_checked_products",
    "refuse_rounded_common_decimals",
]
