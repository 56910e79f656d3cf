"""The functions and operators whose Polars form computes as DuckDB's only in some forms:
text functions (non-ASCII letters, tabs, empty strings), concatenation (what each type is
written as), the functions the arm was widened with (twentieth session) and text literals among
values of another type. ``polars_checks.refuse_divergent`` asks each of these for a reason."""

from __future__ import annotations

import re
import struct
from fractions import Fraction

from sqlglot import exp

from dau_scheduler.arms.duckdb_types import values
from dau_scheduler.arms.integer_types import literal_value
from dau_scheduler.arms.polars_marks import ASCII_ONLY
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.one_type import ONE_TYPE, given_one_type

#: The comparisons, DuckDB's null-safe ones included.
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)


def _int_literal(node: exp.Expr | None) -> int | None:
    return literal_value(node, parens=False)  # written bare, as Polars reads the argument


def _positive_int(node: exp.Expr | None, least: int) -> bool:
    value = _int_literal(node)
    return value is not None and value >= least


def string_divergence(node: exp.Expr) -> str | None:
    """Text functions Polars computes as DuckDB does only in some forms (a sweep over
    non-ASCII text, tabs and empty strings, eighth session)."""
    if isinstance(node, exp.Trim) and node.args.get("expression") is None:
        # (polars_sql names them: Unicode's space separators, which DuckDB's trim removes)
        return "trim without the characters named (Polars trims all whitespace, DuckDB spaces)"
    if isinstance(node, exp.Replace):
        pattern = node.args.get("expression")
        if not (isinstance(pattern, exp.Literal) and pattern.is_string and pattern.this):
            return "replace of other than a non-empty literal (Polars splits an empty one)"
        if _text_literal(node.args.get("replacement")) is None:
            return "replace by other than a literal (Polars leaves the text for a NULL one)"
    if isinstance(node, exp.Trim) and _text_literal(node.args.get("expression")) is None:
        return "trim of characters other than a literal (Polars trims none for NULL)"
    if isinstance(node, (exp.Left, exp.Right)) and _int_literal(node.args.get("expression")) in (
        None,
        0,
    ):
        return "left/right of other than a literal count other than 0 (Polars: '' for NULL)"
    if isinstance(node, exp.Substring) and not (
        _positive_int(node.args.get("start"), 1)
        and (node.args.get("length") is None or _positive_int(node.args.get("length"), 0))
    ):
        return "substring from other than a literal position >= 1 (Polars counts from the end)"
    return None


def ascii_position(node: exp.Expr) -> exp.Expr:
    """A ``strpos`` of an ASCII column by a text literal (marked :data:`ASCII_ONLY`: bytes are
    characters there) as DuckDB's BIGINT: Polars' STRPOS gives 0 for a NULL text, DuckDB
    NULL."""
    if not isinstance(node, exp.StrPosition) or not node.meta.get(ASCII_ONLY):
        return node
    text = node.this
    found = exp.Cast(this=node, to=exp.DataType.build("BIGINT"))
    unknown = exp.Is(this=text.copy(), expression=exp.Null())
    return exp.Case(ifs=[exp.If(this=unknown, true=exp.Null())], default=found)


def text_slice_as_substring(node: exp.Expr) -> exp.Expr:
    """A slice of text by literal bounds (``s[2:4]``, ``s[:3]``, ``s[2:]``) as the
    ``substring`` DuckDB's slice is: characters ``a`` to ``b``, 1-based and inclusive, a start
    of 0 or none read as 1, none before a start. Polars' SQL has no slice of text. A negative
    bound (counted from the end) and an index (``s[2]``) stay, refused by name."""
    slice_ = node.expressions[0] if isinstance(node, exp.Bracket) and node.expressions else None
    if not isinstance(slice_, exp.Slice) or len(node.expressions) != 1 or not _is_text(node.this):
        return node
    low, high = slice_.this, slice_.expression
    start = 1 if low is None else _int_literal(low)
    stop = None if high is None else _int_literal(high)
    if start is None or start < 0 or (high is not None and (stop is None or stop < 0)):
        return node
    start = max(start, 1)
    substring = exp.Substring(this=node.this.copy(), start=exp.Literal.number(start))
    if stop is not None:
        substring.set("length", exp.Literal.number(max(stop - start + 1, 0)))
    substring.type = node.this.type.copy()
    return substring


#: The operand types Polars writes as text as DuckDB does when it concatenates them (checked
#: against DuckDB in tests/test_sql_arms.py). Not floats or decimals (NaN as 'NaN', a decimal
#: at its own scale), dates (Polars writes '+12000-06-02' for 12000-06-02), times and
#: timestamps (Polars keeps a fraction's trailing zeros and drops a TIME's fraction whole:
#: '00:00:01' for 00:00:01.5), nor BLOBs (DuckDB writes a byte outside printable ASCII as
#: ``\x00``, Polars the byte itself: concat(bl, 'x') grouped '\x00x' apart; forty-fourth
#: session), nor anything else by default.
_CONCAT_TYPES = (
    *exp.DataType.TEXT_TYPES,
    *(exp.DataType.INTEGER_TYPES - {exp.DType.BIT}),
    exp.DType.BOOLEAN,
    exp.DType.UUID,
)


def _is_text(node: exp.Expr | None) -> bool:
    kind = node.type if isinstance(node, exp.Expr) else None
    return kind is not None and kind.is_type(*exp.DataType.TEXT_TYPES)


def _text_literal(node: exp.Expr | None) -> str | None:
    return node.this if isinstance(node, exp.Literal) and node.is_string else None


#: A regular expression both engines read alike: RE2 (DuckDB) and Rust's regex (Polars) differ
#: in their classes (``\w``, ``\d``, ``\s`` and ``\b`` are Unicode-aware in Rust, ASCII in
#: RE2: 'ß' matches ``\w`` in Polars only) and in case folding, so a pattern may hold no
#: backslash but before ASCII punctuation, and no ``(?`` group with flags; a brace opens a
#: count (``a{,3}``: RE2 reads it as text, Rust's regex fails on it).
_PLAIN_REGEX = re.compile(r"(?:[^\\({]|\\[!-/:-@\[-`{-~]|\((?!\?)|\{(?=\d))*")


#: Marks the LIKE the Polars arm writes for ``contains(s, 'lit')`` (``polars_sql._contains``).
CONTAINS = "dau_contains"


def _result_values(node: exp.Expr) -> list[exp.Expr]:
    """The values a COALESCE, CASE, IF, NULLIF, GREATEST or LEAST is given one type among,
    parentheses removed."""
    return [v.unnest() for v in given_one_type(node)]


#: The longest lpad/rpad the Polars arm writes (one row's text; Polars allocates it whole).
_LONGEST_PAD = 1_000_000


def _value_reads_column(node: exp.Expr) -> bool:
    """Whether a column's value can be ``node``'s (or feed it): not where columns are only read
    by conditions, as in ``CASE WHEN n > 5 THEN 2 ELSE 3 END`` or ``NULLIF(2, n)``."""
    node = node.unnest()
    if isinstance(node, exp.Column):
        return True
    if isinstance(node, (exp.Subquery, exp.Select)):
        return False  # (a scalar subquery: one value for every row)
    if isinstance(node, (exp.Case, exp.If)):
        return any(_value_reads_column(value) for value in _result_values(node))
    if isinstance(node, exp.Nullif):
        return _value_reads_column(node.this)
    return any(_value_reads_column(child) for child in node.iter_expressions())


def function_divergence(node: exp.Expr) -> str | None:
    """Functions Polars computes as DuckDB does in the forms checked (``lpad``/``rpad``,
    ``split_part``, ``concat_ws``'s separator, ``ends_with``, ``reverse``, ``regexp_matches``,
    ``exp``) against DuckDB over odd text, NULLs and signs (twentieth session)."""
    texts = (exp.Pad, exp.SplitPart, exp.EndsWith, exp.Reverse, exp.RegexpLike)
    if isinstance(node, (exp.Least, exp.Greatest)) and not any(
        _value_reads_column(argument) for argument in node.iter_expressions()
    ):
        # Polars' streaming engine counted 5,001 of 10,000 rows of greatest(CASE WHEN n > 5
        # THEN 2 ELSE 3 END, 1) under an aggregate without GROUP BY, and 2,002 of 4,000 in the
        # one group of GROUP BY least(NULLIF(0.25, n), NULLIF(-3, i % 7)) (its in-memory
        # engine all; probes/branch_values.py).
        return "least/greatest of values none of which is a column's (Polars drops rows)"
    if isinstance(node, texts) and not _is_text(node.this):
        return f"{node.key} of a value not known to be text"
    if isinstance(node, exp.Pad):
        fill = _text_literal(node.args.get("fill_pattern"))
        if not _positive_int(node.args.get("expression"), 0) or fill is None or len(fill) != 1:
            return "lpad/rpad other than to a literal length with one literal character"
        if (_int_literal(node.args.get("expression")) or 0) > _LONGEST_PAD:
            # Polars has no memory limit: 2e9 characters a row ended the process where DuckDB
            # raises an out-of-memory error.
            return f"lpad/rpad to more than {_LONGEST_PAD:,} characters"
    if isinstance(node, exp.SplitPart) and (
        _text_literal(node.args.get("delimiter")) is None
        or _int_literal(node.args.get("part_index")) is None
    ):
        return "split_part other than by a literal delimiter and a literal part (NULL: Polars '')"
    if isinstance(node, exp.ConcatWs) and _text_literal(node.expressions[0]) is None:
        return "concat_ws with other than a literal separator"
    if isinstance(node, exp.EndsWith) and not _is_text(node.expression):
        return "ends_with of a suffix not known to be text"
    if isinstance(node, exp.RegexpLike):
        pattern = _text_literal(node.expression)
        if node.args.get("flag") is not None or pattern is None:
            return "regexp_matches with options or a pattern that is not a literal"
        if _PLAIN_REGEX.fullmatch(pattern) is None:
            return (
                "regexp_matches with a class escape, flags or a brace not opening a count (RE2 "
                "and Polars' Rust regex differ there: \\w is Unicode-aware in Polars only)"
            )
    if isinstance(node, exp.Like) and node.meta.get(CONTAINS) and not _is_text(node.this):
        return "contains of a value not known to be text"
    if isinstance(node, ONE_TYPE):
        # (NULLIF, GREATEST and LEAST compare their values: nullif(d, '1') over a DECIMAL, a
        # BOOLEAN or a BLOB kept every row on the Polars arm; probes/typed_texts.py)
        values = _result_values(node)
        # (text computed counts too: nullif(d, '0.50' || ''))
        text = [v for v in values if (isinstance(v, exp.Literal) and v.is_string) or _is_text(v)]
        others = [v for v in values if not isinstance(v, (exp.Literal, exp.Null))]
        if text and any(v.type is None or not _is_text(v) for v in others):
            return (
                f"{node.key} of a text literal with another type (DuckDB casts the text to it, "
                "Polars the other values to text)"
            )
    if isinstance(node, (*COMPARISONS, exp.In)):
        sides = [node.this, *(node.expressions if isinstance(node, exp.In) else [node.expression])]
        against_text = any(isinstance(v, exp.Literal) and v.is_string for v in sides)
        numbers = (*exp.DataType.REAL_TYPES, *exp.DataType.INTEGER_TYPES, exp.DType.BOOLEAN)
        numbered = [v for v in sides if v.type is not None and v.type.is_type(*numbers)]
        if against_text and numbered:
            return "a number compared with text (DuckDB casts the text, Polars fails)"
        # Text computed or read (not a literal) against a number that is no literal either:
        # DuckDB casts the text (``b IS NOT DISTINCT FROM ('1' || '')`` over a BOOLEAN), the
        # Polars arm compared it as text (probes/typed_texts.py). (``s = 5`` casts the
        # literal 5 to text in both.)
        if any(_is_text(v) and not isinstance(v, exp.Literal) for v in sides) and any(
            not isinstance(v, exp.Literal) for v in numbered
        ):
            return "a number compared with text (DuckDB casts the text, Polars fails)"
        kinds = [v.type for v in sides if v.type is not None]
        numeric = any(k.is_type(*exp.DataType.NUMERIC_TYPES) for k in kinds)
        decimal = isinstance(node, exp.In) or any(k.is_type(exp.DType.DECIMAL) for k in kinds)
        # DuckDB casts the boolean to the number; Polars fails on a decimal (`x = b`) and on a
        # boolean IN numbers (probes/precedence.py, seed 3714: the arm failed as it ran).
        if numeric and decimal and any(k.is_type(exp.DType.BOOLEAN) for k in kinds):
            return "a boolean compared with a decimal, or IN numbers (DuckDB casts, Polars fails)"
    if isinstance(node, (*COMPARISONS, exp.In, exp.Between)):
        # Text computed or read beside a date, time or timestamp: DuckDB casts the text to it;
        # Polars raises where the temporal value stands left and compares text where the text
        # does ('03:00' || '' = tm: 24 rows for 49; a text literal is read as the value,
        # polars_temporal.date_text_as_dates, text_literals_last).
        sides = operands_of(node)
        temporal = (*exp.DataType.TEMPORAL_TYPES, exp.DType.INTERVAL)
        if any(_is_text(v) and not isinstance(v, exp.Literal) for v in sides) and any(
            v.type is not None and v.type.is_type(*temporal) for v in sides
        ):
            return (
                "a date, time or timestamp compared with text that is no literal (DuckDB casts "
                "the text, Polars compares it as text)"
            )
    if isinstance(node, exp.Exp):
        kind = node.this.type
        if kind is None or not kind.is_type(*exp.DataType.REAL_TYPES, *exp.DataType.INTEGER_TYPES):
            return "exp of a value not known to be a number"
    return None


#: The largest integer literal every single-precision value compares with exactly.
_EXACT_IN_FLOAT = 2**24


def operands_of(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Between):
        found = [node.this, node.args.get("low"), node.args.get("high")]
    elif isinstance(node, exp.In):
        found = [node.this, *node.expressions]
    elif isinstance(node, COMPARISONS):
        found = [node.this, node.expression]
    else:
        return values(node)
    return [v for v in found if isinstance(v, exp.Expr)]


#: Where values of two types meet: arithmetic, comparisons and the functions that pick one.
SINGLE_PRECISION_MEETS = (
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Mod,
    exp.IntDiv,
    *COMPARISONS,
    exp.In,
    exp.Between,
    exp.Coalesce,
    exp.Greatest,
    exp.Least,
    exp.Nullif,
    exp.Case,
    exp.If,
)


def single_precision_divergence(node: exp.Expr) -> str | None:
    """A FLOAT (single precision) beside a value of another type but DOUBLE: DuckDB computes and
    compares in single precision there (``f > 0.1`` casts 0.1 to a FLOAT), Polars in double
    (``f > 0.1`` kept 0.1f, which is 0.10000000149 as a double; ``f > d`` over a DECIMAL
    likewise; ``(f + k) * 0.3`` differed in the last bits, so a GROUP BY over it made other
    groups). An integer literal a FLOAT holds exactly may be compared with one."""
    if not isinstance(node, SINGLE_PRECISION_MEETS):
        return None
    operands = [o for o in operands_of(node) if not isinstance(o.unnest(), exp.Null)]
    kinds = [o.type for o in operands]
    if not any(k is not None and k.is_type(exp.DType.FLOAT) for k in kinds):
        return None
    comparison = isinstance(node, (*COMPARISONS, exp.In, exp.Between))
    for operand, kind in zip(operands, kinds, strict=True):
        if kind is not None and kind.is_type(exp.DType.FLOAT, exp.DType.DOUBLE):
            continue
        value = literal_value(operand)
        if comparison and value is not None and abs(value) <= _EXACT_IN_FLOAT:
            continue
        shown = kind.sql("duckdb") if kind is not None else "unknown"
        return (
            f"a FLOAT with a {shown} value (DuckDB computes in single precision there, Polars "
            "in double)"
        )
    return None


#: Where DuckDB casts a number constant beside a FLOAT to a FLOAT and computes in single
#: precision, and Polars, given that FLOAT, does the same (a quotient, which the translation
#: rewrites, is :func:`_single_quotient`'s; both engines divide a FLOAT by zero as IEEE does).
_SINGLE_PRECISION_CONSTANTS = (exp.Add, exp.Sub, exp.Mul, *COMPARISONS, exp.In, exp.Between)


def constant_value(node: exp.Expr) -> Fraction | None:
    """The value of an integer or decimal constant as the translation writes it (a literal, its
    sign, a cast of it to a decimal or an integer), or None."""
    node = node.unnest()
    if isinstance(node, exp.Neg):
        inner = constant_value(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Cast) and node.to.is_type(
        exp.DType.DECIMAL, *exp.DataType.INTEGER_TYPES
    ):
        node = node.this.unnest()
        if not isinstance(node, exp.Literal):
            return None
    elif not isinstance(node, exp.Literal) or node.is_string:
        return None
    text = str(node.this).strip()
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)", text):
        return None  # an exponent is a DOUBLE's, text is not a number
    return Fraction(text)


def is_single(value: float) -> bool:
    """Whether a FLOAT holds the DOUBLE ``value`` exactly (so a cast of it to FLOAT is that value
    in DuckDB and in Polars)."""
    try:
        single: float = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return False
    return single == value


def _single(value: Fraction) -> float | None:
    """``value`` rounded to a FLOAT as DuckDB casts a decimal, to nearest, ties to even (not
    through a DOUBLE: 1.000000059604644775390626 is 1.0000001192092896 there, 1.0 so); None
    where it overflows."""
    try:
        bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
    except OverflowError:
        return None
    near = [bits] + [b for b in (bits - 1, bits + 1) if 0 <= b < 2**32]
    found = [(struct.unpack("<f", struct.pack("<I", b))[0], b) for b in near]
    finite = [(f, b) for f, b in found if f == f and abs(f) != float("inf")]
    if not finite:
        return None
    best, _ = min(finite, key=lambda fb: (abs(Fraction(fb[0]) - value), fb[1] & 1))
    return float(best)


#: ``meta`` key on the AND of two comparisons the translation writes for a BETWEEN.
BETWEEN = "dau_between"


def _cast(node: exp.Expr, kind: str) -> exp.Cast:
    """``node`` (copied) cast to ``kind``, typed so the checks after read it."""
    cast = exp.Cast(this=node.copy(), to=exp.DataType.build(kind))
    cast.type = cast.to.copy()
    return cast


def _has(kinds: list[exp.DataType | None], kind: exp.DType) -> bool:
    return any(k is not None and k.is_type(kind) for k in kinds)


def _double_between(node: exp.Expr) -> None:
    """A BETWEEN's two comparisons (:data:`BETWEEN`) in DOUBLE where a FLOAT and a DOUBLE are
    among its three values: DuckDB compares all three in one type, so ``g BETWEEN 0.658 AND
    49.0e0`` compares ``g`` with 0.658 as a DOUBLE, not as the FLOAT 0.658 alone would."""
    low, high = node.this, node.expression
    if not (isinstance(low, exp.GTE) and isinstance(high, exp.LTE)):
        return
    kinds = [v.type for v in (low.this, low.expression, high.expression)]
    if _has(kinds, exp.DType.FLOAT) and _has(kinds, exp.DType.DOUBLE):
        for comparison in (low, high):
            for side in (comparison.this, comparison.expression):
                if _has([side.type], exp.DType.FLOAT):
                    side.replace(_cast(side, "DOUBLE"))


#: ``meta`` key on a quotient the translation computes in DOUBLE, each operand cast to one and
#: the divisor made a column (``polars_sql._translate``).
QUOTIENT = "dau_quotient"


def _single_quotient(node: exp.Expr) -> exp.Expr | None:
    """A translated quotient (:data:`QUOTIENT`) of a FLOAT by a FLOAT, an integer or a number
    constant, in single precision as DuckDB divides it (``sum(f / 3)`` summed the quotients in
    DOUBLE: -16.66666666666697 against DuckDB's -16.66666603088379); None where a DOUBLE takes
    part (DuckDB divides in DOUBLE) or no FLOAT does."""
    if not node.meta.get(QUOTIENT):
        return None
    dividend, divisor = node.this.this, node.expression.this.this
    kinds = [dividend.type, divisor.type]
    if not _has(kinds, exp.DType.FLOAT) or _has(kinds, exp.DType.DOUBLE):
        return None
    sides = []
    for side, kind in zip((dividend, divisor), kinds, strict=True):
        value = None if kind is None or kind.is_type(exp.DType.FLOAT) else constant_value(side)
        rounded = None if value is None else _single(value)
        if rounded is not None:
            side = exp.Literal.number(repr(rounded))
        elif kind is None or not kind.is_type(exp.DType.FLOAT, *exp.DataType.INTEGER_TYPES):
            raise SqlError(
                f"{node.sql()}: a quotient of a FLOAT and a {kind.sql('duckdb') if kind else '?'} "
                "value (DuckDB divides in single precision there)"
            )
        sides.append(_cast(side, "FLOAT"))
    beside = exp.Nullif(this=sides[0].copy(), expression=sides[0].copy())
    column = exp.Coalesce(this=sides[1], expressions=[beside])
    quotient = exp.Div(this=sides[0], expression=column)
    for made in (beside, column, quotient):
        made.type = exp.DataType.build("FLOAT")
    return quotient


def single_precision_constants(tree: exp.Expr) -> exp.Expr:
    """Where a FLOAT meets a DOUBLE, the FLOAT cast to a DOUBLE, as DuckDB computes it (Polars
    computed ``f * 1e3`` and ``f = -12.2e0`` in single precision: a float literal takes the
    type of the column beside it there). Where it meets no DOUBLE, each integer or decimal
    constant beside it in arithmetic or a comparison written as the FLOAT DuckDB casts it to
    (``f > 0.1`` compares with 0.1f, ``f * 3`` multiplies in single precision), so Polars
    computes as DuckDB does (:func:`single_precision_divergence` then finds a FLOAT there).
    Needs the types ``checked_arithmetic`` annotates."""
    for between in list(tree.find_all(exp.And)):
        if between.meta.get(BETWEEN):
            _double_between(between)
    for node in reversed(list(tree.find_all(*SINGLE_PRECISION_MEETS))):  # innermost first
        quotient = _single_quotient(node)
        if quotient is not None:
            if node is tree:
                return quotient
            node.replace(quotient)
            continue
        operands = operands_of(node)
        kinds = [o.type for o in operands]
        if not _has(kinds, exp.DType.FLOAT):
            continue
        made: list[tuple[exp.Expr, exp.Expr]] = []  # (operand, what replaces it)
        if _has(kinds, exp.DType.DOUBLE):
            made = [(o, _cast(o, "DOUBLE")) for o in operands if _has([o.type], exp.DType.FLOAT)]
        elif isinstance(node, _SINGLE_PRECISION_CONSTANTS):
            for operand, kind in zip(operands, kinds, strict=True):
                value = None if _has([kind], exp.DType.FLOAT) else constant_value(operand)
                rounded = None if value is None else _single(value)
                if rounded is not None:
                    made.append((operand, _cast(exp.Literal.number(repr(rounded)), "FLOAT")))
        for operand, cast in made:
            operand.replace(cast)
    return tree


#: Integers wider than 18 digits: beside a decimal DuckDB may need more than 38 digits, and then
#: computes in DOUBLE (a DECIMAL(18, 3) plus a HUGEINT), which the arm's typing does not follow.
_WIDE_INTEGERS = (exp.DType.UBIGINT, exp.DType.INT128, exp.DType.UINT128)


def wide_integer_divergence(node: exp.Expr) -> str | None:
    """Arithmetic of a decimal with a HUGEINT or UBIGINT (see :data:`_WIDE_INTEGERS`)."""
    if not isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv)):
        return None
    kinds = [o.type for o in (node.this, node.expression) if isinstance(o, exp.Expr)]
    if any(k is not None and k.is_type(exp.DType.DECIMAL) for k in kinds) and any(
        k is not None and k.is_type(*_WIDE_INTEGERS) for k in kinds
    ):
        return "arithmetic of a decimal with a HUGEINT or UBIGINT (DuckDB may compute a DOUBLE)"
    return None


#: The arithmetic a decimal may meet a floating-point value in (``%`` and ``//`` are refused).
ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div)


#: What a UBIGINT meets on the Polars arm as DuckDB would: unsigned integers, which Polars
#: widens to a UInt64 as DuckDB does.
_UNSIGNED = (exp.DType.UBIGINT, exp.DType.UINT, exp.DType.USMALLINT, exp.DType.UTINYINT)


def _meets_ubigint(operand: exp.Expr) -> bool:
    """Whether Polars compares or combines ``operand`` with a UBIGINT as DuckDB does: an unsigned
    integer, NULL, or an integer literal from 0 to 2**64 - 1."""
    value = literal_value(operand)
    if value is not None:
        return 0 <= value < 2**64
    kind = operand.type
    return isinstance(operand.unnest(), exp.Null) or (
        kind is not None and kind.is_type(*_UNSIGNED, exp.DType.NULL)
    )


def unsigned_divergence(node: exp.Expr) -> str | None:
    """A UBIGINT compared with, or given a common type with (COALESCE, GREATEST, LEAST, NULLIF,
    CASE, IF, IN), a signed, decimal or floating-point value. DuckDB computes in HUGEINT, a
    decimal or DOUBLE; Polars compares a UInt64 and an Int64 as doubles (2**64 - 1 equal to
    2**64) and casts a negative literal to the UInt64 as NULL (``ub NOT IN (-5)`` dropped the
    rows past 2**63). Arithmetic is computed in DECIMAL(38, 0) (``checked_arithmetic``)."""
    if not isinstance(node, (*COMPARISONS, exp.Between, exp.In, *ONE_TYPE)):
        return None
    present = operands_of(node)
    if not any(o.type is not None and o.type.is_type(exp.DType.UBIGINT) for o in present):
        return None
    if all(_meets_ubigint(o) for o in present):
        return None
    return (
        "a UBIGINT beside a signed, decimal or floating-point value (Polars compares them as "
        "doubles and reads a negative constant as NULL; DuckDB computes in HUGEINT)"
    )


def concat_divergence(node: exp.Expr) -> str | None:
    """Concatenation writes each operand as text, so an operand of a type Polars writes its own
    way is refused (default deny: only :data:`_CONCAT_TYPES`)."""
    if isinstance(node, exp.ConcatWs):
        operands = [*node.expressions[1:]]
    elif isinstance(node, exp.Concat):
        operands = [*node.expressions]
    else:
        operands = [node.this, node.expression]
    for operand in operands:
        kind = operand.type if isinstance(operand, exp.Expr) else None
        if kind is None or not kind.is_type(*_CONCAT_TYPES):
            shown = kind.sql("duckdb") if kind is not None else "unknown"
            return (
                f"concatenation of a {shown} value (Polars writes floats, decimals, dates, "
                "times and timestamps as text its own way)"
            )
    return None


__all__ = [
    "ARITHMETIC",
    "ascii_position",
    "BETWEEN",
    "COMPARISONS",
    "constant_value",
    "operands_of",
    "QUOTIENT",
    "CONTAINS",
    "concat_divergence",
    "function_divergence",
    "single_precision_constants",
    "single_precision_divergence",
    "is_single",
    "wide_integer_divergence",
    "string_divergence",
    "text_slice_as_substring",
    "unsigned_divergence",
]
