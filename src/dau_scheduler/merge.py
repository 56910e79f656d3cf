"""Merge rules: what one query's partials are, and how two arms' partials fold into the answer.

The vocabulary of aggregate kinds is DuckDB's lower-case function names (``sum``, ``count``,
``count_star``, ``avg``, ...); a DISTINCT aggregate is ``<name>_distinct``. Everything not proven
mergeable is refused (default deny), and every refusal says why.

The record-level merges below are the reference semantics: they fold Python records and serve arms
that do not speak SQL. The SQL front end folds Arrow partials in DuckDB by the same laws.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dau_scheduler.errors import FoldError, SplitError

#: Kinds whose partials add: the merged value is the sum of the arms' values (SUM of NULLs is NULL).
ADDITIVE: frozenset[str] = frozenset({"sum", "count", "count_star"})

#: Kinds whose merged value is the same statistic over the arms' values (an extremum or a truth).
BOUNDARY_STATS: frozenset[str] = frozenset({"min", "max", "bool_and", "bool_or"})

#: Kinds carried as an additive pair (sum, count) and divided only once everything is merged.
DEFERRED_MEAN: frozenset[str] = frozenset({"avg", "mean"})

_ORDER_SENSITIVE = "depends on the order rows arrive in, which a split does not preserve"
_HOLISTIC = "needs every value at once; no fixed-size partial of a row range determines it"
_TIES_BY_ARRIVAL = "ties between arms would be broken by arrival order, which a split does not keep"

#: Aggregate kinds refused by name, each with the reason it cannot be reassembled from partials.
AGGREGATE_REFUSALS: dict[str, str] = {
    "median": _HOLISTIC,
    "quantile": _HOLISTIC,
    "quantile_cont": _HOLISTIC,
    "quantile_disc": _HOLISTIC,
    "mode": _HOLISTIC,
    "mad": _HOLISTIC,
    "entropy": _HOLISTIC,
    "histogram": "its buckets are not re-derivable from two arms' buckets without the values",
    "approx_count_distinct": "an approximate sketch; two arms' estimates do not add",
    "approx_quantile": _HOLISTIC,
    "reservoir_quantile": _HOLISTIC,
    "string_agg": _ORDER_SENSITIVE,
    "group_concat": _ORDER_SENSITIVE,
    "listagg": _ORDER_SENSITIVE,
    "list": _ORDER_SENSITIVE,
    "array_agg": _ORDER_SENSITIVE,
    "first": _ORDER_SENSITIVE,
    "last": _ORDER_SENSITIVE,
    "any_value": _ORDER_SENSITIVE,
    "arbitrary": _ORDER_SENSITIVE,
    "arg_min": _TIES_BY_ARRIVAL,
    "arg_max": _TIES_BY_ARRIVAL,
    "product": "a product of partial products can overflow or round differently from one product",
    "count_distinct": "a value seen by both arms would be counted twice",
    "sum_distinct": "a value seen by both arms would be added twice",
    "avg_distinct": "a value seen by both arms would be weighted twice",
}

#: Kinds whose value keeps or picks rows in the order they arrive (arg_min and arg_max among
#: ties); ``rewrite.arrival`` refuses them anywhere in a query without an ORDER BY of their own.
BY_ARRIVAL: frozenset[str] = frozenset(
    kind for kind, why in AGGREGATE_REFUSALS.items() if why in (_ORDER_SENSITIVE, _TIES_BY_ARRIVAL)
)

_DISTINCT_REASON = "a DISTINCT aggregate cannot tell a value both arms saw from two values"
_UNKNOWN_REASON = "not proven mergeable; unknown aggregates are refused by default"


def refusal_reason(kind: str) -> str:
    """Why ``kind`` cannot be merged from partials (for kinds a rule does not accept)."""
    if kind in AGGREGATE_REFUSALS:
        return AGGREGATE_REFUSALS[kind]
    if kind.endswith("_distinct"):
        return _DISTINCT_REASON
    return _UNKNOWN_REASON


@dataclass(frozen=True)
class MergeRule:
    """What one query's partials are, and whether they can be put together.

    ``combine`` receives the partials in arm order (the device arm's leading rows first).
    ``mergeable`` is the set of aggregate kinds this shape can combine; anything else is refused.
    ``refusal`` set means the shape cannot be split at all. ``failed`` recognises a partial from an
    arm that invalidated its own work: such a partial is returned as the result, so a failure can
    never be folded into a plausible short answer.
    """

    terminal: str
    combine: Callable[[Sequence[Any]], Any]
    mergeable: frozenset[str] = frozenset()
    failed: Callable[[Any], bool] | None = None
    refusal: str | None = None

    def merge(self, partials: Sequence[Any]) -> Any:
        """The merged answer for these partials (in arm order)."""
        if self.refusal is not None:
            raise SplitError(f"{self.terminal} cannot be split: {self.refusal}")
        partials = list(partials)
        if self.failed is not None:
            for partial in partials:
                if self.failed(partial):
                    return partial
        return self.combine(partials)


def check_split(rule: MergeRule, aggregates: Iterable[tuple[str, str]] = ()) -> None:
    """Refuse, before anything runs, a query whose result cannot be reassembled.

    ``aggregates`` are ``(output name, aggregate kind)`` pairs; the error names the output so the
    caller knows what to change, and the kind with the reason it is refused.
    """
    if rule.refusal is not None:
        raise SplitError(f"{rule.terminal} cannot be split: {rule.refusal}")
    for output, kind in aggregates:
        if kind not in rule.mergeable:
            raise SplitError(
                f"output {output!r} uses aggregate {kind!r}, which {rule.terminal} cannot merge: "
                f"{refusal_reason(kind)}"
            )


def _null_last(value: Any) -> tuple[bool, Any]:
    """Sort key that orders NULL (None) after every value, as SQL's default ascending order does."""
    return (value is None, value)


def merge_keyed_groups(
    partials: Sequence[Sequence[Any]],
    *,
    key: Callable[[Any], Any],
    fold: Callable[[Any, Any], Any],
) -> list[Any]:
    """Merge per-key records that carry no ordering, looking every key up across the arms.

    A hash-aggregating engine can meet a key anywhere in its rows, so any key may appear in both
    arms. ``fold(earlier, later)`` combines two records of one key, the earlier arm's first. The
    result is key-ascending with a NULL (None) key last. Empty arms contribute nothing; all arms
    empty gives an empty list.
    """
    merged: dict[Any, Any] = {}
    for records in partials:
        for record in records:
            k = key(record)
            merged[k] = fold(merged[k], record) if k in merged else record
    return [merged[k] for k in sorted(merged, key=_null_last)]


def merge_ordered_groups(
    partials: Sequence[Sequence[Any]],
    *,
    key: Callable[[Any], Any],
    fold: Callable[[Any, Any], Any],
) -> list[Any]:
    """Concatenate per-group records, folding only the group that straddles an arm boundary.

    Valid only for rows sorted on the group key: then each arm's records are strictly ascending
    and the last group of one arm is the only one the next arm can share. The precondition is
    checked, and a violation raises :class:`SplitError` rather than collapsing records no run
    produced. Empty arms are skipped; all arms empty gives an empty list.
    """
    out: list[Any] = []
    for arm, records in enumerate(partials):
        previous: Any = None
        for position, record in enumerate(records):
            k = _null_last(key(record))
            if position and not previous < k:
                raise SplitError(
                    f"arm {arm}'s records are not strictly ascending by key at position "
                    f"{position}: "
                    "ordered-group merging needs rows sorted on the group key"
                )
            previous = k
        if not records:
            continue
        first = _null_last(key(records[0]))
        if out:
            last = _null_last(key(out[-1]))
            if first < last:
                raise SplitError(
                    f"arm {arm} starts below the previous arm's last key: the arms' rows are not "
                    "sorted on the group key across the boundary"
                )
            if first == last:
                out[-1] = fold(out[-1], records[0])
                out.extend(records[1:])
                continue
        out.extend(records)
    return out


def _stable_sorted(
    partials: Sequence[Sequence[Any]], key: Callable[[Any], Any], descending: bool
) -> list[Any]:
    # Python's sort is stable even with reverse=True, so records with equal keys keep arm order.
    rows = [record for records in partials for record in records]
    return sorted(rows, key=lambda record: _null_last(key(record)), reverse=descending)


def merge_sorted_runs(
    partials: Sequence[Sequence[Any]],
    *,
    key: Callable[[Any], Any],
    descending: bool = False,
) -> list[Any]:
    """Merge the arms' sorted runs into one sorted run; equal keys keep the earlier arm first.

    Empty arms contribute nothing. A NULL (None) key sorts after every value when ascending.
    """
    return _stable_sorted(partials, key, descending)


def merge_top_k(
    partials: Sequence[Sequence[Any]],
    *,
    limit: int,
    key: Callable[[Any], Any],
    descending: bool = True,
) -> list[Any]:
    """Re-rank the arms' top-k lists into the whole table's top k.

    A row in the whole table's top k ranks at least as high within its own arm, so the arms' lists
    are the complete candidate set. The re-rank is stable with arms in row order, so earliest
    arrival still breaks ties. Empty arms contribute nothing.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise SplitError(f"top-k limit must be a non-negative int, got {limit!r}")
    return _stable_sorted(partials, key, descending)[:limit]


#: The decimal context partial totals are added in. Python's default keeps 28 significant digits
#: and rounds past them, while a DECIMAL(38, s) total (DuckDB's SUM of decimals) has up to 38 and
#: gains at most 20 more over 2**64 partials: 80 digits add them exactly.
EXACT_DECIMAL = decimal.Context(prec=80)


def merge_totals(
    partials: Sequence[dict[str, Any]],
    names: Sequence[str],
    *,
    finalize: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """Add the named aggregates across arms, then re-derive what is computed from them.

    Decimals add exactly (:data:`EXACT_DECIMAL`). A value of None is SQL NULL: a total over
    only NULLs (or no arms) is None, as SUM is. Outputs that are expressions over the totals
    (ratios, shares, rates) must be recomputed by ``finalize`` from the merged totals; adding
    two arms' ratios gives a number that is a ratio of nothing.
    """
    totals: dict[str, Any] = {}
    with decimal.localcontext(EXACT_DECIMAL):
        for name in names:
            total: Any = None
            for arm, partial in enumerate(partials):
                if name not in partial:
                    raise SplitError(f"arm {arm}'s partial has no total named {name!r}")
                value = partial[name]
                if value is not None:
                    total = value if total is None else total + value
            totals[name] = total
    return finalize(totals) if finalize is not None else totals


def fold_error(exc: Exception) -> FoldError:
    """The FoldError for a final query (or a refold) that failed over the arms' partials. The
    unsplit query may not fail where the fold did: DuckDB's AVG of a DECIMAL(38, s) adds in a
    HUGEINT up to 1.7e38 where the partial sums' SUM stops at 1e38 (found by
    ``probes/aggregates.py``). The unsplit query then answers, or raises DuckDB's own error."""
    from dau_scheduler.rewrite.modes import MODE_TIE
    from dau_scheduler.rewrite.moments import CONDITION_LIMIT, ILL_CONDITIONED
    from dau_scheduler.rewrite.overflow import NEAR_MESSAGE, NEAR_OVERFLOW
    from dau_scheduler.rewrite.row_block import TIED_PICK

    if MODE_TIE in str(exc):
        return FoldError(
            "two values tie for a group's largest count in mode(): which of them DuckDB "
            "answers is its own pick, not one a split can reproduce"
        )
    if TIED_PICK in str(exc):
        return FoldError(
            "a DISTINCT ON key's first rows tie on every ORDER BY value and differ in an output: "
            "which of them DuckDB keeps is its own pick, not one a split can reproduce"
        )
    if ILL_CONDITIONED in str(exc):
        return FoldError(
            "the moments of a variance, covariance, skewness or kurtosis are ill-conditioned or "
            "not finite (an "
            f"error estimate above {CONDITION_LIMIT:g} eps): the arms' partials do not fold "
            "within the float tolerance"
        )
    if NEAR_OVERFLOW in str(exc):
        return FoldError(NEAR_MESSAGE)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return FoldError(f"the final query failed over the arms' partials: {first}")


__all__ = [
    "ADDITIVE",
    "AGGREGATE_REFUSALS",
    "BOUNDARY_STATS",
    "DEFERRED_MEAN",
    "EXACT_DECIMAL",
    "MergeRule",
    "check_split",
    "fold_error",
    "merge_keyed_groups",
    "merge_ordered_groups",
    "merge_sorted_runs",
    "merge_top_k",
    "merge_totals",
    "refusal_reason",
]
