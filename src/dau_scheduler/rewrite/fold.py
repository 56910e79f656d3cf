"""The fast fold: the final query's re-aggregation done in pyarrow, for the simplest shape.

DuckDB's fixed cost per statement (2-9 ms here, more for long SELECT lists) would be most of the
merge on fast queries, while pyarrow folds a few thousand partial rows in well under a millisecond.
The fast fold is used only when the split block is the whole query and every output is a group key
or a bare aggregate, with no HAVING or DISTINCT, and ORDER BY (NULLS LAST) and LIMIT over outputs.
Anything else, and partials over ``LARGE`` rows, go through the final SQL in DuckDB. Both produce
the unsplit Arrow schema.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from dau_scheduler.lazy import LazyModule
from dau_scheduler.rewrite.aggregates import MERGE_STEPS

if TYPE_CHECKING:
    import pyarrow.compute as pc
else:
    pc = LazyModule("pyarrow.compute")  # imported at the first fold, not by every import


def _at_least_one() -> pc.ScalarAggregateOptions:
    return pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)


#: Partials up to this many rows are folded in Python (see ``FastFold._fold_rows``).
SMALL = 256
#: Above this many partial rows the final query in DuckDB folds faster than Acero's group-by:
#: TPC-H Q10 at SF 1 split in two gives 43K partial rows over seven group keys (five strings),
#: folded in 23-28 ms here and in 10-11 ms by DuckDB; at Q3's 11.6K rows the two are even
#: (2.4 vs 2.7 ms), and under a few thousand rows DuckDB's fixed 2-5 ms per statement loses.
LARGE = 16_384
#: The Python form of each pyarrow hash aggregate the merge steps use.
_PY_FOLD: dict[str, Callable[[Any, Any], Any]] = {
    "sum": operator.add,
    "min": min,
    "max": max,
    "all": lambda a, b: a and b,
    "any": lambda a, b: a or b,
}


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

    def _fold_rows(self, partials: pa.Table, wanted: list[tuple[str, str]]) -> dict[str, pa.Array]:
        """The same fold over Python values, for a handful of partial rows.

        An Acero group-by costs about a millisecond however few the rows. Float keys never come
        here (NaN would not equal itself as a dict key, while SQL groups all NaNs together).
        """
        names = list(dict.fromkeys([*self.keys, *(c for c, _ in wanted)]))
        values = {name: partials.column(name).to_pylist() for name in names}
        groups: dict[tuple[Any, ...], list[Any]] = {}
        for row in range(partials.num_rows):
            key = tuple(values[k][row] for k in self.keys)
            acc = groups.get(key)
            if acc is None:
                acc = groups[key] = [None] * len(wanted)
            for j, (column, op) in enumerate(wanted):
                value = values[column][row]
                if value is not None:  # NULL partials are skipped, as the SQL aggregates do
                    acc[j] = value if acc[j] is None else _PY_FOLD[op](acc[j], value)
        folded = {
            key: pa.array([k[i] for k in groups], partials.schema.field(key).type)
            for i, key in enumerate(self.keys)
        }
        for j, (column, op) in enumerate(wanted):
            folded[f"{column}_{op}"] = pa.array(
                [acc[j] for acc in groups.values()], partials.schema.field(column).type
            )
        return folded

    def run(self, partials: pa.Table, schema: pa.Schema) -> pa.Table:
        """Fold the arms' partials into the answer, in the unsplit query's ``schema``."""
        # One fold per distinct (column, op): calls may share a partial column (SUM for AVG too).
        wanted = list(
            dict.fromkeys(
                (column, op)
                for call in self.calls
                for column, op in zip(call.columns, MERGE_STEPS[call.kind].arrow, strict=True)
            )
        )

        if (
            self.keys
            and partials.num_rows <= SMALL
            and not any(pa.types.is_floating(partials.schema.field(k).type) for k in self.keys)
        ):
            folded = self._fold_rows(partials, wanted)
        elif self.keys:
            grouped = partials.group_by(list(self.keys)).aggregate(
                [(column, op, _at_least_one()) for column, op in wanted]
            )
            folded = {name: grouped.column(name).combine_chunks() for name in grouped.column_names}
        else:
            # A scalar aggregate: one row, even over no partial rows; plain kernels, no Acero plan.
            folded = {
                f"{column}_{op}": pa.array(
                    [getattr(pc, op)(partials.column(column), options=_at_least_one()).as_py()],
                    partials.schema.field(column).type,
                )
                for column, op in wanted
            }
        arrays: list[pa.Array] = []
        for kind, index in self.outputs:
            if kind == "key":
                arrays.append(folded[self.keys[index]])
                continue
            call = self.calls[index]
            ops = MERGE_STEPS[call.kind].arrow
            cols = [folded[f"{c}_{op}"] for c, op in zip(call.columns, ops, strict=True)]
            arrays.append(MERGE_STEPS[call.kind].finish(cols))
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


@dataclass(frozen=True)
class FastRows:
    """The final of a row-level split block that is the whole query, in pyarrow: the arms' rows
    in arm order, sorted by ``order`` (partial column, descending; NULLS LAST, non-float keys),
    then OFFSET/LIMIT, keeping ``columns``."""

    columns: tuple[str, ...]
    order: tuple[tuple[str, bool], ...] = ()
    limit: int | None = None
    offset: int = 0

    def run(self, partials: pa.Table, schema: pa.Schema) -> pa.Table:
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


__all__ = ["FastFold", "FastRows", "FoldCall"]
