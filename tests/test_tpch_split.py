"""TPC-H SF 0.01: every query at every share on every device equals DuckDB's unsplit answer."""

from __future__ import annotations

import pytest

from dau_scheduler import Session, tpch
from dau_scheduler.compare import compare_tables

QUERIES = tpch.queries()
SHARES = ["0", "one row", "0.25", "0.5", "n-1 rows", "1", "adaptive"]
#: Split at least this many of the 22 queries (both arms get rows) per device.
# Polars: Q17 and Q22 compare rows with an AVG computed in a subquery, which Polars averages
# otherwise than DuckDB in the last bits: the host computes those subqueries (polars_hoist).
MIN_SPLIT = {"duckdb": 22, "polars": 22, "cudf": 18}


def _share(session: Session, sql: str, label: str) -> float | None:
    if label == "adaptive":
        return None
    n = session.row_counts[session.explain(sql).split_table or ""] or 1
    return {"one row": 1 / n, "n-1 rows": (n - 1) / n}.get(label) or float(label)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_share_matches_duckdb(tpch_session: Session, name: str) -> None:
    sql = QUERIES[name]
    expected = tpch_session.host.cursor().sql(sql).to_arrow_table()
    for label in SHARES:
        result = tpch_session.sql(sql, device_share=_share(tpch_session, sql, label))
        diff = compare_tables(result.table, expected)
        assert diff is None, f"{name} at share {label}: {diff}"
        assert result.fallback is None, result.fallback
        if result.refusal is None:
            assert result.execution is not None
            assert (
                result.execution.device_rows + result.execution.host_rows
                == (tpch_session.row_counts[result.plan.split_table or ""])
            )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_enough_queries_actually_split(tpch_session: Session) -> None:
    split, refusals = 0, {}
    for name, sql in QUERIES.items():
        result = tpch_session.sql(sql, device_share=0.5)
        ex = result.execution
        if ex is not None and ex.device_rows > 0 and ex.host_rows > 0:
            split += 1
        else:
            assert result.refusal, f"{name} ran unsplit without saying why"
            refusals[name] = result.refusal
    device = tpch_session.device.name if tpch_session.device else "none"
    assert split >= MIN_SPLIT[device], refusals


def test_refusals_name_the_output_and_the_reason(tpch_dir: object) -> None:
    sql = "select l_returnflag, entropy(l_quantity) as e_qty from lineitem group by l_returnflag"
    with Session(tpch_dir, device="duckdb") as session:
        plan = session.explain(sql, split_table="lineitem")
    assert plan.refusal is not None
    assert "'e_qty'" in plan.refusal and "entropy" in plan.refusal
    assert ("e_qty", "entropy") in plan.aggregates


def test_q16s_count_distinct_splits_on_partsupp(tpch_dir: object) -> None:
    """count(DISTINCT ps_suppkey): each arm groups by the supplier too, the final query counts
    the distinct suppliers of the merged partials."""
    with Session(tpch_dir, device="duckdb") as session:
        plan = session.explain(QUERIES["q16"], split_table="partsupp")
    assert plan.refusal is None
    assert ("supplier_cnt", "count_distinct") in plan.aggregates
    assert "COUNT(DISTINCT" in plan.final_sql
