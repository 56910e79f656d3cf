"""The SQL the Polars arm runs: a compiled partial translated from DuckDB's SQL to what Polars'
SQL front end reads, computing exactly what DuckDB computes.

Polars' SQL differs from DuckDB's in ways that change answers, so the partial is translated:

- Decimal x decimal keeps ``max(s1, s2)`` digits in Polars but ``s1 + s2`` in DuckDB. Decimal
  columns are loaded at scale ``DECIMAL_SCALE`` so products of such columns stay exact there, and
  decimal literals (Float64 in Polars) are written as decimals of that scale.
- ``a / b`` is DOUBLE division in DuckDB for integers and decimals; it is written as such.
- ``BETWEEN`` is written as two comparisons (parenthesized, for ``NOT BETWEEN``); date literals as
  ``DATE 'yyyy-mm-dd'``; ``BOOL_AND``/``BOOL_OR`` as ``MIN``/``MAX``.
- Polars joins only on equalities: an inner or left join's conditions on the joined table alone
  become a filter on that table (``_filter_joined_table``), an inner join's other conditions
  go to WHERE (``_inner_conditions_to_where``), and any condition left that is not an equality
  between the joined item and the sources before it is refused (``_refuse_unpaired_conditions``).
- Polars wraps integer overflow and sums FLOAT in single precision: integer sums and arithmetic
  are computed in DECIMAL(38, 0) and cast back strictly, FLOATs are summed as DOUBLEs
  (``polars_arithmetic.checked_arithmetic``).
- A date minus a date is a duration in Polars and a day count in DuckDB; a date plus an integer
  an error in Polars. Both are computed on days since 1970; a literal interval added to a date
  or a plain timestamp is kept; other date and time arithmetic is refused (``polars_arithmetic``).
- Polars reads no parentheses around a join's ON (``_flat_join_condition``) and panics on a
  scalar subquery it cannot prove is one row, unless it has a LIMIT (``_bounded_scalar_subquery``).
- What Polars computes differently and is not translated (``%``, ``//``, ``round`` with digits,
  ``strpos``, casting a fraction to an integer, unknown functions) is refused by name, and so is
  every expression kind outside ``_CHECKED`` (default deny).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import SqlglotError

from dau_scheduler.arms.polars_arithmetic import checked_arithmetic
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.blocks import conjuncts
from dau_scheduler.rewrite.moments import NAN_BLIND
from dau_scheduler.rewrite.planner import PLACEHOLDER, CompiledSplit

#: The scale decimal columns are held at on the Polars side (see the module docstring).
DECIMAL_SCALE = 12
DECIMAL_TYPE = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")


class _PolarsSQL(Postgres):
    """Postgres-flavoured SQL, which is what Polars' SQL front end reads, with its quirks."""

    class Generator(Postgres.Generator):  # type: ignore[misc,valid-type]
        TRANSFORMS: ClassVar[dict[type[exp.Expr], Any]] = {
            **Postgres.Generator.TRANSFORMS,
            # Polars' STRFTIME takes DuckDB's format text (Postgres' TO_CHAR it has not).
            exp.TimeToStr: lambda self, e: self.func("STRFTIME", e.this, e.args.get("format")),
        }

        def cast_sql(self, expression: exp.Cast, safe_prefix: str | None = None) -> str:
            inner = expression.this
            if (
                expression.to.is_type(exp.DataType.Type.DATE)
                and isinstance(inner, exp.Literal)
                and inner.is_string
            ):
                return f"DATE '{inner.this}'"
            return str(super().cast_sql(expression, safe_prefix))


def _decimal_literal(node: exp.Expr) -> exp.Expr | None:
    if isinstance(node, exp.Literal) and not node.is_string and not node.is_int:
        text = str(node.this)
        if "e" not in text.lower():
            return exp.Cast(
                this=exp.Literal.string(text),
                to=exp.DataType.build(f"DECIMAL(38, {DECIMAL_SCALE})"),
            )
    return None


#: DuckDB's part functions as the EXTRACT they are (``dayofweek(d)`` is ``EXTRACT(dow FROM d)``,
#: Sunday 0), which the Polars arm writes for every part in ``_EXTRACTED``.
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
}
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
_PLAIN_TIMESTAMPS = (exp.DType.TIMESTAMP, exp.DType.TIMESTAMPNTZ)
#: Parts of the time of day: Polars has them on timestamps, not on dates.
_TIME_PARTS = frozenset({"hour", "minute", "second", "millisecond", "microsecond"})
#: Of those, the ones Polars extracts from a TIME as DuckDB does (its seconds of a time keep
#: the fraction: 23722.188 for DuckDB's 23722 milliseconds).
_ON_TIME = frozenset({"hour", "minute"})
#: And from a plain timestamp (milliseconds and microseconds keep the fraction there too).
_ON_TIMESTAMP = frozenset({"hour", "minute", "second"})


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


def _concat_divergence(node: exp.Expr) -> str | None:
    """Concatenation writes each operand as text: Polars writes a float's NaN as 'NaN' and a
    decimal at its own scale ('-0.010000000000' for DuckDB's '-0.01'), so those are refused."""
    operands = [*node.expressions] if isinstance(node, exp.Concat) else [node.this, node.expression]
    for operand in operands:
        kind = operand.type if isinstance(operand, exp.Expr) else None
        if kind is None or kind.is_type(
            exp.DType.UNKNOWN, exp.DType.DECIMAL, *exp.DataType.FLOAT_TYPES
        ):
            return "concatenation of a float or decimal (Polars writes them as text its own way)"
    return None


#: strftime specifiers Polars formats as DuckDB does, on dates and plain timestamps, and those
#: it formats on plain timestamps only (a sweep over years 1 to 9999, before 1970; eighth
#: session). Others differ: ``%f`` (Polars writes nanoseconds), ``%x``, ``%c``, ``%g``, ``%n``,
#: ``%e``; or fail on a date: ``%H``.
_STRFTIME_ANY = frozenset(
    ["Y", "m", "d", "y", "j", "a", "A", "b", "B", "U", "W", "V", "G", "u", "w", "%", "-m", "-d"]
)
_STRFTIME_TIMESTAMP = frozenset(["H", "M", "S", "I", "p", "X"])
_SPECIFIER = re.compile(r"%(-?.)")


def _strftime_divergence(node: exp.TimeToStr) -> str | None:
    form = node.args.get("format")
    if not (isinstance(form, exp.Literal) and form.is_string):
        return "strftime with a format that is not a literal"
    kind = node.this.type
    timestamp = kind is not None and kind.is_type(*_PLAIN_TIMESTAMPS)
    date = kind is not None and kind.is_type(exp.DType.DATE)
    if not (timestamp or date):
        return "strftime of other than a date or a plain timestamp"
    allowed = _STRFTIME_ANY | (_STRFTIME_TIMESTAMP if timestamp else frozenset())
    for specifier in _SPECIFIER.findall(str(form.this)):
        if specifier not in allowed:
            return f"strftime's %{specifier} (Polars formats it differently, or not on a date)"
    return None


def _round_half_away(node: exp.Expr) -> exp.Expr:
    """``round(x)`` of a DOUBLE as DuckDB computes it (C's round: halves away from zero), from
    floor and ceil: ``x - floor(x)`` is exact for x >= 0, so 0.49999999999999994 stays 0; NaN,
    the infinities and -0.0 come back as they are. Polars' own round takes halves to even."""
    if not isinstance(node, exp.Round) or node.args.get("decimals") is not None:
        return node
    kind = node.this.type
    if kind is None or not kind.is_type(exp.DType.DOUBLE):
        return node
    x = exp.Paren(this=node.this)
    down, up = exp.Floor(this=x.copy()), exp.Ceil(this=x.copy())
    half = exp.Literal.number(0.5)
    one = exp.Literal.number(1)
    above = exp.If(
        this=exp.GTE(this=exp.Sub(this=x.copy(), expression=down.copy()), expression=half),
        true=exp.Add(this=down.copy(), expression=one.copy()),
    )
    below = exp.If(
        this=exp.GTE(this=exp.Sub(this=up.copy(), expression=x.copy()), expression=half),
        true=exp.Sub(this=up.copy(), expression=one.copy()),
    )
    rounded = exp.Case(
        ifs=[
            exp.If(
                this=exp.GTE(this=x.copy(), expression=exp.Literal.number(0)),
                true=exp.Case(ifs=[above], default=down.copy()),
            ),
            exp.If(
                this=exp.LT(this=x.copy(), expression=exp.Literal.number(0)),
                true=exp.Case(ifs=[below], default=up.copy()),
            ),
        ],
        default=x.copy(),
    )
    rounded.type = kind  # what the checks after this one read (a cast of it to text)
    return rounded


def _extract_divergence(node: exp.Extract) -> str | None:
    part = node.name.lower()
    if part not in _EXTRACTED:
        return f"EXTRACT of {part} (Polars computes it differently or not at all)"
    kind = node.expression.type
    on_time = kind is not None and kind.is_type(exp.DType.TIME) and part in _ON_TIME
    on_timestamp = kind is not None and kind.is_type(*_PLAIN_TIMESTAMPS) and part in _ON_TIMESTAMP
    if part in _TIME_PARTS and not (on_timestamp or on_time):
        return f"EXTRACT of {part} from this type (Polars has it on plain timestamps only)"
    return None


def _translate(node: exp.Expr) -> exp.Expr:
    decimal = _decimal_literal(node)
    if decimal is not None:
        return decimal
    part = _PART_FUNCTIONS.get(type(node))
    if part is not None and not node.args.get("expression"):
        return exp.Extract(this=exp.var(part.upper()), expression=_translated(node.this))
    if isinstance(node, exp.Div):
        double = exp.DataType.build("DOUBLE")
        return exp.Div(
            this=exp.Cast(this=_translated(node.this), to=double),
            expression=exp.Cast(this=_translated(node.expression), to=double),
        )
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Boolean):
        # x IS TRUE is false, never NULL, where x is NULL; Polars read it as x = TRUE (NULL):
        # DuckDB's boolean_wrapper_pushdown.test counted 23 rows for 28 under NOT (p IS TRUE).
        value = exp.Paren(this=_translated(node.this))
        truth = value if node.expression.this else exp.Not(this=value)
        return exp.Coalesce(this=exp.Paren(this=truth), expressions=[exp.false()])
    if isinstance(node, exp.Pow):
        # DuckDB's pow is over doubles; a fractional exponent would reach Polars as a decimal.
        double = exp.DataType.build("DOUBLE")
        return exp.Pow(
            this=exp.Cast(this=_translated(node.this), to=double),
            expression=exp.Cast(this=_translated(node.expression), to=double),
        )
    if isinstance(node, (exp.LogicalAnd, exp.LogicalOr)):
        # Polars has no BOOL_AND/BOOL_OR; over booleans they are MIN and MAX (false < true).
        cls = exp.Min if isinstance(node, exp.LogicalAnd) else exp.Max
        return cls(this=_translated(node.this))
    if isinstance(node, exp.Between):
        # Parenthesized: under NOT, "NOT a >= b AND a <= c" would negate the first half only.
        return exp.Paren(
            this=exp.and_(
                exp.GTE(this=_translated(node.this), expression=_translated(node.args["low"])),
                exp.LTE(this=_translated(node.this), expression=_translated(node.args["high"])),
            )
        )
    return node


def _translated(node: exp.Expr) -> exp.Expr:
    return node.copy().transform(_translate)


def _sources(node: exp.Expr) -> set[str]:
    return {c.table for c in node.find_all(exp.Column) if c.table}


def _explicit_joins(select: exp.Select) -> exp.Select:
    """Comma joins as INNER JOIN ... ON, starting from the split table.

    Polars plans a comma join it cannot pair up as a CROSS JOIN (TPC-H Q9: part x supplier), so the
    WHERE equalities that link two sources become ON conditions, joining outward from the split
    table one connected source at a time. For inner joins ON and WHERE are the same filter.
    """
    from_ = select.args.get("from_")
    joins = list(select.args.get("joins") or [])
    if (
        from_ is None
        or not joins
        or any(
            j.args.get("on") or j.args.get("using") or j.side or j.kind or j.method for j in joins
        )
    ):
        return select
    items = [from_.this, *[j.this for j in joins]]
    names = [item.alias_or_name for item in items]
    if len(set(names)) != len(names) or not all(names):
        return select
    where = select.args.get("where")
    terms = conjuncts(where.this) if where is not None else []
    start = next(
        (
            i
            for i, item in enumerate(items)
            if isinstance(item, exp.Table) and item.name == PLACEHOLDER
        ),
        0,
    )
    joined, order, used = {names[start]}, [start], set()
    conditions: dict[int, list[exp.Expr]] = {}
    remaining = [i for i in range(len(items)) if i != start]

    def links_to(i: int) -> list[int]:
        # Only equalities go to ON (Polars takes no OR there); everything else stays in WHERE.
        return [
            k
            for k, c in enumerate(terms)
            if k not in used
            and isinstance(c, exp.EQ)
            and names[i] in _sources(c)
            and len(_sources(c)) == 2
            and _sources(c) <= joined | {names[i]}
        ]

    while remaining:
        pick = next((i for i in remaining if links_to(i)), None)
        if pick is None:
            return select  # a source no equality reaches: leave the query as written
        links = links_to(pick)
        used.update(links)
        conditions[pick] = [terms[k] for k in links]
        joined.add(names[pick])
        order.append(pick)
        remaining.remove(pick)
    rebuilt = select.copy()
    rebuilt.set("from_", exp.From(this=items[start].copy()))
    rebuilt.set(
        "joins",
        [
            exp.Join(
                this=items[i].copy(), kind="INNER", on=exp.and_(*[c.copy() for c in conditions[i]])
            )
            for i in order[1:]
        ],
    )
    rest = [terms[k].copy() for k in range(len(terms)) if k not in used]
    rebuilt.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
    return rebuilt


def _join_explicitly(tree: exp.Expr) -> exp.Expr:
    """``_explicit_joins`` on every SELECT, subqueries before the blocks holding them (a
    transform would not descend into a block it has just rebuilt: TPC-H Q2's subquery)."""
    for select in reversed(list(tree.find_all(exp.Select))):
        rebuilt = _explicit_joins(select)
        if rebuilt is not select:
            if select is tree:
                return rebuilt
            select.replace(rebuilt)
    return tree


#: (side, kind) of the joins whose joined table a condition on it alone may filter first.
_INNER_JOINS = {("", ""), ("", "INNER")}
_FILTERABLE_JOINS = _INNER_JOINS | {("LEFT", ""), ("LEFT", "OUTER")}


def _filter_joined_table(node: exp.Expr) -> exp.Expr:
    """Conditions in an inner or left join's ON that read only the joined table, as a filter on
    that table: ``LEFT JOIN t ON a.k = t.k AND t.c NOT LIKE 'x'`` becomes
    ``LEFT JOIN (SELECT * FROM t WHERE t.c NOT LIKE 'x') AS t ON a.k = t.k``.

    Polars joins only on equalities (TPC-H Q13). The two forms are the same join: such a condition
    decides which of the joined table's rows can match, and a left join keeps every row of its
    left side either way. A right or full join preserves the joined table, so it is left alone.
    """
    if not isinstance(node, exp.Join) or (node.side, node.kind) not in _FILTERABLE_JOINS:
        return node
    table, on = node.this, node.args.get("on")
    if not isinstance(table, (exp.Table, exp.Subquery)) or on is None:
        return node
    name = table.alias_or_name
    terms = conjuncts(on)
    own = [
        c
        for c in terms
        if _sources(c) == {name}
        and not c.find(exp.Subquery, exp.Select)
        and not (
            isinstance(c, exp.EQ) and all(isinstance(s, exp.Column) for s in c.iter_expressions())
        )
    ]
    if not own or len(own) == len(terms):
        return node
    inner = exp.select("*").from_(table.copy()).where(exp.and_(*[c.copy() for c in own]))
    joined = node.copy()
    joined.set("this", exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(name))))
    joined.set("on", exp.and_(*[c.copy() for c in terms if c not in own]))
    return joined


def _flat_join_condition(node: exp.Expr) -> exp.Expr:
    """A join's ON without the parentheses around it, which Polars' SQL does not read
    ("unsupported SQL join constraint"); an OR inside keeps its own."""
    on = node.args.get("on") if isinstance(node, exp.Join) else None
    if on is None or not isinstance(on, exp.Paren):
        return node
    flat = node.copy()
    flat.set("on", exp.and_(*[c.copy() for c in conjuncts(on)]))
    return flat


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


def _is_key_pair(condition: exp.Expr, name: str) -> bool:
    """An equality between an expression of the joined item ``name`` alone and one of the
    sources before it alone: a pair of join keys as Polars reads them."""
    if not isinstance(condition, exp.EQ):
        return False
    sides = [_sources(side) for side in (condition.this, condition.expression)]
    return all(sides) and {name} in sides and not any(name in s for s in sides if s != {name})


def _inner_conditions_to_where(select: exp.Expr) -> exp.Expr:
    """An inner join's conditions that are not key pairs, moved to its block's WHERE (for an
    inner join ON and WHERE are the same filter; Polars evaluates only key pairs in ON)."""
    joins = (select.args.get("joins") or []) if isinstance(select, exp.Select) else []
    if not joins or any((j.side or "").upper() in ("RIGHT", "FULL") for j in joins):
        return select  # a right or full join after it would keep rows WHERE then removes
    moved: list[exp.Expr] = []
    for join in joins:
        on = join.args.get("on")
        if on is None or (join.side, join.kind) not in _INNER_JOINS:
            continue
        conditions = conjuncts(on)
        keys = [c for c in conditions if _is_key_pair(c, join.this.alias_or_name)]
        if not keys or len(keys) == len(conditions):
            continue  # no pair of keys left to join on: leave it (refused below)
        moved += [c.copy() for c in conditions if c not in keys]
        join.set("on", exp.and_(*[c.copy() for c in keys]))
    if moved:
        where = select.args.get("where")
        select.set("where", exp.Where(this=exp.and_(*([where.this] if where else []), *moved)))
    return select


def _refuse_unpaired_conditions(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a join condition that is not an equality between an expression of
    the joined item and one of the sources before it. Polars' SQL takes every ``=`` in ON as a
    pair of join keys and finds a column by its name on the left first: ``ON t2.i = 5`` joined
    on the left's ``i`` (DuckDB's test/sql/optimizer/plan/test_filter_pushdown_large.test
    returned every row of t2); ``a.k = 1`` or an OR has no pair of keys at all."""
    for join in tree.find_all(exp.Join):
        on = join.args.get("on")
        if on is None:
            continue
        name = join.this.alias_or_name
        for condition in conjuncts(on):
            if not _is_key_pair(condition, name):
                raise SqlError(
                    f"join condition {condition.sql(dialect='duckdb')}: the Polars arm joins "
                    "only on equalities between the joined item and the sources before it"
                )


def _defined(select: exp.Select) -> set[str]:
    """The names a SELECT's own FROM and JOINs define (tables, derived tables, by alias)."""
    from_ = select.args.get("from_")
    items = [from_.this] if from_ is not None else []
    items += [join.this for join in select.args.get("joins") or []]
    return {item.alias_or_name for item in items}


def _refuse_deep_correlation(tree: exp.Expr) -> None:
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
        "DPipe",
        "DataType",
        "DataTypeParam",
        "Distinct",
        "Div",
        "EQ",
        "Exists",
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
        "Nullif",
        "Offset",
        "Or",
        "Order",
        "Ordered",
        "Paren",
        "Pow",
        "Replace",
        "Right",
        "Select",
        "Sign",
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
    ]
)


def _decimal_scale(data_type: exp.DataType) -> int:
    params = data_type.expressions
    return int(params[1].name) if len(params) > 1 else 0


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


_ZONED = (exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIMESTAMPLTZ)
_ZONED_REASON = (
    "a time zone's timestamp read as local time (DuckDB uses the session's TimeZone, Polars "
    "the column's zone)"
)


def _zoned(data_type: exp.DataType | None) -> bool:
    return data_type is not None and data_type.is_type(*_ZONED)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)


def _zoned_against_local(node: exp.Expr) -> str | None:
    """A time zone's timestamp compared with text, a date or a local timestamp: DuckDB reads the
    other side in the session's TimeZone, Polars in UTC (``ts > '2021-03-14'`` counted 2993
    rows where DuckDB counts 2980 under America/Los_Angeles)."""
    operands = [o for o in node.iter_expressions() if not isinstance(o, exp.Null)]
    if not any(_zoned(o.type) for o in operands):
        return None
    if all(_zoned(o.type) for o in operands):
        return None
    return "a time zone's timestamp compared with text, a date or a local time " + (
        "(DuckDB reads them in the session's TimeZone, Polars in UTC)"
    )


def _cast_divergence(cast: exp.Cast) -> str | None:
    """How Polars would compute this cast differently from DuckDB, if it would."""
    source, target = cast.this.type, cast.to
    if target.is_type(*exp.DataType.NESTED_TYPES, exp.DataType.Type.UNION):
        # DuckDB parses '[a, b]' into a list; Polars wraps the whole text as one element.
        return "a cast to a nested type (DuckDB parses text into it, Polars does not)"
    if source is None or source.is_type(exp.DType.UNKNOWN):
        return "a cast of a value whose type the translation cannot tell (default deny)"
    if _zoned(source) and not target.is_type(*_ZONED):
        return _ZONED_REASON
    if (
        source.is_type(*exp.DataType.TEXT_TYPES)
        and not target.is_type(*exp.DataType.TEXT_TYPES)
        and not _plain_literal(cast)
    ):
        return "a cast from text (DuckDB and Polars parse text by different rules)"
    if target.is_type(*exp.DataType.INTEGER_TYPES) and source.is_type(*exp.DataType.REAL_TYPES):
        return "a cast of a fraction to an integer (DuckDB rounds it, Polars truncates)"
    if (
        source.is_type("DECIMAL")
        and target.is_type("DECIMAL")
        and _decimal_scale(target) < _decimal_scale(source)
    ):
        return "a cast to fewer decimal digits (DuckDB rounds, Polars truncates)"
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


def _refuse_divergent(tree: exp.Expr) -> None:
    """Raise ``SqlError`` naming the first expression the arm cannot vouch for: a kind outside
    ``_CHECKED`` (with the reason from ``_DIVERGENT`` where one is known), ``round`` with a digit
    count, or a cast Polars computes differently (:func:`_cast_divergence`; it needs the types
    :func:`checked_arithmetic` annotates, and is skipped where they are unknown).
    """
    for node in tree.walk():
        why = _DIVERGENT.get(type(node))
        if why is None and type(node).__name__ not in _CHECKED:
            why = f"{type(node).__name__} is not among the expressions checked against DuckDB"
        if why is None and isinstance(node, exp.Round) and node.args.get("decimals") is not None:
            why = "round with digits (Polars rounds halves differently)"
        if why is None and isinstance(node, exp.Cast):
            why = _cast_divergence(node)
        if why is None and isinstance(node, exp.Extract) and _zoned(node.expression.type):
            why = _ZONED_REASON
        if why is None and isinstance(node, exp.Extract):
            why = _extract_divergence(node)
        if why is None and isinstance(node, exp.TimeToStr):
            why = _strftime_divergence(node)
        if why is None and isinstance(
            node, (exp.Trim, exp.Replace, exp.Substring, exp.Left, exp.Right)
        ):
            why = _string_divergence(node)
        if why is None and isinstance(node, (exp.Concat, exp.DPipe)):
            why = _concat_divergence(node)
        if why is None and isinstance(node, exp.Sign):
            kind = node.this.type
            if kind is None or kind.is_type(exp.DType.UNKNOWN, *exp.DataType.FLOAT_TYPES):
                why = "sign of a floating-point value (Polars gives NaN for NaN, DuckDB 0)"
        if why is None and isinstance(node, (*_COMPARISONS, exp.In, exp.Between)):
            why = _zoned_against_local(node)
        if why is None and isinstance(node, (exp.Binary, exp.In, exp.Between)):
            why = _blob_against_text(node)
        if why is None and isinstance(node, _EXTREMA):
            why = _float_extremum(node)
        if why is not None:
            raise SqlError(f"{node.sql(dialect='duckdb')}: {why}")


def polars_sql(compiled: CompiledSplit, types: dict[str, dict[str, str]] | None = None) -> str:
    """The partial query in the SQL Polars reads, with DuckDB's arithmetic (module docstring).

    ``types`` (table -> column -> SQL type, as the arm holds them) enables the overflow and
    precision rewrites of :func:`checked_arithmetic`; without it they are skipped.
    """
    if compiled.partial is None:
        raise SqlError("this query has no partial to run")
    partial = _join_explicitly(_translated(compiled.partial)).transform(_flat_join_condition)
    partial = partial.transform(_bounded_scalar_subquery)
    partial = partial.transform(_filter_joined_table).transform(_inner_conditions_to_where)
    _refuse_unpaired_conditions(partial)
    _refuse_deep_correlation(partial)
    if types is not None:
        split = compiled.plan.split_table
        schema = dict(types) | ({PLACEHOLDER: types[split]} if split in types else {})
        partial = checked_arithmetic(partial, schema)
        partial = partial.transform(_round_half_away)
    _refuse_divergent(partial)
    return str(partial.sql(dialect=_PolarsSQL))


def single_key_joins(text: str, split_table: str) -> list[tuple[str, str, str, str]]:
    """``(table, column, table, column)`` of each join in the Polars SQL ``text`` on one
    equality between two base tables' columns (the split table under its own name). Joins of
    derived tables, or on several keys, are not listed."""
    import sqlglot

    try:
        tree = sqlglot.parse_one(text, read=_PolarsSQL)
    except SqlglotError:
        return []  # nothing known about its joins; Polars' own planning already accepted it
    found = []
    for select in tree.find_all(exp.Select):
        from_ = select.args.get("from_")
        items = [from_.this if from_ is not None else None]
        items += [j.this for j in select.args.get("joins") or []]
        tables = {
            item.alias_or_name: (split_table if item.name == PLACEHOLDER else item.name.lower())
            for item in items
            if isinstance(item, exp.Table)
        }
        for join in select.args.get("joins") or []:
            on = join.args.get("on")
            conditions = conjuncts(on) if on is not None else []
            if len(conditions) != 1 or not isinstance(conditions[0], exp.EQ):
                continue
            left, right = conditions[0].this, conditions[0].expression
            if (
                isinstance(left, exp.Column)
                and isinstance(right, exp.Column)
                and left.table in tables
                and right.table in tables
            ):
                found.append((tables[left.table], left.name, tables[right.table], right.name))
    return found


__all__ = ["DECIMAL_SCALE", "DECIMAL_TYPE", "polars_sql", "single_key_joins"]
