"""Date and time arithmetic on the Polars arm, computed as DuckDB computes it: on day numbers
and microseconds since 1970 where Polars' own temporal functions differ (a date minus a date, a
date plus days, ``date_trunc``, ``date_diff('day')``, ``epoch``) or where the GPU engine has no
translation of them (``offset_by``), and refused by name where neither fits.
:func:`polars_arithmetic.checked_arithmetic` applies them before its integer checks."""

from __future__ import annotations

import re

from sqlglot import exp

from dau_scheduler.arms.integer_types import is_integer
from dau_scheduler.arms.polars_decimals import fits
from dau_scheduler.arms.polars_marks import OVERFLOW_CHECK
from dau_scheduler.arms.polars_temporal import plain_timestamp_column
from dau_scheduler.errors import SqlError

_BIGINT = exp.DataType.build("BIGINT")
_DOUBLE = exp.DataType.build("DOUBLE")
_UNKNOWN = exp.DataType.build("UNKNOWN")
_DATE = exp.DataType.build("DATE")
_TIMESTAMP = exp.DataType.build("TIMESTAMP")
#: What a literal interval may be added to on the Polars arm (DuckDB's TIMESTAMP is sqlglot's
#: TIMESTAMPNTZ); never a time zone's timestamp, a time or an interval.
_INTERVAL_OPERANDS = (
    exp.DType.DATE,
    exp.DType.TIMESTAMP,
    exp.DType.TIMESTAMPNTZ,
    exp.DType.DATETIME,
)


#: The interval units Polars' SQL reads as DuckDB does (singular or plural); it panics on
#: DuckDB's others (decade, century, millennium, and abbreviations such as ``hr``).
_POLARS_UNITS = frozenset(
    [
        "YEAR",
        "QUARTER",
        "MONTH",
        "WEEK",
        "DAY",
        "HOUR",
        "MINUTE",
        "SECOND",
        "MILLISECOND",
        "MICROSECOND",
    ]
)


def _whole_interval(side: exp.Expr) -> bool:
    """A literal interval of a whole number of one unit Polars knows (``INTERVAL '3' DAY``),
    which Polars reads as DuckDB does; not ``'1.5 days'`` (Polars' SQL panics on it),
    ``'3 days ago'`` or ``INTERVAL 1 DECADE``."""
    return (
        isinstance(side, exp.Interval)
        and isinstance(side.this, exp.Literal)
        and isinstance(side.args.get("unit"), exp.Var)
        and _unit(side) in _POLARS_UNITS
        and re.fullmatch(r"-?[0-9]+", side.this.name) is not None
    )


def _unit(interval: exp.Expr) -> str:
    """An interval's unit, singular and upper-case (``days``: ``DAY``)."""
    return str(interval.args["unit"].name).upper().removesuffix("S")


#: Days in the interval units a date is shifted by on day numbers.
_UNIT_DAYS = {"DAY": 1, "WEEK": 7}
#: Microseconds in the interval units a plain TIMESTAMP column is shifted by on microseconds.
_UNIT_MICROSECONDS = {
    "WEEK": 604_800_000_000,
    "DAY": 86_400_000_000,
    "HOUR": 3_600_000_000,
    "MINUTE": 60_000_000,
    "SECOND": 1_000_000,
    "MILLISECOND": 1_000,
    "MICROSECOND": 1,
}
#: The longest such shift (about 3,170 years): a held timestamp lies within Polars' calendar
#: (``polars_values.CALENDAR_MICROSECONDS``, 8.2e18), so the sum stays inside a BIGINT and
#: inside DuckDB's timestamps (to year 294247), short of its infinity.
_LONGEST_SHIFT = 10**17


def _interval_days(side: exp.Expr) -> exp.Expr | None:
    """A literal interval of whole days or weeks as its days (``INTERVAL '5' DAY``: 5), or
    None. A date plus it is DuckDB's TIMESTAMP of the date that many days on; written on day
    numbers, not as Polars' ``offset_by``, which the GPU engine does not translate."""
    if not _whole_interval(side):
        return None
    per = _UNIT_DAYS.get(_unit(side))
    return None if per is None else exp.Literal.number(int(side.this.name) * per)


def _interval_microseconds(side: exp.Expr) -> exp.Expr | None:
    """A literal interval of whole weeks, days, hours, minutes, seconds, milliseconds or
    microseconds as its microseconds, or None (another unit: months and years are no fixed
    length; or longer than :data:`_LONGEST_SHIFT`)."""
    if not _whole_interval(side):
        return None
    per = _UNIT_MICROSECONDS.get(_unit(side))
    shift = None if per is None else int(side.this.name) * per
    return None if shift is None or abs(shift) > _LONGEST_SHIFT else exp.Literal.number(shift)


#: Months in the interval units Polars' ``offset_by`` shifts by calendar months.
_UNIT_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
#: The longest shift in months let through: Polars' calendar ends at years -262143 and 262142
#: (``polars_values``), past which ``offset_by`` panics (a Rust backtrace on stderr; the host
#: then answered). A held date of years 1 to 9999 shifted by this stays inside it.
_LONGEST_MONTHS = 250_000 * 12


def _too_long_for_polars(side: exp.Expr) -> str | None:
    """Why a literal whole interval (:func:`_whole_interval`) is too long for Polars'
    ``offset_by``, or None. A fixed length is counted in nanoseconds and wraps past 2**63
    (106,752 days: ``ts + INTERVAL 1000000 DAY`` gave 2154-11-11 for DuckDB's 4707-11-28, and a
    MIN another row); months and years panic past Polars' calendar."""
    amount = abs(int(side.this.name))
    per = _UNIT_MICROSECONDS.get(_unit(side))
    if per is not None and amount * per * 1000 >= 2**63:
        return (
            "an interval of over 292 years in weeks or shorter units (Polars' offset_by counts "
            "it in nanoseconds and wraps past 2**63)"
        )
    if amount * _UNIT_MONTHS.get(_unit(side), 0) > _LONGEST_MONTHS:
        return (
            "an interval of over 250,000 years (Polars' calendar ends at year 262142, and its "
            "offset_by panics past it)"
        )
    return None


def _shifted_timestamp(op: exp.Expr, column: exp.Expr, shift: exp.Expr) -> exp.Cast:
    """``column`` plus (or minus) ``shift`` microseconds, computed on microseconds since 1970
    and made a TIMESTAMP again: DuckDB adds a day's or an hour's interval to a time-zone-free
    timestamp as that many microseconds; Polars' ``offset_by`` the GPU engine does not
    translate ("Temporal function"). The sum needs no check (``polars_decimals.bound``)."""
    micros = exp.Cast(this=column.copy(), to=_BIGINT.copy())
    return exp.Cast(this=op.__class__(this=micros, expression=shift), to=_TIMESTAMP.copy())


def _timestamp_of_date(side: exp.Expr) -> None:
    """A DATE a literal interval is added to, cast to a TIMESTAMP in place: DuckDB's sum is a
    TIMESTAMP, and Polars keeps a Date and drops what is under a day (``d + INTERVAL 36
    HOUR`` was the next day at midnight, not at noon)."""
    if (side.unnest().type or _UNKNOWN).is_type(exp.DType.DATE):
        side.replace(exp.Cast(this=side.copy(), to=_TIMESTAMP.copy()))


def _days(node: exp.Expr) -> exp.Expr:
    return exp.Cast(this=node.copy(), to=_BIGINT.copy())


#: DuckDB's last day either side of 1970 (``DATE '5881580-07-10'``); a day past it raises, where
#: Polars' 32-bit date holds one more (DuckDB's ``infinity`` when it reads it back).
_LAST_DAY = 2147483646


def _to_date(shifted: exp.Expr) -> exp.Cast:
    """A day number made a DATE, strictly: marked :data:`OVERFLOW_CHECK` (an engine whose casts
    do not check refuses it) unless the data bounds it within DuckDB's dates."""
    cast = exp.Cast(this=shifted, to=_DATE.copy())
    if not fits(shifted, _LAST_DAY + 1):
        cast.meta[OVERFLOW_CHECK] = True
    return cast


def date_arithmetic(op: exp.Expr) -> exp.Expr:
    """``op`` (``+``, ``-`` or ``*`` with a date, time or interval operand) as Polars computes
    it the way DuckDB does, or ``SqlError``.

    A date minus a date is DuckDB's BIGINT count of days (Polars: a duration, which the fold
    would read as microseconds); a date plus or minus an integer is a date (Polars: an error).
    Both are computed on days since 1970, which Polars' casts of a date to and from BIGINT are;
    so is a date plus or minus a literal interval of days or weeks (:func:`_interval_days`),
    made a TIMESTAMP, and a time-zone-free timestamp column plus or minus one of a fixed length
    on microseconds (:func:`_shifted_timestamp`). A date or a time-zone-free timestamp plus or
    minus a literal interval of another unit is computed alike by
    both (months clamp to the month's last day in both), a date as a TIMESTAMP, as DuckDB does.
    Everything else with a date, time or interval operand is refused by name.
    """
    left, right = op.args["this"], op.args["expression"]
    lt, rt = left.unnest().type or _UNKNOWN, right.unnest().type or _UNKNOWN
    date = exp.DType.DATE
    if isinstance(op, exp.Sub) and lt.is_type(date) and rt.is_type(date):
        days = exp.Sub(this=_days(left), expression=_days(right))
        days.type = _BIGINT.copy()
        return days
    if isinstance(op, (exp.Add, exp.Sub)) and lt.is_type(date) and is_integer(rt):
        return _to_date(op.__class__(this=_days(left), expression=_days(right)))
    if isinstance(op, exp.Add) and is_integer(lt) and rt.is_type(date):
        return _to_date(exp.Add(this=_days(right), expression=_days(left)))
    step = _interval_days(right) if lt.is_type(date) else None
    if isinstance(op, (exp.Add, exp.Sub)) and step is not None:
        shifted = _to_date(op.__class__(this=_days(left), expression=_days(step)))
        return exp.Cast(this=shifted, to=_TIMESTAMP.copy())
    step = _interval_days(left) if rt.is_type(date) else None
    if isinstance(op, exp.Add) and step is not None:
        shifted = _to_date(exp.Add(this=_days(right), expression=_days(step)))
        return exp.Cast(this=shifted, to=_TIMESTAMP.copy())
    step = _interval_microseconds(right) if plain_timestamp_column(left) else None
    if isinstance(op, (exp.Add, exp.Sub)) and step is not None:
        return _shifted_timestamp(op, left, step)
    step = _interval_microseconds(left) if plain_timestamp_column(right) else None
    if isinstance(op, exp.Add) and step is not None:
        return _shifted_timestamp(op, right, step)
    literal_interval = [_whole_interval(side) for side in (left, right)]
    for side, whole in zip((left, right), literal_interval, strict=True):
        too_long = _too_long_for_polars(side) if whole else None
        if too_long is not None:
            raise SqlError(f"{op.sql(dialect='duckdb')}: {too_long}")
    if (
        isinstance(op, (exp.Add, exp.Sub))
        and literal_interval[1]
        and lt.is_type(*_INTERVAL_OPERANDS)
    ):
        _timestamp_of_date(left)
        return op
    if isinstance(op, exp.Add) and literal_interval[0] and rt.is_type(*_INTERVAL_OPERANDS):
        _timestamp_of_date(right)
        return op
    raise SqlError(
        f"{op.sql(dialect='duckdb')}: date and time arithmetic of these types "
        "(Polars computes it differently or not at all)"
    )


def day_difference(diff: exp.DateDiff) -> exp.Expr | None:
    """``date_diff('day', a, b)`` of two DATEs as ``b - a`` on day numbers (DuckDB's BIGINT; Polars
    has no such function), or None: another unit or other operands stay ``DateDiff``, which the
    arm refuses by name (over timestamps DuckDB counts the day boundaries crossed)."""
    unit = diff.args.get("unit")
    if unit is None or unit.name.upper() not in ("DAY", "DAYS", "D"):
        return None
    end, start = diff.this, diff.expression
    date = exp.DType.DATE
    if not all((side.unnest().type or _UNKNOWN).is_type(date) for side in (end, start)):
        return None
    days = exp.Sub(this=_days(end), expression=_days(start))
    days.type = _BIGINT.copy()
    wrapped = exp.Paren(this=days)
    wrapped.type = _BIGINT.copy()
    return wrapped


#: DuckDB's names of ``date_trunc``'s parts of a day or longer (sqlglot keeps a name as written,
#: upper-cased), by the part; each was compared with DuckDB's (tests/slt/date_trunc_parts.test).
_DAY_PARTS = {
    **dict.fromkeys(("DAY", "DAYS", "D", "DAYOFMONTH"), "DAY"),
    **dict.fromkeys(("WEEK", "WEEKS", "W"), "WEEK"),
    **dict.fromkeys(("MONTH", "MONTHS", "MON"), "MONTH"),
    **dict.fromkeys(("QUARTER", "QUARTERS"), "QUARTER"),
    **dict.fromkeys(("YEAR", "YEARS", "Y", "YR"), "YEAR"),
}
#: The parts under a day, by the microseconds each is.
_TIME_PARTS = {
    **dict.fromkeys(("HOUR", "HOURS", "H", "HR"), 3_600_000_000),
    **dict.fromkeys(("MINUTE", "MINUTES", "MIN", "M"), 60_000_000),
    **dict.fromkeys(("SECOND", "SECONDS", "SEC", "S"), 1_000_000),
    **dict.fromkeys(("MILLISECOND", "MILLISECONDS", "MS"), 1_000),
    **dict.fromkeys(("MICROSECOND", "MICROSECONDS", "US"), 1),
}
#: The day of a date's week, month and year that ``date_trunc`` goes back to day 1 of.
_TRUNCATED_PARTS = {"WEEK": "ISODOW", "MONTH": "DAY", "YEAR": "DOY"}
#: The days from the first of a quarter's month to the first of the month after it in the
#: quarter, from April on (a month of the first quarter goes back to its year's first day,
#: which a leap year moves).
_QUARTER_DAYS = {5: 30, 6: 61, 8: 31, 9: 62, 11: 31, 12: 61}


def _back_to_first(day: exp.Expr, part: str) -> exp.Expr:
    """The DATE ``day`` (a DATE) goes back to at the start of its ISO week, month or year: its
    day number less its day of the week, month or year, less one."""
    into = exp.Extract(this=exp.var(_TRUNCATED_PARTS[part]), expression=day.copy())
    back = exp.Sub(this=exp.Paren(this=into), expression=exp.Literal.number(1))
    return exp.Cast(this=exp.Sub(this=_days(day), expression=exp.Paren(this=back)), to=_DATE.copy())


def last_day(value: exp.Expr) -> exp.Expr:
    """DuckDB's ``last_day(x)``, a DATE, on day numbers: the first of ``x``'s month plus 31 days
    is in the next month, whose first day less one is the month's last. ``x`` is cast to a
    DATE (the checks refuse that cast where Polars' differs: a TIMESTAMP_NS, a zoned one)."""
    month_first = _back_to_first(exp.Cast(this=value, to=_DATE.copy()), "MONTH")
    later = exp.Cast(
        this=exp.Add(this=_days(month_first), expression=exp.Literal.number(31)), to=_DATE.copy()
    )
    next_first = _back_to_first(later, "MONTH")
    return exp.Cast(
        this=exp.Sub(this=_days(next_first), expression=exp.Literal.number(1)), to=_DATE.copy()
    )


def _quarter_start(day: exp.Expr) -> exp.Expr:
    """The DATE at the start of ``day``'s quarter: its year's first day in the first quarter,
    else its month's first day less the days of the quarter's months before it."""
    month = exp.Extract(this=exp.var("MONTH"), expression=day.copy())
    before = exp.Case(
        ifs=[
            exp.If(
                this=exp.EQ(this=month.copy(), expression=exp.Literal.number(number)),
                true=exp.Literal.number(days),
            )
            for number, days in _QUARTER_DAYS.items()
        ],
        default=exp.Literal.number(0),
    )
    month_first = _back_to_first(day, "MONTH")
    later = exp.Cast(
        this=exp.Sub(this=_days(month_first), expression=exp.Paren(this=before)), to=_DATE.copy()
    )
    first_quarter = exp.LTE(this=month, expression=exp.Literal.number(3))
    year_first = _back_to_first(day, "YEAR")
    return exp.Case(ifs=[exp.If(this=first_quarter, true=year_first)], default=later)


def _within_day(timestamp: exp.Expr, step: int) -> exp.Expr:
    """A plain TIMESTAMP truncated to ``step`` microseconds (an hour, a minute, ...) on its
    microseconds since 1970 (Polars' casts of a timestamp to and from BIGINT): less the
    remainder of its microseconds into its day, which is never negative, so Polars' floored
    remainder is DuckDB's."""
    if step == 1:
        return exp.Cast(this=timestamp.copy(), to=_TIMESTAMP.copy())
    micros = exp.Cast(this=timestamp.copy(), to=_BIGINT.copy())
    day = exp.Cast(this=timestamp.copy(), to=_DATE.copy())
    midnight = exp.Cast(this=exp.Cast(this=day, to=_TIMESTAMP.copy()), to=_BIGINT.copy())
    into_day = exp.Paren(this=exp.Sub(this=micros.copy(), expression=midnight))
    rest = exp.Paren(this=non_negative(exp.Mod, into_day, exp.Literal.number(step)))
    return exp.Cast(this=exp.Sub(this=micros, expression=rest), to=_TIMESTAMP.copy())


def truncated_date(trunc: exp.Expr) -> exp.Expr | None:
    """``date_trunc(part, d)`` of a DATE or plain TIMESTAMP as DuckDB's TIMESTAMP: at the start
    of its day, ISO week, month, quarter or year, computed on day numbers; at the start of its
    hour, minute, second or millisecond on microseconds (a DATE's is its midnight). Polars'
    SQL has no date_trunc. None for other parts and operands, which stay and the arm refuses
    by name."""
    unit = trunc.args.get("unit")
    name = unit.name.upper() if isinstance(unit, exp.Var) else ""
    operand = trunc.this
    kind = operand.unnest().type or _UNKNOWN
    plain = kind.is_type(exp.DType.TIMESTAMP, exp.DType.TIMESTAMPNTZ)
    if not (plain or kind.is_type(exp.DType.DATE)):
        return None
    if name in _TIME_PARTS:
        if plain:
            return _within_day(operand, _TIME_PARTS[name])
        return exp.Cast(this=operand.copy(), to=_TIMESTAMP.copy())  # a date's midnight
    part = _DAY_PARTS.get(name)
    if part is None:
        return None
    if plain:
        # A plain timestamp's day, week, month or year starts where its date's does (the cast
        # to a date agrees with DuckDB's before 1970 and at year 1: test_widened_functions...).
        operand = exp.Cast(this=operand.copy(), to=_DATE.copy())
        operand.type = _DATE.copy()
    if part == "DAY":
        day = operand.copy()
    elif part == "QUARTER":
        day = _quarter_start(operand)
    else:
        day = _back_to_first(operand, part)
    return exp.Cast(this=day, to=_TIMESTAMP.copy())


def epoch(node: exp.TimeToUnix) -> exp.Expr | None:
    """``epoch(x)`` of a DATE or plain TIMESTAMP as DuckDB computes it: the DOUBLE of its
    microseconds since 1970 (Polars' cast of a timestamp to BIGINT) over a million, divided row
    by row (the divisor a column: Polars multiplies by a scalar's reciprocal); equal to DuckDB's
    over years -260000 to 262000. Polars' own EXTRACT of epoch differs before 1970 in the
    fraction. None for other operands, which stay and the arm refuses by name."""
    operand = node.this
    kind = operand.unnest().type or _UNKNOWN
    if kind.is_type(exp.DType.DATE):
        operand = exp.Cast(this=operand.copy(), to=_TIMESTAMP.copy())
    elif not kind.is_type(exp.DType.TIMESTAMP, exp.DType.TIMESTAMPNTZ):
        return None
    micros = exp.Cast(this=exp.Cast(this=operand.copy(), to=_BIGINT.copy()), to=_DOUBLE.copy())
    million = exp.Coalesce(
        this=exp.Cast(this=exp.Literal.number(1_000_000), to=_DOUBLE.copy()),
        expressions=[exp.Nullif(this=micros.copy(), expression=micros.copy())],
    )
    seconds = exp.Paren(this=exp.Div(this=micros, expression=million))
    seconds.type = _DOUBLE.copy()
    return seconds


#: The ``meta`` mark of a ``%`` or ``//`` whose operands are never negative, where Polars'
#: floored remainder and quotient are DuckDB's truncated ones.
NON_NEGATIVE = "non_negative_operands"


def non_negative(kind: type[exp.Mod | exp.IntDiv], a: exp.Expr, b: exp.Expr) -> exp.Expr:
    """``a % b`` or ``a // b`` marked :data:`NON_NEGATIVE` (both operands never negative)."""
    op = kind(this=a, expression=b)
    op.meta[NON_NEGATIVE] = True
    return op


__all__ = [
    "NON_NEGATIVE",
    "date_arithmetic",
    "day_difference",
    "epoch",
    "last_day",
    "non_negative",
    "truncated_date",
]
