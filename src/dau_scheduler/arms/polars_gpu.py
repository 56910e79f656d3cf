"""The GPU under the Polars arm: Polars' GPU engine (cudf-polars) for the ``cudf`` arm, and
whether this machine can build one. Neither imports a CUDA library before it is asked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dau_scheduler.errors import SqlError
from dau_scheduler.lazy import LazyModule

if TYPE_CHECKING:
    import polars as pl
else:
    pl = LazyModule("polars")


def gpu_engine() -> Any:
    """The Polars GPU engine, imported only here; a missing GPU stack is a clear error."""
    try:
        import cudf_polars  # noqa: F401
    except ImportError as exc:
        raise SqlError(
            "device 'cudf' needs cudf-polars and a CUDA GPU: pip install -e '.[gpu]'"
        ) from exc
    return pl.GPUEngine(raise_on_fail=True)


def gpu_available() -> bool:
    """Whether the cudf arm can be built here (cudf-polars importable and a CUDA device)."""
    try:
        import cudf_polars  # noqa: F401
        import rmm  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return False
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount()) > 0
    except (ImportError, RuntimeError):
        return False


__all__ = ["gpu_available", "gpu_engine"]
