"""Engine arms. Each engine lives in its own module behind the :class:`Arm` protocol; engine
libraries that may be absent (cudf-polars) are imported only inside their arm."""

from __future__ import annotations

from dau_scheduler.arms.base import Arm, cast_partial
from dau_scheduler.arms.duckdb import DuckDBArm
from dau_scheduler.arms.polars import PolarsArm

__all__ = ["Arm", "DuckDBArm", "PolarsArm", "cast_partial"]
