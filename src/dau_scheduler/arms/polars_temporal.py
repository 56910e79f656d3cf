"""The Polars arm's checks on dates, times and timestamps: the EXTRACT parts and strftime
specifiers Polars computes as DuckDB does, time zones against local values, and timestamps of
different units met in one expression (``polars_checks.refuse_divergent`` asks each)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from sqlglot import exp

from dau_scheduler.arms.polars_functions import COMPARISONS
from dau_scheduler.arms.polars_marks import PLAIN_YEARS
from dau_scheduler.arms.polars_texts import compared_pairs
from dau_scheduler.rewrite.one_type import ONE_TYPE, given_one_type

#: The parts of a date or plain timestamp that Polars extracts as DuckDB does (a sweep over
#: dates and timestamps from year 1 to 2026, before and after 1970: tests/test_sql_arms.py).
#: ``epoch`` is not among them: before 1970 Polars' seconds differ in their fraction.
_EXTRACTED = frozenset(
    {
        "year",
        "quarter",
        "month",
        "week",
        "day",
        "dow",
        "isodow",
        "doy",
        "hour",
        "minute",
        "second",
        "millisecond",
        "microsecond",
        "decade",
        "century",
        "millennium",
        "isoyear",
        "dayofweek",
    }
)


#: How sqlglot types DuckDB's TIMESTAMP (no time zone).
PLAIN_TIMESTAMPS = (exp.DType.TIMESTAMP, exp.DType.TIMESTAMPNTZ)
#: Parts of the time of day: Polars has them on timestamps, not on dates.
_TIME_PARTS = frozenset({"hour", "minute", "second", "millisecond", "microsecond"})
#: Of those, the ones Polars extracts from a TIME as DuckDB does (its seconds of a time keep
#: the fraction: 23722.188 for DuckDB's 23722 milliseconds).
_ON_TIME = frozenset({"hour", "minute"})
#: And from a plain timestamp (milliseconds and microseconds keep the fraction there too).
_ON_TIMESTAMP = frozenset({"hour", "minute", "second"})


#: strftime specifiers Polars formats as DuckDB does, on dates and plain timestamps, and those
#: it formats on plain timestamps only (a sweep over years 1 to 9999, before 1970; eighth
#: session; and over years -29000 to 29000, twelfth). Others differ: ``%f`` (Polars writes
#: nanoseconds), ``%x``, ``%c``, ``%g``, ``%n``, ``%e``; or fail on a date: ``%H``; and the
#: year's, :data:`_STRFTIME_YEARS`.
_STRFTIME_ANY = frozenset(
    ["m", "d", "j", "a", "A", "b", "B", "U", "W", "V", "u", "w", "%", "-m", "-d"]
)
#: The year's specifiers agree only on years 0 to 9999: Polars writes '+12000' and '-0001'
#: where DuckDB writes '12000' and '-1' (``%Y``, ``%G``), and '99' for '01' (``%y`` before
#: year 0). A date's year is not known before the rows are read, so these are refused.
_STRFTIME_YEARS = frozenset(["Y", "y", "G"])
_STRFTIME_TIMESTAMP = frozenset(["H", "M", "S", "I", "p", "X"])
_SPECIFIER = re.compile(r"%(-?.)")


def strftime_divergence(node: exp.TimeToStr) -> str | None:
    form = node.args.get("format")
    if not (isinstance(form, exp.Literal) and form.is_string):
        return "strftime with a format that is not a literal"
    kind = node.this.type
    timestamp = kind is not None and kind.is_type(*PLAIN_TIMESTAMPS)
    date = kind is not None and kind.is_type(exp.DType.DATE)
    if not (timestamp or date):
        return "strftime of other than a date or a plain timestamp"
    allowed = _STRFTIME_ANY | (_STRFTIME_TIMESTAMP if timestamp else frozenset())
    for specifier in _SPECIFIER.findall(str(form.this)):
        if specifier in _STRFTIME_YEARS and node.meta.get(PLAIN_YEARS):
            continue  # a column's years all 1 to 9999 (polars_marks.mark_plain_years)
        if specifier in _STRFTIME_YEARS:
            return (
                f"strftime's %{specifier} (Polars writes years before 0 or after 9999 its own "
                "way: '+12000', '-0001')"
            )
        if specifier not in allowed:
            return f"strftime's %{specifier} (Polars formats it differently, or not on a date)"
    return None


def extract_divergence(node: exp.Extract) -> str | None:
    part = node.name.lower()
    if part not in _EXTRACTED:
        return f"EXTRACT of {part} (Polars computes it differently or not at all)"
    kind = node.expression.type
    if kind is not None and kind.is_type(exp.DType.TIMESTAMP_NS):
        # '2000-01-08 23:59:59.9999995' is day 9 in DuckDB, day 8 in Polars (era_parts.test)
        return "EXTRACT from a TIMESTAMP_NS (DuckDB rounds it to microseconds first)"
    on_time = kind is not None and kind.is_type(exp.DType.TIME) and part in _ON_TIME
    on_timestamp = kind is not None and kind.is_type(*PLAIN_TIMESTAMPS) and part in _ON_TIMESTAMP
    if part in _TIME_PARTS and not (on_timestamp or on_time):
        return f"EXTRACT of {part} from this type (Polars has it on plain timestamps only)"
    return None


ZONED = (exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ)
ZONED_REASON = (
    "a time zone's timestamp read as local time (DuckDB uses the session's TimeZone, Polars "
    "the column's zone)"
)


def zoned(data_type: exp.DataType | None) -> bool:
    return data_type is not None and data_type.is_type(*ZONED)


def zoned_against_local(node: exp.Expr) -> str | None:
    """A time zone's timestamp compared with text, a date or a local timestamp, or given one
    type with it (COALESCE, GREATEST, LEAST, NULLIF, a CASE's or IF's results): DuckDB reads
    the other in the session's TimeZone, Polars in UTC (``ts > '2021-03-14'`` counted 2993
    rows where DuckDB counts 2980 under America/Los_Angeles; ``coalesce(tz, dt)`` grouped
    650 rows where DuckDB's midnight in New York made 520, probes/typed_keys.py)."""
    if isinstance(node, ONE_TYPE):
        operands = [o for o in given_one_type(node) if not isinstance(o, exp.Null)]
    else:
        operands = [o for o in node.iter_expressions() if not isinstance(o, exp.Null)]
    if not any(zoned(o.type) for o in operands):
        return None
    if all(zoned(o.type) for o in operands):
        return None
    return "a time zone's timestamp compared with text, a date or a local time " + (
        "(DuckDB reads them in the session's TimeZone, Polars in UTC)"
    )


def mixed_units(node: exp.Expr) -> str | None:
    """Timestamps of different units met in one expression (compared, coalesced, a CASE's
    branches): DuckDB casts to the finer unit, Polars to the coarser, truncating
    (``ts_ms = ts`` over .123 and .123456: false in DuckDB, true in Polars; DuckDB's
    test/sql/types/timestamp/test_timestamp_auto_casting.test)."""
    operands: list[exp.Expr | None] = list(node.iter_expressions())
    if isinstance(node, exp.Case):
        operands = list(given_one_type(node))
    digits = {
        TIMESTAMP_DIGITS.get(o.type.this)
        for o in operands
        if o is not None and o.type is not None and o.type.this in TIMESTAMP_DIGITS
    }
    if len(digits) < 2:
        return None
    return (
        "timestamps of different units in one expression (DuckDB casts to the finer unit, "
        "Polars to the coarser)"
    )


_PLAIN_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


_FRACTION = re.compile(r"\d{1,2}:\d{2}:\d{2}\.(\d+)")


def finer_text(node: exp.Expr) -> str | None:
    """A timestamp or a time compared with text that names a moment finer than its unit
    (``ms < '2020-01-01 03:00:00.0005'`` over a TIMESTAMP_MS, ``tm = '03:00:00.0000001'``):
    DuckDB rounds the text to the unit, Polars truncates it or reads it to the nanosecond
    (319 rows counted for 343; 24 for 49; probes/typed_texts.py)."""
    operands = [o for o in node.iter_expressions() if isinstance(o, exp.Expr)]
    units = [
        6 if o.type.is_type(exp.DType.TIME) else TIMESTAMP_DIGITS.get(o.type.this)
        for o in operands
        if o.type is not None
    ]
    digits = min((u for u in units if u is not None), default=None)
    if digits is None:
        return None
    for operand in operands:
        if isinstance(operand, exp.Literal) and operand.is_string:
            found = _FRACTION.search(operand.this)
            if found is not None and len(found.group(1).rstrip("0")) > digits:
                return (
                    "a timestamp compared with text finer than its unit (DuckDB rounds the "
                    "text to the unit, Polars truncates it)"
                )
    return None


def mixed_text_list(node: exp.Expr) -> str | None:
    """An IN list of a date, time or timestamp holding text beside values of another kind
    (``dt NOT IN ('infinity', DATE '2020-01-05')``): Polars reads text it cannot read as the
    type as NULL there, without raising, and the NOT IN kept no row (probes/typed_texts.py)."""
    if not isinstance(node, exp.In) or node.this.type is None:
        return None
    if not node.this.type.is_type(exp.DType.DATE, exp.DType.TIME, *TIMESTAMP_DIGITS):
        return None
    texts = [isinstance(e, exp.Literal) and e.is_string for e in node.expressions]
    if any(texts) and not all(texts):
        return (
            "an IN list of a date, time or timestamp mixing text with other values (Polars "
            "reads text it cannot read as the type as NULL there)"
        )
    return None


_MIRRORED: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.EQ: exp.EQ,
    exp.NEQ: exp.NEQ,
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
    exp.NullSafeEQ: exp.NullSafeEQ,
    exp.NullSafeNEQ: exp.NullSafeNEQ,
}


def text_literals_last(node: exp.Expr) -> exp.Expr:
    """A comparison of a text literal with a value that is none, written with the text on the
    right (``'03:00' = tm`` as ``tm = '03:00'``; ``<`` as ``>``): Polars reads text beside a
    temporal column as that type only when the text stands right (else it raises); on the left
    it compared ``'03:00' = tm`` false for every row, where DuckDB reads the text as a TIME
    (probes/typed_texts.py: 24 rows counted for 49)."""
    mirrored = _MIRRORED.get(type(node))
    if mirrored is None:
        return node
    left, right = node.this, node.expression
    if not (isinstance(left, exp.Literal) and left.is_string) or isinstance(right, exp.Literal):
        return node
    return mirrored(this=right, expression=left)


def date_text_as_dates(tree: exp.Expr) -> exp.Expr:
    """``tree`` (typed) with each text literal ``'yyyy-mm-dd'`` compared with a DATE (by a
    comparison, BETWEEN or IN) written as a date literal, and a timestamp's text (a date, or a
    date and a time of day) compared with a plain TIMESTAMP written as its value
    (:func:`timestamp_texts_as_values`): what DuckDB compares. Polars reads the text as the
    other side's type itself, through a cached ``strptime`` that the GPU engine cannot
    translate ("Strptime cache is a CPU feature": TPC-DS Q16, Q32, Q92, Q94 and Q95's ``d_date
    BETWEEN '2002-02-01' AND ...`` were refused on the cudf arm); a date literal it reads as a
    date. Then each TIMESTAMP literal is written as its value."""
    for node in list(tree.find_all(*COMPARISONS, exp.Between, exp.In)):
        changes: list[tuple[exp.Expr, exp.Expr | None]] = []
        for subject, text in compared_pairs(node):
            if not (
                isinstance(text, exp.Literal)
                and text.is_string
                and subject is not None
                and subject.type is not None
            ):
                continue
            if subject.type.is_type(exp.DType.DATE):
                day = _PLAIN_DATE.fullmatch(text.this)
                changes.append((text, _typed_cast(text.copy(), "DATE") if day else None))
            elif subject.type.is_type(*PLAIN_TIMESTAMPS):
                micros = timestamp_microseconds(text.this)
                changes.append((text, None if micros is None else _timestamp_value(micros)))
        if isinstance(node, exp.In) and any(new is None for _, new in changes):
            # An IN list of dates and text: Polars reads the text it cannot read as a date as
            # NULL there, without raising (``dt NOT IN ('infinity', DATE '2020-01-05')``
            # kept no row). Left all text, Polars raises on it as it does on one text.
            continue
        for text, new in changes:
            if new is not None:
                text.replace(new)
    return timestamp_texts_as_values(tree)


#: A TIMESTAMP's text as DuckDB and Python read it alike: a date of four-digit year, and a time
#: of day to the microsecond (or none: midnight). Anything else (a time zone, ``24:00:00``, a
#: year past 9999, nanoseconds) is left as text, which the arm refuses to cast.
_TIMESTAMP_TEXT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?"
)
_EPOCH = datetime(1970, 1, 1)


def timestamp_microseconds(text: str) -> int | None:
    """Microseconds since 1970 of a TIMESTAMP's text (:data:`_TIMESTAMP_TEXT`), or None."""
    found = _TIMESTAMP_TEXT.fullmatch(text)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction = found.groups()
    try:
        moment = datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0").ljust(6, "0")),
        )
    except ValueError:  # (February 30th, hour 24, year 0: DuckDB's reading is its own)
        return None
    return (moment - _EPOCH) // timedelta(microseconds=1)


def timestamp_texts_as_values(tree: exp.Expr) -> exp.Expr:
    """``tree`` with each ``TIMESTAMP '...'`` (a cast of text to a plain TIMESTAMP) whose text
    :func:`timestamp_microseconds` reads written as that many microseconds cast to a TIMESTAMP,
    which Polars reads as microseconds since 1970 (its TIMESTAMP's unit). Polars casts no such
    text itself (``'2000-01-10 05:00:00'``, even ``'2000-01-10'``: "conversion from str to
    datetime failed"), and the arm refused every cast from text but a date's; the GPU engine
    would read a text through ``strptime``, which it does not translate."""
    for cast in list(tree.find_all(exp.Cast)):
        text = cast.this
        if (
            isinstance(text, exp.Literal)
            and text.is_string
            and cast.to.is_type(*PLAIN_TIMESTAMPS)
            and not cast.args.get("format")
        ):
            micros = timestamp_microseconds(text.this)
            if micros is not None:
                cast.replace(_timestamp_value(micros))
    return tree


def plain_timestamp_column(node: exp.Expr) -> bool:
    """A TIMESTAMP column (microseconds, no time zone), parentheses aside: every value of one
    the arm holds lies within Polars' calendar (``polars_values.beyond_polars``)."""
    column = node.unnest()
    return (
        isinstance(column, exp.Column)
        and column.type is not None
        and column.type.is_type(*PLAIN_TIMESTAMPS)
    )


def _timestamp_value(micros: int) -> exp.Cast:
    value = exp.Literal.number(micros)
    value.type = exp.DataType.build("BIGINT")
    return _typed_cast(value, "TIMESTAMP")


def _typed_cast(value: exp.Expr, to: str) -> exp.Cast:
    cast = exp.Cast(this=value, to=exp.DataType.build(to))
    cast.type = exp.DataType.build(to)
    return cast


#: Fractional digits of a second each timestamp type keeps.
TIMESTAMP_DIGITS = {
    exp.DType.TIMESTAMP_S: 0,
    exp.DType.TIMESTAMP_MS: 3,
    exp.DType.TIMESTAMP: 6,
    exp.DType.TIMESTAMPNTZ: 6,
    exp.DType.TIMESTAMPTZ: 6,
    exp.DType.TIMESTAMPLTZ: 6,
    exp.DType.TIMESTAMP_NS: 9,
}


__all__ = [
    "PLAIN_TIMESTAMPS",
    "TIMESTAMP_DIGITS",
    "date_text_as_dates",
    "text_literals_last",
    "finer_text",
    "mixed_text_list",
    "timestamp_microseconds",
    "timestamp_texts_as_values",
    "ZONED",
    "ZONED_REASON",
    "extract_divergence",
    "mixed_units",
    "plain_timestamp_column",
    "strftime_divergence",
    "zoned",
    "zoned_against_local",
]
