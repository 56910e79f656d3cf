"""The cudf arm: the Polars arm on the GPU engine (cudf-polars, ``raise_on_fail=True``), so a
query the GPU cannot run fails as a device failure instead of quietly running on the CPU; and
its CPU stand-in, which translates every query as the cudf arm does and, where cudf-polars can
be imported without a GPU (``make gpu-translator``, docs/gpu.md), has cudf-polars translate
every plan it runs, as the GPU engine would before it ran it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dau_scheduler.arms.polars import PolarsArm, gpu_available
from dau_scheduler.arms.polars_gpu import UNTRANSLATED
from dau_scheduler.lazy import LazyModule

if TYPE_CHECKING:
    import polars as pl
else:
    pl = LazyModule("polars")

#: The name the stand-in's results and refusals carry.
STAND_IN = "gpu-limited"
#: What cudf-polars' translator says where it looked for the CUDA driver, which a CPU machine
#: does not have (a correlated EXISTS on an inequality, planned as a conditional join).
_NEEDS_DEVICE = "is an NVIDIA driver library"


def CudfArm() -> PolarsArm:
    """A Polars arm that collects on the GPU; raises SqlError when cudf-polars is missing."""
    return PolarsArm(engine="gpu", name="cudf")


def CudfStandIn(translate: bool | None = None) -> PolarsArm:
    """A Polars arm on the CPU engine that writes each partial as the cudf arm does: nothing
    DuckDB checks for overflow unless the data bounds it, no ``ln``/``exp``/``pow``, no exact
    decimal-to-double conversion, and each partial run once on an empty slice before it is
    let through. What the GPU would answer wrong past a bound, the CPU answers wrong too (its
    integer arithmetic wraps as the GPU's does), so DuckDB's answers check those bounds here.

    ``translate``: whether every plan is first given to cudf-polars' own translator (a plan
    it cannot translate fails, so the empty-slice run refuses the query, as the GPU engine's
    would); None (the default) where cudf-polars can be imported, True to require it."""
    arm = PolarsArm(name=STAND_IN)
    arm.checked_casts = False
    arm.exact_math = False
    arm.nan_ordered = False
    arm.exact_conversions = False
    arm.probe_runs = True
    engine = translating_engine() if translate is not False else None
    if engine is None and translate:
        raise RuntimeError(
            "cudf-polars cannot be imported here: build it with `make gpu-translator` and "
            "run with the environment it prints (docs/gpu.md)"
        )
    if engine is not None:
        arm.collect_engine = engine
    return arm


def translating_engine() -> Any | None:
    """A Polars engine that has cudf-polars translate each optimized plan (what the GPU
    engine is given) and raises what it cannot translate, then runs the plan on the CPU; None
    where cudf-polars cannot be imported. Translation needs no GPU: only libcudf's libraries
    loaded (``make gpu-translator`` stubs the CUDA ones it links and never calls there)."""
    try:
        from cudf_polars.dsl.translate import Translator
    except (ImportError, OSError, RuntimeError):  # (OSError: a CUDA library it links is missing)
        return None

    class TranslatedOnCpu(pl.GPUEngine):
        def _post_opt_callback(self, *, background: bool, eager: bool) -> Any:
            def translate(nodes: Any, _duration: int | None) -> None:
                translator = Translator(nodes, self)
                translator.translate_ir()
                found = sorted({str(e).splitlines()[0] for e in translator.errors})
                # What it cannot tell without a GPU (it asked the driver: a join on an
                # inequality) is let through, as without the translator.
                found = [line for line in found if _NEEDS_DEVICE not in line]
                if found:  # (each a NotImplementedError naming what it met)
                    raise NotImplementedError(f"{UNTRANSLATED}: {'; '.join(found)}")
                # (no UDF set: Polars runs the plan itself, on the CPU)

            return translate

    # The in-memory executor: the cudf arm's (``polars_gpu.EXECUTORS``), and the one whose
    # configuration asks the GPU for nothing (the streaming one reads its memory).
    return TranslatedOnCpu(raise_on_fail=True, executor="in-memory")


__all__ = ["STAND_IN", "CudfArm", "CudfStandIn", "gpu_available", "translating_engine"]
