"""The Polars arm's arithmetic, made DuckDB's: integers that cannot wrap, FLOAT sums in
doubles, and date arithmetic as :mod:`polars_dates` writes it (see :func:`checked_arithmetic`).
It needs the partial's column types, which sqlglot's annotation derives from the frames the arm
holds."""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms import integer_types
from dau_scheduler.arms.duckdb_types import annotate
from dau_scheduler.arms.integer_types import is_integer
from dau_scheduler.arms.polars_dates import (
    NON_NEGATIVE,
    date_arithmetic,
    day_difference,
    epoch,
    non_negative,
    truncated_date,
)
from dau_scheduler.arms.polars_decimals import fits
from dau_scheduler.arms.polars_functions import single_precision_constants
from dau_scheduler.arms.polars_marks import OVERFLOW_CHECK
from dau_scheduler.errors import SqlError

_WIDE_INTEGER = exp.DataType.build("DECIMAL(38, 0)")
_DOUBLE = exp.DataType.build("DOUBLE")
_INTEGER = exp.DataType.build("INTEGER")


def _is_temporal(data_type: exp.DataType | None) -> bool:
    return data_type is not None and data_type.is_type(
        *exp.DataType.TEMPORAL_TYPES, exp.DType.INTERVAL
    )


def _replace_typed(old: exp.Expr, new: exp.Expr) -> None:
    """``old`` replaced by ``new``, whose type the parentheses around it take (sqlglot annotated
    them with ``old``'s)."""
    if new is old:
        return
    if isinstance(new, exp.Cast):
        new.type = new.to.copy()
    old.replace(new)
    _typed_through_parentheses(new)


def _typed_through_parentheses(node: exp.Expr) -> None:
    """The parentheses around ``node`` given its type."""
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent.type = node.type
        parent = parent.parent


def _constant_sum(node: exp.Sum) -> None:
    """``SUM(c)`` of an integer literal as ``c * NULLIF(COUNT(*), 0)`` in DECIMAL(38, 0), in place.
    Polars adds up a bare literal per row but wraps the total at 2**32 (``sum(1000)`` over 5M
    rows: 705,032,704; ``sum(2147483647)`` over 120: 4,294,967,176), and a cast one once; any
    other constant, or one under a FILTER, is refused."""
    argument = node.this
    value = integer_types.literal_value(argument)
    if value is None or abs(value) >= 2**63 or isinstance(node.parent, exp.Filter):
        raise SqlError(f"{node.sql()} sums a constant Polars might add up differently")
    rows = exp.Nullif(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
    total = exp.Mul(this=exp.Cast(this=argument.copy(), to=_WIDE_INTEGER.copy()), expression=rows)
    node.replace(exp.Paren(this=total))


def checked_arithmetic(tree: exp.Expr, types: dict[str, dict[str, str]]) -> exp.Expr:
    """Integer sums and integer arithmetic that cannot wrap around, and float sums in doubles.

    Polars adds, subtracts and multiplies integers in their own width and wraps on overflow, and
    sums a FLOAT column in single precision; DuckDB sums integers into a 128-bit integer, raises on
    integer overflow, and sums FLOATs as DOUBLEs. With the arm's column types (sqlglot's type
    annotation), each integer ``SUM(e)`` becomes ``SUM(CAST(e AS DECIMAL(38, 0)))`` (DuckDB's
    HUGEINT, which Arrow carries as that decimal); each integer ``a op b`` is computed in that
    decimal and cast back with Polars' strict cast, which raises where DuckDB would; a FLOAT under
    ``SUM`` or ``AVG`` is widened to DOUBLE first. A ``SUM`` whose argument's type cannot be
    determined is refused (``SqlError``): it might be an integer that wraps. Date and time
    arithmetic is rewritten first (:func:`polars_dates.date_arithmetic`), so a sum of date
    differences is a sum of integers.
    """
    schema: dict[str, object] = dict(types)
    annotated = annotate(tree, schema)
    for diff in list(annotated.find_all(exp.DateDiff)):
        days = day_difference(diff)
        if days is not None:
            _replace_typed(diff, days)
    for trunc in list(annotated.find_all(exp.TimestampTrunc, exp.DateTrunc)):
        start = truncated_date(trunc)
        if start is not None:
            _replace_typed(trunc, start)
    for call in list(annotated.find_all(exp.TimeToUnix)):
        seconds = epoch(call)
        if seconds is not None:
            _replace_typed(call, seconds)
    for op in reversed(list(annotated.find_all(exp.Add, exp.Sub, exp.Mul))):
        if _is_temporal(op.this.unnest().type) or _is_temporal(op.expression.unnest().type):
            _replace_typed(op, date_arithmetic(op))
    # FLOATs beside constants, DOUBLEs and divisors as DuckDB computes them, before a SUM's
    # FLOAT argument is widened below (a FLOAT quotient is one only from here on).
    annotated = single_precision_constants(annotated)
    for node in list(annotated.find_all(exp.Exp, exp.Ln, exp.Sqrt)):
        # DuckDB computes these of a FLOAT as of a DOUBLE, Polars in single precision
        # (sqrt(0.1f): 0.31622776 against 0.3162277683729184, another group of a GROUP BY).
        if node.this.type is not None and node.this.type.is_type("FLOAT"):
            node.this.replace(exp.Cast(this=node.this.copy(), to=_DOUBLE.copy()))
    for node in list(annotated.find_all(exp.Floor, exp.Ceil)):
        # DuckDB's floor and ceil of an integer are DOUBLEs, Polars' integers: arithmetic over
        # them wrapped around in Polars (floor(g) * g of 2**63 - 1: 1 for 8.5e37).
        if is_integer(node.this.type):
            node.this.replace(exp.Cast(this=node.this.copy(), to=_DOUBLE.copy()))
    for node in list(annotated.find_all(exp.Sum, exp.Avg)):
        argument = node.this
        data_type = argument.type
        if data_type is not None and data_type.is_type("FLOAT"):
            argument.replace(exp.Cast(this=argument.copy(), to=_DOUBLE.copy()))
        elif isinstance(node, exp.Sum) and is_integer(data_type):
            if argument.find(exp.Column) is None:
                _constant_sum(node)
                continue
            if data_type is not None and data_type.is_type("BOOLEAN"):  # (no cast to decimal)
                argument = argument.replace(exp.Cast(this=argument.copy(), to=_INTEGER.copy()))
            argument.replace(exp.Cast(this=argument.copy(), to=_WIDE_INTEGER.copy()))
        elif isinstance(node, exp.Sum) and (
            data_type is None or not data_type.is_type(*exp.DataType.REAL_TYPES)
        ):
            raise SqlError(f"cannot tell what type {node.sql()} adds up, so it might wrap around")
    # Again, now that integer sums are decimals: arithmetic over them is no integer arithmetic.
    annotated = annotate(annotated, schema)
    # Innermost first, so an operand already made checked is read as the type it was cast to.
    arithmetic = list(annotated.find_all(exp.Add, exp.Sub, exp.Mul, exp.Neg, exp.Abs))
    for step in reversed(arithmetic):
        if isinstance(step, (exp.Neg, exp.Abs)):
            _check_sign_change(step)
            continue
        left, right = step.args["this"], step.args["expression"]
        left_type, right_type = _checked_type(left), _checked_type(right)
        if step.type is None or not (
            is_integer(step.type) and is_integer(left_type) and is_integer(right_type)
        ):
            continue
        # DuckDB's type of the result (sqlglot's is wider where a literal fits the other side:
        # `ti + 1` over a TINYINT answered 128 where DuckDB raises).
        result = integer_types.result_type(step, left_type, right_type) or step.type
        if _never_overflows(step, result):
            _computed_in(step, result)
            continue
        wide = step.copy()
        wide.set("this", exp.Cast(this=left.copy(), to=_WIDE_INTEGER.copy()))
        wide.set("expression", exp.Cast(this=right.copy(), to=_WIDE_INTEGER.copy()))
        _replace_typed(step, _overflow_checked(wide, result))
    for op in reversed(list(annotated.find_all(exp.Mod, exp.IntDiv))):
        if op.meta.get(NON_NEGATIVE):
            continue  # (a remainder of microseconds into a day: _within_day)
        truncated = _truncated(op) if isinstance(op, (exp.Mod, exp.IntDiv)) else None
        if truncated is not None:
            op.replace(truncated)
    return annotated


def _computed_in(step: exp.Expr, result: exp.DataType) -> None:
    """``step``, which the data bounds within DuckDB's type ``result``, computed in that type:
    each operand of another type cast to it (the values fit, so no cast checks anything).
    Polars computes in its own common type, which may be narrower: a UTINYINT times ``300`` is
    a UInt16 there (the literal takes the column's kind), ``ut * 300`` of 255 wrapped to 11,964
    where DuckDB's INTEGER holds 76,500; ``ut - 2147483648`` was a UInt32."""
    for key in ("this", "expression"):
        operand = step.args[key]
        if _checked_type(operand) != result:
            _replace_typed(operand, exp.Cast(this=operand.copy(), to=result.copy()))
    step.type = result.copy()
    _typed_through_parentheses(step)


def _checked_type(node: exp.Expr) -> exp.DataType | None:
    """The type of an operand: the type it was cast back to where it is made checked."""
    inner = node.unnest()
    return inner.to if isinstance(inner, exp.Cast) else node.type


def _check_sign_change(op: exp.Neg | exp.Abs) -> None:
    """``-x`` and ``abs(x)`` of an integer computed wide and cast back: Polars gives the least
    value back (``-(-128)`` and ``abs(-128)`` of a TINYINT are -128 there), where DuckDB raises
    an overflow, as it does on the negative of an unsigned value but 0. A literal (``-1``) is
    left as it is."""
    operand = op.this
    data_type = _checked_type(operand)
    if integer_types.literal_value(operand) is not None or not is_integer(data_type):
        return
    assert data_type is not None
    if data_type.is_type(exp.DType.BOOLEAN) or (
        isinstance(op, exp.Abs) and data_type.is_type(*_UNSIGNED)
    ):
        return  # abs of an unsigned value is itself (the negative of one DuckDB raises on)
    if _never_overflows(op, data_type) or (data_type.is_type(*_UNSIGNED) and fits(op, 1)):
        return  # (the negative of an unsigned value the data holds only 0 of is 0)
    wide = op.copy()
    wide.set("this", exp.Cast(this=operand.copy(), to=_WIDE_INTEGER.copy()))
    _replace_typed(op, _overflow_checked(wide, data_type))


def _never_overflows(step: exp.Expr, result: exp.DataType) -> bool:
    """Whether the data bounds ``step`` within the signed integer type ``result`` (its operands'
    columns, literals and arithmetic: ``polars_decimals.bound``), so Polars computes it as
    DuckDB does without a check: ``20 + 10`` of TPC-H Q19 (the GPU engine refuses a check)."""
    bits = _SIGNED_BITS.get(result.this)
    return bits is not None and fits(step, 2 ** (bits - 1))


_SIGNED_BITS = {
    exp.DType.TINYINT: 8,
    exp.DType.SMALLINT: 16,
    exp.DType.INT: 32,
    exp.DType.BIGINT: 64,
}


def _overflow_checked(wide: exp.Expr, to: exp.DataType) -> exp.Cast:
    """``wide`` cast back to ``to`` strictly (Polars raises where DuckDB does), marked so an
    engine whose casts do not check refuses it (:data:`OVERFLOW_CHECK`)."""
    cast = exp.Cast(this=wide, to=to.copy())
    cast.meta[OVERFLOW_CHECK] = True
    return cast


_UNSIGNED = (
    exp.DType.UTINYINT,
    exp.DType.USMALLINT,
    exp.DType.UINT,
    exp.DType.UBIGINT,
)


def _truncated(op: exp.Mod | exp.IntDiv) -> exp.Expr | None:
    """DuckDB's ``a % b`` or ``a // b`` of an integer ``a`` and an integer literal ``b`` (not 0;
    for ``//`` not 1 or -1, whose quotient of the smallest value overflows) from remainders and
    quotients of non-negative operands only, the same whether an engine floors or truncates:
    of ``a`` itself where ``a >= 0``, else of ``m = -(a + 1)`` (``|a| - 1``, which cannot
    overflow): ``|a| % B = (m % B + 1) % B`` and ``|a| // B = m // B + (m % B + 1) // B``, with
    ``B = |b|``; then the signs (a remainder takes the dividend's, a quotient both). Any other
    ``%`` or ``//`` is left as it is, and refused (a divisor of zero raises in DuckDB, where
    Polars gives NULL; ``//`` of doubles is plain division in DuckDB)."""
    dividend, divisor = op.this.unnest(), op.expression.unnest()
    negative = isinstance(divisor, exp.Neg)
    literal = divisor.this.unnest() if negative else divisor
    if not (isinstance(literal, exp.Literal) and literal.is_int):
        return None
    modulus = abs(int(literal.name))
    kind = dividend.type
    smallest = 1 if isinstance(op, exp.Mod) else 2
    if not smallest <= modulus <= 2**62 or not is_integer(kind) or kind.is_type("BOOLEAN"):
        return None
    one, zero = exp.Literal.number(1), exp.Literal.number(0)
    b = exp.Literal.number(modulus)
    a = exp.Paren(this=op.this.copy())
    m = exp.Paren(this=exp.Neg(this=exp.Paren(this=exp.Add(this=a.copy(), expression=one.copy()))))
    rest = exp.Paren(
        this=exp.Add(this=non_negative(exp.Mod, m.copy(), b.copy()), expression=one.copy())
    )
    if isinstance(op, exp.Mod):
        above = non_negative(exp.Mod, a.copy(), b.copy())
        below: exp.Expr = exp.Neg(this=exp.Paren(this=non_negative(exp.Mod, rest, b.copy())))
    else:
        above = non_negative(exp.IntDiv, a.copy(), b.copy())
        magnitude = exp.Add(
            this=non_negative(exp.IntDiv, m.copy(), b.copy()),
            expression=non_negative(exp.IntDiv, rest, b.copy()),
        )
        below = exp.Neg(this=exp.Paren(this=magnitude))
        if negative:  # the quotient takes the divisor's sign too
            above, below = exp.Neg(this=exp.Paren(this=above)), exp.Paren(this=magnitude)
    truncated = exp.Case(
        ifs=[exp.If(this=exp.LT(this=a.copy(), expression=zero), true=below)], default=above
    )
    truncated.type = op.type
    wrapped = exp.Paren(this=truncated)
    wrapped.type = op.type  # what the checks after this read (a cast of it, an extremum)
    return wrapped


__all__ = ["checked_arithmetic"]
