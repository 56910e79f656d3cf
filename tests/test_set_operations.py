"""A set operation at a query's top level splits one of its sides; the final query casts and names
its outputs in a SELECT around it (tests/slt/set_operations.test holds the query forms)."""

from __future__ import annotations

import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables

RETURNS_BY_FLAG = """
select l_returnflag as flag, sum(l_quantity) as qty from lineitem group by l_returnflag
union all
select 'all', sum(l_quantity) from lineitem
order by qty desc, flag
"""

LATE_PARTS = """
select l_partkey from lineitem where l_receiptdate > l_commitdate
except
select p_partkey from part where p_size < 10
order by 1
limit 20
"""


@pytest.mark.parametrize("sql", [RETURNS_BY_FLAG, LATE_PARTS], ids=["union-all", "except"])
def test_a_top_level_set_operation_splits(tpch_session: Session, sql: str) -> None:
    result = tpch_session.sql(sql, device_share=0.5)
    assert result.refusal is None
    assert result.plan.split_table == "lineitem"
    assert result.plan.final_sql is not None and "__dau_top" in result.plan.final_sql
    expected = tpch_session.host.cursor().sql(sql).to_arrow_table()
    assert compare_tables(result.table, expected, ordered=True) is None


def test_an_order_by_expression_over_a_set_operation_is_refused(tpch_session: Session) -> None:
    sql = "select l_partkey from lineitem union select p_partkey from part order by l_partkey % 7"
    result = tpch_session.sql(sql, device_share=0.5)
    assert result.refusal is not None and "over the top-level set operation" in result.refusal
