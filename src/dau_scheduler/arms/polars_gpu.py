"""The GPU under the Polars arm: Polars' GPU engine (cudf-polars) for the ``cudf`` arm, whether
this machine can build one, one collect at a time on it, and what the GPU engine computes
otherwise than DuckDB, so the cudf arm refuses it. Nothing here imports a CUDA library before it
is asked.

What the GPU kit measured on an H200 (cudf-polars 26.10.2, 2026-12-04, docs/benchmarks.md):

* ``ln``, ``exp`` and ``pow`` differ from DuckDB's (glibc's) in the last bit for 27 to 25,755 of
  100,000 values; ``ln`` of a FLOAT gave a GROUP BY five groups DuckDB does not have. ``sqrt``
  and the four operations are IEEE's on both, bit for bit.
* A strict cast does not raise on overflow: ``ti + 1`` of a TINYINT 127, computed wide and cast
  back (``polars_arithmetic``), answered where DuckDB raises; so too a checked decimal product.
* Two queries collected from two threads at once crashed the process (a segmentation fault in
  the streaming executor), or failed in its task group.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from dau_scheduler.arms.polars_marks import OVERFLOW_CHECK, UNBOUNDED
from dau_scheduler.errors import SqlError
from dau_scheduler.lazy import LazyModule

if TYPE_CHECKING:
    import polars as pl
else:
    pl = LazyModule("polars")

#: cudf-polars' executors: ``"in-memory"`` runs a query's plan on whole frames on one GPU;
#: ``"streaming"`` (its default) cuts them into partitions run by an actor network, for data
#: larger than the GPU. A partial's slice fits (the placement layer sizes it), so the arm uses
#: the in-memory one; ``bench-queries/gpu_executors.py`` times the two.
EXECUTORS = ("in-memory", "streaming")
#: Python functions of the GPU engine that are not correctly rounded there (see above).
INEXACT_MATH = (exp.Ln, exp.Exp, exp.Pow, exp.Log)

_ONE_AT_A_TIME = threading.Lock()
#: How the cudf arm's stand-in says cudf-polars' translator refused a plan (``arms.cudf``).
UNTRANSLATED = "cudf-polars cannot translate"


def gpu_engine(executor: str = "in-memory") -> Any:
    """The Polars GPU engine, imported only here; a missing GPU stack is a clear error."""
    if executor not in EXECUTORS:
        raise SqlError(f"unknown cudf-polars executor {executor!r}; expected one of {EXECUTORS}")
    try:
        import cudf_polars  # noqa: F401
    except ImportError as exc:
        raise SqlError(
            "device 'cudf' needs cudf-polars and a CUDA GPU: pip install -e '.[gpu]'"
        ) from exc
    return pl.GPUEngine(raise_on_fail=True, executor=executor)


def collect(frame: pl.LazyFrame, engine: Any) -> pl.DataFrame:
    """``frame`` collected on ``engine``: on the GPU engine one collect at a time in this
    process (queries of several threads crashed it; the host arm still runs beside it)."""
    if isinstance(engine, str):
        return frame.collect(engine=engine)  # type: ignore[call-overload,no-any-return]
    with _ONE_AT_A_TIME:
        return frame.collect(engine=engine)


def refuse_inexact_math(tree: exp.Expr) -> None:
    """Refuse a function the GPU computes otherwise than DuckDB (:data:`INEXACT_MATH`): an ulp
    off is another group, another side of a comparison, another rounding."""
    for node in tree.find_all(*INEXACT_MATH):
        raise SqlError(
            f"{node.sql('duckdb')}: the GPU engine's {node.key} differs from DuckDB's in the "
            "last bit (GPU kit, 2026-12-04)"
        )


def refuse_overflow_checks(tree: exp.Expr) -> None:
    """Refuse arithmetic that may overflow where the GPU engine would not say so: what DuckDB
    checks (a cast the translation marked :data:`OVERFLOW_CHECK`; the GPU engine's strict cast
    does not raise, so an overflow would answer a number where DuckDB raises), and a decimal
    product the data does not bound within the arm's digits (:data:`UNBOUNDED`; libcudf's
    decimals wrap around where Polars raises). A product the data bounds is not checked
    (``polars_decimals.bound``): TPC-H's ``l_extendedprice * (1 - l_discount)``."""
    for node in tree.find_all(exp.Cast, exp.Mul):
        if node.meta.get(OVERFLOW_CHECK) or node.meta.get(UNBOUNDED):
            operand = node.this if isinstance(node, exp.Cast) else node
            raise SqlError(
                f"{operand.sql('duckdb')}: it may overflow, and the GPU engine does not raise "
                "where DuckDB does (GPU kit, 2026-12-04)"
            )


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


__all__ = [
    "EXECUTORS",
    "UNTRANSLATED",
    "collect",
    "gpu_available",
    "gpu_engine",
    "refuse_inexact_math",
    "refuse_overflow_checks",
]
