"""Modules imported on first use: a one-shot query that never reaches the Polars arm should not
pay Polars' import (about 70 ms of a 0.3 s DuckDB query in a fresh process).

pyarrow imports pandas, where it is installed, the first time it converts a Python value
(``pa.scalar``, ``pa.array`` of a list, ``Schema.empty_table``): about 0.25 s in a fresh process.
The helpers below build what the import and the planning of a query need without a conversion.
"""

from __future__ import annotations

import importlib
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
    data = pa.py_buffer(int(value).to_bytes(8, "little", signed=True))
    return pa.Array.from_buffers(pa.int64(), 1, [None, data])[0]


__all__ = ["LazyModule", "empty_table", "int64_scalar"]
