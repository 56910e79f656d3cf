"""The fast fold: the final query's re-aggregation done in pyarrow, for the simplest shape.

DuckDB's fixed cost per statement (2-9 ms here, more for long SELECT lists) would be most of the
merge on fast queries, while pyarrow folds a few thousand partial rows in well under a millisecond.
The fast fold is used only when the split block is the whole query and every output is a group key
or a bare aggregate, with no HAVING or DISTINCT, and ORDER BY (NULLS LAST) and LIMIT over outputs.
Anything else, and partials over ``LARGE`` rows (but a row block's unsorted rows, which pass
through at any count), go through the final SQL in DuckDB. Both produce
the unsplit Arrow schema.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from dau_scheduler import temporal
from dau_scheduler.errors import FoldError
from dau_scheduler.lazy import LazyModule, int_array, numeric_array
from dau_scheduler.merge import EXACT_DECIMAL
from dau_scheduler.rewrite.aggregates import MERGE_STEPS
from dau_scheduler.rewrite.dialect import DIALECT

if TYPE_CHECKING:
    import pyarrow.compute as pc
else:
    pc = LazyModule("pyarrow.compute")  # imported at the first fold, not by every import


#: The table name the final query reads the arms' partials from.
PARTIALS = "__dau_partials"


def _at_least_one() -> pc.ScalarAggregateOptions:
    return pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)


#: Partials up to this many rows are folded in Python (see ``FastFold._fold_rows``).
SMALL = 256
#: Above this many partial rows the final query in DuckDB folds faster than Acero's group-by:
#: TPC-H Q10 at SF 1 split in two gives 43K partial rows over seven group keys (five strings),
#: folded in 23-28 ms here and in 10-11 ms by DuckDB; at Q3's 11.6K rows the two are even
#: (2.4 vs 2.7 ms), and under a few thousand rows DuckDB's fixed 2-5 ms per statement loses.
LARGE = 16_384
#: Which of two non-NULL values a pyarrow hash aggregate keeps, for each op that keeps one of
#: its inputs: ``_PICK[op](new, kept)`` is true when ``new`` replaces ``kept``. (``sum`` makes a
#: new value; ``all`` keeps a false and ``any`` a true where there is one.)
_PICK: dict[str, Callable[[Any, Any], bool]] = {
    "min": lambda new, kept: bool(new < kept),
    "max": lambda new, kept: bool(new > kept),
    "all": lambda new, kept: bool(kept) and not new,
    "any": lambda new, kept: bool(new) and not kept,
}


def _arrow(kind: str) -> tuple[tuple[str, ...], Callable[[Any], pa.Array]]:
    """A kind's pyarrow fold (a block is given a fast fold only when each of its kinds has one)."""
    step = MERGE_STEPS[kind]
    assert step.arrow is not None and step.finish is not None, kind
    return step.arrow, step.finish


def _python_values(column: pa.ChunkedArray) -> list[Any]:
    """A partial column's values as Python objects that group and order as the column does.

    Dates, times, timestamps and durations are read as the integers Arrow stores: DuckDB's
    ``infinity`` dates and timestamps, and years before 1 or after 9999, have no Python
    ``datetime`` (``to_pylist`` raised OverflowError and the split crashed). Their integers
    order as the values do, and the fold takes each kept value from its partial row, not from
    these integers.
    """
    if temporal.is_stored_as_integer(column.type):
        return list(temporal.integers(column).to_pylist())
    return list(column.to_pylist())


@dataclass(frozen=True)
class FoldCall:
    """One aggregate of the block: its kind and the partial columns it was split into."""

    kind: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class FastFold:
    """Everything the pyarrow fold needs: group keys, aggregates, outputs, order, limit.

    ``outputs`` are ``("key", i)`` or ``("agg", j)`` per output column; ``order`` is
    ``(output index, descending)`` per ORDER BY item.
    """

    keys: tuple[str, ...]
    calls: tuple[FoldCall, ...]
    outputs: tuple[tuple[str, int], ...]
    order: tuple[tuple[int, bool], ...] = ()
    limit: int | None = None
    offset: int = 0

    def fits(self, rows: int) -> bool:
        """Whether this fold is the faster one for ``rows`` partial rows (see ``LARGE``)."""
        return rows <= LARGE

    def _fold_rows(self, partials: pa.Table, wanted: list[tuple[str, str]]) -> dict[str, pa.Array]:
        """The same fold over Python values, for a handful of partial rows.

        An Acero group-by costs about a millisecond however few the rows (and its first use
        imports pandas, ~0.25 s, where installed). Float keys never come here
        (:func:`fast_for_types`).
        Keys, and the values min, max, all and any keep, are taken from the partial rows that
        hold them; sums are added exactly (decimals in
        :data:`~dau_scheduler.merge.EXACT_DECIMAL`, not Python's 28 digits) and built from
        buffers (``lazy.numeric_array``).
        """
        names = list(dict.fromkeys([*self.keys, *(c for c, _ in wanted)]))
        values = {name: _python_values(partials.column(name)) for name in names}
        groups: dict[tuple[Any, ...], list[Any]] = {}
        first: list[int] = []
        with decimal.localcontext(EXACT_DECIMAL):
            for row in range(partials.num_rows):
                key = tuple(values[k][row] for k in self.keys)
                acc = groups.get(key)
                if acc is None:
                    acc = groups[key] = [None] * len(wanted)
                    first.append(row)
                for j, (column, op) in enumerate(wanted):
                    value = values[column][row]
                    if value is None:  # NULL partials are skipped, as the SQL aggregates do
                        continue
                    if op == "sum":
                        acc[j] = value if acc[j] is None else acc[j] + value
                    elif acc[j] is None or _PICK[op](value, values[column][acc[j]]):
                        acc[j] = row  # the row holding the kept value
        rows = int_array(first)
        folded = {key: partials.column(key).take(rows).combine_chunks() for key in self.keys}
        for j, (column, op) in enumerate(wanted):
            found = [acc[j] for acc in groups.values()]
            if op == "sum":
                kind = partials.schema.field(column).type
                try:
                    built = numeric_array(found, kind)
                except pa.ArrowInvalid as exc:  # a decimal sum past its precision
                    raise _overflow(kind) from exc
            else:  # a NULL row index takes NULL: a group that saw no non-NULL partial
                built = partials.column(column).take(int_array(found)).combine_chunks()
            folded[f"{column}_{op}"] = built
        return folded

    def run(self, partials: pa.Table, schema: pa.Schema, *, acero: bool = True) -> pa.Table | None:
        """Fold the arms' partials into the answer, in the unsplit query's ``schema``; None
        (the caller then runs the final query) where the fold would take Acero's group-by and
        ``acero`` is false. (Float keys and a min or max over floats never come here:
        :func:`fast_for_types`.)"""
        # One fold per distinct (column, op): calls may share a partial column (SUM for AVG too).
        wanted = list(
            dict.fromkeys(
                (column, op)
                for call in self.calls
                for column, op in zip(call.columns, _arrow(call.kind)[0], strict=True)
            )
        )

        if self.keys and partials.num_rows <= SMALL:
            folded = self._fold_rows(partials, wanted)
        elif self.keys and not acero:
            return None
        else:
            # pyarrow adds DECIMAL(38, s) values in 128 bits and wraps past them, silently (the
            # sum of 6e27, 6e27 and 9e27 at scale 10 reads -1.3e28): such sums add in 76 digits
            # and must fit their own type again.
            kinds = {column: partials.schema.field(column).type for column, _ in wanted}
            partials = _widened(partials, [c for c, op in wanted if op == "sum"])
            if self.keys:
                grouped = partials.group_by(list(self.keys)).aggregate(
                    [(column, op, _at_least_one()) for column, op in wanted]
                )
                folded = {
                    name: grouped.column(name).combine_chunks() for name in grouped.column_names
                }
            else:
                # A scalar aggregate: one row, even over no partial rows; plain kernels, no
                # Acero plan (and no Python value: pa.repeat keeps the kernel's scalar as is).
                folded = {
                    f"{column}_{op}": pa.repeat(
                        getattr(pc, op)(partials.column(column), options=_at_least_one()), 1
                    )
                    for column, op in wanted
                }
            for column, op in wanted:
                folded[f"{column}_{op}"] = _fitted(folded[f"{column}_{op}"], kinds[column])
        arrays: list[pa.Array] = []
        for kind, index in self.outputs:
            if kind == "key":
                arrays.append(folded[self.keys[index]])
                continue
            call = self.calls[index]
            ops, finish = _arrow(call.kind)
            cols = [folded[f"{c}_{op}"] for c, op in zip(call.columns, ops, strict=True)]
            arrays.append(finish(cols))
        result = pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))])
        if self.order:
            indices = pc.sort_indices(
                result,
                sort_keys=[
                    (f"c{i}", "descending" if desc else "ascending", "at_end")
                    for i, desc in self.order
                ],
            )
            result = result.take(indices)
        if self.offset or self.limit is not None:
            length = None if self.limit is None else self.limit
            result = result.slice(self.offset, length)
        result = result.rename_columns(schema.names)
        return result.cast(schema, safe=True)


def _overflow(kind: pa.DataType) -> FoldError:
    return FoldError(
        f"a sum of the arms' partial sums does not fit {kind}: DuckDB's own aggregate may "
        "answer (an AVG adds in a HUGEINT) or raise; the unsplit query decides"
    )


def _widened(partials: pa.Table, summed: list[str]) -> pa.Table:
    """``partials`` with each summed DECIMAL(p, s) column as a DECIMAL(76, s)."""
    for name in summed:
        index = partials.schema.get_field_index(name)
        kind = partials.schema.field(index).type
        if pa.types.is_decimal128(kind):
            wide = partials.column(index).cast(pa.decimal256(76, kind.scale))
            partials = partials.set_column(
                index, partials.schema.field(index).with_type(wide.type), wide
            )
    return partials


def _fitted(values: pa.Array, kind: pa.DataType) -> pa.Array:
    """A folded column in its partial's type (``values`` may be a widened decimal sum)."""
    if values.type == kind:
        return values
    try:
        return values.cast(kind, safe=True)
    except pa.ArrowInvalid as exc:  # a decimal sum past its precision
        raise _overflow(kind) from exc


@dataclass(frozen=True)
class FastRows:
    """The final of a row-level split block that is the whole query, in pyarrow: the arms' rows
    in arm order, sorted by ``order`` (partial column, descending; NULLS LAST, non-float keys),
    then OFFSET/LIMIT, keeping ``columns``."""

    columns: tuple[str, ...]
    order: tuple[tuple[str, bool], ...] = ()
    limit: int | None = None
    offset: int = 0

    def fits(self, rows: int) -> bool:
        """Whether this fold is the faster one for ``rows`` partial rows: unsorted rows pass
        through at any count (a slice and a rename, nothing copied where the partials' types are
        the answer's; DuckDB's final query copied every row: 2.4x the memory of the unsplit query
        over 3.5M lineitem rows); a sort only up to ``LARGE`` rows, where DuckDB's is faster."""
        return not self.order or rows <= LARGE

    def run(self, partials: pa.Table, schema: pa.Schema, *, acero: bool = True) -> pa.Table:
        """The rows in the unsplit query's ``schema`` (sorting and slicing take no Acero plan,
        so ``acero`` changes nothing here)."""
        result = partials
        if self.order:
            indices = pc.sort_indices(
                result,
                sort_keys=[
                    (column, "descending" if desc else "ascending", "at_end")
                    for column, desc in self.order
                ],
            )
            result = result.take(indices)
        if self.offset or self.limit is not None:
            result = result.slice(self.offset, self.limit)
        result = result.select(list(self.columns)).rename_columns(schema.names)
        return result.cast(schema, safe=True)


def _sorts_as_duckdb(kind: pa.DataType) -> bool:
    """Whether pyarrow orders values of ``kind`` as DuckDB does."""
    return bool(
        pa.types.is_integer(kind)
        or pa.types.is_decimal(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_date(kind)
        or pa.types.is_timestamp(kind)
        or pa.types.is_time(kind)
    )


def fast_for_types(
    fast: FastFold | FastRows | None, output_schema: pa.Schema, partial_schema: pa.Schema
) -> FastFold | FastRows | None:
    """``fast`` where pyarrow folds these types as DuckDB does, else None: it orders only keys
    pyarrow orders alike (not floats, where NaN is DuckDB's own; not intervals, which pyarrow
    does not sort), no partial holds a nested, dictionary or interval column (pyarrow neither
    orders nor min/maxes those as DuckDB does), and it neither groups by a float nor takes a
    min or max of one."""
    if fast is None:
        return None
    if isinstance(fast, FastFold):
        sort_types = [output_schema.field(i).type for i, _ in fast.order]
    else:
        sort_types = [partial_schema.field(name).type for name, _ in fast.order]
    if not all(_sorts_as_duckdb(t) for t in sort_types):
        return None
    if any(
        pa.types.is_nested(f.type) or pa.types.is_dictionary(f.type) or pa.types.is_interval(f.type)
        for f in partial_schema
    ):
        return None
    if isinstance(fast, FastFold):
        floating = {f.name for f in partial_schema if pa.types.is_floating(f.type)}
        if floating & set(fast.keys):
            # Acero groups floats by their bits: -0.0 apart from 0.0 (and a NaN of another bit
            # pattern apart), where DuckDB groups equal values; a Python dict keeps every NaN
            # apart. DuckDB's final query groups them as the unsplit query does.
            return None
        if any(
            op in ("min", "max") and column in floating
            for call in fast.calls
            for column, op in zip(call.columns, _arrow(call.kind)[0], strict=True)
        ):
            # pyarrow's min and max skip NaN; DuckDB orders NaN above every number.
            return None
    return fast


#: The SQL aggregate that folds partial columns into one partial column, by merge-step op.
_REFOLD_SQL = {"sum": "SUM", "min": "MIN", "max": "MAX", "all": "BOOL_AND", "any": "BOOL_OR"}


def raise_check_for(final: exp.Select, raising: list[exp.Expr]) -> exp.Select:
    """A query over the partials that answers a row where an aggregate's unsplit finalize raises
    for some group of ``final`` (its FROM and GROUP BY, every group). DuckDB finalizes every
    group before HAVING, QUALIFY or an outer filter drops one (``skewness`` raises "out of
    range" for a group that HAVING then drops), while the final query's own guard sits in its
    projection, after them, and a check in its HAVING is moved behind an outer filter that
    DuckDB pushes down (measured: ``WHERE m < 3 OR k < 2`` ran first)."""
    check = exp.Select(expressions=[exp.Literal.number(1)]).from_(PARTIALS)
    if final.args.get("group") is not None:
        check.set("group", final.args["group"].copy())
    return check.having(exp.or_(*raising), copy=False).limit(1, copy=False)


def refold_sql_for(keys: int, partial_names: list[str], calls: list[FoldCall]) -> str:
    """A query folding partials into one partial of the same columns: group by the keys, each
    partial column by its merge step's op (a count's partial is summed), or by the step's own
    ``refold`` (the moments of a variance). Streamed execution folds each chunk's partial into
    a running one with it; the final query runs once, last."""
    folds: dict[str, str] = {}
    for call in calls:
        step = MERGE_STEPS[call.kind]
        if step.refold is not None:
            if all(column in folds for column in call.columns):
                continue  # another call over the same moments (corr and covar_pop of y, x)
            columns = [exp.column(c) for c in call.columns]
            for column, expression in zip(call.columns, step.refold(columns), strict=True):
                folds[column] = expression.sql(dialect=DIALECT)
            continue
        assert step.arrow is not None  # a step without an arrow fold has its own refold
        for column, op in zip(call.columns, step.arrow, strict=True):
            folds[column] = f"{_REFOLD_SQL[op]}({column})"
    group = [f"__dau_g{i}" for i in range(keys)]
    items = [*group, *(f"{folds[name]} AS {name}" for name in partial_names)]
    sql = f"SELECT {', '.join(items)} FROM {PARTIALS}"
    return f"{sql} GROUP BY {', '.join(group)}" if group else sql


__all__ = [
    "PARTIALS",
    "FastFold",
    "FastRows",
    "FoldCall",
    "fast_for_types",
    "raise_check_for",
    "refold_sql_for",
]
