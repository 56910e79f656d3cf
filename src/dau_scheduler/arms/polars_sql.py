"""The SQL the Polars arm runs: a compiled partial translated from DuckDB's SQL to what Polars'
SQL front end reads, computing exactly what DuckDB computes.

Polars' SQL differs from DuckDB's in ways that change answers, so the partial is translated:

- Decimal x decimal keeps ``max(s1, s2)`` digits in Polars but ``s1 + s2`` in DuckDB. Decimal
  columns are loaded at scale ``DECIMAL_SCALE`` so products of such columns stay exact there, and
  decimal literals (Float64 in Polars) are written as decimals of that scale.
- ``a / b`` is DOUBLE division in DuckDB for integers and decimals; it is written as such, with
  the divisor made a column: Polars multiplies by a scalar divisor's reciprocal (a rounding
  off, which split one GROUP BY key into two groups across the arms).
- ``IS [NOT] DISTINCT FROM`` is written in parentheses: Polars' parser binds it looser than
  AND and OR. A decimal made a float is converted through its text where it reads no row of
  the split table (``polars_doubles``; correctly rounded, as DuckDB's conversion).
- ``BETWEEN`` is written as two comparisons (parenthesized, for ``NOT BETWEEN``); date literals as
  ``DATE 'yyyy-mm-dd'``; ``BOOL_AND``/``BOOL_OR`` as ``MIN``/``MAX``.
- Polars keys a join only on equalities, and plans comma joins as cross joins: the joins are
  written as Polars reads them (``polars_join_sql``; an inner join on an inequality alone as a
  cross join under WHERE, which Polars runs as an IEJoin).
- Polars wraps integer overflow and sums FLOAT in single precision: integer sums and arithmetic
  are computed in DECIMAL(38, 0) and cast back strictly, FLOATs are summed as DOUBLEs
  (``polars_arithmetic.checked_arithmetic``).
- A date minus a date is a duration in Polars and a day count in DuckDB; a date plus an integer
  an error in Polars. Both are computed on days since 1970; a literal interval added to a date
  or a plain timestamp is kept; other date and time arithmetic is refused (``polars_arithmetic``).
- Polars panics on a scalar subquery it cannot prove is one row, unless it has a LIMIT
  (``_bounded_scalar_subquery``).
- What Polars computes differently and is not translated (``%``, ``//``, ``round`` with digits,
  ``strpos``, casting a fraction to an integer, unknown functions) is refused by name, and so is
  every expression kind outside ``polars_checks._CHECKED`` (default deny).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres

from dau_scheduler.arms import polars_doubles
from dau_scheduler.arms.polars_arithmetic import checked_arithmetic
from dau_scheduler.arms.polars_checks import (
    refuse_constant_filters,
    refuse_deep_nesting,
    refuse_divergent,
)
from dau_scheduler.arms.polars_correlation import (
    common_conjuncts_first,
    name_shared_outer_columns,
    refuse_aggregated_correlation,
    refuse_deep_correlation,
    refuse_empty_group_forms,
    refuse_undecorrelated,
)
from dau_scheduler.arms.polars_dates import last_day, non_negative
from dau_scheduler.arms.polars_decimals import (
    DataBounds,
    check_products,
    mark_checked_products,
)
from dau_scheduler.arms.polars_early_semijoins import semijoins_first
from dau_scheduler.arms.polars_floats import nan_ranked_extrema, round_half_away, special_value
from dau_scheduler.arms.polars_forms import (
    constant_groups_need_rows,
    order_aggregates_by_position,
    refuse_grouped_subqueries,
    refuse_set_operations,
    refuse_shadowing_aliases,
    refuse_unsafe_ctes,
)
from dau_scheduler.arms.polars_functions import (
    BETWEEN,
    CONTAINS,
    QUOTIENT,
    ascii_position,
    text_slice_as_substring,
)
from dau_scheduler.arms.polars_gpu import (
    NAN_SAFE,
    covariances_as_sums,
    refuse_inexact_math,
    refuse_nan_comparisons,
    refuse_overflow_checks,
)
from dau_scheduler.arms.polars_implied import imply_table_conditions
from dau_scheduler.arms.polars_join_sql import (
    filter_joined_table,
    filter_right_join_source,
    flat_join_condition,
    inner_conditions_to_where,
    join_explicitly,
    mask_preceding_conditions,
    refuse_unpaired_conditions,
    semi_joins_as_exists,
)
from dau_scheduler.arms.polars_like import ilike_as_like, like_as_functions
from dau_scheduler.arms.polars_literals import bare_literal, literal_cast
from dau_scheduler.arms.polars_marks import (
    mark_ascii_cases,
    mark_nan_free_columns,
    mark_plain_years,
    mark_stored_scales,
)
from dau_scheduler.arms.polars_prefilter import prefilter
from dau_scheduler.arms.polars_semijoins import (
    correlated_not_ins_as_exists,
    in_subqueries_as_exists,
)
from dau_scheduler.arms.polars_temporal import date_text_as_dates, text_literals_last
from dau_scheduler.arms.polars_texts import number_texts_as_numbers
from dau_scheduler.arms.polars_translatable import filters_as_branches
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.planner import PLACEHOLDER, CompiledSplit

#: The scale decimal columns are held at on the Polars side (see the module docstring).
DECIMAL_SCALE = 12
DECIMAL_TYPE = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")


class _PolarsSQL(Postgres):
    """Postgres-flavoured SQL, which is what Polars' SQL front end reads, with its quirks."""

    class Generator(Postgres.Generator):  # type: ignore[misc,valid-type]
        # Postgres has no TINYINT and writes SMALLINT; Polars reads TINYINT (an Int8). A cast
        # back to SMALLINT let `ti + ti` over 120s answer 240 where DuckDB raises an overflow.
        TYPE_MAPPING: ClassVar[dict[exp.DType, str]] = {
            **Postgres.Generator.TYPE_MAPPING,
            exp.DType.TINYINT: "TINYINT",
        }
        TRANSFORMS: ClassVar[dict[type[exp.Expr], Any]] = {
            **Postgres.Generator.TRANSFORMS,
            # Polars' STRFTIME takes DuckDB's format text (Postgres' TO_CHAR it has not).
            exp.TimeToStr: lambda self, e: self.func("STRFTIME", e.this, e.args.get("format")),
            # Postgres has no TRY_CAST and writes CAST, which Polars runs strictly: it failed
            # where DuckDB's TRY_CAST answers NULL (polars_checks._try_cast_divergence).
            exp.TryCast: lambda self, e: self.cast_sql(e, safe_prefix="TRY_"),
        }

        def cast_sql(self, expression: exp.Cast, safe_prefix: str | None = None) -> str:
            inner = expression.this
            if (
                expression.to.is_type(exp.DType.DATE)
                and isinstance(inner, exp.Literal)
                and inner.is_string
            ):
                return f"DATE '{inner.this}'"
            return str(super().cast_sql(expression, safe_prefix))

        # Polars' SQL parser binds IS [NOT] DISTINCT FROM looser than AND and OR: it read
        # `k IS NOT DISTINCT FROM 2 AND i > 5` as `k IS NOT DISTINCT FROM (2 AND i > 5)`
        # (17 rows for 16). The comparison is written in parentheses as the text is made, not
        # in the tree: a rewrite that takes the terms of a conjunction drops the tree's
        # parentheses (`common_conjuncts_first` did, and a LEFT JOIN's WHERE counted 1,395
        # rows for 221: sixty-second session).
        def nullsafeeq_sql(self, expression: exp.NullSafeEQ) -> str:
            return f"({super().nullsafeeq_sql(expression)})"

        def nullsafeneq_sql(self, expression: exp.NullSafeNEQ) -> str:
            return f"({super().nullsafeneq_sql(expression)})"


def _decimal_literal(node: exp.Expr) -> exp.Expr | None:
    """A number literal with a fraction as a decimal of scale ``DECIMAL_SCALE``; one with more
    fractional digits than that is refused: rounded to that scale, ``f > 0.1234567890123456789``
    compared with another number (20 rows for 0) and ``f < 0.12345678901234`` (20 for 40)."""
    if isinstance(node, exp.Literal) and not node.is_string and not node.is_int:
        text = str(node.this)
        if text.startswith("."):  # (DuckDB's .5, kept as written; Polars' SQL reads 0.5)
            text = f"0{text}"
        fraction = text.partition(".")[2].rstrip("0")
        if "e" not in text.lower() and len(fraction) > DECIMAL_SCALE:
            raise SqlError(
                f"the number {text} has more than the {DECIMAL_SCALE} decimal digits the "
                "Polars arm computes exactly"
            )
        if "e" not in text.lower():
            return exp.Cast(
                this=exp.Literal.string(text),
                to=exp.DataType.build(f"DECIMAL(38, {DECIMAL_SCALE})"),
            )
        whole = _WHOLE_MANTISSA.fullmatch(text)
        if whole is not None:  # Polars' SQL parses 1.0e-3, not 1e-3 (the same DOUBLE)
            return exp.Literal.number(f"{whole.group(1)}.0{whole.group(2)}")
        if text != node.this:
            return exp.Literal.number(text)
    return None


#: A number in scientific notation whose mantissa has no point (``1e-3``, ``5E8``).
_WHOLE_MANTISSA = re.compile(r"(\d+)([eE][+-]?\d+)")


#: DuckDB's part functions as the EXTRACT they are (``dayofweek(d)`` is ``EXTRACT(dow FROM d)``,
#: Sunday 0), which the Polars arm writes for every part in ``polars_temporal._EXTRACTED``.
_PART_FUNCTIONS: dict[type[exp.Expr], str] = {
    exp.Year: "year",
    exp.Quarter: "quarter",
    exp.Month: "month",
    exp.Week: "week",
    exp.Day: "day",
    exp.DayOfWeek: "dow",
    exp.DayOfYear: "doy",
    exp.Hour: "hour",
    exp.Minute: "minute",
    exp.Second: "second",
    exp.DayOfWeekIso: "isodow",
    exp.DayOfMonth: "day",
    exp.WeekOfYear: "week",
}
#: DuckDB's part functions sqlglot keeps by name, by the part each extracts.
_NAMED_PARTS = {
    "isoyear": "isoyear",
    "decade": "decade",
    "century": "century",
    "millennium": "millennium",
    "weekday": "dow",
}


#: The parts Polars extracts as DuckDB does from years after 0 only, by the years each counts
#: and whether DuckDB counts from 1 before year 1: Polars floors the year's quotient, DuckDB
#: truncates it toward zero and has no century or millennium 0 (year -1095: decade -110,
#: century -10, millennium -1 in Polars; -109, -11, -2 in DuckDB; thirty-first session).
_ERAS = {"DECADE": (10, 0), "CENTURY": (100, 1), "MILLENNIUM": (1000, 1)}


def _era(node: exp.Extract) -> exp.Expr:
    """``EXTRACT(part FROM x)`` of a decade, century or millennium: Polars' own after year 0,
    before it DuckDB's ``-((-year) // size + extra)`` on a non-negative quotient (Polars'
    floored one is then the truncated one)."""
    part, value = node.name.upper(), _translated(node.expression)
    size, extra = _ERAS[part]
    year = exp.Extract(this=exp.var("YEAR"), expression=value.copy())
    negated = exp.Paren(this=exp.Neg(this=year.copy()))
    quotient = non_negative(exp.IntDiv, negated, exp.Literal.number(size))
    count = exp.Add(this=quotient, expression=exp.Literal.number(extra)) if extra else quotient
    before = exp.Neg(this=exp.Paren(this=count))
    after = exp.Extract(this=exp.var(part), expression=value)
    positive = exp.GT(this=year, expression=exp.Literal.number(0))
    return exp.Paren(this=exp.Case(ifs=[exp.If(this=positive, true=after)], default=before))


def _yearweek(value: exp.Expr) -> exp.Expr:
    """DuckDB's ``yearweek(x)``, a BIGINT: the ISO year times 100, plus the ISO week after year
    0, less it from year 0 back (year -1095's week 45 is -109545)."""
    year = exp.Extract(this=exp.var("ISOYEAR"), expression=value.copy())
    week = exp.Extract(this=exp.var("WEEK"), expression=value.copy())
    hundreds = exp.Mul(this=year.copy(), expression=exp.Literal.number(100))
    after = exp.If(
        this=exp.GT(this=year, expression=exp.Literal.number(0)),
        true=exp.Add(this=hundreds.copy(), expression=week.copy()),
    )
    both = exp.Case(ifs=[after], default=exp.Sub(this=hundreds, expression=week))
    return exp.Cast(this=both, to=exp.DataType.build("BIGINT"))


#: DuckDB's day and month names, which Polars' strftime writes alike (``%A``, ``%B``).
_NAMES: dict[type[exp.Expr], str] = {exp.Dayname: "%A", exp.Monthname: "%B"}


def _extracted_part(node: exp.Expr) -> str | None:
    """The part ``node`` extracts where it is ``date_part('part', x)`` (``datepart``) with a
    literal part, or a part function sqlglot keeps by name (``isoyear(d)``); else None. The
    EXTRACT written for it is checked as any other (``polars_temporal.extract_divergence``)."""
    if not isinstance(node, exp.Anonymous):
        return None
    name, arguments = str(node.this).lower(), node.expressions
    if name in _NAMED_PARTS and len(arguments) == 1:
        return _NAMED_PARTS[name]
    if name in ("date_part", "datepart") and len(arguments) == 2:
        part = arguments[0]
        if isinstance(part, exp.Literal) and part.is_string and part.name.isidentifier():
            return part.name.lower()
    return None


def _as_column(value: exp.Expr, beside: exp.Expr) -> exp.Expr:
    """``value`` as a column of ``beside``'s rows, never a scalar: ``COALESCE(value,
    NULLIF(beside, beside))``, NULL exactly where ``value`` is or ``beside`` is. Polars computes
    an operation with a scalar operand its own way (a division by the reciprocal, a power by
    repeated products), with a column one row by row as IEEE and C do."""
    return exp.Coalesce(
        this=value, expressions=[exp.Nullif(this=beside.copy(), expression=beside.copy())]
    )


def _pow(node: exp.Pow) -> exp.Expr:
    """DuckDB's pow over doubles (a fractional exponent would reach Polars as a decimal), with
    the exponent made a column. Polars computes a scalar exponent its own way (an integer one by
    repeated products, 0.5 as a square root): ``pow(x, 3)`` differed from C's pow in the last
    place for 5,653 of 22,000 doubles, ``pow(x, 2)`` for 16, and ``pow(-inf, 0.5)`` was NaN
    (C: inf), where a column exponent is C's pow row by row, to the last place (twentieth
    session: a GROUP BY over such a value would split it into two groups across the arms)."""
    double = exp.DataType.build("DOUBLE")
    x = exp.Cast(this=_translated(node.this), to=double.copy())
    y = exp.Cast(this=_translated(node.expression), to=double.copy())
    return exp.Pow(this=x, expression=_as_column(y, x))


def _translate(node: exp.Expr) -> exp.Expr:
    decimal = _decimal_literal(node)
    if decimal is not None:
        return decimal
    part = _PART_FUNCTIONS.get(type(node))
    if part is not None and not node.args.get("expression"):
        return exp.Extract(this=exp.var(part.upper()), expression=_translated(node.this))
    part = _extracted_part(node)
    if part is not None:
        node = exp.Extract(this=exp.var(part.upper()), expression=node.expressions[-1].copy())
        return _era(node) if part.upper() in _ERAS else _translate(node)
    if isinstance(node, exp.Extract) and node.name.upper() in _ERAS:
        return _era(node)
    if type(node) in _NAMES:
        return exp.TimeToStr(
            this=_translated(node.this), format=exp.Literal.string(_NAMES[type(node)])
        )
    if isinstance(node, exp.LastDay) and node.args.get("unit") is None:
        return last_day(_translated(node.this))
    named = str(node.this).lower() if isinstance(node, exp.Anonymous) else ""
    if named == "yearweek" and len(node.expressions) == 1:
        return _yearweek(_translated(node.expressions[0]))
    if isinstance(node, exp.Extract) and node.name.upper() == "EPOCH":
        # DuckDB's epoch(x), which polars_dates.epoch computes as DuckDB does
        return exp.TimeToUnix(this=_translated(node.expression))
    if isinstance(node, exp.Div):
        double = exp.DataType.build("DOUBLE")
        dividend = exp.Cast(this=_translated(node.this), to=double)
        divisor = exp.Cast(this=_translated(node.expression), to=double)
        # Polars divides by a scalar (a literal, a constant, an aggregate in a group) as a
        # multiplication by its reciprocal: 63.44 / 10.0 is 6.344 there, 6.343999999999999 in
        # DuckDB, and a GROUP BY x / 10.0 kept one value as two groups across the arms. The
        # divisor is made a column (NULL where the dividend is, as the quotient then is) so
        # that each row is divided as IEEE divides.
        quotient = exp.Div(this=dividend, expression=_as_column(divisor, dividend))
        quotient.meta[QUOTIENT] = True  # (single_precision_constants: a FLOAT's, in FLOAT)
        return quotient
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Boolean):
        # x IS TRUE is false, never NULL, where x is NULL; Polars read it as x = TRUE (NULL):
        # DuckDB's boolean_wrapper_pushdown.test counted 23 rows for 28 under NOT (p IS TRUE).
        value = exp.Paren(this=_translated(node.this))
        truth = value if node.expression.this else exp.Not(this=value)
        return exp.Coalesce(this=exp.Paren(this=truth), expressions=[exp.false()])
    if isinstance(node, exp.Pow):
        return _pow(node)
    if isinstance(node, (exp.IsNan, exp.IsInf)) or (
        isinstance(node, exp.Anonymous)
        and str(node.this).lower() == "isfinite"
        and len(node.expressions) == 1
    ):
        return _float_class(node)
    if isinstance(node, exp.Contains):
        return _contains(node)
    if isinstance(node, exp.Trim) and node.args.get("expression") is None:
        # DuckDB's trim(s), ltrim(s), rtrim(s) trim Unicode's space separators (category Zs)
        # only; Polars' all whitespace (tabs, newlines): the characters are named.
        spaces = node.copy()
        spaces.set("expression", exp.Literal.string(SPACE_SEPARATORS))
        spaces.set("this", _translated(node.this))
        return spaces
    if isinstance(node, (exp.LogicalAnd, exp.LogicalOr)):
        # Polars has no BOOL_AND/BOOL_OR; over booleans they are MIN and MAX (false < true).
        cls = exp.Min if isinstance(node, exp.LogicalAnd) else exp.Max
        return cls(this=_translated(node.this))
    if isinstance(node, exp.Between):
        # Parenthesized: under NOT, "NOT a >= b AND a <= c" would negate the first half only.
        both = exp.and_(
            exp.GTE(this=_translated(node.this), expression=_translated(node.args["low"])),
            exp.LTE(this=_translated(node.this), expression=_translated(node.args["high"])),
        )
        both.meta[BETWEEN] = True  # DuckDB compares all three in one type (a DOUBLE bound's)
        return exp.Paren(this=both)
    return node


def _float_class(node: exp.Expr) -> exp.Expr:
    """``isnan``, ``isinf`` and ``isfinite``, which Polars' SQL has not, as comparisons with the
    infinities that answer alike where NaN ranks above every number (DuckDB, Polars' CPU engine)
    and where it compares false with all (IEEE, the GPU engine): finite is ``-inf < x < inf``,
    infinite ``x = inf OR x = -inf``, NaN ``NOT (-inf <= x <= inf)``. NULL gives NULL, as the
    three functions give NULL for NULL. So they are :data:`NAN_SAFE` (and a float sum's
    magnitude partial, ``rewrite.overflow``, runs on the GPU engine too)."""
    value = _translated(node.expressions[0] if isinstance(node, exp.Anonymous) else node.this)
    double = exp.DataType.build("DOUBLE")

    def compared(cls: type[exp.Binary], special: str) -> exp.Expr:
        comparison = cls(this=value.copy(), expression=special_value(special, double))
        comparison.meta.update({NAN_SAFE: True, polars_doubles.FLOAT_CLASS: True})
        return comparison

    if isinstance(node, exp.IsInf):
        return exp.Paren(this=exp.or_(compared(exp.EQ, "inf"), compared(exp.EQ, "-inf")))
    if isinstance(node, exp.IsNan):
        within = exp.and_(compared(exp.GTE, "-inf"), compared(exp.LTE, "inf"))
        return exp.Paren(this=exp.Not(this=exp.Paren(this=within)))
    return exp.Paren(this=exp.and_(compared(exp.GT, "-inf"), compared(exp.LT, "inf")))


#: Unicode's space separators (category Zs), the characters DuckDB's one-argument trim
#: removes (checked against DuckDB over every whitespace, separator and format character).
SPACE_SEPARATORS = " \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"


def _contains(node: exp.Contains) -> exp.Expr:
    """``contains(s, 'lit')`` as ``s LIKE '%lit%'`` (Polars' SQL has no contains) where the literal
    holds no LIKE wildcard or backslash; otherwise left as it is, and refused by name. The LIKE
    is marked so that one over other than text is refused (DuckDB's contains of a list)."""
    needle = node.expression
    if not (isinstance(needle, exp.Literal) and needle.is_string) or set(needle.this) & set("%_\\"):
        return node
    like = exp.Like(this=_translated(node.this), expression=exp.Literal.string(f"%{needle.this}%"))
    like.meta[CONTAINS] = True
    return exp.Paren(this=like)


def _translated(node: exp.Expr) -> exp.Expr:
    return node.copy().transform(_translate)


def _bounded_scalar_subquery(node: exp.Expr) -> exp.Expr:
    """A scalar subquery that is not a plain aggregate, with ``LIMIT 2``.

    Polars panics ("only supported for scalars") on a scalar subquery of one row that it cannot
    prove is one row: TPC-DS Q58's ``d_week_seq = (SELECT d_week_seq FROM date_dim WHERE
    d_date = '2000-01-03')``. With a LIMIT it reads the value. Two rows keep DuckDB's meaning:
    none is NULL, one the value, and more than one an error on both sides.
    """
    if not isinstance(node, exp.Subquery) or not isinstance(node.parent, (exp.Binary, exp.Alias)):
        return node
    select = node.this
    if (
        not isinstance(select, exp.Select)
        or select.args.get("limit") is not None
        or (
            select.args.get("group") is None
            and all(e.find(exp.AggFunc) for e in select.expressions)
        )
    ):
        return node
    bounded = node.copy()
    bounded.set("this", select.copy().limit(2))
    return bounded


def _group_by_key_names(node: exp.Expr) -> exp.Expr:
    """A partial's GROUP BY keys named by the outputs they are (``__dau_g*``): Polars names a
    key after the column it reads, so ``GROUP BY col1, col1 + 1`` failed on two keys named
    ``col1``."""
    group = node.args.get("group") if isinstance(node, exp.Select) else None
    if group is None or not group.expressions:
        return node
    named = {
        item.this: item.alias
        for item in node.expressions
        if isinstance(item, exp.Alias) and item.alias.startswith("__dau_g")
    }
    keys = [exp.column(named[key]) if key in named else key for key in group.expressions]
    group.set("expressions", keys)
    return node


def _distinct_sort_keys(node: exp.Expr) -> exp.Expr:
    """An ORDER BY without a key it repeats (``ORDER BY ts DESC, ts DESC``: rows tied on the
    first are tied on the second). Polars' streaming top-k panicked on the repeat ("assertion
    failed: keys.width() == 1"; the host answered)."""
    if not isinstance(node, exp.Order):
        return node
    seen: set[exp.Expr] = set()
    kept = []
    for item in node.expressions:
        key = item.this if isinstance(item, exp.Ordered) else item
        if key not in seen:
            seen.add(key)
            kept.append(item)
    if len(kept) < len(node.expressions):
        node.set("expressions", kept)
    return node


def polars_sql(
    compiled: CompiledSplit,
    types: dict[str, dict[str, str]] | None = None,
    stored: dict[str, dict[str, str]] | None = None,
    ascii_only: Callable[[str, str], bool] | None = None,
    plain_years: Callable[[str, str], bool] | None = None,
    partial: exp.Expr | None = None,
    bounds: DataBounds | None = None,
    exact_conversions: bool = True,
    checked_casts: bool = True,
    exact_math: bool = True,
    nan_ordered: bool = True,
    nan_free: Callable[[str, str], bool] | None = None,
) -> str:
    """The partial query in the SQL Polars reads, with DuckDB's arithmetic (module docstring).

    ``types`` (table -> column -> SQL type, as the arm holds them) enables the overflow and
    precision rewrites of :func:`checked_arithmetic`; without it they are skipped. ``stored``
    (the same, as the data has them) lets a column's decimal cast to its own digits through
    (:func:`mark_stored_scales`); ``ascii_only(table, column)`` (whether the column's values
    are all ASCII) lets ``upper``/``lower`` of such a column through (:func:`mark_ascii_cases`);
    ``plain_years(table, column)`` (whether its years are all 1 to 9999) lets ``strftime``'s
    year specifiers of such a column through (:func:`mark_plain_years`). ``partial`` stands
    for the compiled one where the arm rewrote it first (``polars_hoist``).
    ``bounds`` (the largest magnitude of a numeric column's values, a table's rows) lets what
    the data bounds go unchecked (``polars_decimals.bound``).
    ``exact_conversions``: a decimal made a float is converted through its text, as DuckDB
    rounds it (``polars_doubles``; the CPU engine), not refused. ``checked_casts``: the
    engine's strict casts raise on overflow (else what DuckDB checks is refused);
    ``exact_math``: its ``ln``, ``exp`` and ``pow`` are DuckDB's bit for bit (else refused);
    ``nan_ordered``: it finds NaN equal to NaN, as DuckDB does, so a MIN or MAX of a float can
    rank NaN as DuckDB does (``polars_floats``; else refused, as is a comparison of a float
    that may be NaN, ``polars_gpu.refuse_nan_comparisons``, but of a column ``nan_free(table,
    column)`` says holds none): all false on the GPU engine (``polars_gpu``).
    """
    partial = compiled.partial if partial is None else partial
    if partial is None:
        raise SqlError("this query has no partial to run")
    partial = partial.transform(literal_cast).transform(bare_literal, copy=False)
    if not exact_math:  # the GPU engine
        refuse_inexact_math(partial)
        partial = correlated_not_ins_as_exists(partial.transform(covariances_as_sums))
    split = compiled.plan.split_table or ""
    as_stored = None  # the stored types, the placeholder read as the split table
    if stored is not None:
        as_stored = dict(stored) | ({PLACEHOLDER: stored[split]} if split in stored else {})
        as_stored = {name: columns for name, columns in as_stored.items() if columns}
        # DuckDB's types of the products, before the translation rewrites their operands.
        partial = partial.copy()
        mark_checked_products(partial, as_stored, DECIMAL_SCALE, bounds)
    partial = (
        _translated(partial)
        .transform(text_literals_last, copy=False)
        .transform(filters_as_branches, copy=False)
    )
    partial = partial.transform(common_conjuncts_first, copy=False)
    partial = join_explicitly(partial).transform(flat_join_condition, copy=False)
    partial = partial.transform(_group_by_key_names, copy=False).transform(
        _distinct_sort_keys, copy=False
    )
    refuse_empty_group_forms(partial)  # (before the LIMIT 2 a one-row subquery is given)
    partial = partial.transform(_bounded_scalar_subquery, copy=False)
    partial = partial.transform(filter_joined_table, copy=False).transform(
        filter_right_join_source, copy=False
    )
    partial = partial.transform(inner_conditions_to_where, copy=False).transform(
        semi_joins_as_exists, copy=False
    )
    partial = partial.transform(mask_preceding_conditions, copy=False)
    refuse_unpaired_conditions(partial)
    refuse_deep_correlation(partial)
    refuse_aggregated_correlation(partial)
    refuse_undecorrelated(partial)
    refuse_grouped_subqueries(partial)
    constant_groups_need_rows(partial)
    order_aggregates_by_position(partial)
    refuse_constant_filters(partial)
    schema = dict(types or {}) | ({PLACEHOLDER: types[split]} if types and split in types else {})
    # A table none of whose columns the translation types (lists, structs) is no table to it:
    # sqlglot's schema takes none without columns, which failed every query beside it.
    schema = {name: columns for name, columns in schema.items() if columns}
    if types is not None:
        if as_stored is not None:
            mark_stored_scales(partial, as_stored)
            partial = number_texts_as_numbers(partial, as_stored)
        if ascii_only is not None:
            mark_ascii_cases(partial, ascii_only)
            partial = partial.transform(ascii_position, copy=False).transform(
                ilike_as_like, copy=False
            )
        if plain_years is not None:
            mark_plain_years(partial, plain_years)
        partial = date_text_as_dates(checked_arithmetic(partial, schema))
        partial = check_products(partial, DECIMAL_SCALE)
        if not checked_casts:
            refuse_overflow_checks(partial)
        if exact_conversions:
            partial = polars_doubles.exact_conversions(partial, DECIMAL_SCALE)
        partial = partial.transform(round_half_away, copy=False).transform(
            text_slice_as_substring, copy=False
        )
        if nan_ordered:
            partial = nan_ranked_extrema(partial)
        else:
            if nan_free is not None:
                mark_nan_free_columns(partial, nan_free)
            refuse_nan_comparisons(partial)
    refuse_unsafe_ctes(partial, None if types is None else [*types, PLACEHOLDER])
    refuse_shadowing_aliases(partial, split)
    refuse_set_operations(partial, typed=types is not None)
    refuse_divergent(partial, DECIMAL_SCALE)
    refuse_deep_nesting(partial)
    partial = in_subqueries_as_exists(partial.transform(like_as_functions, copy=False), schema)
    partial = name_shared_outer_columns(semijoins_first(partial), schema)
    partial = prefilter(imply_table_conditions(partial))
    refuse_shadowing_aliases(partial, split)  # again: the rewrites above write derived tables
    return str(partial.sql(dialect=_PolarsSQL))


__all__ = ["DECIMAL_SCALE", "DECIMAL_TYPE", "polars_sql"]
