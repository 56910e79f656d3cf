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


def covariances_as_sums(node: exp.Expr) -> exp.Expr:
    """A sample covariance (the co-moment partials' ``covar_samp(y, x)``, over pairs both not
    NULL: ``rewrite.moments.pair_argument``) as sums the GPU engine computes in a GROUP BY:
    ``(Σxy - Σx·Σy / n) / (n - 1)``. cudf-polars translates no ``cov`` ("Unary function
    name='corr'"). The sums cancel where the pairs' means are far from 0 against their spread;
    the final query's guard counts that (``rewrite.moments``: ``(1 + kx)(1 + ky)``) and the
    host answers such a fold. One pair (n - 1 = 0) or a constant side: the fold reads it as 0."""
    inner = node.this if isinstance(node, exp.Filter) else node
    if not isinstance(inner, exp.CovarSamp):
        return node
    condition = node.expression if isinstance(node, exp.Filter) else None

    def over_pairs(aggregate: exp.Expr) -> exp.Expr:
        if condition is None:
            return aggregate
        return exp.Filter(this=aggregate, expression=condition.copy())

    y, x = inner.this, inner.expression
    n = exp.Cast(this=over_pairs(exp.Count(this=x.copy())), to=exp.DataType.build("DOUBLE"))
    products = over_pairs(exp.Sum(this=exp.Mul(this=x.copy(), expression=y.copy())))
    sums = exp.Mul(
        this=over_pairs(exp.Sum(this=x.copy())), expression=over_pairs(exp.Sum(this=y.copy()))
    )
    central = exp.Sub(this=products, expression=exp.Div(this=sums, expression=n.copy()))
    less_one = exp.Sub(this=n, expression=exp.Literal.number(1))
    return exp.Div(this=exp.Paren(this=central), expression=exp.Paren(this=less_one))


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
    "covariances_as_sums",
    "gpu_available",
    "gpu_engine",
    "refuse_inexact_math",
    "refuse_overflow_checks",
]
