"""Modules imported on first use: a one-shot query that never reaches the Polars arm should not
pay Polars' import (about 70 ms of a 0.3 s DuckDB query in a fresh process).

pyarrow imports pandas, where it is installed, the first time it converts a Python value
(``pa.scalar``, ``pa.array`` of a list, ``Schema.empty_table``): about 0.25 s in a fresh process.
The helpers below build what the import and the planning of a query need without a conversion.
"""

from __future__ import annotations

import array
import decimal
import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import pyarrow as pa


class LazyModule:
    """Stands for module ``name``; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._module(), attr)


def empty_table(schema: pa.Schema) -> pa.Table:
    """``schema.empty_table()`` made from typed empty arrays, so pandas is not imported."""
    try:
        return pa.Table.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
    except (pa.ArrowException, TypeError):  # a type pa.nulls cannot make: Arrow's own way
        return schema.empty_table()


def int64_scalar(value: int) -> pa.Scalar:
    """An int64 scalar read from its eight bytes, so pandas is not imported."""
    return int_array([value])[0]


def _validity(values: Sequence[Any]) -> pa.Buffer | None:
    if all(v is not None for v in values):
        return None
    bits = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is not None:
            bits[i // 8] |= 1 << (i % 8)
    return pa.py_buffer(bytes(bits))


def int_array(values: Sequence[int | None]) -> pa.Array:
    """An int64 array of ``values`` (None: NULL) built from its buffers, so pandas is not
    imported (row indices for ``take``, counts)."""
    data = array.array("q", (0 if v is None else v for v in values))
    return pa.Array.from_buffers(
        pa.int64(), len(values), [_validity(values), pa.py_buffer(data.tobytes())]
    )


def numeric_array(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """``pa.array(values, type_)`` for int64, float64 and decimal128 built from buffers, so
    pandas is not imported; any other type, or a decimal outside its precision (which
    ``pa.array`` refuses by name), goes through ``pa.array``."""
    if pa.types.is_int64(type_):
        return int_array(values).cast(type_)  # a no-op cast keeps the field's exact type
    if pa.types.is_float64(type_):
        doubles = array.array("d", (0.0 if v is None else float(v) for v in values))
        buffers = [_validity(values), pa.py_buffer(doubles.tobytes())]
        return pa.Array.from_buffers(type_, len(values), buffers)
    if pa.types.is_decimal128(type_):
        bound = 10**type_.precision
        unscaled = []
        for v in values:
            u = 0 if v is None else _unscaled(decimal.Decimal(v), type_.scale)
            if u is None or not -bound < u < bound:
                return pa.array(values, type_)  # more digits than the type: Arrow's own error
            unscaled.append(u.to_bytes(16, "little", signed=True))
        buffers = [_validity(values), pa.py_buffer(b"".join(unscaled))]
        return pa.Array.from_buffers(type_, len(values), buffers)
    return pa.array(values, type_)


def _unscaled(value: decimal.Decimal, scale: int) -> int | None:
    """``value * 10**scale`` as an exact integer, or None where that is not a whole number (or
    ``value`` is not finite). Integer arithmetic on the digits: ``Decimal.scaleb`` would round
    to the context's 28 digits."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        return None
    magnitude: int = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    if shift >= 0:
        magnitude *= 10**shift
    else:
        unit: int = 10**-shift
        if magnitude % unit:
            return None
        magnitude //= unit
    return -magnitude if sign else magnitude


__all__ = ["LazyModule", "empty_table", "int64_scalar", "int_array", "numeric_array"]
