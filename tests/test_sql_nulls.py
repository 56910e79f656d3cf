"""NULL and empty matrix: every mergeable aggregate, with one arm empty, all-NULL input, or both
arms empty, grouped and scalar: exactly DuckDB's answer (COUNT 0, the others NULL)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator

import pyarrow as pa
import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables

AGGREGATES = {
    "sum": "sum(x)",
    "count": "count(x)",
    "count_star": "count(*)",
    # Over integers: the Polars arm refuses MIN/MAX over floats (NaN; tests/slt/float_extremes).
    "min": "min(n)",
    "max": "max(n)",
    "avg": "avg(x)",
    "bool_and": "bool_and(b)",
    "bool_or": "bool_or(b)",
    "bit_and": "bit_and(n)",
    "bit_or": "bit_or(n)",
    "bit_xor": "bit_xor(n)",
}
#: Kinds the Polars arm does not compute (its translation has no bitwise aggregate): refused.
POLARS_REFUSES = frozenset({"bit_and", "bit_or", "bit_xor"})
N = 20


def table(case: str) -> pa.Table:
    n = 0 if case == "no rows" else N
    nulls = case == "all NULL"
    return pa.table(
        {
            "seq": pa.array(range(n), pa.int64()),
            "g": pa.array([i % 3 for i in range(n)], pa.int32()),
            "x": pa.array([None if nulls else float(i) for i in range(n)], pa.float64()),
            "n": pa.array([None if nulls else i for i in range(n)], pa.int64()),
            "b": pa.array([None if nulls else i % 2 == 0 for i in range(n)], pa.bool_()),
        }
    )


CASES = {
    # case -> (table kind, filter); the split is always at 0.5 (device takes seq < 10).
    "device arm empty": ("rows", "seq >= 10"),
    "host arm empty": ("rows", "seq < 10"),
    "all NULL": ("all NULL", "true"),
    "both arms empty": ("rows", "seq < 0"),
    "no rows": ("no rows", "true"),
}


@pytest.fixture(scope="module")
def sessions() -> Iterator[Callable[[str, str, bool], Session]]:
    """One Session a table, device and fold, for every query of the matrix over them (440
    Sessions opened and closed one a test were most of its time)."""
    opened: dict[tuple[str, str, bool], Session] = {}

    def get(data: str, device: str, fast_fold: bool) -> Session:
        key = (data, device, fast_fold)
        if key not in opened:
            opened[key] = Session({"t": table(data)}, device=device, fast_fold=fast_fold)
        return opened[key]

    yield get
    for session in opened.values():
        session.close()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("fast_fold", [True, False], ids=["arrow-fold", "sql-fold"])
@pytest.mark.parametrize("device", ["duckdb", "polars"])
@pytest.mark.parametrize("grouped", [False, True], ids=["scalar", "grouped"])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", sorted(AGGREGATES))
def test_null_and_empty(
    sessions: Callable[[str, str, bool], Session],
    kind: str,
    case: str,
    grouped: bool,
    device: str,
    fast_fold: bool,
) -> None:
    data, where = CASES[case]
    select = f"{'g, ' if grouped else ''}{AGGREGATES[kind]} as a"
    sql = f"select {select} from t where {where}{' group by g order by g' if grouped else ''}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        session = sessions(data, device, fast_fold)
        expected = session.host.cursor().sql(sql).to_arrow_table()
        result = session.sql(sql, device_share=0.5)
    # (an empty table gives the device no rows: it is not asked whether it could run them)
    if device == "polars" and kind in POLARS_REFUSES and case != "no rows":
        assert result.refusal is not None and kind.upper() in result.refusal
    else:
        assert result.refusal is None and result.fallback is None
    assert compare_tables(result.table, expected) is None
    values = result.table.column("a").to_pylist()
    if not grouped and case in {"both arms empty", "no rows", "all NULL"}:
        if kind == "count_star":
            assert values == [0 if case != "all NULL" else N]
        else:
            assert values == [0 if kind == "count" else None]
