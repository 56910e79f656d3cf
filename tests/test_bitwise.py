"""The bitwise folds (``bit_and``, ``bit_or``, ``bit_xor``): a fold of the arms' folds is the
fold of every value, on every path that folds partials (resident, lazy, chunks refolded)."""

from __future__ import annotations

import duckdb
import pytest

from moment_checks import OPTIONS, check_splits

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

QUERIES = [
    "SELECT g, bit_and(i) AS a, bit_or(i) AS o, bit_xor(i) AS x FROM t GROUP BY g ORDER BY g",
    "SELECT bit_and(b), bit_or(b), bit_xor(b), bit_xor(u), bit_or(s) FROM t",
    "SELECT g, bit_xor(i) FILTER (WHERE i % 3 = 0), bit_and(s ORDER BY i DESC) FROM t GROUP BY g "
    "ORDER BY g",
    "SELECT bit_xor(i), bit_or(i) FROM t WHERE i IS NULL",  # all NULL: NULL
    "SELECT bit_and(i) FROM t WHERE g < 0",  # no rows: NULL
]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT r % 7 AS g, "
        "CASE WHEN r % 13 = 0 THEN NULL ELSE (r * 7919) % 65521 END AS i, "
        "(r * 2654435761)::BIGINT - 2147483648 AS b, (r * 40503)::UBIGINT AS u, "
        "(r % 200 - 100)::TINYINT AS s FROM range(5000) x(r)"
    )
    return con


@OPTIONS
def test_bitwise_folds_split_equal_duckdb(
    con: duckdb.DuckDBPyConnection, options: dict[str, object]
) -> None:
    check_splits(con, "duckdb", options, QUERIES)


def test_the_polars_arm_refuses_them_by_name(con: duckdb.DuckDBPyConnection) -> None:
    """Polars' translation has no bitwise aggregate: the query is answered unsplit, named."""
    check_splits(con, "polars", {}, QUERIES[:1], device_may_refuse=True)
    from dau_scheduler import Session

    with Session(con, device="polars") as session:
        result = session.sql(QUERIES[0], device_share=0.5)
    assert result.refusal is not None and "BIT_AND" in result.refusal


def test_a_device_given_no_rows_is_not_asked(con: duckdb.DuckDBPyConnection) -> None:
    """The posture decides before the device is asked whether it could run the partial: the
    Polars arm (which refuses bitwise folds) is asked only where it would get rows."""
    from dau_scheduler import Session

    sql = "SELECT g, bit_and(i) FROM t GROUP BY g ORDER BY g"
    expected = con.sql(sql).to_arrow_table()
    with Session(con, device="polars") as session:
        alone = session.sql(sql, posture="cpu")
        assert alone.refusal is None and alone.split is not None
        assert alone.split.device_share == 0 and alone.table.equals(expected)
        assert not session.refusals._device  # never asked
        split = session.sql(sql, device_share=0.5)
        assert split.refusal is not None and "BIT_AND" in split.refusal.upper()
        assert split.table.equals(expected)
