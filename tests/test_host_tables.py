"""CTEs, derived tables and IN lists the host computes for the Polars arm
(arms/polars_host_tables.py): what is taken and how it is read, what stays with the arm, and
the split answers against DuckDB. tests/slt/host_computed_tables.test runs more forms."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from dau_scheduler import Session
from dau_scheduler.arms.polars import PolarsArm
from dau_scheduler.arms.polars_hoist import HOST_TABLE
from dau_scheduler.arms.polars_host_tables import hoist_tables
from dau_scheduler.compare import compare_tables
from dau_scheduler.planner import DeviceSpec, Resources, encoded_data
from host_checks import splits_through_changes


def _hoisted(sql: str, runs: str = "", declined: str = "") -> tuple[str, list[str], list[str]]:
    """``sql`` (a partial) hoisted where the arm's runs_alone says no unless the query's text
    holds ``runs``, and the host declines a text holding ``declined``; the host queries."""
    asked: list[str] = []

    def runs_alone(query: exp.Query) -> bool:
        return bool(runs) and runs in query.sql()

    def accept(name: str, text: str, names: tuple[str, ...]) -> bool:
        asked.append(text)
        return not (declined and declined in text)

    tree, names = hoist_tables(sqlglot.parse_one(sql, read="duckdb"), runs_alone, accept, "h_")
    return tree.sql(dialect="duckdb"), names, asked


def test_a_derived_table_is_read_from_the_host_under_its_alias() -> None:
    text, names, asked = _hoisted(
        "SELECT t.r, count(*) FROM __dau_split__ AS f JOIN (SELECT d.k AS k, rank() OVER "
        "(ORDER BY d.k) AS r FROM d AS d) AS t ON f.k = t.k GROUP BY t.r"
    )
    (name,) = names
    assert f"JOIN {name} AS t ON" in text
    assert asked[0].endswith('AS __dau_rows("k", "r")')


def test_an_in_list_and_a_cte_with_an_alias_column_list() -> None:
    text, names, asked = _hoisted(
        "WITH c(a, b) AS (SELECT d.k, max(d.y) FROM d AS d GROUP BY d.k) "
        "SELECT count(*) FROM __dau_split__ AS f, c AS c WHERE f.k = c.a AND f.k IN "
        "(SELECT e.k FROM e AS e WHERE e.y > 1)"
    )
    assert len(names) == 2
    assert f'c(a, b) AS (SELECT {names[0]}."a", {names[0]}."b" FROM {names[0]})' in text
    assert f"f.k IN (SELECT {names[1]}.v FROM {names[1]})" in text
    assert asked[0].endswith('AS __dau_rows("a", "b")')


def test_the_split_rows_what_the_arm_runs_and_what_the_host_declines_stay() -> None:
    split_rows = "SELECT count(*) FROM d AS d WHERE d.k IN (SELECT f.k FROM __dau_split__ AS f)"
    assert _hoisted(split_rows)[1] == []
    runs = "SELECT count(*) FROM __dau_split__ AS f WHERE f.k IN (SELECT d.k FROM d AS d)"
    assert _hoisted(runs, runs="FROM d")[1] == []
    assert _hoisted(runs, declined="FROM d")[1] == []


def test_outer_subqueries_first_and_ctes_no_longer_read_are_dropped() -> None:
    text, names, asked = _hoisted(
        "WITH w AS (SELECT a.k AS k FROM d AS a, d AS b WHERE a.k = b.k), v AS (SELECT w.k AS "
        "k FROM w AS w) SELECT count(*) FROM __dau_split__ AS f WHERE f.k IN (SELECT t.k FROM "
        "(SELECT v.k AS k FROM v AS v) AS t)",
        runs="never",
    )
    # Each CTE first (v reads w, written before it, as the host does), then the IN list.
    assert len(names) == 3 and len(asked) == 3
    assert asked[1].startswith("SELECT * FROM (WITH w AS (SELECT a.k")
    assert text.startswith("SELECT COUNT(*) FROM __dau_split__ AS f WHERE f.k IN (SELECT")
    assert "WITH" not in text


def test_a_recursive_cte_and_one_reading_a_later_name() -> None:
    recursive = (
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT r.n + 1 FROM r AS r WHERE r.n < 5) "
        "SELECT count(*) FROM __dau_split__ AS f WHERE f.k IN (SELECT r.n FROM r AS r)"
    )
    text, names, asked = _hoisted(recursive)
    # r itself is not taken (its body reads itself); the IN list is, with r written before it.
    assert len(names) == 1 and "WITH RECURSIVE r AS" in asked[0] and "WITH" not in text
    later = (
        "WITH a AS (SELECT b.k FROM b AS b), b AS (SELECT d.k FROM d AS d) "
        "SELECT count(*) FROM __dau_split__ AS f WHERE f.k IN (SELECT a.k FROM a AS a)"
    )
    text, names, asked = _hoisted(later)
    # a reads a name written after it: a is not taken; b is, then the IN list, with a and b.
    assert len(names) == 2 and asked[0].startswith("SELECT * FROM (SELECT d.k FROM d")
    assert "WITH a AS (SELECT b.k FROM b AS b), b AS" in asked[1]


@pytest.fixture
def connection() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE f AS SELECT i AS id, i % 17 AS k, (i % 11)::DECIMAL(12, 2) / 4 AS x "
        "FROM range(6000) r(i)"
    )
    con.execute(
        "CREATE TABLE d AS SELECT i AS id, i % 19 AS k, (i * 37) % 101 AS y FROM range(400) r(i)"
    )
    yield con
    con.close()


#: TPC-DS Q70's form: the states ranked by a window over whole tables, an IN list.
Q70_FORM = (
    "SELECT f.k, sum(f.x) FROM f WHERE f.k IN (SELECT k FROM (SELECT k, rank() OVER (ORDER BY "
    "sum(y) DESC) AS r FROM d GROUP BY k) AS t WHERE r <= 3) GROUP BY f.k ORDER BY f.k"
)


def test_the_polars_arm_splits_with_the_hosts_rows_and_follows_changed_rows(
    connection: duckdb.DuckDBPyConnection,
) -> None:
    changes = ("UPDATE d SET y = 200 - y WHERE k < 5", "DELETE FROM d WHERE k = 7")
    with Session(connection, device=PolarsArm()) as session:
        splits_through_changes(session, connection, Q70_FORM, changes)
        arm = session.device
        assert isinstance(arm, PolarsArm)
        text = arm.sql_for(session.compile(Q70_FORM))
        assert HOST_TABLE in text and "RANK" not in text.upper()
        # The connection's rows of d are not copied to the arm: only the host reads d.
        assert "d" not in arm.tables_read(session.compile(Q70_FORM))


def test_a_correlated_derived_table_stays_refused(connection: duckdb.DuckDBPyConnection) -> None:
    sql = (
        "SELECT count(*) FROM f, LATERAL (SELECT rank() OVER (ORDER BY d.y) AS r FROM d "
        "WHERE d.k = f.k) AS t WHERE t.r = 1"
    )
    with Session(connection, device=PolarsArm()) as session:
        result = session.sql(sql, device_share=0.5)
        assert result.refusal is not None
        assert compare_tables(result.table, connection.sql(sql).to_arrow_table()) is None


def test_two_polars_arms_over_one_compiled_query_each_read_their_own_host_rows(
    connection: duckdb.DuckDBPyConnection,
) -> None:
    # Each resident handle makes its own Polars arm over the Session's tables; the second
    # read the first one's SQL, whose host tables it did not know, and fell back to the host.
    resources = Resources([DeviceSpec("h", engine="duckdb"), DeviceSpec("p", engine="polars")])
    want = connection.sql(Q70_FORM).to_arrow_table()
    with Session(connection, device="duckdb") as session:
        for _ in range(2):
            handle = encoded_data(session, resources=resources)
            try:
                assert compare_tables(handle.fold(Q70_FORM), want) is None
                assert handle.last_engines == ("duckdb", "polars")
            finally:
                handle.close()
