"""Compare two answers the way engine test suites do: same names and Arrow types, same rows;
integers, decimals and strings exact, floats within a relative tolerance (inside lists and
structs too), NULL and NaN as themselves."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from dau_scheduler import temporal

#: Relative tolerance for floating-point values (DOUBLE, FLOAT).
FLOAT_REL = 1e-9


def _row_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    def part(v: Any) -> tuple[int, Any]:
        if v is None:
            return (2, 0)
        if isinstance(v, float) and math.isnan(v):
            return (1, 0)
        if isinstance(v, (dict, list, tuple)):  # nested values: a stable order, not SQL's
            return (3, repr(v))
        return (0, v)

    return tuple(part(v) for v in row)


def _same_value(a: Any, b: Any, rel: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return fa == fb or abs(fa - fb) <= rel * max(abs(fa), abs(fb))
    if isinstance(a, dict) and isinstance(b, dict):  # a struct: field by field
        return list(a) == list(b) and all(_same_value(a[k], b[k], rel) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):  # a list, or a map's pairs
        return len(a) == len(b) and all(_same_value(x, y, rel) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _values(column: pa.ChunkedArray) -> list[Any]:
    """Python values of a column; as text where Python cannot hold them (a timestamp outside
    Python's datetime range, or in a time zone pytz does not know, such as ICU's ``ECT``), so
    such values still compare exactly (Arrow writes a zoned timestamp's instant in UTC). A time
    of day is its integer: pyarrow reads DuckDB's TIME '24:00:00' as 00:00:00, and the two
    compared equal."""
    if pa.types.is_time(column.type):
        return list(temporal.integers(column).to_pylist())
    try:
        return list(column.to_pylist())
    except (OverflowError, ValueError, LookupError, pa.ArrowException):
        # Arrow's own formatter, one value at a time: no conversion to Python objects.
        return [column.slice(i, 1).to_string() for i in range(len(column))]


def _equal_in_arrow(got: pa.Table, expected: pa.Table, ordered: bool) -> bool:
    """Whether the two answers hold the same values in Arrow's own equality (the common case,
    without a row per value in Python): unordered ones each sorted by every column first. A
    value equal in Arrow is equal here too; False decides nothing (a NaN is unequal to itself
    there, a float within the tolerance is not equal, nested columns do not sort): the rows are
    then compared one by one."""
    if not ordered and got.num_columns:
        keys = [(name, "ascending") for name in got.schema.names]
        try:
            got = got.take(pc.sort_indices(got, sort_keys=keys))
            expected = expected.take(pc.sort_indices(expected, sort_keys=keys))
        except pa.ArrowException:  # a type Arrow does not sort (lists, structs, maps)
            return False
    return bool(got.equals(expected))


def compare_tables(
    got: pa.Table, expected: pa.Table, *, ordered: bool = True, rel: float = FLOAT_REL
) -> str | None:
    """None when ``got`` matches ``expected``; otherwise what differs first.

    ``ordered=False`` compares rows as multisets (for queries without a top-level ORDER BY).
    """
    if got.schema.names != expected.schema.names:
        return f"column names differ: {got.schema.names} != {expected.schema.names}"
    for field_got, field_exp in zip(got.schema, expected.schema, strict=True):
        if field_got.type != field_exp.type:
            return f"column {field_got.name!r}: type {field_got.type} != {field_exp.type}"
    if got.num_rows != expected.num_rows:
        return f"row count {got.num_rows} != {expected.num_rows}"
    if _equal_in_arrow(got, expected, ordered):
        return None
    rows_got = list(zip(*(_values(c) for c in got.columns), strict=True))
    rows_exp = list(zip(*(_values(c) for c in expected.columns), strict=True))
    if not ordered:
        try:
            rows_got.sort(key=_row_key)
            rows_exp.sort(key=_row_key)
        except TypeError:  # values of kinds Python cannot order together (a column of mixed types)
            rows_got.sort(key=repr)
            rows_exp.sort(key=repr)
    for index, (a, b) in enumerate(zip(rows_got, rows_exp, strict=True)):
        for name, va, vb in zip(got.schema.names, a, b, strict=True):
            if not _same_value(va, vb, rel):
                return f"row {index}, column {name!r}: {va!r} != {vb!r}"
    return None


def differ_only_in_ties(
    got: pa.Table,
    expected: pa.Table,
    got_keys: pa.Table,
    expected_keys: pa.Table,
    *,
    limited: bool = False,
    rel: float = FLOAT_REL,
    offset: bool = False,
) -> bool:
    """Whether two ordered answers differ only in the order of rows their ORDER BY keys tie on.

    ``*_keys`` hold each answer's ORDER BY key values, a row per answer row. The key sequences
    must be the same, and each run of equal keys the same rows as a multiset. Under a LIMIT
    (``limited``) the last run may hold other rows of the same keys: which tied rows reach the
    cut is not defined either; under an OFFSET (``offset``) the first run likewise, as tied rows
    may be the ones skipped.
    """
    if got.num_rows != expected.num_rows or got_keys.num_rows != got.num_rows:
        return False
    if expected_keys.num_rows != expected.num_rows:
        return False
    keys_got = list(zip(*(_values(c) for c in got_keys.columns), strict=True))
    keys_exp = list(zip(*(_values(c) for c in expected_keys.columns), strict=True))
    if not all(_same_value(list(a), list(b), rel) for a, b in zip(keys_got, keys_exp, strict=True)):
        return False
    start = 0
    for end in range(1, len(keys_exp) + 1):
        if end < len(keys_exp) and _same_value(list(keys_exp[end]), list(keys_exp[start]), rel):
            continue
        if not ((limited and end == len(keys_exp)) or (offset and start == 0)):
            run = compare_tables(
                got.slice(start, end - start),
                expected.slice(start, end - start),
                ordered=False,
                rel=rel,
            )
            if run is not None:
                return False
        start = end
    return True


def report_outcomes(
    records: list[dict[str, Any]], heading: str, where: Callable[[dict[str, Any]], str]
) -> int:
    """Print an oracle's tally (``heading``, then each outcome's count) and each wrong or
    crashed record (``where`` names it); the exit status: 1 on any wrong or crashed."""
    tally = Counter(r["outcome"] for r in records)
    print(heading + ", ".join(f"{n} {k}" for k, n in sorted(tally.items())))
    for record in records:
        if record["outcome"] in ("wrong", "crashed"):
            print(f"{record['outcome'].upper()} {where(record)}: {record.get('why')}")
    return 1 if tally["wrong"] or tally["crashed"] else 0


__all__ = ["FLOAT_REL", "compare_tables", "differ_only_in_ties", "report_outcomes"]
