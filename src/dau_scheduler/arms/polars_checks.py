"""What the Polars arm vouches for: the expression kinds checked to compute as DuckDB's, and
the forms of some kinds that Polars computes differently (found by sweeps against DuckDB over
adversarial values: non-ASCII text, NaN, -0.0, halves, years 1 and 9999, before 1970). The
translation (``arms/polars_sql.py``) runs :func:`refuse_divergent` and
:mod:`polars_correlation`'s checks over every partial it writes; either raises ``SqlError``
naming the expression, and the query is answered without the Polars arm.
"""

from __future__ import annotations

import re

from sqlglot import exp

from dau_scheduler.arms.polars_dates import NON_NEGATIVE
from dau_scheduler.arms.polars_doubles import EXACT, decimal_double_divergence
from dau_scheduler.arms.polars_functions import (
    COMPARISONS,
    concat_divergence,
    function_divergence,
    is_single,
    single_precision_divergence,
    string_divergence,
    unsigned_divergence,
    wide_integer_divergence,
)
from dau_scheduler.arms.polars_marks import ASCII_ONLY, HOST_LOOKUP, STORED_SCALE, decimal_scale
from dau_scheduler.arms.polars_temporal import (
    TIMESTAMP_DIGITS,
    ZONED,
    ZONED_REASON,
    extract_divergence,
    finer_text,
    mixed_text_list,
    mixed_units,
    strftime_divergence,
    zoned,
    zoned_against_local,
)
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.decisions import FLOAT_FOLDS
from dau_scheduler.rewrite.moments import NAN_BLIND
from dau_scheduler.rewrite.one_type import ONE_TYPE


def source_items(select: exp.Expr) -> list[exp.Expr]:
    """The items of a SELECT's own FROM and JOINs (tables, derived tables), in order."""
    from_ = select.args.get("from_")
    items = [from_.this] if from_ is not None else []
    return items + [join.this for join in select.args.get("joins") or []]


def defined_names(select: exp.Select) -> set[str]:
    """The names a SELECT's own FROM and JOINs define (tables, derived tables, by alias)."""
    return {item.alias_or_name for item in source_items(select)}


def reads_outer_columns(select: exp.Select) -> bool:
    """Whether ``select``'s own expressions read a column of a source it does not define (it
    is correlated)."""
    own = defined_names(select)
    return any(
        column.table and column.table not in own
        for column in select.find_all(exp.Column)
        if column.find_ancestor(exp.Select) is select
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
    # What polars_dates.epoch leaves: Polars' own epoch of a TIMESTAMP_NS or TIMESTAMP_S
    # is in its unit, of a zoned one a cast the arm refuses, and before 1970 off in the fraction.
    exp.TimeToUnix: "epoch of other than a date or a plain timestamp",
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


def _single_literal(node: exp.Expr) -> bool:
    """A number literal whose DOUBLE a FLOAT holds exactly: a cast of it to a FLOAT is that
    value in both engines (``polars_functions.single_precision_constants`` writes them)."""
    if isinstance(node, exp.Neg):
        node = node.this
    if not isinstance(node, exp.Literal) or node.is_string:
        return False
    try:
        return is_single(float(node.this))
    except ValueError:
        return False


#: Marks a cast of 'nan', 'inf' or '-inf' to a DOUBLE the translation wrote (``isnan`` and
#: its kin, ``polars_sql._float_class``): both engines read that text alike.
SPECIAL_VALUE = "dau_special_value"


def _try_cast_divergence(cast: exp.TryCast) -> str | None:
    """A ``TRY_CAST`` of an integer to an integer type runs as Polars' non-strict cast, NULL
    where the value is out of the type's range, as in DuckDB (checked for every width, signed
    and unsigned: ``tests/slt/integer_try_casts.test``). Text is parsed and a fraction rounded
    otherwise; the GPU engine's casts do not check the range (``polars_gpu``)."""
    source, integers = cast.this.type, exp.DataType.INTEGER_TYPES
    if source is not None and source.is_type(*integers) and cast.to.is_type(*integers):
        return None
    return "try_cast other than of an integer to an integer (text and fractions convert otherwise)"


def _cast_divergence(cast: exp.Cast) -> str | None:
    """How Polars would compute this cast differently from DuckDB, if it would."""
    if cast.meta.get(SPECIAL_VALUE):
        return None
    source, target = cast.this.type, cast.to
    if target.is_type(exp.DType.FLOAT) and _single_literal(cast.this):
        return None
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
    if target.is_type(exp.DType.FLOAT) and source.is_type(exp.DType.DOUBLE):
        # 1e308::FLOAT: an error in DuckDB (NULL under TRY_CAST), infinity in Polars.
        return "a cast of a DOUBLE to a FLOAT (past FLOAT's range DuckDB raises, Polars gives inf)"
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
    if source.is_type(exp.DType.TIMESTAMP_NS) and target.is_type(exp.DType.DATE, exp.DType.TIME):
        # DuckDB goes through microseconds: 1999-12-31 23:59:59.9999999 is 2000-01-01 there.
        return "a cast of a TIMESTAMP_NS to a date or time (DuckDB rounds to microseconds first)"
    if target.is_type(*exp.DataType.TEXT_TYPES) and not source.is_type(
        *exp.DataType.TEXT_TYPES, *exp.DataType.INTEGER_TYPES
    ):
        return "a cast to text (Polars writes decimals at its own scale, other types its own way)"
    return None


def _blob_against_text(node: exp.Expr) -> str | None:
    """A BLOB compared with text: DuckDB reads the text's ``\\x00`` escapes as bytes, Polars
    compares the text (DuckDB's test/sql/index: ``b = '\\x00'`` found nothing; text computed,
    ``b NOT IN ('\\x00' || '')``, or a text column alike: probes/typed_texts.py)."""
    operands = list(node.iter_expressions())
    if any(o.type is not None and o.type.is_type("BLOB", "VARBINARY") for o in operands) and any(
        (isinstance(o, exp.Literal) and o.is_string)
        or (o.type is not None and o.type.is_type(*exp.DataType.TEXT_TYPES))
        for o in operands
    ):
        return "a BLOB beside text (DuckDB reads its escapes as bytes, writes bytes as escapes)"
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


def _nested_float_fold(node: exp.Expr, tree: exp.Expr) -> str | None:
    """Why a float sum or mean inside a subquery, CTE or derived table of the partial is refused:
    Polars adds in another order than DuckDB, so its value differs in the last bits, and a row
    compared with it can go the other way: ``WHERE x >= (SELECT avg(x) FROM t)`` over 5,000
    rows of 0.1 kept 2,500 rows on the Polars arm where DuckDB (0.10000000000000904) keeps none;
    ``d <= (SELECT avg(d) FROM t)`` over a DECIMAL likewise.
    A partial's own outputs are folded by DuckDB and compared within the float tolerance."""
    kind = node.this.type if isinstance(node.this, exp.Expr) else None
    exact = (*exp.DataType.INTEGER_TYPES, exp.DType.DECIMAL)
    if isinstance(node, exp.Sum) and kind is not None and kind.is_type(*exact):
        return None  # integers and decimals add up exactly in both (a mean of them need not)
    if node.find_ancestor(exp.Select) is tree:
        return None
    return (
        "a floating-point sum or mean inside a subquery (Polars adds in another order than "
        "DuckDB: a row compared with it can go the other way)"
    )


def refuse_constant_filters(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a WHERE whose condition reads no column and is not a literal
    TRUE or FALSE: Polars' streaming engine (1.44) keeps no row for a ``COUNT(*)`` under a
    filter it cannot fold (``WHERE abs(1) > 0``, ``WHERE 1 IN (1, 2)``: 0 of 4,000 where
    DuckDB counts 4,000; the in-memory engine counts them)."""
    for where in tree.find_all(exp.Where):
        condition = where.this
        if isinstance(condition, exp.Boolean) or not _reads_no_column(condition):
            continue
        raise SqlError(
            f"{where.sql(dialect='duckdb')}: a condition that reads no column (Polars' streaming "
            "engine counts no row under it)"
        )


#: What gives NULL where an operand is NULL, whatever the others hold.
_NULL_STRICT_OPS = (exp.Binary, exp.Neg, exp.Paren, exp.Cast, exp.Abs)


def _null_folded(node: exp.Expr) -> bool:
    """Whether ``node`` is NULL whatever the rows hold: a NULL, or arithmetic or a comparison
    with a NULL operand (``NULL = b``, ``-NULL``), which Polars folds to a literal though it
    names a column (``count(*) FILTER (WHERE -NULL IS NOT DISTINCT FROM NULL = b)`` counted 1
    where DuckDB counts every row). AND, OR and IS [NOT] DISTINCT FROM are not NULL-strict."""
    if isinstance(node, exp.Null):
        return True
    if isinstance(node, (exp.And, exp.Or, exp.NullSafeEQ, exp.NullSafeNEQ, exp.Is)):
        return False
    if not isinstance(node, _NULL_STRICT_OPS):
        return False
    return any(_null_folded(child) for child in node.iter_expressions())


def _reads_no_column(node: exp.Expr) -> bool:
    """Whether ``node`` reads no column of the rows it is computed over: none outside a
    subquery, and no subquery in it reads the query around it. An uncorrelated subquery is a
    constant to Polars as a literal is (``count((SELECT max(n) FROM u))`` counted 1 over any
    rows, ``count(*) FILTER (WHERE (SELECT max(n) FROM u) > 1)`` too)."""
    if _null_folded(node):
        return True
    if node.find(exp.Star) is not None:
        return False
    for column in node.find_all(exp.Column):
        defined: set[str] = set()
        scope = column.parent
        while scope is not None and scope is not node.parent:
            if isinstance(scope, exp.Select):
                defined |= defined_names(scope)
            scope = scope.parent
        if not column.table or column.table not in defined:
            return False
    return True


def _constant_divergence(node: exp.Expr) -> str | None:
    """Where Polars computes a constant once instead of per row (SQLite's random/aggregates
    tests): an aggregate of a constant (``count(-21)`` gave 1 over any rows, ``max(46)`` 46
    over none; a plain non-NULL literal counted, ``count(1)``, was found right, and a sum of
    one is left to ``polars_arithmetic``, which keeps only a bare integer), and a comparison of
    a constant with NULL (``WHERE 66 <> NULL`` kept every row). A SUM of anything but a bare
    integer (``sum(1.5)``, ``sum(2.0::DOUBLE)``: 1.5 and 2.0 over 4,000 rows) is refused too."""
    if isinstance(node, exp.Sum) and _reads_no_column(node.this) and not node.this.is_int:
        return "a sum of a constant other than an integer (Polars adds it once, not per row)"
    if (
        isinstance(node, exp.AggFunc)
        and not isinstance(node, exp.Sum)
        and all(_reads_no_column(arg) for arg in node.iter_expressions())
    ):
        counted = node.this if isinstance(node, exp.Count) else None
        if not (isinstance(counted, (exp.Star, exp.Literal)) and node.this is not None):
            return "an aggregate of a constant (Polars takes the constant once, not per row)"
    sides = (node.this, node.expression) if isinstance(node, COMPARISONS) else ()
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


def refuse_divergent(tree: exp.Expr, scale: int) -> None:
    """Raise ``SqlError`` naming the first expression the arm cannot vouch for: a kind outside
    ``_CHECKED`` (with the reason from ``_DIVERGENT`` where one is known), ``round`` with a digit
    count, or a cast Polars computes differently (:func:`_cast_divergence`; it reads the types
    ``checked_arithmetic`` annotates, and refuses a cast of a value whose type it lacks).
    ``scale``: the decimal digits the arm holds decimals at (``polars_sql.DECIMAL_SCALE``).
    """
    for node in tree.walk():
        if isinstance(node, (exp.Upper, exp.Lower, exp.StrPosition)) and node.meta.get(ASCII_ONLY):
            continue  # over ASCII text only (mark_ascii_cases)
        why = _DIVERGENT.get(type(node))
        if isinstance(node, exp.First) and node.meta.get(HOST_LOOKUP):
            continue  # the value of a subquery the host computed, one row per group
        if isinstance(node, (exp.Mod, exp.IntDiv)) and node.meta.get(NON_NEGATIVE):
            continue  # polars_arithmetic's remainders and quotients of non-negative operands
        if isinstance(node, exp.Cast) and node.meta.get(EXACT):
            continue  # a decimal made a float through its text (polars_doubles)
        if isinstance(node, exp.TryCast):
            why = _try_cast_divergence(node)
        elif why is None and type(node).__name__ not in _CHECKED:
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
            why = string_divergence(node)
        if why is None and isinstance(node, (exp.Concat, exp.DPipe)):  # (ConcatWs is a Concat)
            why = concat_divergence(node)
        if why is None:
            why = function_divergence(node)
        if why is None:
            why = single_precision_divergence(node)
        if why is None:
            why = wide_integer_divergence(node)
        if why is None:
            why = unsigned_divergence(node)
        if why is None:
            why = decimal_double_divergence(node, scale)
        if why is None and isinstance(node, exp.Length):
            kind = node.this.type
            if kind is None or not kind.is_type(*exp.DataType.TEXT_TYPES):
                why = "length of a value not known to be text (a list's length is its items)"
        if why is None and isinstance(node, exp.Sign):
            kind = node.this.type
            if kind is None or kind.is_type(exp.DType.UNKNOWN, *exp.DataType.FLOAT_TYPES):
                why = "sign of a floating-point value (Polars gives NaN for NaN, DuckDB 0)"
        if why is None and isinstance(node, (*COMPARISONS, exp.In, exp.Between)):
            why = finer_text(node) or mixed_text_list(node)
        if why is None and isinstance(node, (*COMPARISONS, exp.In, exp.Between, *ONE_TYPE)):
            why = zoned_against_local(node)
        if why is None and isinstance(node, (exp.Binary, exp.In, exp.Between)):
            why = _blob_against_text(node)
        if why is None and isinstance(node, _EXTREMA):
            why = _float_extremum(node)
        if why is None and isinstance(node, FLOAT_FOLDS):
            why = _nested_float_fold(node, tree)
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
    "DEEPEST",
    "SPECIAL_VALUE",
    "defined_names",
    "reads_outer_columns",
    "refuse_deep_nesting",
    "refuse_divergent",
]
