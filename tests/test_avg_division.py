"""The AVG fold's conversion of an exact sum to a double (rewrite/aggregates.exact_doubles).

The fast fold divided pyarrow's cast of a decimal sum, which is not correctly rounded; DuckDB's
final query divides DuckDB's cast, which is. The same split query then had other last bits in
about one group in a hundred depending on which fold ran. Both are DuckDB's `CAST(sum AS DOUBLE)
/ count` now, which is also DuckDB's own AVG wherever its optimizer shares the sum with a SUM or
COUNT of the same argument (docs/exactness.md, twenty-third session)."""

from __future__ import annotations

import random
from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

from dau_scheduler import Session
from dau_scheduler.rewrite.aggregates import exact_doubles


@pytest.mark.parametrize("scale", [0, 2, 4, 12, 30])
def test_exact_doubles_round_as_duckdb_casts(scale: int) -> None:
    rng = random.Random(scale)
    digits = [rng.randint(-(10**18), 10**18) for _ in range(3000)]
    digits += [rng.randint(-(2**90), 2**90) for _ in range(300)]
    digits += [2**53, 2**53 + 1, -(2**53) - 1, 0]
    values = [None if i % 17 == 0 else Decimal(v).scaleb(-scale) for i, v in enumerate(digits)]
    array = pa.array(values, pa.decimal128(38, scale))
    con = duckdb.connect()
    con.register("cast_me", pa.table({"d": array}))
    expected = [row[0] for row in con.execute("SELECT CAST(d AS DOUBLE) FROM cast_me").fetchall()]
    assert exact_doubles(array).to_pylist() == expected
    # A slice starts at an offset into the buffer; a chunked array is combined.
    assert exact_doubles(array.slice(5, 100)).to_pylist() == expected[5:105]
    assert exact_doubles(pa.chunked_array([array[:7], array[7:20]])).to_pylist() == expected[:20]


def test_exact_doubles_of_integers() -> None:
    values = pa.array([2**53 + 1, 3, None, -(2**62) - 1, -(2**63)], pa.int64())
    assert exact_doubles(values).to_pylist() == [
        float(2**53 + 1),
        3.0,
        None,
        float(-(2**62) - 1),
        -float(2**63),
    ]
    assert exact_doubles(pa.array([1, 2], pa.int32())).type == pa.float64()
    assert exact_doubles(pa.array([None], pa.int64())).to_pylist() == [None]
    with pytest.raises(TypeError, match="not double"):
        exact_doubles(pa.array([1.5]))


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_both_folds_give_an_average_the_same_last_bits(device: str) -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i % 2000 AS g, "
        "CAST((hash(i) % 2000000000000)::BIGINT / 100 AS DECIMAL(18, 2)) - 5000000000 AS d, "
        "(hash(i * 7) % 1000000)::INTEGER AS n FROM range(40000) r(i)"
    )
    sql = "SELECT g, avg(d) AS a, avg(n) AS b FROM t GROUP BY g"
    folded = "SELECT g, CAST(sum(d) AS DOUBLE) / count(d), CAST(sum(n) AS DOUBLE) / count(n) "
    expected = sorted(con.execute(folded + "FROM t GROUP BY g").fetchall())
    with Session(con, device=device) as session:
        for fast in (True, False):
            session.fast_fold = fast
            result = session.sql(sql, device_share=0.5)
            assert result.execution is not None and result.execution.device_rows > 0
            assert sorted(tuple(r.values()) for r in result.table.to_pylist()) == expected
