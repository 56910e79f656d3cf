"""What the partials' types allow a fold to do, read from the bound partial query.

Two rules: a sum's merge (SUM, AVG) is proven for numbers only, and a partial column of
intervals is not folded where the final query compares its values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from sqlglot import exp

from dau_scheduler.rewrite.fold import FoldCall

#: Aggregate kinds whose partials are sums: proven for numeric types only (an AVG over TIMETZ or
#: INTERVAL is not a sum of numbers).
NUMERIC_ONLY = frozenset({"sum", "avg", "mean"})
NUMERIC = re.compile(
    r"^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|"
    r"FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\))$"
)
#: Plain values whose order DuckDB's histogram keys share with its ORDER BY (``histogram``).
PLAIN = re.compile(
    r"^(VARCHAR|BOOLEAN|DATE|TIME|TIMESTAMP(_S|_MS|_NS)?|TIMESTAMP WITH TIME ZONE|UUID)$"
)
#: A partial of integers (an AVG's integer sum and count: ``decisions.KEEPS_TIES``).
INTEGER = re.compile(r"^U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)$")
#: A type whose equal values may be written differently: DuckDB compares INTERVAL '1 day' with
#: '24 hours' (and '1 month' with '30 days') equal, and which spelling a MIN keeps (the last to
#: arrive), or a GROUP BY, DISTINCT or UNION (the first), depends on the rows' order, which the
#: split's plans do not keep (found by ``probes/aggregates.py``: ``max(DISTINCT iv)`` gave
#: '1 month' for '30 days'; a UNION '24 hours' for '1 day').
SPELLED = re.compile(r"\bINTERVAL\b")
#: Where the final query compares a partial's values: it groups, dedupes or aggregates them.
_COMPARES = (exp.Group, exp.Distinct, exp.SetOperation, exp.AggFunc, exp.Window)


def numbers_only(calls: Iterable[FoldCall], types: Mapping[str, str]) -> str | None:
    """Why a sum's merge does not hold for a call's partial type (``types``: partial column ->
    DuckDB type), or a ``mode`` or ``histogram`` key's (rewrite/modes.py), or None."""
    for call in calls:
        key = types.get(call.columns[0], "")
        if call.kind in ("mode", "histogram") and re.match(r"^(FLOAT|DOUBLE)$", key):
            return (
                f"{call.kind} over {key}: -0.0 and 0.0 are one value to it, and which of "
                "them it answers is the first to arrive"
            )
        if call.kind == "histogram" and not (NUMERIC.match(key) or PLAIN.match(key)):
            return f"histogram over {key}: the order of its keys is proven for plain values only"
        if call.kind in NUMERIC_ONLY:
            for column in call.columns:
                type_name = types.get(column, "")
                if not NUMERIC.match(type_name):
                    return f"{call.kind} over {type_name}: its merge is proven for numbers only"
    return None


def spelled_apart(
    columns: Sequence[str], types: Sequence[str], aggregated: bool, final: exp.Expr
) -> str | None:
    """Why a partial column of intervals cannot fold (see ``SPELLED``), or None: an aggregated
    split's partial columns are keys or extremes, and a row split's final query may group,
    dedupe or aggregate what it reads."""
    for column, type_name in zip(columns, types, strict=True):
        if SPELLED.search(type_name) and (aggregated or final.find(*_COMPARES) is not None):
            return (
                f"the partial's column {column} is {type_name}: equal intervals written "
                "differently ('1 day', '24 hours') compare equal, and which one a MIN, GROUP BY "
                "or DISTINCT keeps depends on the order rows arrive in"
            )
    return None


__all__ = ["INTEGER", "NUMERIC", "NUMERIC_ONLY", "SPELLED", "numbers_only", "spelled_apart"]
