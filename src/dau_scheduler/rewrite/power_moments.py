"""The power-sum aggregates: ``skewness``, ``kurtosis`` and ``kurtosis_pop``.

DuckDB keeps each as plain sums of the argument's powers (``n``, ``Σx``, ``Σx²``, ``Σx³``,
``Σx⁴``: ``SkewState``, ``KurtosisState``), combines its threads' states by adding them, and
finalizes from the sums. The split does the same: each arm sums the powers of its rows (as
DOUBLE products, each within an ulp of DuckDB's ``pow(x, k)``), the final query adds the arms'
sums and finalizes with DuckDB's formulas, in DuckDB's order of operations.

The sums are added in another order than DuckDB's, so they differ in their last bits; the
formulas subtract them, so that difference grows as the moments cancel. The final query
estimates each statistic's relative error (:func:`_estimate`: epsilon times ``sqrt(n)`` times
the condition numbers of the central sum, with the magnitudes ``Σ|x|`` and ``Σ|x|³`` the arms
also sum, of the variance and of a kurtosis's last ``- 3``) and raises
:data:`~dau_scheduler.rewrite.moments.ILL_CONDITIONED` above ``_TOLERANCE``: the Session
answers such a query unsplit. So it does where DuckDB's versions differ (a variance of rounding
noise: NULL in 2.0, NaN or NULL by a threshold elsewhere) and where a value is not finite
(DuckDB raises "out of range").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp

from dau_scheduler.rewrite.merge_step import MergeStep, argument, with_filter
from dau_scheduler.rewrite.moments import CONDITION_LIMIT, ILL_CONDITIONED, fill_template

#: A double's machine epsilon.
_EPS = 2.220446049250313e-16


def _power_partials(highest: int) -> Callable[[exp.Expr], list[exp.Expr]]:
    """Each arm's count of the argument, the sums of its powers 1 to ``highest`` and of the
    magnitudes of its odd powers (1 and 3), as DOUBLE."""

    def partials(call: exp.Expr) -> list[exp.Expr]:
        x = exp.Cast(this=argument(call).copy(), to=exp.DataType.build("DOUBLE"))

        def power(k: int) -> exp.Expr:
            # Products, not pow(): each at most an ulp from DuckDB's pow(x, k) (within the
            # rounding the guard allows the sums): the split of TPC-H SF 1 kurtosis over 4 groups
            # took 1.26x DuckDB's time with them, 2.56x with pow().
            product: exp.Expr = x.copy()
            for _ in range(k - 1):
                product = exp.Mul(this=product, expression=x.copy())
            return exp.Paren(this=product) if k > 1 else product

        sums = [exp.Sum(this=power(k)) for k in range(1, highest + 1)]
        magnitudes = [exp.Sum(this=exp.Abs(this=power(k))) for k in (1, 3)]
        return [
            with_filter(a, call)
            for a in [exp.Count(this=argument(call).copy()), *sums, *magnitudes]
        ]

    return partials


#: DuckDB's finalizers over the summed state (``skew.cpp``, ``kurtosis.cpp``), with ``__n`` the
#: count as DOUBLE and ``__s1`` ... ``__s4`` the sums, in DuckDB's order of operations.
_T = "(1 / __n)"
_RAW_M2 = f"(__s2 - __s1 * __s1 * {_T})"
_M2 = f"({_T} * {_RAW_M2})"
_M4 = (
    f"({_T} * (__s4 - 4 * __s3 * __s1 * {_T} + 6 * __s2 * __s1 * __s1 * {_T} * {_T} - 3 * "
    f"pow(__s1, 4) * pow({_T}, 3)))"
)
_FINISH = {
    "skewness": (
        f"sqrt(__n * (__n - 1)) / (__n - 2) * {_T} * (__s3 - 3 * __s2 * __s1 * {_T} + 2 * "
        f"pow(__s1, 3) * {_T} * {_T}) / sqrt(pow({_M2}, 3))"
    ),
    "kurtosis": (
        f"(__n - 1) * ((__n + 1) * {_M4} / ({_M2} * {_M2}) - 3 * (__n - 1)) / "
        "((__n - 2) * (__n - 3))"
    ),
    "kurtosis_pop": f"{_M4} / ({_M2} * {_M2}) - 3",
}
#: The fewest values a statistic is not NULL over (DuckDB: skewness 3, kurtosis 4).
_LEAST = {"skewness": 3, "kurtosis": 4, "kurtosis_pop": 2}

#: A sum's error is about epsilon times the magnitudes it adds. Of the central sums each formula
#: computes (``n`` times the third or fourth central moment), the magnitudes of the terms it
#: subtracts, and the value they leave: their ratio is its condition number.
_CENTRAL = {
    "skewness": (
        "(__a3 + 3 * __s2 * __a1 / __n + 2 * pow(__a1, 3) / (__n * __n))",
        "abs(__s3 - 3 * __s2 * __s1 / __n + 2 * pow(__s1, 3) / (__n * __n))",
    ),
    "kurtosis": (
        "(__s4 + 4 * __a3 * __a1 / __n + 6 * __s2 * __a1 * __a1 / (__n * __n) + 3 * "
        "pow(__a1, 4) / pow(__n, 3))",
        "abs(__s4 - 4 * __s3 * __s1 / __n + 6 * __s2 * __s1 * __s1 / (__n * __n) - 3 * "
        "pow(__s1, 4) / pow(__n, 3))",
    ),
}
_CENTRAL["kurtosis_pop"] = _CENTRAL["kurtosis"]


#: Of a kurtosis, the positive term the excess is left of once 3 is taken away, and that excess:
#: an excess near 0 cancels the term (``m4 / m2² - 3``), the last subtraction.
_EXCESS = {
    "kurtosis": (f"(__n + 1) * {_M4} / ({_M2} * {_M2})", "3 * (__n - 1)"),
    "kurtosis_pop": (f"{_M4} / ({_M2} * {_M2})", "3"),
}
#: The relative error the final query allows its estimate: a tenth of ``compare.FLOAT_REL``.
_TOLERANCE = 1e-10


def _estimate(kind: str) -> str:
    """The statistic's relative error, estimated: epsilon times ``sqrt(n)`` (the growth of a
    sum's rounding over ``n`` values in one order against another, as the arms and DuckDB add
    them) times the condition numbers of the central sum (its terms over its value), of the
    variance (the sum of squares over it, raised to the power the formula divides by) and, of
    a kurtosis, of the last subtraction. Measured: TPC-H SF 1 `lineitem`'s kurtosis of one
    part's ``l_extendedprice`` near -1e-4 differed by 1.3e-9 (its condition ~4e6); a kurtosis
    near 0 over 60,000 rows by 3e-10 absolute."""
    terms, value = _CENTRAL[kind]
    power = "1.5" if kind == "skewness" else "2"
    conditions = f"({terms} / {value} + {power} * __s2 / {_RAW_M2} + 2)"
    if kind in _EXCESS:
        term, three = _EXCESS[kind]
        conditions = f"{conditions} * abs({term}) / abs({term} - {three})"
    return f"{_EPS!r} * sqrt(__n) * {conditions}"


def _ill(kind: str) -> str:
    """Where the final query's ``kind`` is ill-conditioned or not finite, over the summed
    partials (the module's text)."""
    _, value = _CENTRAL[kind]
    limit = f"{CONDITION_LIMIT:.0e}"
    return " OR ".join(
        [
            # a value not finite: DuckDB's sums overflow or hold NaN, and it raises out of range
            "NOT isfinite(__s1 + __s2 + __s3 + __s4 + __a1 + __a3)",
            # a variance of rounding noise, or none: NULL, NaN or a number by DuckDB's version
            f"{_RAW_M2} * {limit} <= __s2 OR {_RAW_M2} <= {limit} * {_EPS!r} * greatest(1, __s2)",
            # a central sum or an excess of exactly 0 (the estimate below divides by them)
            f"{value} = 0",
            *([f"{_EXCESS[kind][0]} = {_EXCESS[kind][1]}"] if kind in _EXCESS else []),
            f"NOT isfinite({_estimate(kind)}) OR {_estimate(kind)} > {_TOLERANCE!r}",
            f"NOT isfinite({_FINISH[kind]})",
        ]
    )


def _template(kind: str) -> str:
    """The final query's value of ``kind`` over the summed partials, raising where it is
    ill-conditioned."""
    return (
        f"CASE WHEN __n IS NULL OR __n < {_LEAST[kind]} THEN NULL "
        f"WHEN {_ill(kind)} THEN error('{ILL_CONDITIONED}') ELSE {_FINISH[kind]} END"
    )


def _raises(kind: str) -> str:
    """Whether :func:`_template` raises for the group: the guard a HAVING checks."""
    return (
        f"CASE WHEN __n IS NULL OR __n < {_LEAST[kind]} THEN FALSE "
        f"WHEN {_ill(kind)} THEN TRUE ELSE FALSE END"
    )


def _names(cols: Sequence[exp.Expr]) -> dict[str, exp.Expr]:
    """The template's names over the partial columns: the count, the sums of powers 1 to 3 (or
    4), then of |x| and |x|^3, each summed over the arms' rows."""
    sums = [exp.Sum(this=c.copy()) for c in cols[1:]]
    highest = len(sums) - 2
    names: dict[str, exp.Expr] = {
        "__n": exp.Cast(this=exp.Sum(this=cols[0].copy()), to=exp.DataType.build("DOUBLE")),
        "__a1": sums[highest],
        "__a3": sums[highest + 1],
    }
    for k in range(1, 5):
        names[f"__s{k}"] = sums[k - 1] if k <= highest else exp.Literal.number(0)
    return names


def _filled(template: str) -> Callable[[Sequence[exp.Expr]], exp.Expr]:
    return lambda cols: fill_template(template, _names(cols))


def _refold(cols: Sequence[exp.Expr]) -> list[exp.Expr]:
    # Back to the partial columns: each is a sum.
    return [exp.Sum(this=c.copy()) for c in cols]


POWER_MOMENT_STEPS: dict[str, MergeStep] = {
    kind: MergeStep(
        _power_partials(3 if kind == "skewness" else 4),
        _filled(_template(kind)),
        None,
        None,
        _refold,
        raises=_filled(_raises(kind)),
    )
    for kind in _FINISH
}

__all__ = ["POWER_MOMENT_STEPS"]
