"""A PIVOT written as the grouped query DuckDB runs for it, so it splits like any other.

DuckDB binds ``PIVOT src ON p IN (v1, v2) USING agg(x) GROUP BY g`` (its ``bind_pivot.cpp``)
as ``SELECT g, agg(x) FILTER (WHERE CAST(p AS VARCHAR) IS NOT DISTINCT FROM '<v1>') AS "v1",
... FROM src GROUP BY g``: one filtered aggregate per IN value (per combination of values, for
several ON items, the first ON item's values outermost) and per USING aggregate, the filter
comparing the pivot expression's text with the value's. Without GROUP BY the groups are the
source's columns that no aggregate and no ON item reads, in the source's order. Past
``pivot_filter_threshold`` values DuckDB computes the same answer another way (each group's
aggregate per value, then lists of them placed by the value's text), which can differ only
where two values have one text: a NULL, which it writes 'NULL' (so an IN value NULL or 'NULL'
is left as written for a text ON item, and 'NULL' for any), or two values one text stands for
(so an ON item must be an integer, a DECIMAL, text, a DATE or a BOOLEAN, whose text is theirs
alone).

The output names are DuckDB's own (the pivot bound, never run), and the written query must bind
to the unsplit query's very names and types, or the query is kept as it was (and refused as
before). ``FROM t PIVOT (agg FOR p IN (...) GROUP BY g) AS a`` is the same pivot to DuckDB,
written the same way. Left as written: UNPIVOT, IN values that are not constants (or are
aliased), a USING expression whose aggregate has a FILTER of its own (DuckDB
replaces it), and an ON item with no IN list: :func:`values_written_in` writes DuckDB's own list
for it first, from the rows, as DuckDB's MULTI statement does.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import itertools
import re
from collections.abc import Collection, Sequence

import duckdb
import sqlglot
from sqlglot import exp

from dau_scheduler.rewrite.columns import UNANALYSABLE
from dau_scheduler.rewrite.columns_expansion import ctes_around
from dau_scheduler.rewrite.dialect import DIALECT, sqlglot_quiet
from dau_scheduler.rewrite.reading import Binder

#: Types whose text (``CAST(x AS VARCHAR)``) is one value's alone.
_OWN_TEXT = re.compile(
    r"(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT"
    r"|DECIMAL\(\d+,\s*\d+\)|VARCHAR|DATE|BOOLEAN)"
)
#: DuckDB's default ``pivot_limit``: a MULTI pivot of more values raises there.
_PIVOT_LIMIT = 100_000


class _Unwritable(Exception):
    """This PIVOT is left as written."""


def _probe(anchor: exp.Expr, select: exp.Select) -> str:
    """``select`` with the CTEs around ``anchor``, as text."""
    ctes = ctes_around(anchor)
    if ctes:
        select.set("with_", exp.With(expressions=[c.copy() for c in ctes]))
    return select.sql(dialect=DIALECT)


def _bound(binder: Binder, sql: str) -> tuple[list[str], list[str]]:
    try:
        names, types, _ = binder(sql)
    except (ValueError, RuntimeError) as exc:  # SplitError is a ValueError
        raise _Unwritable(str(exc)) from exc
    return list(names), list(types)


def _value_text(value: exp.Expr) -> exp.Expr:
    """The text DuckDB compares the ON item's text with, for one IN value (a constant, as
    :func:`_loose_text` has already vetted): the constant cast to VARCHAR (a bare name is its
    own text)."""
    if isinstance(value, exp.Column) and not value.table:
        return exp.Literal.string(value.name)
    return exp.Cast(this=value.copy(), to=exp.DataType.build("VARCHAR"))


def _loose_text(value: exp.Expr) -> str:
    """A text every IN value DuckDB may write alike is given alike (more alike than DuckDB's:
    numbers by their value, dates by their day, booleans in lower case); a value of another
    kind than a number, text, a boolean, NULL, a date or a name is left as written."""
    if isinstance(value, exp.Paren):
        value = value.this
    if isinstance(value, exp.Cast) and value.to.is_type(exp.DataType.Type.DATE):
        value = value.this
    if isinstance(value, exp.Null):
        return "NULL"
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    sign = ""
    if isinstance(value, exp.Neg):
        sign, value = "-", value.this
    if isinstance(value, exp.Column) and not value.table:
        text = value.name
    elif isinstance(value, exp.Literal) and not (sign and value.is_string):
        text = sign + value.name
    else:
        raise _Unwritable(f"an IN value of another kind: {value.sql(dialect=DIALECT)}")
    with contextlib.suppress(ArithmeticError, ValueError):
        number = decimal.Decimal(text.strip())
        if number.is_finite():  # (-0 is 0 to an integer)
            return format((abs(number) if number.is_zero() else number).normalize(), "f")
    day = re.fullmatch(r"\s*(\d{1,4})-(\d{1,2})-(\d{1,2})\s*", text)
    if day is not None:
        return "-".join(str(int(part)) for part in day.groups())
    return text.lower() if text.lower() in ("true", "false") else text


def _canonical(text: str, on_type: str) -> bool:
    """Whether ``text`` is the very text DuckDB writes for some value of ``on_type`` (so the
    value's text equals it exactly when the value equals ``CAST(text AS on_type)``)."""
    sized = re.fullmatch(r"DECIMAL\((\d+),\s*(\d+)\)", on_type)
    if sized is not None:
        width, scale = int(sized.group(1)), int(sized.group(2))
        if width <= scale:  # DuckDB writes no 0 before the point there ('.500')
            return False
        fraction = rf"\.\d{{{scale}}}" if scale else ""
        written = re.fullmatch(rf"-?(0|[1-9]\d*){fraction}", text) is not None
        return written and not (text.startswith("-") and set(text) <= set("-0."))
    if on_type == "DATE":
        return re.fullmatch(r"[1-9]\d{3}-\d{2}-\d{2}", text) is not None and _is_date(text)
    if on_type == "BOOLEAN":
        return text in ("true", "false")
    return on_type != "VARCHAR" and re.fullmatch(r"-?[1-9]\d*|0", text) is not None


def _is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _matches(on: exp.Expr, value: exp.Expr, on_type: str) -> exp.Expr:
    """DuckDB's test of one ON item against one IN value: the item's text IS NOT DISTINCT FROM
    the value's; written as the item against the value where the value is text the type writes
    (the same test, one every arm computes: Polars writes dates and decimals as text its own
    way)."""
    if (
        on_type == "DATE"
        and isinstance(value, exp.Cast)
        and value.to.is_type(exp.DataType.Type.DATE)
        and isinstance(value.this, exp.Literal)
        and value.this.is_string
        and _canonical(value.this.name, on_type)
    ):
        value = value.this  # DATE '2020-01-31': the same test as the text '2020-01-31'
    if isinstance(value, exp.Literal) and value.is_string and _canonical(value.name, on_type):
        typed: exp.Expr = (
            exp.Boolean(this=value.name == "true")
            if on_type == "BOOLEAN"
            else exp.Cast(this=value.copy(), to=exp.DataType.build("DATE"))
            if on_type == "DATE"
            else exp.Literal.number(value.name)  # an integer, or a decimal of its own scale
        )
        return exp.NullSafeEQ(this=on.copy(), expression=typed)
    text = exp.Cast(this=on.copy(), to=exp.DataType.build("VARCHAR"))
    return exp.NullSafeEQ(this=text, expression=_value_text(value))


def _aggregate_of(expression: exp.Expr, aggregates: Collection[str]) -> exp.Expr:
    """The one aggregate call in a USING expression."""
    found = [
        node
        for node in expression.walk()
        if isinstance(node, exp.AggFunc)
        or (isinstance(node, exp.Anonymous) and node.name.lower() in aggregates)
    ]
    if len(found) != 1:  # (none, or several: beside each other or one inside another)
        raise _Unwritable("a USING expression of other than one aggregate")
    if any(isinstance(n, (exp.Filter, exp.Window, exp.Query)) for n in expression.walk()):
        raise _Unwritable("a USING aggregate with a FILTER, window or subquery")
    return found[0]


def _as_filters(
    pivot: exp.Pivot,
    binder: Binder,
    aggregates: Collection[str],
    anchor: exp.Expr,
    known: Sequence[str] | None = None,
) -> exp.Select:
    """The grouped query DuckDB runs for ``pivot`` (see the module), which stands where
    ``anchor`` stands in the query (the CTEs around it are the probes'); ``known``: its output
    names where they are the query's own (DuckDB's names of the user's text: a probe of
    sqlglot's text names an output `bool_or(CAST(b AS BOOLEAN))`)."""
    source = pivot.this
    if (
        pivot.args.get("unpivot")
        or pivot.args.get("into")
        or not isinstance(source, (exp.Table, exp.Subquery))
    ):
        raise _Unwritable("not a PIVOT of a table or a subquery")
    ons = pivot.expressions
    if not ons or not all(isinstance(o, exp.In) and o.expressions for o in ons):
        raise _Unwritable("an ON item without a list of values")
    if any(v for o in ons for k, v in o.args.items() if k not in ("this", "expressions")):
        raise _Unwritable("an IN of a subquery")
    using = list(pivot.args.get("using") or []) or [exp.Count(this=exp.Star())]
    calls = [_aggregate_of(u.this if isinstance(u, exp.Alias) else u, aggregates) for u in using]
    source_from = exp.Select(expressions=[exp.Star()]).from_(source.copy())
    items = exp.Select(expressions=[o.this.copy() for o in ons]).from_(source.copy())
    _, on_types = _bound(binder, _probe(anchor, items.limit(0)))
    values = [list(o.expressions) for o in ons]
    for on_type, listed in zip(on_types, values, strict=True):
        if not _OWN_TEXT.fullmatch(on_type):
            raise _Unwritable(f"an ON item of type {on_type}, whose text two values may share")
        for value in listed:
            null = isinstance(value, exp.Null) or (
                isinstance(value, exp.Literal) and value.is_string and value.name.upper() == "NULL"
            )
            if null and (on_type == "VARCHAR" or not isinstance(value, exp.Null)):
                raise _Unwritable("a NULL among an ON item's values, which DuckDB may write 'NULL'")
    group = pivot.args.get("group")
    if group is not None:
        groups = list(group.expressions)
        if not all(isinstance(g, exp.Column) and not g.table for g in groups):
            raise _Unwritable("a GROUP BY of other than the source's columns")
    else:
        read = {
            c.name.lower()
            for node in (*calls, *(o.this for o in ons))
            for c in node.find_all(exp.Column)
        }
        columns, _ = _bound(binder, _probe(anchor, source_from.limit(0)))
        if len({c.lower() for c in columns}) != len(columns):
            raise _Unwritable("a source with two columns of one name")
        groups = [exp.column(c, quoted=True) for c in columns if c.lower() not in read]
    names = (
        list(known)
        if known is not None
        else _bound(
            binder,
            _probe(
                anchor,
                exp.Select(expressions=[exp.Star()])
                .from_(exp.Subquery(this=pivot.copy()))
                .limit(0),
            ),
        )[0]
    )
    combinations = list(itertools.product(*values))
    keys = ["_".join(_loose_text(v) for v in combination) for combination in combinations]
    if len(set(keys)) != len(keys):
        # DuckDB's list plan places each value's aggregate by its text: a second value of one
        # text gets none (`IN (true, 'true')`: 0 for 427 past pivot_filter_threshold)
        raise _Unwritable("two values that may have one text")
    if len(names) != len(groups) + len(combinations) * len(using):
        raise _Unwritable("outputs other than one per group, value and aggregate")
    outputs: list[exp.Expr] = [
        exp.alias_(g.copy(), name, quoted=True) for g, name in zip(groups, names, strict=False)
    ]
    named = iter(names[len(groups) :])
    for combination in combinations:
        condition = exp.and_(
            *(
                _matches(o.this, value, on_type)
                for o, value, on_type in zip(ons, combination, on_types, strict=True)
            )
        )
        for expression, call in zip(using, calls, strict=True):
            body = expression.this if isinstance(expression, exp.Alias) else expression
            written = body.copy()
            inner = next(n for n in written.walk() if n == call)
            filtered = exp.Filter(this=inner.copy(), expression=exp.Where(this=condition.copy()))
            written = filtered if inner is written else written
            if inner is not written:
                inner.replace(filtered)
            outputs.append(exp.alias_(written, next(named), quoted=True))
    select = exp.Select(expressions=outputs).from_(source.copy())
    if groups:
        select.set("group", exp.Group(expressions=[g.copy() for g in groups]))
    return select


def _standard(pivot: exp.Pivot, binder: Binder, aggregates: Collection[str]) -> exp.Select:
    """``FROM src PIVOT (aggs FOR p IN (...) GROUP BY g)`` as the PIVOT statement it is to
    DuckDB (one PivotRef), written as that statement is."""
    over = pivot.parent
    assert over is not None
    if (
        len(over.args["pivots"]) != 1
        or pivot.args.get("unpivot")
        or any(pivot.args.get(k) for k in ("include_nulls", "default_on_null"))
    ):
        raise _Unwritable("a pivot of several steps, an UNPIVOT, or NULL options")
    source = over.copy()
    source.set("pivots", None)
    statement = exp.Pivot(
        this=source,
        expressions=[f.copy() for f in pivot.args.get("fields") or []],
        using=[e.copy() for e in pivot.expressions],
        group=pivot.args["group"].copy() if pivot.args.get("group") else None,
    )
    return _as_filters(statement, binder, aggregates, over)


def _star_over(tree: exp.Expr) -> exp.Subquery | None:
    """The subquery ``tree`` is a plain ``SELECT *`` over (ordered or cut), or None."""
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1:
        return None
    star, from_ = tree.expressions[0], tree.args.get("from_")
    if not isinstance(star, exp.Star) or any(star.args.values()) or from_ is None:
        return None
    if any(tree.args.get(k) for k in ("where", "group", "having", "joins", "qualify", "with_")):
        return None
    return from_.this if isinstance(from_.this, exp.Subquery) else None


def pivots_as_filters(
    tree: exp.Expr,
    binder: Binder,
    names: Sequence[str],
    types: Sequence[str],
    aggregates: Collection[str],
) -> exp.Expr:
    """``tree`` with each PIVOT written as DuckDB's grouped query for it (see the module), or
    ``tree`` itself where it has none or one is left as written. ``names`` and ``types``: the
    unsplit query's bound outputs, which the written query must repeat."""
    if not any(isinstance(node, exp.Pivot) for node in tree.walk()):
        return tree
    written = tree.copy()
    try:
        for pivot in sorted(written.find_all(exp.Pivot), key=lambda p: -p.depth):
            over = pivot.parent
            if isinstance(over, (exp.Table, exp.Subquery)) and pivot in over.args.get("pivots", []):
                # FROM t PIVOT (agg FOR p IN (...) GROUP BY g) AS a: the same pivot of t
                over.replace(
                    exp.Subquery(
                        this=_standard(pivot, binder, aggregates), alias=pivot.args.get("alias")
                    )
                )
                continue
            # (the query's own outputs where it is the pivot, or a plain SELECT * over it)
            top = pivot is written or _star_over(written) is pivot.parent
            select = _as_filters(pivot, binder, aggregates, pivot, names if top else None)
            if pivot is written:
                written = select
            else:
                pivot.replace(select)
        bound_names, bound_types, _ = binder(written.sql(dialect=DIALECT))
    except (_Unwritable, ValueError, RuntimeError, *UNANALYSABLE):
        return tree
    if list(bound_names) != list(names) or list(bound_types) != list(types):
        return tree
    return written


#: Words that end a PIVOT statement's ON items.
_AFTER_ON = frozenset({"using", "group", "order", "limit", "offset"})


def _on_items(sql: str) -> tuple[str, list[tuple[int, int]]] | None:
    """The source's text and each ON item's (start, end) in ``sql``, a statement of one PIVOT,
    from DuckDB's own tokens (the text is kept as written: DuckDB names a pivot's columns
    after its aggregates' text); None where they cannot be told."""
    tokens = duckdb.tokenize(sql)
    ends = [start for start, _ in tokens[1:]] + [len(sql)]
    words = [
        (start, end, kind == duckdb.token_type.keyword, sql[start:end].strip().lower())
        for (start, kind), end in zip(tokens, ends, strict=True)
    ]
    pivots = [n for n, (_, _, key, word) in enumerate(words) if key and word == "pivot"]
    if len(pivots) != 1:
        return None
    depth, level, source_start = 0, None, words[pivots[0]][1]
    source: str | None = None
    items: list[tuple[int, int]] = []
    item_start = 0
    for n, (start, end, key, word) in enumerate(words):
        if n == pivots[0]:
            level = depth
        elif level is not None and depth == level:
            if source is None and key and word == "on":
                source, item_start = sql[source_start:start], end
            elif source is not None and (word == "," or (key and word in _AFTER_ON)):
                items.append((item_start, start))
                item_start = end
                if word != ",":
                    return source, items
        if word.startswith("("):
            depth += 1
        elif word.startswith(")"):
            if level is not None and depth == level and source is not None:
                return source, [*items, (item_start, start)]
            depth -= 1
    return (source, [*items, (item_start, len(sql))]) if source is not None else None


def values_written_in(sql: str, cursor: duckdb.DuckDBPyConnection) -> str:
    """``sql`` (a MULTI statement: a PIVOT whose ON items list no values) with each ON item's
    values written in after it as DuckDB finds them (``SELECT DISTINCT CAST(p AS VARCHAR) FROM
    src WHERE p IS NOT NULL ORDER BY 1``, run here as DuckDB runs it before the pivot), the
    rest of the text as written, so the query is one SELECT that splits; ``sql`` itself where
    it cannot be (several PIVOTs, a value list DuckDB would refuse, an empty one, a query
    sqlglot cannot read)."""
    try:
        with sqlglot_quiet():
            tree = sqlglot.parse_one(sql, read=DIALECT)
        pivots = list(tree.find_all(exp.Pivot))
        found = _on_items(sql)
        if len(pivots) != 1 or pivots[0].args.get("unpivot") or found is None:
            return sql
        source, spans = found
        ons = pivots[0].expressions
        if len(ons) != len(spans) or not isinstance(pivots[0].this, (exp.Table, exp.Subquery)):
            return sql
        written = sql
        for on, (start, end) in reversed(list(zip(ons, spans, strict=True))):
            if isinstance(on, (exp.In, exp.Alias, exp.PivotAlias)):
                continue
            item = sql[start:end].strip()
            # DuckDB's own statement for the values (ascending whatever default_order says)
            rows = cursor.sql(
                f"SELECT DISTINCT CAST(({item}) AS VARCHAR) FROM {source} "
                f"WHERE ({item}) IS NOT NULL ORDER BY 1 ASC"
            ).fetchall()
            if not rows or len(rows) >= _PIVOT_LIMIT:
                return sql
            listed = ", ".join(exp.Literal.string(str(r[0])).sql(dialect=DIALECT) for r in rows)
            # (DuckDB reads `ON g % 3 IN (...)` as a pivot on the test: parenthesized)
            on_item = item if isinstance(on, exp.Column) else f"({item})"
            written = f"{written[:start]} {on_item} IN ({listed}) {written[end:]}"
        # Every ON item now lists its values, or DuckDB reads it otherwise: left as written.
        kind = cursor.extract_statements(written)[0].type
        return written if kind == duckdb.StatementType.SELECT else sql
    except (duckdb.Error, *UNANALYSABLE):
        return sql


__all__ = ["pivots_as_filters", "values_written_in"]
