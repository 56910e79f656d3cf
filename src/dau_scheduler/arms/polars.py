"""The Polars arm: the partial query through Polars' SQL front end, on the CPU engine or, as the
``cudf`` arm, on the GPU engine (cudf-polars) with ``raise_on_fail=True``.

Polars' SQL differs from DuckDB's in ways that change answers, so the partial is translated:

- Decimal x decimal keeps ``max(s1, s2)`` digits in Polars but ``s1 + s2`` in DuckDB. Decimal
  columns are loaded at scale ``DECIMAL_SCALE`` so products of such columns stay exact there, and
  decimal literals (Float64 in Polars) are written as decimals of that scale.
- ``a / b`` is DOUBLE division in DuckDB for integers and decimals; it is written as such.
- ``BETWEEN`` is written as two comparisons; date literals as ``DATE 'yyyy-mm-dd'``;
  ``BOOL_AND``/``BOOL_OR`` as ``MIN``/``MAX``.
- Polars joins only on equalities: an inner or left join's conditions on the joined table alone
  become a filter on that table (``_filter_joined_table``).
- Polars wraps integer overflow and sums FLOAT in single precision: integer sums and arithmetic
  are computed in DECIMAL(38, 0) and cast back strictly, FLOATs are summed as DOUBLEs
  (``_checked_arithmetic``).
- What Polars computes differently and is not translated (``%``, ``//``, ``round`` with digits,
  ``strpos``, casting a fraction to an integer, unknown functions) is refused by name, and so is
  every expression kind outside ``_CHECKED`` (default deny).

Every partial is then cast to the host's partial schema with a safe cast, so a value Polars did
not compute exactly raises rather than merging as a wrong answer.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import polars as pl
import pyarrow as pa
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import SqlglotError

from dau_scheduler.arms.base import cast_partial
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.planner import PLACEHOLDER, CompiledSplit
from dau_scheduler.tables import ParquetSource, Source

#: The scale decimal columns are held at on the Polars side (see the module docstring).
DECIMAL_SCALE = 12
_DECIMAL = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")


class _PolarsSQL(Postgres):
    """Postgres-flavoured SQL, which is what Polars' SQL front end reads, with its quirks."""

    class Generator(Postgres.Generator):  # type: ignore[misc,valid-type]
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


def _translate(node: exp.Expr) -> exp.Expr:
    decimal = _decimal_literal(node)
    if decimal is not None:
        return decimal
    if isinstance(node, exp.Div):
        double = exp.DataType.build("DOUBLE")
        return exp.Div(
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
    conjuncts = (
        list(where.this.flatten())
        if where is not None and isinstance(where.this, exp.And)
        else ([where.this] if where is not None else [])
    )
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
            for k, c in enumerate(conjuncts)
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
        conditions[pick] = [conjuncts[k] for k in links]
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
    rest = [conjuncts[k].copy() for k in range(len(conjuncts)) if k not in used]
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
_FILTERABLE_JOINS = {("", ""), ("", "INNER"), ("LEFT", ""), ("LEFT", "OUTER")}


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
    if not isinstance(table, exp.Table) or on is None:
        return node
    name = table.alias_or_name
    conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    own = [
        c
        for c in conjuncts
        if _sources(c) == {name}
        and not c.find(exp.Subquery, exp.Select)
        and not (
            isinstance(c, exp.EQ) and all(isinstance(s, exp.Column) for s in c.iter_expressions())
        )
    ]
    if not own or len(own) == len(conjuncts):
        return node
    inner = exp.select("*").from_(table.copy()).where(exp.and_(*[c.copy() for c in own]))
    joined = node.copy()
    joined.set("this", exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(name))))
    joined.set("on", exp.and_(*[c.copy() for c in conjuncts if c not in own]))
    return joined


_WIDE_INTEGER = exp.DataType.build("DECIMAL(38, 0)")
_DOUBLE = exp.DataType.build("DOUBLE")


def _is_integer(data_type: exp.DataType | None) -> bool:
    return data_type is not None and (
        data_type.is_type(*exp.DataType.INTEGER_TYPES) or data_type.is_type("BOOLEAN")
    )


def _checked_arithmetic(tree: exp.Expr, types: dict[str, dict[str, str]]) -> exp.Expr:
    """Integer sums and integer arithmetic that cannot wrap around, and float sums in doubles.

    Polars adds, subtracts and multiplies integers in their own width and wraps on overflow, and
    sums a FLOAT column in single precision; DuckDB sums integers into a 128-bit integer, raises on
    integer overflow, and sums FLOATs as DOUBLEs. With the arm's column types (sqlglot's type
    annotation), each integer ``SUM(e)`` becomes ``SUM(CAST(e AS DECIMAL(38, 0)))`` (DuckDB's
    HUGEINT, which Arrow carries as that decimal); each integer ``a op b`` is computed in that
    decimal and cast back with Polars' strict cast, which raises where DuckDB would; a FLOAT under
    ``SUM`` or ``AVG`` is widened to DOUBLE first. A ``SUM`` whose argument's type cannot be
    determined is refused (``SqlError``): it might be an integer that wraps.
    """
    from sqlglot.optimizer.annotate_types import annotate_types

    schema: dict[str, object] = dict(types)
    annotated = annotate_types(tree, schema=schema, dialect="duckdb")
    for node in list(annotated.find_all(exp.Sum, exp.Avg)):
        argument = node.this
        data_type = argument.type
        if data_type is not None and data_type.is_type("FLOAT"):
            argument.replace(exp.Cast(this=argument.copy(), to=_DOUBLE.copy()))
        elif isinstance(node, exp.Sum) and _is_integer(data_type):
            if argument.find(exp.Column) is None:
                # Polars adds a constant up once per row only as a bare literal (a cast one is
                # summed once); a small one cannot overflow any realistic row count.
                if not (argument.is_int and abs(int(argument.to_py())) <= 2**31):
                    raise SqlError(f"{node.sql()} sums a constant Polars might add up differently")
                continue
            argument.replace(exp.Cast(this=argument.copy(), to=_WIDE_INTEGER.copy()))
        elif isinstance(node, exp.Sum) and (
            data_type is None or not data_type.is_type(*exp.DataType.REAL_TYPES)
        ):
            raise SqlError(f"cannot tell what type {node.sql()} adds up, so it might wrap around")
    # Again, now that integer sums are decimals: arithmetic over them is no integer arithmetic.
    annotated = annotate_types(annotated, schema=schema, dialect="duckdb")
    for op in reversed(list(annotated.find_all(exp.Add, exp.Sub, exp.Mul))):
        left, right, result = op.args["this"], op.args["expression"], op.type
        if (
            result is not None
            and _is_integer(result)
            and _is_integer(left.type)
            and _is_integer(right.type)
        ):
            wide = op.copy()
            wide.set("this", exp.Cast(this=left.copy(), to=_WIDE_INTEGER.copy()))
            wide.set("expression", exp.Cast(this=right.copy(), to=_WIDE_INTEGER.copy()))
            op.replace(exp.Cast(this=wide, to=result.copy()))
    return annotated


#: Why kinds that Polars' SQL computes differently from DuckDB's (found by a sweep against DuckDB)
#: are refused. None is in ``_CHECKED``, so each is refused anyway; this only names the reason.
_DIVERGENT: dict[type[exp.Expr], str] = {
    exp.Mod: "% (Polars takes the sign of the divisor, DuckDB of the dividend)",
    exp.IntDiv: "// (Polars rounds toward minus infinity, DuckDB toward zero)",
    exp.StrPosition: "strpos/instr/position (Polars counts differently)",
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
        "ILike",
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
        "Lower",
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
        "Round",
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
        "TableAlias",
        "Trim",
        "Upper",
        "Var",
        "Where",
    ]
)


def _decimal_scale(data_type: exp.DataType) -> int:
    params = data_type.expressions
    return int(params[1].name) if len(params) > 1 else 0


def _cast_divergence(cast: exp.Cast) -> str | None:
    """How Polars would compute this cast differently from DuckDB, if it would."""
    source, target = cast.this.type, cast.to
    if source is None:
        return None
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


def _refuse_divergent(tree: exp.Expr) -> None:
    """Raise ``SqlError`` naming the first expression the arm cannot vouch for: a kind outside
    ``_CHECKED`` (with the reason from ``_DIVERGENT`` where one is known), ``round`` with a digit
    count, or a cast Polars computes differently (:func:`_cast_divergence`; it needs the types
    :func:`_checked_arithmetic` annotates, and is skipped where they are unknown).
    """
    for node in tree.walk():
        why = _DIVERGENT.get(type(node))
        if why is None and type(node).__name__ not in _CHECKED:
            why = f"{type(node).__name__} is not among the expressions checked against DuckDB"
        if why is None and isinstance(node, exp.Round) and node.args.get("decimals") is not None:
            why = "round with digits (Polars rounds halves differently)"
        if why is None and isinstance(node, exp.Cast):
            why = _cast_divergence(node)
        if why is not None:
            raise SqlError(f"{node.sql(dialect='duckdb')}: {why}")


def polars_sql(compiled: CompiledSplit, types: dict[str, dict[str, str]] | None = None) -> str:
    """The partial query in the SQL Polars reads, with DuckDB's arithmetic (module docstring).

    ``types`` (table -> column -> SQL type, as the arm holds them) enables the overflow and
    precision rewrites of :func:`_checked_arithmetic`; without it they are skipped.
    """
    if compiled.partial is None:
        raise SqlError("this query has no partial to run")
    partial = _join_explicitly(_translated(compiled.partial))
    partial = partial.transform(_filter_joined_table)
    if types is not None:
        split = compiled.plan.split_table
        schema = dict(types) | ({PLACEHOLDER: types[split]} if split in types else {})
        partial = _checked_arithmetic(partial, schema)
    _refuse_divergent(partial)
    return str(partial.sql(dialect=_PolarsSQL))


#: SQL type names of the Polars types the arm holds, for sqlglot's type annotation.
_SQL_TYPES: dict[type[pl.DataType], str] = {
    pl.Int8: "TINYINT",
    pl.Int16: "SMALLINT",
    pl.Int32: "INT",
    pl.Int64: "BIGINT",
    pl.Int128: "INT128",
    pl.UInt8: "UTINYINT",
    pl.UInt16: "USMALLINT",
    pl.UInt32: "UINT",
    pl.UInt64: "UBIGINT",
    pl.Float32: "FLOAT",
    pl.Float64: "DOUBLE",
    pl.Boolean: "BOOLEAN",
    pl.String: "VARCHAR",
    pl.Date: "DATE",
    pl.Time: "TIME",
    pl.Binary: "BLOB",
}


def _sql_type(dtype: pl.DataType) -> str | None:
    if isinstance(dtype, pl.Decimal):
        return f"DECIMAL({dtype.precision or 38}, {dtype.scale or 0})"
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMPTZ" if dtype.time_zone else "TIMESTAMP"
    return _SQL_TYPES.get(type(dtype))


_Frame = TypeVar("_Frame", pl.DataFrame, pl.LazyFrame)


def _widen_decimals(frame: _Frame) -> _Frame:
    schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    casts = [
        pl.col(name).cast(pl.Decimal(38, max(DECIMAL_SCALE, dtype.scale or 0)))
        for name, dtype in schema.items()
        if isinstance(dtype, pl.Decimal)
    ]
    return frame.with_columns(casts) if casts else frame


#: What importing an Arrow column Polars does not support raises (an empty one panics).
_IMPORT_ERRORS = (
    pl.exceptions.PolarsError,
    pl.exceptions.PanicException,
    pa.ArrowException,
    TypeError,
    ValueError,
)


class PolarsArm:
    """Runs partial queries with Polars; ``engine="gpu"`` makes it the ``cudf`` arm."""

    def __init__(
        self, *, engine: str = "cpu", name: str | None = None, own_cores: bool = False
    ) -> None:
        if engine not in {"cpu", "gpu"}:
            raise SqlError(f"unknown Polars engine {engine!r}; expected 'cpu' or 'gpu'")
        self.engine = engine
        self.name = name or ("cudf" if engine == "gpu" else "polars")
        #: The CPU engine runs on the host's cores (the arms' rates do not add), unless the
        #: machine's cores were partitioned between the arms (``own_cores``: see docs/cores.md);
        #: the GPU does not.
        self.shares_host_cores = engine == "cpu" and not own_cores
        #: Frames live in host memory: on the GPU every collect moves its input over the link.
        self.resident = engine == "cpu"
        self.frames: dict[str, pl.LazyFrame] = {}
        #: table -> column -> SQL type of the frames held; columns Polars could not import.
        self.types: dict[str, dict[str, str]] = {}
        self.unloaded: dict[tuple[str, str], str] = {}
        #: Whether ``refusal`` also runs the partial on an empty slice of the split table. The GPU
        #: engine finds what it does not support only when it runs (``raise_on_fail``); planning
        #: is enough on the CPU. It costs one run over the other tables, once per query.
        self.probe_runs = engine == "gpu"
        self._collect_engine: Any = "auto"
        if engine == "gpu":
            self._collect_engine = _gpu_engine()

    def load(self, tables: dict[str, pa.Table]) -> None:
        """Hold every table as a Polars frame (beside those already held). A column Polars
        cannot import (an Arrow interval, say) is left out and named in :attr:`unloaded`; a
        query that reads it is refused."""
        for name, table in tables.items():
            self._hold(name, self._import(name, table).lazy())

    def attach(self, sources: dict[str, Source]) -> None:
        """Every source as a lazy frame: Parquet scanned when a query runs (only the columns
        and rows it needs), Arrow imported as :meth:`load` does."""
        self.frames, self.types, self.unloaded = {}, {}, {}
        for name, source in sources.items():
            if isinstance(source, ParquetSource):
                self._hold(name, pl.scan_parquet([str(f) for f in source.files]))
            else:
                self._hold(name, self._import(name, source.arrow()).lazy())

    def limit_memory(self, megabytes: float) -> None:
        """Polars has no byte limit: under a memory budget the CPU engine runs streaming
        (bounded morsels instead of whole intermediate frames). The GPU engine is unchanged."""
        if self.engine == "cpu":
            self._collect_engine = "streaming"

    def _import(self, name: str, table: pa.Table) -> pl.DataFrame:
        try:
            frame = pl.from_arrow(table)
        except _IMPORT_ERRORS:
            kept = []
            for column in table.column_names:
                try:
                    pl.from_arrow(table.select([column]).slice(0, 1))
                    kept.append(column)
                except _IMPORT_ERRORS:
                    self.unloaded[(name, column)] = str(table.schema.field(column).type)
            frame = pl.from_arrow(table.select(kept))
        if not isinstance(frame, pl.DataFrame):
            raise SqlError(f"table {name!r} did not load as a Polars DataFrame")
        return frame.rechunk()

    def _hold(self, name: str, frame: pl.LazyFrame) -> None:
        frame = _widen_decimals(frame)
        self.frames[name] = frame
        self.types[name] = {
            column: sql_type
            for column, dtype in frame.collect_schema().items()
            if (sql_type := _sql_type(dtype)) is not None
        }

    def _context(
        self, split_table: str, start: int, stop: int, rows: pa.Table | None = None
    ) -> pl.SQLContext[Any]:
        frames = dict(self.frames)
        if rows is None:
            frames[PLACEHOLDER] = self.frames[split_table].slice(start, stop - start)
        else:
            kept = [c for c in rows.column_names if (split_table, c) not in self.unloaded]
            frames[PLACEHOLDER] = _widen_decimals(
                self._import(split_table, rows.select(kept))
            ).lazy()
        return pl.SQLContext(frames=frames)

    def sql_for(self, compiled: CompiledSplit) -> str:
        text = compiled.arm_sql.get(self.name)
        if text is None:
            text = polars_sql(compiled, self.types)
            compiled.arm_sql[self.name] = text
        return text

    def refusal(self, compiled: CompiledSplit) -> str | None:
        """Why Polars cannot run this partial (it fails to plan, or needs more decimal digits,
        or its per-arm top-k orders values Polars does not order as DuckDB does)."""
        order = compiled.partial.args.get("order") if compiled.partial is not None else None
        if order is not None and compiled.partial_schema is not None:
            for ordered in order.expressions:
                name = ordered.this.name if isinstance(ordered.this, exp.Column) else ""
                index = compiled.partial_schema.get_field_index(name) if name else -1
                kind = compiled.partial_schema.field(index).type if index >= 0 else None
                if kind is None or pa.types.is_nested(kind) or pa.types.is_dictionary(kind):
                    return (
                        f"{self.name} arm: its top-k orders by {ordered.this.sql()}, which "
                        "Polars does not order as DuckDB does"
                    )
        for column, type_name in zip(compiled.partial_columns, compiled.partial_types, strict=True):
            match = _DECIMAL.search(type_name)
            if match and int(match.group(2)) > DECIMAL_SCALE:
                return (
                    f"{self.name} arm: partial column {column} is {type_name}, finer than the "
                    f"{DECIMAL_SCALE} decimal digits the Polars arm computes exactly"
                )
        if self.unloaded and compiled.partial is not None:
            read = {c.name for c in compiled.partial.find_all(exp.Column)}
            missing = sorted(
                f"{t}.{c} ({kind})" for (t, c), kind in self.unloaded.items() if c in read
            )
            if missing:
                return f"{self.name} arm could not load column {', '.join(missing)} into Polars"
        try:
            text = self.sql_for(compiled)
            frame = self._context(compiled.plan.split_table or "", 0, 0).execute(text)
            frame.collect_schema()
        except (SqlglotError, pl.exceptions.PolarsError, SqlError) as exc:
            return f"{self.name} arm cannot run this query's partial: {_first_line(exc)}"
        if self.probe_runs:
            try:
                self.run_partial(compiled, 0, 0)
            except Exception as exc:  # noqa: BLE001 - whatever the engine raises, it is a "no"
                return (
                    f"{self.name} arm failed on an empty slice of this partial: {_first_line(exc)}"
                )
        return None

    def run_partial(self, compiled: CompiledSplit, start: int, stop: int) -> pa.Table:
        return self._collect(compiled, self._context(compiled.plan.split_table or "", start, stop))

    def run_partial_rows(self, compiled: CompiledSplit, rows: pa.Table) -> pa.Table:
        """The partial over ``rows``, the split table's rows given as Arrow (a chunk)."""
        context = self._context(compiled.plan.split_table or "", 0, 0, rows)
        return self._collect(compiled, context)

    def _collect(self, compiled: CompiledSplit, context: pl.SQLContext[Any]) -> pa.Table:
        frame = context.execute(self.sql_for(compiled))
        result = frame.lazy().collect(engine=self._collect_engine)
        return cast_partial(result.to_arrow(), compiled.partial_schema, self.name)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _gpu_engine() -> Any:
    """The Polars GPU engine, imported only here; a missing GPU stack is a clear error."""
    try:
        import cudf_polars  # noqa: F401
    except ImportError as exc:
        raise SqlError(
            "device 'cudf' needs cudf-polars and a CUDA GPU: pip install -e '.[gpu]'"
        ) from exc
    return pl.GPUEngine(raise_on_fail=True)


def gpu_available() -> bool:
    """Whether the cudf arm can be built here (cudf-polars importable and a CUDA device)."""
    try:
        import cudf_polars  # noqa: F401
        import rmm  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount()) > 0
    except (ImportError, RuntimeError):
        return False


__all__ = ["DECIMAL_SCALE", "PolarsArm", "gpu_available", "polars_sql"]
