"""The cudf arm: the Polars arm on the GPU engine (cudf-polars, ``raise_on_fail=True``), so a
query the GPU cannot run fails as a device failure instead of quietly running on the CPU; and
its CPU stand-in, which translates every query as the cudf arm does."""

from __future__ import annotations

from dau_scheduler.arms.polars import PolarsArm, gpu_available

#: The name the stand-in's results and refusals carry.
STAND_IN = "gpu-limited"


def CudfArm() -> PolarsArm:
    """A Polars arm that collects on the GPU; raises SqlError when cudf-polars is missing."""
    return PolarsArm(engine="gpu", name="cudf")


def CudfStandIn() -> PolarsArm:
    """A Polars arm on the CPU engine that writes each partial as the cudf arm does: nothing
    DuckDB checks for overflow unless the data bounds it, no ``ln``/``exp``/``pow``, no exact
    decimal-to-double conversion, and each partial run once on an empty slice before it is
    let through. What the GPU would answer wrong past a bound, the CPU answers wrong too (its
    integer arithmetic wraps as the GPU's does), so DuckDB's answers check those bounds here."""
    arm = PolarsArm(name=STAND_IN)
    arm.checked_casts = False
    arm.exact_math = False
    arm.exact_conversions = False
    arm.probe_runs = True
    return arm


__all__ = ["STAND_IN", "CudfArm", "CudfStandIn", "gpu_available"]
