"""What the Polars arm vouches for: the expression kinds checked to compute as DuckDB's, and
the forms of some kinds that Polars computes differently (found by sweeps against DuckDB over
adversarial values: non-ASCII text, NaN, -0.0, halves, years 1 and 9999, before 1970). The
translation (``arms/polars_sql.py``) runs :func:`refuse_divergent` and
:func:`refuse_deep_correlation` over every partial it writes; either raises ``SqlError``
naming the expression, and the query is answered without the Polars arm.
"""

from __future__ import annotations

import re

from sqlglot import exp

from dau_scheduler.arms.polars_arithmetic import NON_NEGATIVE
from dau_scheduler.arms.polars_marks import ASCII_ONLY, STORED_SCALE, decimal_scale
from dau_scheduler.arms.polars_temporal import (
    TIMESTAMP_DIGITS,
    ZONED,
    ZONED_REASON,
    extract_divergence,
    mixed_units,
    strftime_divergence,
    zoned,
    zoned_against_local,
)
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.moments import NAN_BLIND


def _int_literal(node: exp.Expr | None) -> int | None:
    if isinstance(node, exp.Neg):
        inner = _int_literal(node.this)
        return None if inner is None else -inner
    return int(node.this) if isinstance(node, exp.Literal) and node.is_int else None


def _positive_int(node: exp.Expr | None, least: int) -> bool:
    value = _int_literal(node)
    return value is not None and value >= least


def _string_divergence(node: exp.Expr) -> str | None:
    """Text functions Polars computes as DuckDB does only in some forms (a sweep over
    non-ASCII text, tabs and empty strings, eighth session)."""
    if isinstance(node, exp.Trim) and node.args.get("expression") is None:
        return "trim without the characters named (DuckDB trims spaces, Polars all whitespace)"
    if isinstance(node, exp.Replace):
        pattern = node.args.get("expression")
        if not (isinstance(pattern, exp.Literal) and pattern.is_string and pattern.this):
            return "replace of other than a non-empty literal (Polars splits an empty one)"
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


#: The operand types Polars writes as text as DuckDB does when it concatenates them (checked
#: against DuckDB in tests/test_sql_arms.py). Not floats or decimals (NaN as 'NaN', a decimal
#: at its own scale), dates (Polars writes '+12000-06-02' for 12000-06-02), times and
#: timestamps (Polars keeps a fraction's trailing zeros and drops a TIME's fraction whole:
#: '00:00:01' for 00:00:01.5), nor anything else by default.
_CONCAT_TYPES = (
    *exp.DataType.TEXT_TYPES,
    *(exp.DataType.INTEGER_TYPES - {exp.DType.BIT}),
    exp.DType.BOOLEAN,
    exp.DType.UUID,
    exp.DType.VARBINARY,
    exp.DType.BLOB,
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
    """The values a COALESCE, CASE or IF may give (its branches), parentheses removed."""
    if isinstance(node, exp.Coalesce):
        values = [node.this, *node.expressions]
    elif isinstance(node, exp.Case):
        values = [branch.args.get("true") for branch in node.args.get("ifs") or []]
        values.append(node.args.get("default"))
    else:
        values = [node.args.get("true"), node.args.get("false")]
    return [v.unnest() for v in values if isinstance(v, exp.Expr)]


def _function_divergence(node: exp.Expr) -> str | None:
    """Functions Polars computes as DuckDB does in the forms checked (``lpad``/``rpad``,
    ``split_part``, ``concat_ws``'s separator, ``ends_with``, ``reverse``, ``regexp_matches``,
    ``exp``) against DuckDB over odd text, NULLs and signs (twentieth session)."""
    texts = (exp.Pad, exp.SplitPart, exp.EndsWith, exp.Reverse, exp.RegexpLike)
    if isinstance(node, texts) and not _is_text(node.this):
        return f"{node.key} of a value not known to be text"
    if isinstance(node, exp.Pad):
        fill = _text_literal(node.args.get("fill_pattern"))
        if not _positive_int(node.args.get("expression"), 0) or fill is None or len(fill) != 1:
            return "lpad/rpad other than to a literal length with one literal character"
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
    if isinstance(node, (exp.Coalesce, exp.Case, exp.If)):
        values = _result_values(node)
        text = [v for v in values if isinstance(v, exp.Literal) and v.is_string]
        others = [v for v in values if not isinstance(v, (exp.Literal, exp.Null))]
        if text and any(v.type is None or not _is_text(v) for v in others):
            return (
                f"{node.key} of a text literal with another type (DuckDB casts the text to it, "
                "Polars the other values to text)"
            )
    if isinstance(node, (*_COMPARISONS, exp.In)):
        sides = [node.this, *(node.expressions if isinstance(node, exp.In) else [node.expression])]
        against_text = any(isinstance(v, exp.Literal) and v.is_string for v in sides)
        numbers = (*exp.DataType.REAL_TYPES, *exp.DataType.INTEGER_TYPES, exp.DType.BOOLEAN)
        if against_text and any(v.type is not None and v.type.is_type(*numbers) for v in sides):
            return "a number compared with text (DuckDB casts the text, Polars fails)"
    if isinstance(node, exp.Exp):
        kind = node.this.type
        if kind is None or not kind.is_type(*exp.DataType.REAL_TYPES, *exp.DataType.INTEGER_TYPES):
            return "exp of a value not known to be a number"
    return None


def _concat_divergence(node: exp.Expr) -> str | None:
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


def _defined(select: exp.Select) -> set[str]:
    """The names a SELECT's own FROM and JOINs define (tables, derived tables, by alias)."""
    from_ = select.args.get("from_")
    items = [from_.this] if from_ is not None else []
    items += [join.this for join in select.args.get("joins") or []]
    return {item.alias_or_name for item in items}


def refuse_deep_correlation(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a column that a subquery reads from a query two or more levels
    out. Polars 1.44 answers such a subquery wrongly: ``WHERE (SELECT max(i2.i) FROM i2 WHERE
    i2.i = (SELECT min(i3.i) FROM i3 WHERE i3.i > b1.i)) IS NOT NULL`` kept no row of b1 where
    DuckDB keeps two (a reference one level out is answered right)."""
    for column in tree.find_all(exp.Column):
        if not column.table:
            continue
        levels, node = 0, column.parent
        while node is not None:
            if isinstance(node, exp.Select):
                if column.table in _defined(node):
                    break
                levels += 1
            node = node.parent
        if node is not None and levels >= 2:
            raise SqlError(
                f"{column.sql(dialect='duckdb')}: a subquery reads a column of a query "
                f"{levels} levels out, which Polars answers wrongly"
            )


def refuse_empty_group_forms(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a correlated subquery Polars answers wrongly where the outer row
    matches no inner row: one whose value is an expression over an aggregate that need not be
    NULL over NULL (``SUM(x) IS NULL``, ``COALESCE(SUM(x), 0)``: NULL for TRUE and 0, DuckDB's
    test_count_star_subquery.test at share 0.7), and one with a LIMIT or OFFSET (``(SELECT
    CASE WHEN t.a = 11 THEN b END FROM t LIMIT 1)``: 22 for NULL, test_scalar_subquery.test).
    A bare aggregate's value, EXISTS and IN were found right."""
    for select in tree.find_all(exp.Select):
        if select is tree:
            continue
        own = _defined(select)
        correlated = any(
            column.table and column.table not in own
            for column in select.find_all(exp.Column)
            if column.find_ancestor(exp.Select) is select
        )
        if not correlated:
            continue
        if select.args.get("limit") is not None or select.args.get("offset") is not None:
            raise SqlError(
                f"{select.sql(dialect='duckdb')[:80]}: a correlated subquery with LIMIT or "
                "OFFSET, which Polars answers wrongly"
            )
        if select.args.get("group") is not None:
            continue
        for item in select.expressions:
            value = item.this if isinstance(item, exp.Alias) else item
            if isinstance(value, exp.AggFunc) or value.find(exp.AggFunc) is None:
                continue
            lenient = value.find(*_NOT_NULL_STRICT)
            if lenient is not None:
                raise SqlError(
                    f"{value.sql(dialect='duckdb')}: {type(lenient).__name__} over an aggregate "
                    "in a correlated subquery, which Polars answers wrongly where no row matches"
                )


#: Expressions whose value over NULL may be other than NULL (and COUNT, which is 0 over no
#: rows): over a correlated subquery's aggregate where no inner row matches, Polars gives NULL
#: (``COUNT(*) + 1``: NULL for 1; ``GREATEST(MAX(x), 0)``: NULL for 0; ``... OR TRUE``). An
#: expression NULL gives NULL for (``0.2 * AVG(x)``, TPC-H Q17) is answered right.
_NOT_NULL_STRICT = (
    exp.Count,
    exp.Is,
    exp.Coalesce,
    exp.Case,
    exp.If,
    exp.Or,
    exp.And,
    exp.Xor,
    exp.Greatest,
    exp.Least,
    exp.Nullif,
    exp.Concat,
    exp.ConcatWs,
)


#: Why kinds that Polars' SQL computes differently from DuckDB's (found by a sweep against DuckDB)
#: are refused. None is in ``_CHECKED``, so each is refused anyway; this only names the reason.
_DIVERGENT: dict[type[exp.Expr], str] = {
    exp.Mod: "% (Polars takes the sign of the divisor, DuckDB of the dividend)",
    exp.IntDiv: "// (Polars rounds toward minus infinity, DuckDB toward zero)",
    exp.StrPosition: "strpos/instr/position (Polars counts differently)",
    # Found by a sweep over non-ASCII text and halves (eighth session): wrong answers before.
    exp.Lower: "lower (Polars lowercases İ to two characters)",
    exp.Upper: "upper (Polars uppercases ß and ligatures to several letters)",
    exp.ILike: "ILIKE (Polars folds the case of non-ASCII letters differently: İ is not i)",
    exp.Round: "round (Polars rounds halves to even, DuckDB away from zero: -2.5)",
    exp.Anonymous: "a function Polars may compute differently",
}


#: The expression kinds the Polars arm has been checked to compute as DuckDB does (TPC-H, the
#: differential test and the expression sweep in tests/test_sql_arms.py); anything else is
#: refused by name. Extend it only together with a test that compares it against DuckDB.
_CHECKED: frozenset[str] = frozenset(
    [
        "Abs",
        "Add",
        "Alias",
        "And",
        "Avg",
        "Boolean",
        "Case",
        "Cast",
        "Ceil",
        "Coalesce",
        "Column",
        "Concat",
        "Count",
        "CovarSamp",
        "ConcatWs",
        "DPipe",
        "DataType",
        "DataTypeParam",
        "Distinct",
        "Div",
        "EQ",
        "EndsWith",
        "Exists",
        "Exp",
        "Extract",
        "Filter",
        "Floor",
        "From",
        "GT",
        "GTE",
        "Greatest",
        "Group",
        "Having",
        "Identifier",
        "If",
        "In",
        "Interval",
        "Is",
        "Join",
        "LT",
        "LTE",
        "Least",
        "Left",
        "Length",
        "Like",
        "Limit",
        "Literal",
        "Ln",
        "Max",
        "Min",
        "Mul",
        "NEQ",
        "Neg",
        "Not",
        "Null",
        "NullSafeEQ",
        "NullSafeNEQ",
        "Nullif",
        "Offset",
        "Or",
        "Order",
        "Ordered",
        "Pad",
        "Paren",
        "Pow",
        "RegexpLike",
        "Replace",
        "Reverse",
        "Right",
        "Select",
        "Sign",
        "SplitPart",
        "Sqrt",
        "Star",
        "StartsWith",
        "Sub",
        "Subquery",
        "Substring",
        "Sum",
        "Table",
        "TimeToStr",
        "TableAlias",
        "Trim",
        "Var",
        "Variance",
        "Where",
        # Within the limits polars_forms checks:
        "With",
        "CTE",
        "Union",
        "Intersect",
        "Except",
    ]
)


_PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_PLAIN_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _plain_literal(cast: exp.Cast) -> bool:
    """A text literal both engines read alike: ``DATE 'yyyy-mm-dd'``, or a plain decimal number
    as a DECIMAL (the form the arm writes decimal literals in)."""
    text = cast.this
    if not (isinstance(text, exp.Literal) and text.is_string):
        return False
    if cast.to.is_type("DATE"):
        return _PLAIN_DATE.fullmatch(text.this) is not None
    return cast.to.is_type("DECIMAL") and _PLAIN_NUMBER.fullmatch(text.this) is not None


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)


def _cast_divergence(cast: exp.Cast) -> str | None:
    """How Polars would compute this cast differently from DuckDB, if it would."""
    source, target = cast.this.type, cast.to
    if target.is_type(*exp.DataType.NESTED_TYPES, exp.DataType.Type.UNION):
        # DuckDB parses '[a, b]' into a list; Polars wraps the whole text as one element.
        return "a cast to a nested type (DuckDB parses text into it, Polars does not)"
    if source is None or source.is_type(exp.DType.UNKNOWN):
        return "a cast of a value whose type the translation cannot tell (default deny)"
    if zoned(source) and not target.is_type(*ZONED):
        return ZONED_REASON
    if (
        source.is_type(*exp.DataType.TEXT_TYPES)
        and not target.is_type(*exp.DataType.TEXT_TYPES)
        and not _plain_literal(cast)
    ):
        return "a cast from text (DuckDB and Polars parse text by different rules)"
    if target.is_type(*exp.DataType.INTEGER_TYPES) and source.is_type(*exp.DataType.REAL_TYPES):
        return "a cast of a fraction to an integer (DuckDB rounds it, Polars truncates)"
    if target.is_type("DECIMAL") and source.is_type(*exp.DataType.FLOAT_TYPES):
        # (-31.45)::DOUBLE::DECIMAL(10, 1) is -31.5 in DuckDB, -31.4 in Polars.
        return "a cast of a floating-point value to a decimal (DuckDB rounds, Polars truncates)"
    stored = cast.this.meta.get(STORED_SCALE) if isinstance(cast.this, exp.Column) else None
    if (
        source.is_type("DECIMAL")
        and target.is_type("DECIMAL")
        and decimal_scale(target) < (decimal_scale(source) if stored is None else stored)
    ):
        return "a cast to fewer decimal digits (DuckDB rounds, Polars truncates)"
    digits = TIMESTAMP_DIGITS.get(source.this), TIMESTAMP_DIGITS.get(target.this)
    if digits[0] is not None and digits[1] is not None and digits[1] < digits[0]:
        # DuckDB's test/optimizer/timestamp_comparisons.test: ts_ns::TIMESTAMP of .123456789
        # is .123457 in DuckDB, .123456 in Polars.
        return "a cast to a coarser timestamp (DuckDB rounds, Polars truncates)"
    if target.is_type(*exp.DataType.TEXT_TYPES) and not source.is_type(
        *exp.DataType.TEXT_TYPES, *exp.DataType.INTEGER_TYPES
    ):
        return "a cast to text (Polars writes decimals at its own scale, other types its own way)"
    return None


def _blob_against_text(node: exp.Expr) -> str | None:
    """A BLOB compared with a text literal: DuckDB reads the literal's ``\\x00`` escapes as
    bytes, Polars compares the text (DuckDB's test/sql/index: ``b = '\\x00'`` found nothing)."""
    operands = list(node.iter_expressions())
    if any(o.type is not None and o.type.is_type("BLOB", "VARBINARY") for o in operands) and any(
        isinstance(o, exp.Literal) and o.is_string for o in operands
    ):
        return "a BLOB compared with a text literal (DuckDB reads its escapes as bytes)"
    return None


_EXTREMA = (exp.Max, exp.Min, exp.Greatest, exp.Least)


def _float_extremum(node: exp.Expr) -> str | None:
    """MIN, MAX, GREATEST or LEAST over values that may be floating point: Polars skips NaN
    there, DuckDB orders NaN above every number (``max`` of 1.0 and NaN: 1.0 against NaN). A
    variance's own MIN is read only where it holds no NaN (``aggregates.NAN_BLIND``)."""
    if node.meta.get(NAN_BLIND):
        return None
    operands = [node.this, *node.expressions]
    for operand in operands:
        data_type = operand.type if isinstance(operand, exp.Expr) else None
        if data_type is None or data_type.is_type(exp.DType.UNKNOWN, *exp.DataType.FLOAT_TYPES):
            return "an extremum of floating-point values (Polars skips NaN, DuckDB ranks it top)"
    return None


def refuse_constant_groups(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a GROUP BY whose every key is a constant (read through the
    outputs' names it groups by): over no rows Polars gives one group, DuckDB none
    (``SELECT count(*), 7 FROM t WHERE ... GROUP BY 2`` gave a row where DuckDB gives none)."""
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        if group is None or not group.expressions:
            continue
        named = {
            item.alias: item.this for item in select.expressions if isinstance(item, exp.Alias)
        }
        keys = [
            named.get(key.name, key) if isinstance(key, exp.Column) and not key.table else key
            for key in group.expressions
        ]
        if not any(key.find(exp.Column, exp.Subquery, exp.Select) for key in keys):
            raise SqlError(
                f"{group.sql(dialect='duckdb')}: every key is a constant, and Polars gives "
                "one group over no rows"
            )


def _reads_no_column(node: exp.Expr) -> bool:
    return node.find(exp.Column, exp.Star, exp.Select) is None


def _constant_divergence(node: exp.Expr) -> str | None:
    """Where Polars computes a constant once instead of per row (SQLite's random/aggregates
    tests): an aggregate of a constant (``count(-21)`` gave 1 over any rows, ``max(46)`` 46
    over none; a plain non-NULL literal counted, ``count(1)``, was found right, and a sum of
    one is left to ``polars_arithmetic``, which keeps only a bare integer), and a comparison of
    a constant with NULL (``WHERE 66 <> NULL`` kept every row)."""
    if (
        isinstance(node, exp.AggFunc)
        and not isinstance(node, exp.Sum)
        and all(_reads_no_column(arg) for arg in node.iter_expressions())
    ):
        counted = node.this if isinstance(node, exp.Count) else None
        if not (isinstance(counted, (exp.Star, exp.Literal)) and node.this is not None):
            return "an aggregate of a constant (Polars takes the constant once, not per row)"
    sides = (node.this, node.expression) if isinstance(node, _COMPARISONS) else ()
    if any(isinstance(side, exp.Null) for side in sides) and _reads_no_column(node):
        return "a comparison of a constant with NULL (Polars drops such a filter)"
    return None


def _conditions(node: exp.Expr) -> list[exp.Expr]:
    """The conditions ``node`` holds: what it filters or branches on, or combines."""
    if isinstance(node, (exp.Where, exp.Having, exp.Qualify, exp.Not, exp.If)):
        return [node.this]
    if isinstance(node, exp.Connector):
        return [node.this, node.expression]
    if isinstance(node, exp.Join) and node.args.get("on") is not None:
        return [node.args["on"]]
    return []


def _non_boolean_condition(node: exp.Expr) -> str | None:
    """A condition that is not a boolean, which DuckDB casts (any number but 0 is true) and
    Polars does not: ``count(*) FILTER (WHERE m)`` over an integer m counted 832 rows for 666."""
    for condition in _conditions(node):
        kind = condition.type
        if kind is not None and kind.is_type(exp.DType.BOOLEAN):
            continue
        inner = condition.unnest()
        if isinstance(inner, (exp.Predicate, exp.Connector, exp.Not, exp.Null, exp.Boolean)):
            continue
        return "a condition that is not a boolean (DuckDB casts it to one, Polars does not)"
    return None


def refuse_divergent(tree: exp.Expr) -> None:
    """Raise ``SqlError`` naming the first expression the arm cannot vouch for: a kind outside
    ``_CHECKED`` (with the reason from ``_DIVERGENT`` where one is known), ``round`` with a digit
    count, or a cast Polars computes differently (:func:`_cast_divergence`; it reads the types
    ``checked_arithmetic`` annotates, and refuses a cast of a value whose type it lacks).
    """
    for node in tree.walk():
        if isinstance(node, (exp.Upper, exp.Lower)) and node.meta.get(ASCII_ONLY):
            continue  # over ASCII text only (mark_ascii_cases)
        why = _DIVERGENT.get(type(node))
        if isinstance(node, (exp.Mod, exp.IntDiv)) and node.meta.get(NON_NEGATIVE):
            continue  # polars_arithmetic's remainders and quotients of non-negative operands
        if why is None and type(node).__name__ not in _CHECKED:
            why = f"{type(node).__name__} is not among the expressions checked against DuckDB"
        if (
            why is None
            and isinstance(node, exp.TableAlias)
            and node.columns
            and isinstance(node.parent, exp.Table)  # (a subquery's alias list Polars keeps)
        ):
            why = "a column alias list on a table (Polars' SQL keeps the table's own names)"
        if why is None and isinstance(node, exp.Round) and node.args.get("decimals") is not None:
            why = "round with digits (Polars rounds halves differently)"
        if why is None and isinstance(node, exp.Cast):
            why = _cast_divergence(node)
        if why is None and isinstance(node, exp.Extract) and zoned(node.expression.type):
            why = ZONED_REASON
        if why is None and isinstance(node, exp.Extract):
            why = extract_divergence(node)
        if why is None and isinstance(node, exp.TimeToStr):
            why = strftime_divergence(node)
        if why is None and isinstance(
            node, (exp.Trim, exp.Replace, exp.Substring, exp.Left, exp.Right)
        ):
            why = _string_divergence(node)
        if why is None and isinstance(node, (exp.Concat, exp.DPipe)):  # (ConcatWs is a Concat)
            why = _concat_divergence(node)
        if why is None:
            why = _function_divergence(node)
        if why is None and isinstance(node, exp.Length):
            kind = node.this.type
            if kind is None or not kind.is_type(*exp.DataType.TEXT_TYPES):
                why = "length of a value not known to be text (a list's length is its items)"
        if why is None and isinstance(node, exp.Sign):
            kind = node.this.type
            if kind is None or kind.is_type(exp.DType.UNKNOWN, *exp.DataType.FLOAT_TYPES):
                why = "sign of a floating-point value (Polars gives NaN for NaN, DuckDB 0)"
        if why is None and isinstance(node, (*_COMPARISONS, exp.In, exp.Between)):
            why = zoned_against_local(node)
        if why is None and isinstance(node, (exp.Binary, exp.In, exp.Between)):
            why = _blob_against_text(node)
        if why is None and isinstance(node, _EXTREMA):
            why = _float_extremum(node)
        if why is None:
            why = _non_boolean_condition(node)
        if why is None:
            why = mixed_units(node)
        if why is None:
            why = _constant_divergence(node)
        if why is not None:
            raise SqlError(f"{node.sql(dialect='duckdb')}: {why}")


#: The deepest nesting of casts, parentheses and calls the arm sends to Polars. Polars' SQL
#: parser stops at 50 levels of recursion, and near them its planning stalled: DuckDB's
#: benchmark auto-vectorization sums 91 integers, each step checked through DECIMAL(38, 0)
#: and cast back, and a sum of 24 such steps (48 casts deep) had no plan after 20 s, where 23
#: took 6 ms. (sqlglot itself could not write the 91 steps back: Python's recursion limit.)
DEEPEST = 40


def refuse_deep_nesting(tree: exp.Expr) -> None:
    """Raise ``SqlError`` where casts, parentheses and calls nest deeper than ``DEEPEST`` (read
    without recursion: the tree may be deeper than Python recurses)."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (exp.Func, exp.Paren)):
            depth += 1
            if depth > DEEPEST:
                raise SqlError(
                    f"the partial nests casts, parentheses and calls over {DEEPEST} deep (its "
                    "integer arithmetic checked step by step), past what Polars' SQL parser plans"
                )
        stack.extend((child, depth) for child in node.iter_expressions())


__all__ = [
    "CONTAINS",
    "DEEPEST",
    "refuse_constant_groups",
    "refuse_deep_correlation",
    "refuse_deep_nesting",
    "refuse_divergent",
    "refuse_empty_group_forms",
]
