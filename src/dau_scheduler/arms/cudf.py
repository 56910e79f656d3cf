"""The cudf arm: the Polars arm on the GPU engine (cudf-polars, ``raise_on_fail=True``), so a
query the GPU cannot run fails as a device failure instead of quietly running on the CPU."""

from __future__ import annotations

from dau_scheduler.arms.polars import PolarsArm, gpu_available


def CudfArm() -> PolarsArm:
    """A Polars arm that collects on the GPU; raises SqlError when cudf-polars is missing."""
    return PolarsArm(engine="gpu", name="cudf")


__all__ = ["CudfArm", "gpu_available"]
