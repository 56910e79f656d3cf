"""Modules imported on first use: a one-shot query that never reaches the Polars arm should not
pay Polars' import (about 70 ms of a 0.3 s DuckDB query in a fresh process)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for module ``name``; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._module(), attr)


__all__ = ["LazyModule"]
