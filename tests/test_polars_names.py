"""Names Polars' SQL reads otherwise than DuckDB, refused on the Polars arm before it runs
(``polars_forms.refuse_shadowing_aliases``; sixty-third session, ``probes/rereads.py``): a
derived table a rewrite writes under a name the query also reads as a table, and a source read
under the name of another table the query reads. Either way the answer is DuckDB's."""

from __future__ import annotations

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT i, i % 11 AS k, (i % 7 - 3)::INTEGER AS n FROM range(3000) r(i)"
    )
    con.execute(
        "CREATE TABLE u AS SELECT i AS j, i % 13 AS k, (i % 5 - 2)::INTEGER AS n, "
        "['a','b','z',NULL][i % 4 + 1] AS s FROM range(60) r(i)"
    )
    con.execute(
        "CREATE TABLE v AS SELECT i AS j, i % 4 AS n, ['a','z',NULL][i % 3 + 1] AS s, "
        "i % 6 AS k FROM range(9) r(i)"
    )
    return con


#: (query, what the Polars arm's refusal says). The first was wrong on main (7,173 for 5,329:
#: the correlation rewrite read ``u AS v`` as a derived table ``v``, which Polars read for the
#: scalar subquery's table ``v``); the second failed on the arm as it ran and the host ran it
#: again (no column ``s`` in the frame of ``v``).
REFUSED = [
    (
        "SELECT count(*) FROM t JOIN u AS v ON t.n = v.n "
        "WHERE v.k IN (SELECT w.k FROM v AS w) AND v.n >= (SELECT min(n) FROM v)",
        "under one name, v",
    ),
    (
        "SELECT count(*), sum(t.i), count(v.s) FROM t, u AS v WHERE t.k = v.k AND v.s = 'z' "
        "AND v.n >= (SELECT min(w.n) FROM v w WHERE w.k = v.k)",
        "under one name, v",
    ),
    (  # split on u: the placeholder read as u beside v read as u (Polars read u.j in v's frame)
        "SELECT x2.n AS g, count(*) FROM t JOIN v AS u ON t.n = u.n "
        "JOIN (SELECT * FROM u WHERE u.n = 1 OR u.s = 'a') AS x2 ON t.n = x2.n "
        "WHERE EXISTS (SELECT 1 FROM v AS w WHERE w.k = x2.k) GROUP BY g",
        "under one name, u",
    ),
]


@pytest.mark.parametrize(("sql", "why"), REFUSED)
def test_a_name_polars_reads_otherwise_is_refused_before_the_arm_runs(
    con: duckdb.DuckDBPyConnection, sql: str, why: str
) -> None:
    with Session(con, device="polars") as session:
        refusal = session.refusals.device(session.compile(sql))
        assert refusal is not None and why in refusal, refusal
        result = session.sql(sql, device_share=0.5)
        assert result.fallback is None, result.fallback
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None


@pytest.mark.parametrize(
    "sql",
    [
        # the split table read again under its own name, and aliases no table holds
        "SELECT count(*) FROM t WHERE t.k IN (SELECT k FROM t WHERE n > 1)",
        "SELECT count(*) FROM t JOIN u AS x ON t.k = x.k WHERE x.n >= (SELECT min(n) FROM v)",
        "SELECT count(*) FROM t AS a JOIN t AS b ON a.i = b.i + 1 WHERE a.n < b.n",
    ],
)
def test_names_polars_reads_as_duckdb_does_still_split(
    con: duckdb.DuckDBPyConnection, sql: str
) -> None:
    with Session(con, device="polars") as session:
        result = session.sql(sql, device_share=0.5)
        assert result.refusal is None and result.execution is not None, result.refusal
        assert result.plan.split_table == "t"
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
