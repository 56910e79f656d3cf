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

from dau_scheduler.arms.polars_functions import COMPARISONS, operands_of
from dau_scheduler.arms.polars_marks import NAN_FREE, OVERFLOW_CHECK, UNBOUNDED
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


#: ``meta`` key on a comparison a rewrite wrote whose answer is the same under IEEE's order as
#: under DuckDB's (``polars_floats.round_half_away``: a NaN reaches the value it returns either
#: way), so :func:`refuse_nan_comparisons` lets it through.
NAN_SAFE = "dau_nan_safe"


def _float_constant(node: exp.Expr) -> float | None:
    """The value of a tree of number literals under ``+``, ``-`` and ``*`` computed in doubles
    (how DuckDB computes it once a double is among them; NaN only from an infinity), or None."""
    bare = node.unnest()
    if isinstance(bare, exp.Literal) and not bare.is_string:
        try:
            return float(bare.this)
        except ValueError:
            return None
    if isinstance(bare, exp.Neg):
        inner = _float_constant(bare.this)
        return None if inner is None else -inner
    if isinstance(bare, exp.Cast) and bare.to.is_type(*exp.DataType.NUMERIC_TYPES):
        inner_node = bare.this.unnest()
        if isinstance(inner_node, exp.Literal) and inner_node.is_string:
            try:
                return float(inner_node.this)  # ('nan' is NaN: it may be)
            except ValueError:
                return None
        return _float_constant(inner_node)
    if isinstance(bare, (exp.Add, exp.Sub, exp.Mul)):
        left, right = _float_constant(bare.this), _float_constant(bare.expression)
        if left is None or right is None:
            return None
        if isinstance(bare, exp.Add):
            return left + right
        return left - right if isinstance(bare, exp.Sub) else left * right
    return None


def _may_be_nan(value: exp.Expr) -> bool:
    """Whether ``value``, of a floating-point type, may be NaN: anything but a column the arm
    read holds none (:data:`~dau_scheduler.arms.polars_marks.NAN_FREE`), a number literal, a
    cast of a value of another type than float or text (or of 'inf'), and of these: the sign,
    ``abs``, ``floor``, ``ceil``, a sum or difference with a number literal (an infinity plus a
    number is one), a CASE all of whose values are such (its conditions are checked apart)."""
    bare = value.unnest()
    constant = _float_constant(bare)
    if constant is not None:
        return constant != constant
    if isinstance(bare, exp.Column):
        return not bare.meta.get(NAN_FREE)
    if isinstance(bare, exp.Literal):
        return bare.is_string
    if isinstance(bare, (exp.Neg, exp.Abs, exp.Floor, exp.Ceil)):
        return _may_be_nan(bare.this)
    if isinstance(bare, (exp.Add, exp.Sub)):
        sides = (bare.this.unnest(), bare.expression.unnest())
        number = [s for s in sides if isinstance(s, exp.Literal) and not s.is_string]
        return len(number) != 1 or any(_may_be_nan(s) for s in sides if s is not number[0])
    if isinstance(bare, exp.Case):
        branches = [branch.args.get("true") for branch in bare.args.get("ifs") or []]
        outcomes = [v for v in [*branches, bare.args.get("default")] if v is not None]
        return any(_may_be_nan(v) for v in outcomes if not isinstance(v.unnest(), exp.Null))
    if isinstance(bare, exp.Cast):
        inner = bare.this.unnest()
        if isinstance(inner, exp.Literal) and inner.is_string:
            return inner.name.strip().lower() not in ("inf", "-inf", "infinity", "-infinity")
        kind = inner.type
        if kind is None or kind.is_type(exp.DType.UNKNOWN, *exp.DataType.TEXT_TYPES):
            return True
        return _may_be_nan(inner) if kind.is_type(*exp.DataType.FLOAT_TYPES) else False
    return True


def refuse_nan_comparisons(tree: exp.Expr) -> None:
    """Refuse a comparison of a floating-point value that may be NaN (:func:`_may_be_nan`; the
    types ``checked_arithmetic`` annotated). DuckDB, and Polars' CPU engine, find NaN equal to
    itself and above every number; cudf-polars 26.10 compares floats as IEEE does, where NaN is
    equal to nothing and neither above nor below a number (``NaN > 2``: true in DuckDB, false
    on the GPU; NVIDIA/cudf#18842). ``isnan(x)``, written ``x = NaN``, is one such. Joins and
    GROUP BY keys are libcudf's own, NaN equal to NaN there; what the GPU kit's ``nan`` step
    measures decides what may be let through."""
    for node in tree.find_all(*COMPARISONS, exp.In, exp.Between):
        if node.meta.get(NAN_SAFE):
            continue
        for operand in operands_of(node):
            kind = operand.type
            if (
                kind is not None
                and kind.is_type(*exp.DataType.FLOAT_TYPES)
                and _may_be_nan(operand)
            ):
                raise SqlError(
                    f"{node.sql('duckdb')}: a comparison of a floating-point value that may "
                    "be NaN (the GPU engine compares as IEEE does, NaN > 2 false; DuckDB ranks "
                    "NaN above every number; NVIDIA/cudf#18842)"
                )


def refuse_overflow_checks(tree: exp.Expr) -> None:
    """Refuse arithmetic that may overflow where the GPU engine would not say so: what DuckDB
    checks (a cast the translation marked :data:`OVERFLOW_CHECK`; the GPU engine's strict cast
    does not raise, so an overflow would answer a number where DuckDB raises), and a decimal
    product the data does not bound within the arm's digits (:data:`UNBOUNDED`; libcudf's
    decimals wrap around where Polars raises). A product the data bounds is not checked
    (``polars_decimals.bound``): TPC-H's ``l_extendedprice * (1 - l_discount)``."""
    for node in tree.find_all(exp.Cast, exp.Mul):
        if isinstance(node, exp.TryCast):
            raise SqlError(
                f"{node.sql('duckdb')}: the GPU engine's casts do not check a value's range, "
                "which TRY_CAST answers NULL past (GPU kit, 2026-12-04)"
            )
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
    "NAN_SAFE",
    "UNTRANSLATED",
    "collect",
    "covariances_as_sums",
    "gpu_available",
    "gpu_engine",
    "refuse_inexact_math",
    "refuse_nan_comparisons",
    "refuse_overflow_checks",
]
