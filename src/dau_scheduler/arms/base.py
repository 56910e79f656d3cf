"""The protocol every arm implements, and the cast that makes arms' partials agree."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import pyarrow as pa

from dau_scheduler.errors import SplitError
from dau_scheduler.rewrite.planner import CompiledSplit


@runtime_checkable
class Arm(Protocol):
    """One engine that runs a compiled split's partial query over a row range of the split table.

    ``load`` receives every table once (the arm keeps them resident); ``refusal`` answers, before
    anything runs, why this arm cannot run a query (None when it can); ``run_partial`` returns the
    partial over rows ``[start, stop)`` of the split table as Arrow. ``shares_host_cores`` says the
    arm computes on the same CPU cores as the host arm, so running both adds no compute.
    """

    name: str
    shares_host_cores: bool

    def load(self, tables: dict[str, pa.Table]) -> None: ...

    def refusal(self, compiled: CompiledSplit) -> str | None: ...

    def run_partial(self, compiled: CompiledSplit, start: int, stop: int) -> pa.Table: ...


def _kind(data_type: pa.DataType) -> str:
    """The family of an Arrow type: casts inside a family keep a value's meaning."""
    t = pa.types
    if t.is_integer(data_type) or t.is_floating(data_type) or t.is_decimal(data_type):
        return "number"
    if t.is_string(data_type) or t.is_large_string(data_type) or t.is_string_view(data_type):
        return "text"
    if t.is_binary(data_type) or t.is_large_binary(data_type) or t.is_fixed_size_binary(data_type):
        return "bytes"
    if t.is_list(data_type) or t.is_large_list(data_type) or t.is_fixed_size_list(data_type):
        return "list"
    return str(data_type.id)  # each other kind (date32, timestamp, duration, ...) on its own


def _same_meaning(got: pa.DataType, want: pa.DataType) -> bool:
    """Whether casting a ``got`` value to ``want`` keeps what it means: the same family, nested
    types field by field; a null column, or a date read as midnight of that day, also fit.
    A dictionary stands for its values."""
    got = got.value_type if pa.types.is_dictionary(got) else got
    want = want.value_type if pa.types.is_dictionary(want) else want
    if pa.types.is_null(got) or (pa.types.is_date(got) and pa.types.is_timestamp(want)):
        return True
    if pa.types.is_date(got) and pa.types.is_date(want):
        return True
    if _kind(got) != _kind(want):
        return False
    if _kind(got) == "list":
        return _same_meaning(got.value_type, want.value_type)
    if pa.types.is_struct(got):
        return got.num_fields == want.num_fields and all(
            _same_meaning(got.field(i).type, want.field(i).type) for i in range(got.num_fields)
        )
    if pa.types.is_map(got):
        return _same_meaning(got.key_type, want.key_type) and _same_meaning(
            got.item_type, want.item_type
        )
    return True


def cast_partial(table: pa.Table, schema: pa.Schema, arm: str) -> pa.Table:
    """An arm's partial in the host's partial schema, by name and type.

    The cast is safe: a value that does not fit the host's type exactly (a rounded decimal, an
    overflowing count) raises instead of becoming a plausible wrong answer. So does a cast across
    kinds, which Arrow would make but which changes what a value means: a Polars duration of
    60 days read as DuckDB's integer day count is 5184000000000 (microseconds).
    """
    if table.num_columns != len(schema):
        raise SplitError(
            f"{arm} arm returned {table.num_columns} partial columns, expected {len(schema)}"
        )
    table = table.rename_columns(schema.names)
    for got, want in zip(table.schema, schema, strict=True):
        if not _same_meaning(got.type, want.type):
            raise SplitError(
                f"{arm} arm's partial column {want.name!r} is {got.type}, "
                f"where the host's is {want.type}"
            )
    if table.schema.equals(schema, check_metadata=False):
        return table
    try:
        return fresh_buffers(table, schema).cast(schema, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise SplitError(
            f"{arm} arm's partial does not fit the host's types exactly: {exc}"
        ) from exc


def fresh_buffers(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with each column to be cast copied into buffers of its own. pyarrow 26 crashes
    the process (a segmentation fault) casting a list whose every row is NULL, as read from
    Arrow IPC (its values buffer a null pointer), to a fixed-size list: a Spark worker met one
    in ``SELECT length(a)`` over an INTEGER[3] column holding a NULL (DuckDB's
    test/sql/function/array/array_length.test)."""
    columns = [
        pa.chunked_array([pa.concat_arrays(column.chunks)], column.type)
        if column.num_chunks and not got.type.equals(want.type)
        else column
        for column, got, want in zip(table.columns, table.schema, schema, strict=True)
    ]
    return pa.table(columns, schema=table.schema)


__all__ = ["Arm", "cast_partial", "fresh_buffers"]
