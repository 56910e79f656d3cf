"""A decimal made a floating-point value on the Polars arm, converted as DuckDB converts it.

DuckDB converts a decimal to a DOUBLE or FLOAT correctly rounded. Polars converts the decimal's
digits at the arm's scale (12) to a double and divides by a power of ten, which rounds twice
once those digits pass 2**53: of 20,000 DECIMAL(18, 4) values 470 came out a last bit off
(``(a + c)::DOUBLE`` as a key: two groups for one); of 200,000 random decimals, 31,690.
Polars' reading of a decimal's text is correctly rounded (0 of the 200,000 apart, as DOUBLE
and as FLOAT), so :func:`exact_conversions` writes each such conversion (a cast, a decimal
beside a floating-point value in arithmetic, a comparison or a common type) through the
decimal's text, on the CPU engine. Left as they are: a conversion that is exact already
(:func:`_exact_in_double`: a column's stored type or a literal's value says its digits fit 53
bits) and one whose value only reaches a floating-point SUM, AVG, moment or COUNT
(:func:`_only_folded`). Also left, and so refused: a conversion of a value that reads the
split table's rows. Through text it costs about 0.14 us a value where Polars' own cast costs
0.006 (6,000,000 DECIMAL(38, 12) values: 0.82 s against 0.036 s), so over the rows the share
gives the device it made the arm slower than DuckDB's whole query; over the tables the arm
reads whole beside them (TPC-DS Q34 and Q73: household_demographics) it costs what it costs at
any share. (A column of the split table itself: one read through a derived table or CTE is
not followed, and converts through text; only the cost is at stake there.) Left too, on both
engines and over the split rows: a value the data bounds so that its digits fit 53 bits
(:func:`_bounded_in_double`). On the GPU engine, whose reading of text is not known to be
correctly rounded, the rest are refused (:func:`decimal_double_divergence`); the GPU kit's
``floats`` step measures it.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.arms.polars_decimals import bound
from dau_scheduler.arms.polars_functions import (
    ARITHMETIC,
    COMPARISONS,
    constant_value,
    operands_of,
)
from dau_scheduler.arms.polars_marks import STORED_PRECISION, STORED_SCALE, decimal_scale
from dau_scheduler.rewrite.decisions import FLOAT_FOLDS
from dau_scheduler.rewrite.moments import NAN_BLIND
from dau_scheduler.rewrite.one_type import ONE_TYPE
from dau_scheduler.rewrite.planner import PLACEHOLDER

#: ``meta`` key on the casts :func:`exact_conversions` writes (a decimal to text, text to a
#: float), which ``polars_checks.refuse_divergent`` lets through.
EXACT = "dau_exact_conversion"
#: ``meta`` key on a comparison of a value's magnitude with infinity that stands for ``isnan``,
#: ``isinf`` or ``isfinite`` (``polars_sql._float_class``): a decimal made a double is finite
#: however it is rounded, so its conversion cannot change the answer.
FLOAT_CLASS = "dau_float_class"
_TEXT = exp.DataType.build("VARCHAR")
_DOUBLE = exp.DataType.build("DOUBLE")
_FLOAT = exp.DataType.build("FLOAT")


def _exact_in_double(operand: exp.Expr, scale: int) -> bool:
    """Whether Polars converts the decimal ``operand`` (held at ``scale`` digits, or its stored
    scale if more) to the DOUBLE DuckDB does: its digits as an integer at that scale fit a
    double's 53 bits, so the one division by 10**scale is rounded once, as DuckDB's correctly
    rounded conversion is. A column by its stored type, a literal by its value, any other
    value where the data bounds it (:func:`_bounded_in_double`); else no."""
    bare = operand.unnest()
    value = constant_value(bare)
    if value is not None:
        digits = value * 10**scale
        return bool(digits.denominator == 1 and int(float(digits.numerator)) == digits.numerator)
    precision, stored = bare.meta.get(STORED_PRECISION), bare.meta.get(STORED_SCALE)
    if isinstance(bare, exp.Column) and precision is not None and stored is not None:
        held = max(scale, int(stored))
        if 10 ** int(precision) * 5 ** (held - int(stored)) <= 2**53:
            return True
    return _bounded_in_double(bare, scale)


def _bounded_in_double(operand: exp.Expr, scale: int) -> bool:
    """Whether the data bounds the decimal ``operand`` (``polars_decimals.bound``: its columns'
    largest magnitudes through literals, casts, ``+``, ``-``, ``*``, folds) so that its digits
    at ``scale`` fit 53 bits, no decimal in it held at more digits than ``scale`` (a column
    stored finer is held at its own scale, and Polars keeps the larger one): the one division
    is rounded once (TPC-DS Q34's ``hd_dep_count * 1.000``). The GPU kit's first run found
    libcudf's conversion of such digits DuckDB's bit for bit (``floats``: 0 of 100,000)."""
    for node in operand.find_all(exp.Column, exp.DataType):
        if isinstance(node, exp.DataType):
            finer = node.is_type(exp.DType.DECIMAL) and decimal_scale(node) > scale
        else:
            finer = int(node.meta.get(STORED_SCALE) or 0) > scale
        if finer:
            return False
    found = bound(operand)
    return found is not None and found * 10**scale <= 2**53


def _only_folded(node: exp.Expr) -> bool:
    """Whether ``node``'s value reaches only a floating-point SUM, AVG or moment through
    arithmetic, ``abs`` and CASE branches: those fold in another order than DuckDB's anyway, and
    their last bits are compared within the tolerance (or refused where a final query decides
    on them); or a COUNT, which reads only whether it is NULL; or a test of whether it is
    finite (:data:`FLOAT_CLASS`)."""
    child, parent = node, node.parent
    while isinstance(parent, (exp.Paren, exp.Neg, exp.Abs, exp.Cast, *ARITHMETIC)) or (
        isinstance(parent, (exp.If, exp.Case))  # a branch's value, not its condition
        and child is not parent.this
    ):
        child, parent = parent, parent.parent
    # (a moment's own MIN, its shift, is read only as an estimate, its MAX only as finite or
    # not: ``moments.NAN_BLIND``; whether a value is finite, :data:`FLOAT_CLASS`, a float sum's
    # magnitude partial asks)
    if parent is not None and parent.meta.get(FLOAT_CLASS):
        return True
    return isinstance(parent, (*FLOAT_FOLDS, exp.Count)) or (
        isinstance(parent, (exp.Min, exp.Max)) and bool(parent.meta.get(NAN_BLIND))
    )


def _inexact(node: exp.Expr, scale: int) -> list[exp.Expr]:
    """The decimal operands ``node`` makes floating-point values that Polars would not convert
    as DuckDB does: of a cast to a float, or beside a float in arithmetic, a comparison or a
    common type; none where the value only reaches a float fold (:func:`_only_folded`)."""
    values_only = (exp.Cast, *ARITHMETIC, exp.Case, exp.If, exp.Coalesce)
    if isinstance(node, values_only) and _only_folded(node):
        return []  # (a comparison, NULLIF, GREATEST or LEAST decides: never so)
    if isinstance(node, exp.Cast):
        source = node.this.type
        if not (node.to.is_type(*exp.DataType.FLOAT_TYPES) and source is not None):
            return []
        converted = [node.this] if source.is_type(exp.DType.DECIMAL) else []
    elif isinstance(node, (*COMPARISONS, exp.Between, exp.In, *ONE_TYPE, *ARITHMETIC)):
        present = operands_of(node)
        kinds = [o.type for o in present]
        if not any(k is not None and k.is_type(*exp.DataType.FLOAT_TYPES) for k in kinds):
            return []
        converted = [o for o in present if o.type is not None and o.type.is_type("DECIMAL")]
    else:
        return []
    return [o for o in converted if not _exact_in_double(o, scale)]


def _cast(value: exp.Expr, to: exp.DataType) -> exp.Cast:
    cast = exp.Cast(this=value, to=to.copy())
    cast.type = to.copy()
    cast.meta[EXACT] = True
    return cast


def exact_conversions(tree: exp.Expr, scale: int) -> exp.Expr:
    """``tree`` (translated and typed) with each inexact conversion of a decimal to a float
    that does not read the split table written through the decimal's text:
    ``CAST(CAST(d AS VARCHAR) AS DOUBLE)``, or a cast's own target type (module docstring)."""
    split = {t.alias_or_name for t in tree.find_all(exp.Table) if t.name == PLACEHOLDER}
    for node in reversed(list(tree.walk())):  # (an operand's own conversions first)
        for operand in _inexact(node, scale):
            if any(column.table in split for column in operand.find_all(exp.Column)):
                continue  # (refused: over the split rows, module docstring)
            if isinstance(node, exp.Cast):
                node.set("this", _cast(operand, _TEXT))
                node.meta[EXACT] = True
            else:
                hole = exp.Null()
                operand.replace(hole)
                hole.replace(_cast(_cast(operand, _TEXT), _float_met(node)))
    return tree


def _float_met(node: exp.Expr) -> exp.DataType:
    """The floating-point type DuckDB converts a decimal to beside ``node``'s other operands:
    FLOAT where every floating-point operand is a FLOAT (``d = f`` compares in single
    precision: 0.1 as a DECIMAL equals 0.1 as a FLOAT there; written as a DOUBLE it did not, a
    join on it kept 1,200 rows of 2,000), else DOUBLE."""
    kinds = [o.type for o in operands_of(node) if o.type is not None]
    floats = [k for k in kinds if k.is_type(*exp.DataType.FLOAT_TYPES)]
    single = bool(floats) and all(k.is_type(exp.DType.FLOAT) for k in floats)
    return _FLOAT.copy() if single else _DOUBLE


def decimal_double_divergence(node: exp.Expr, scale: int) -> str | None:
    """Why ``node`` is refused where :func:`exact_conversions` did not rewrite it (the GPU
    engine's arm, or a value over the split table's rows): it makes a decimal a floating-point
    value that Polars converts otherwise than DuckDB."""
    if not _inexact(node, scale):
        return None
    return (
        "a decimal made a floating-point value (Polars rounds the conversion twice past 2**53 "
        "digits, DuckDB once)"
    )


__all__ = ["EXACT", "decimal_double_divergence", "exact_conversions"]
