"""Forms the GPU engine's translator has no translation for, written on the Polars arm (both
engines) as forms it translates that compute the same values.

cudf-polars translates the plan Polars makes of the arm's SQL and refuses what it cannot
translate (found by running its translator on the CPU: ``make gpu-translator``, docs/gpu.md):

- ``agg(x) FILTER (WHERE c)`` is a filter inside a group-by aggregation there ("No support for
  Filter in groupby/rolling": 44 of 150 of ``probes/joined_aggregates.py`` seed 3701). An
  aggregate that skips NULLs (:data:`NULL_SKIPPING`) reads the same values of
  ``CASE WHEN c THEN x END``, NULL where ``c`` is not true: ``agg(CASE WHEN c THEN x END)``,
  ``count(*)`` as ``count(CASE WHEN c THEN 1 END)``, DISTINCT kept.

Others live where the form is made: a text compared with a DATE
(``polars_temporal.date_text_as_dates``), an IN over a subquery under an OR
(``polars_semijoins``).
"""

from __future__ import annotations

from sqlglot import exp

#: Aggregates that skip NULL arguments: over the rows a FILTER keeps or over the CASE that is
#: NULL elsewhere they read the same values.
NULL_SKIPPING = (
    exp.Sum,
    exp.Avg,
    exp.Min,
    exp.Max,
    exp.Count,
    exp.Stddev,
    exp.StddevPop,
    exp.StddevSamp,
    exp.Variance,
    exp.VariancePop,
)


def filters_as_branches(node: exp.Expr) -> exp.Expr:
    """``node`` (a ``transform`` step) with ``agg(x) FILTER (WHERE c)`` of a NULL-skipping
    aggregate of one argument written as ``agg(CASE WHEN c THEN x END)`` (module docstring)."""
    if not isinstance(node, exp.Filter):
        return node
    aggregate, where = node.this, node.expression
    if not (isinstance(aggregate, NULL_SKIPPING) and isinstance(where, exp.Where)):
        return node
    if aggregate.expressions and not isinstance(aggregate, exp.Count):
        return node  # (a second argument: not one value to branch on)
    argument = aggregate.this
    distinct = isinstance(argument, exp.Distinct)
    values = argument.expressions if distinct else [argument]
    if len(values) != 1 or values[0] is None:
        return node
    value = exp.Literal.number(1) if isinstance(values[0], exp.Star) else values[0]
    branch = exp.Case(ifs=[exp.If(this=where.this.copy(), true=value.copy())])
    rewritten = aggregate.copy()
    rewritten.set("this", exp.Distinct(expressions=[branch]) if distinct else branch)
    return rewritten


__all__ = ["NULL_SKIPPING", "filters_as_branches"]
