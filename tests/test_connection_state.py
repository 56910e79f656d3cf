"""A Session over a user's connection answers as that connection does, while the connection
changes under it: macros created later, non-deterministic macros, functions of the query's own
text, and what only the connection sees (variables, temporary tables)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.volatility import NONDETERMINISTIC
from host_checks import same_or_refusal as _same


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i, i % 5 AS k FROM range(1000) r(i)")
    yield con
    con.close()


def test_a_macro_created_after_the_first_query_is_known(con: duckdb.DuckDBPyConnection) -> None:
    with Session(con, device="duckdb") as session:
        assert _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k") is None
        con.execute("CREATE MACRO total(x) AS sum(x)")
        refusal = _same(session, con, "SELECT total(i) FROM t")  # one row, not one per arm
        assert refusal is not None and "total" in refusal


def test_a_macro_replaced_by_an_aggregating_one_is_read_again(
    con: duckdb.DuckDBPyConnection,
) -> None:
    con.execute("CREATE MACRO f(x) AS x + 1")
    with Session(con, device="duckdb") as session:
        assert _same(session, con, "SELECT max(f(i)) FROM t") is None
        con.execute("CREATE OR REPLACE MACRO f(x) AS sum(x)")
        refusal = _same(session, con, "SELECT f(i) FROM t")  # one row, not one per arm
        assert refusal is not None and "'f'" in refusal
        con.execute("CREATE OR REPLACE MACRO f(x) AS x * 2")
        assert _same(session, con, "SELECT max(f(i)) FROM t") is None


def test_a_macro_named_like_a_function_sqlglot_knows_is_refused(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """sqlglot reads ``strip_null_value`` as Snowflake's function and writes a CASE: the user's
    macro never ran (DuckDB's test/sql/binder/test_alias_map_in_subquery.test at share 0.8)."""
    con.execute("CREATE MACRO strip_null_value(x) AS x * 2")
    with Session(con, device="duckdb") as session:
        refusal = _same(session, con, "SELECT max(strip_null_value(i)) FROM t")
        # Refused by the macro check, or before it by the comparison of DuckDB's parse of the
        # query with sqlglot's rendering (max() over a CASE for a call).
        assert refusal is not None
        assert "strip_null_value" in refusal or "SQL front end writes max()" in refusal


@pytest.mark.parametrize(
    ("macro", "sql"),
    [
        # DuckDB calls count_star() for count(*): each arm's partial counted 42, the fold 84
        # (542 on the Polars arm, which counts) for DuckDB's 42.
        ("CREATE MACRO count_star() AS 42", "SELECT k, count(*) FROM t GROUP BY k"),
        # The float-sum guard's isfinite, written by the rewrite, not by the query.
        ("CREATE MACRO isfinite(x) AS false", "SELECT k, sum(i::DOUBLE) FROM t GROUP BY k"),
    ],
)
@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_a_macro_shadowing_duckdbs_own_function_is_refused(
    con: duckdb.DuckDBPyConnection, macro: str, sql: str, device: str
) -> None:
    con.execute(macro)
    with Session(con, device=device) as session:
        refusal = _same(session, con, sql)
    assert refusal is not None and "has the name of DuckDB's own function" in refusal


def test_a_non_deterministic_macro_is_refused(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE MACRO noisy(x) AS x + random()")
    with Session(con, device="duckdb") as session:
        refusal = session.sql("SELECT count(*) FROM t WHERE noisy(i) > 10").refusal
        assert refusal is not None and "noisy" in refusal


def test_alias_is_refused_and_answered_with_the_users_names(
    con: duckdb.DuckDBPyConnection,
) -> None:
    with Session(con, device="duckdb") as session:
        refusal = _same(session, con, "SELECT alias(i + 1) AS n FROM t WHERE i < 3")
        assert refusal is not None and "alias" in refusal


def test_what_only_the_connection_sees(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("SET VARIABLE cut = 500")
    con.execute("CREATE TEMP TABLE mine AS SELECT 7 AS x")
    with Session(con, device="duckdb") as session:
        _same(session, con, "SELECT getvariable('cut') AS v")
        _same(session, con, "SELECT count(*) FROM t WHERE i < getvariable('cut')")
        _same(session, con, "SELECT table_name FROM duckdb_tables() WHERE temporary")


def test_stats_is_refused(con: duckdb.DuckDBPyConnection) -> None:
    """``stats()`` describes what the plan scans; an arm's row range has other statistics
    (DuckDB's struct_stats.test at share 0.8)."""
    with Session(con, device="duckdb") as session:
        # stats() is a VARIANT: cast, so the refusal is the function's own.
        refusal = _same(session, con, "SELECT stats(i)::VARCHAR AS s FROM t WHERE i > 3")
        assert refusal is not None and "stats" in refusal


def test_an_aborted_transaction_is_a_named_error(con: duckdb.DuckDBPyConnection) -> None:
    """After an error inside the user's transaction, DuckDB's own message, as SqlError; after
    ROLLBACK the Session answers again."""
    from dau_scheduler import SqlError

    with Session(con, device="duckdb") as session:
        con.execute("BEGIN")
        with pytest.raises(duckdb.Error):
            con.execute("SELECT * FROM no_such_table")
        with pytest.raises(SqlError, match="aborted"):
            session.sql("SELECT count(*) FROM t")
        con.execute("ROLLBACK")
        assert session.sql("SELECT count(*) FROM t").table.column(0).to_pylist() == [1000]


def test_an_invalidated_database_leaves_the_users_transaction_alone(tmp_path: Any) -> None:
    """The Session's own read of the connection's state read every database's catalog; one
    DuckDB invalidated (a failed CHECKPOINT) raised there and aborted the transaction the user
    held open (DuckDB's attach_invalidation.test). It reads the temporary catalog alone."""
    con = duckdb.connect()
    con.execute("SET wal_autocheckpoint = '1TB'")
    con.execute(f"ATTACH '{tmp_path}/a.db' AS a")
    con.execute("CREATE TABLE a.tbl AS SELECT 1 AS i")
    con.execute("CREATE TABLE t AS SELECT i FROM range(100) r(i)")
    con.execute("CHECKPOINT a")
    con.execute("INSERT INTO a.tbl VALUES (2)")
    con.execute("PRAGMA debug_checkpoint_abort = 'before_header'")
    with pytest.raises(duckdb.Error, match="Checkpoint failed"):
        con.execute("CHECKPOINT a")
    with Session(con, device="duckdb") as session:
        con.execute("SET immediate_transaction_mode = true")
        con.execute("BEGIN")
        assert session.sql("SELECT count(*) FROM t").table.column(0).to_pylist() == [100]
        assert con.sql("SELECT count(*) FROM t").fetchall() == [(100,)]
        con.execute("ROLLBACK")
    con.close()


def test_a_connection_that_logs_its_statements_is_answered_on_it(
    con: duckdb.DuckDBPyConnection, tmp_path: object
) -> None:
    """Under ``enable_logging`` or ``log_query_path`` every statement is logged: the split's
    own would be logged beside the user's, and a query reading the log would count them
    (DuckDB's test/sql/logging: 15 log rows for 3). Answered on the connection, by name."""
    with Session(con, device="duckdb") as session:
        assert _same(session, con, "SELECT k, sum(i) AS s FROM t GROUP BY k") is None
        con.execute("CALL enable_logging()")
        before = con.execute("SELECT count(*) FROM duckdb_logs()").fetchall()[0]
        result = session.sql("SELECT k, sum(i) AS s FROM t GROUP BY k", device_share=0.5)
        after = con.execute("SELECT count(*) FROM duckdb_logs()").fetchall()[0]
        assert result.refusal is not None and "enable_logging" in result.refusal
        assert result.execution is None and result.table.num_rows == 5
        assert before is not None and after is not None
        # The query, the one settings read before it, and this count: nothing of a split.
        assert after[0] - before[0] <= 4, (before, after)
        con.execute("CALL disable_logging()")
        con.execute(f"SET log_query_path = '{tmp_path}/queries.log'")
        refusal = _same(session, con, "SELECT count(*) AS n FROM t")
        assert refusal is not None and "log_query_path" in refusal
        con.execute("RESET log_query_path")
        assert _same(session, con, "SELECT count(*) AS n FROM t") is None


def test_a_memory_limit_too_small_to_plan_in_is_answered_unsplit(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Under a memory_limit of 3 MB without a temp directory, DuckDB answers a query whose
    planning (the function catalog, the binding) runs out of memory (DuckDB's
    test/sql/storage/temp_directory): answered unsplit, never an error."""
    con.execute("SET temp_directory = ''")
    con.execute("SET memory_limit = '3MB'")
    with Session(con, device="duckdb") as session:
        sql = "SELECT current_setting('max_temp_directory_size') AS m"
        result = session.sql(sql, device_share=0.8)
        assert result.execution is None and result.refusal is not None
        assert compare_tables(result.table, con.sql(sql).to_arrow_table()) is None
    con.execute("RESET memory_limit")


def test_a_table_named_like_an_attached_catalog_is_read_by_its_full_name(
    con: duckdb.DuckDBPyConnection, tmp_path: Any
) -> None:
    """An ATTACHed catalog with a default table makes a local table of the same name ambiguous
    when named bare: the Session failed to open (DuckDB's attach_default_table.test)."""
    con.execute(f"ATTACH '{tmp_path}/other.db' AS ddb (default_table 'my_table')")
    con.execute("CREATE TABLE ddb.my_table AS SELECT 1337 AS value")
    con.execute("CREATE TABLE ddb AS SELECT range AS value FROM range(100)")
    with Session(con, device="duckdb") as session:
        for sql in ("SELECT sum(value) AS s FROM memory.main.ddb", "FROM ddb.main.my_table"):
            assert (
                compare_tables(
                    session.sql(sql, device_share=0.1).table, con.sql(sql).to_arrow_table()
                )
                is None
            )
    con.execute("DETACH ddb")


def test_a_connection_that_moved_with_use_is_answered_where_it_stands(
    con: duckdb.DuckDBPyConnection, tmp_path: Any
) -> None:
    """``USE`` moves the connection, not its cursors: after ``USE ddb``, ``FROM ddb`` is the
    attached catalog's default table (1337) on the connection and the local table (42) where
    a cursor stands, and the Polars arm answered 42 (attach_default_table.test at 0.9)."""
    con.execute(f"ATTACH '{tmp_path}/other.db' AS ddb (default_table 'my_table')")
    con.execute("CREATE TABLE ddb.my_table AS SELECT 1337 AS value")
    con.execute("CREATE TABLE ddb AS SELECT 42 AS value")
    with Session(con, device="polars") as before:
        con.execute("USE ddb")
        result = before.sql("FROM ddb", device_share=0.9)
        assert result.table.column(0).to_pylist() == [1337]
        assert result.refusal is not None and "USE" in result.refusal
        with Session(con, device="polars") as after:
            assert sorted(after.row_counts) == ["my_table"]
            for sql in ("FROM ddb", "SELECT sum(value) AS s FROM my_table"):
                answer = after.sql(sql, device_share=0.9).table
                assert compare_tables(answer, con.sql(sql).to_arrow_table()) is None, sql
    con.execute("USE memory")
    con.execute("DETACH ddb")


def test_a_connection_standing_in_no_database_is_answered_on_it() -> None:
    """After ``DETACH memory`` and ``RESET search_path`` the connection stands in no database
    (``current_database()`` fails) yet DuckDB answers queries with full names; the Session
    opened there failed (detach_manager_default_database.test). It now has no table to split
    and answers each query on the connection."""
    con = duckdb.connect()
    for statement in ("ATTACH ':memory:' AS other", "USE other", "DETACH memory"):
        con.execute(statement)
    con.execute("RESET search_path")
    con.execute("CREATE TABLE other.main.t AS SELECT range AS x FROM range(10)")
    with Session(con, device="polars") as session:
        assert session.row_counts == {}
        for sql in ("SELECT database_name FROM duckdb_databases()", "SELECT sum(x) FROM other.t"):
            result = session.sql(sql, device_share=0.5)
            assert result.execution is None and result.refusal is not None
            expected = con.sql(sql).to_arrow_table()
            assert compare_tables(result.table, expected, ordered=False) is None
    con.close()


def test_settings_that_change_arithmetic_keep_the_polars_arm_out(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Under ``ieee_floating_point_ops = false`` DuckDB raises on ``sqrt`` of a negative number
    where Polars gives NaN: the split answered where the unsplit query fails. An arm that is
    not DuckDB is refused while the connection sets such a setting otherwise, and the unsplit
    query's own error reaches the user."""
    con.execute("CREATE TABLE f AS SELECT (i - 5) * 0.5 AS x FROM range(10) r(i)")
    con.execute("SET ieee_floating_point_ops = false")
    with Session(con, device="polars") as session:
        with pytest.raises(duckdb.Error, match="square root of a negative number"):
            session.sql("select sum(sqrt(x)) from f", device_share=0.5)
        refused = session.sql("select sum(x) from f", device_share=0.5)
        assert refused.refusal is not None and "ieee_floating_point_ops" in refused.refusal
        con.execute("RESET ieee_floating_point_ops")
        split = session.sql("select sum(x) from f", device_share=0.5)
        assert split.refusal is None and split.execution is not None


#: DuckDB's functions that are not CONSISTENT in any overload and are not in NONDETERMINISTIC,
#: with why a split keeps their value.
ANSWERED_OTHERWISE: dict[str, str] = {
    "current_setting": "refused: reads the connection's own state (refusals.CONNECTION_STATE)",
    "getvariable": "refused: reads the connection's own state (refusals.CONNECTION_STATE)",
    "current_query": "refused: returns the query's own text (refusals.TEXT_DEPENDENT)",
    "stats": "refused: describes the plan's statistics (refusals.PLAN_DEPENDENT)",
    "current_database": "the catalog every arm's cursor stands in (USE is followed)",
    "current_schema": "the catalog every arm's cursor stands in (USE is followed)",
    "current_schemas": "the catalog every arm's cursor stands in (USE is followed)",
    "in_search_path": "the catalog every arm's cursor stands in (USE is followed)",
    "error": "raises wherever it runs; an arm that fails is answered unsplit",
    "sleep_ms": "NULL wherever it runs",
    "write_log": "its argument wherever it runs (the log line is a side effect)",
}


def test_every_function_duckdb_calls_inconsistent_is_refused_or_named() -> None:
    """DuckDB's catalog says which functions may change value per call or per transaction; each
    arm runs in a transaction of its own, so a partial computing one saw one value per arm
    (``count(DISTINCT txid_current())`` 2 for 1 on the duckdb device). Held to the catalog, so a
    DuckDB upgrade that adds one fails here rather than answering wrong."""
    con = duckdb.connect()
    rows = con.execute(
        "SELECT function_name FROM duckdb_functions() GROUP BY function_name "
        "HAVING NOT bool_or(coalesce(stability = 'CONSISTENT', false)) "
        "AND bool_or(stability IN ('VOLATILE', 'CONSISTENT_WITHIN_QUERY'))"
    ).fetchall()
    inconsistent = {str(r[0]) for r in rows}
    assert {"now", "txid_current", "random"} <= inconsistent
    spellings = {"get_current_time": "current_time", "today": "current_date"}
    spellings |= {"current_localtimestamp": "localtimestamp"}
    unknown = {
        name
        for name in inconsistent - set(ANSWERED_OTHERWISE)
        if spellings.get(name, name) not in NONDETERMINISTIC
    }
    assert not unknown, f"functions DuckDB marks inconsistent, neither refused nor named: {unknown}"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(DISTINCT txid_current()) FROM t",
        "SELECT k, max(current_date) = current_date FROM t GROUP BY k",
        "SELECT count(*) FROM t WHERE age(TIMESTAMP '2020-01-01' + to_days(i)) > INTERVAL 1 DAY",
        "SELECT k, max(localtimestamp) = localtimestamp FROM t GROUP BY k",
    ],
)
def test_a_value_per_transaction_in_a_partial_is_refused(
    con: duckdb.DuckDBPyConnection, sql: str
) -> None:
    with Session(con, device="duckdb") as session:
        refusal = _same(session, con, sql)
        assert refusal is not None and "non-deterministic" in refusal


def test_a_scalar_subquerys_first_row_is_refused_under_many_rows(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Under ``scalar_subquery_error_on_multiple_rows = false`` DuckDB answers a scalar
    subquery of many rows with the first row its scan meets; over the arms' partials that was
    another row 3 to 5 times in 60. Refused while set; split again once reset."""
    sql = "SELECT (SELECT i * 42 FROM t) AS v"
    con.execute("SET scalar_subquery_error_on_multiple_rows = false")
    with Session(con, device="duckdb") as session:
        refusal = _same(session, con, sql)
        assert refusal is not None and "scalar_subquery_error_on_multiple_rows" in refusal
        # A derived table is no scalar subquery: split.
        assert _same(session, con, "SELECT sum(x) FROM (SELECT i * 2 AS x FROM t) s") is None
        con.execute("RESET scalar_subquery_error_on_multiple_rows")
        assert session.sql("SELECT (SELECT max(i) FROM t) AS v", device_share=0.5).refusal is None


def test_an_attached_database_left_unreadable_is_answered_unsplit(tmp_path: Any) -> None:
    """A checkpoint that fails invalidates its attached database (DuckDB's
    ``attach_invalidation.test``, reached by the runner's loops): reading the catalog's
    functions then raises, where DuckDB still answers a query that does not read it. The
    query is refused by name and answered unsplit."""
    con = duckdb.connect()
    for statement in (
        "PRAGMA disable_checkpoint_on_shutdown",
        f"ATTACH '{tmp_path}/a.db' AS a",
        "CREATE TABLE a.tbl AS SELECT range AS i FROM range(10)",
        "CREATE TABLE t AS SELECT range AS i FROM range(100)",
        "CHECKPOINT a",
        "INSERT INTO a.tbl VALUES (10)",
        "PRAGMA debug_checkpoint_abort = 'before_header'",
    ):
        con.execute(statement)
    with pytest.raises(duckdb.IOException):
        con.execute("CHECKPOINT a")
    with Session(con, device="polars") as session:
        result = session.sql("SELECT count(*), sum(i) FROM t", device_share=0.5)
        assert result.table.to_pylist() == [{"count_star()": 100, "sum(i)": 4950}]
        assert "could not be read" in (result.refusal or "")
    con.close()


def test_a_memory_limit_too_small_to_size_the_split_in_is_answered_unsplit(
    tmp_path: Any,
) -> None:
    """Under a memory_limit of 4 MB DuckDB sums a text column of 2M rows from its file, and
    the Polars device's sizing (a sample of the column's rows as Arrow) ran out of memory: the
    Session raised (DuckDB's duckdb_eviction_queues.test, reached once the runner loaded
    database files). Answered unsplit, named."""
    con = duckdb.connect(str(tmp_path / "small.db"))
    con.execute("SET threads = 4")
    con.execute("CREATE TABLE t AS SELECT range AS i, range::VARCHAR AS s FROM range(2000000)")
    con.execute("CHECKPOINT")
    con.execute("SET memory_limit = '4MB'")
    sql = "SELECT sum(length(s)) AS n FROM t"
    with Session(con, device="polars") as session:
        result = session.sql(sql, device_share=0.5)
        assert result.table.to_pylist() == [{"n": 12888890}]
        assert result.execution is None and "memory_limit" in (result.refusal or "")
    con.close()


def test_a_connection_that_forbids_cross_products_is_answered_on_it(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Under ``debug_force_no_cross_product`` DuckDB raises on a query that needs a cross
    product, and a split answered it (the setting, which ``duckdb_settings()`` does not list,
    was not carried to the host's cursors; DuckDB's required_cross_product_activation.test,
    once its loop ran). The split's own queries may need one where the query does not: such
    a connection is answered on itself."""
    con.execute("CREATE TABLE d AS SELECT 1 AS k")
    con.execute("SET debug_force_no_cross_product = true")
    with Session(con, device="polars") as session:
        with pytest.raises(SqlError, match="requires a cross-product"):
            session.sql("SELECT count(*) FROM t, d", device_share=0.5)
        sql = "SELECT t.k, count(*) AS c FROM t JOIN d ON t.k = d.k GROUP BY t.k"
        result = session.sql(sql, device_share=0.5)
        assert result.table.to_pylist() == [{"k": 1, "c": 200}]
        assert "cross products" in (result.refusal or "")
    con.execute("SET debug_force_no_cross_product = false")
    with Session(con, device="polars") as session:
        assert session.sql("SELECT count(*) FROM t, d", device_share=0.5).refusal is None


def test_a_sessions_own_connection_reads_duckdbs_functions_once_per_process(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """DuckDB's functions are the same in every connection a Session makes (with the same
    extensions loaded): read once; a user's connection, which may hold macros, is read itself."""
    table = con.sql("SELECT * FROM t").to_arrow_table()
    with (
        Session({"t": table}, device="duckdb") as one,
        Session({"t": table}, device="duckdb") as two,
    ):
        assert one.functions.kinds("SELECT 1") is two.functions.kinds("SELECT 1")
    con.execute("CREATE MACRO twice(x) AS x * 2")
    with Session(con, device="duckdb") as mine:
        assert "twice" in {name for name, _ in mine.functions.kinds("SELECT 1").user_macros}
        assert _same(mine, con, "SELECT k, max(twice(i)) FROM t GROUP BY k") is None


@pytest.mark.parametrize(
    "create",
    [
        "CREATE MACRO sum(x) AS max(x)",
        "CREATE TEMP MACRO sum(x) AS max(x)",  # seen by the user's connection alone
        "cursor: CREATE MACRO sum(x) AS max(x)",  # another connection to the database
    ],
)
@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_a_shadowing_macro_created_after_the_first_query_is_seen(
    con: duckdb.DuckDBPyConnection, create: str, device: str
) -> None:
    """A macro named sum created alone between two queries (the catalog's shape as it was):
    the database ran a statement the Session did not, so its function catalog is read again,
    on the connection itself, and the query is refused by name. It split before: 1,490
    (duckdb) and 25,745 (polars) for DuckDB's 995 (docs/exactness.md, fifty-ninth session)."""
    with Session(con, device=device) as session:
        assert _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k") is None
        if create.startswith("cursor: "):
            con.cursor().execute(create.removeprefix("cursor: "))
        else:
            con.execute(create)
        refusal = _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k")
        assert refusal is not None and "sum" in refusal


def test_a_shadowing_macro_committed_after_a_query_in_its_transaction_is_seen(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """A query inside the user's transaction is answered on the connection; the COMMIT after
    it takes no transaction id, so the note taken there must not say that nothing ran."""
    with Session(con, device="duckdb") as session:
        assert _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k") is None
        con.execute("BEGIN")
        con.execute("CREATE MACRO sum(x) AS max(x)")
        refusal = _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k")
        assert refusal is not None and "transaction" in refusal
        con.execute("COMMIT")
        refusal = _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k")
        assert refusal is not None and "sum" in refusal  # split before: 1,490 for 995


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_a_temporary_macro_shadowing_duckdbs_own_function_is_refused(
    con: duckdb.DuckDBPyConnection, device: str
) -> None:
    """A temporary macro is in the user's connection's catalog alone: a cursor's read of the
    catalog did not list it, and the split answered 99,500 for DuckDB's 995."""
    con.execute("CREATE TEMP MACRO sum(x) AS max(x)")
    with Session(con, device=device) as session:
        refusal = _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k")
    assert refusal is not None and "has the name of DuckDB's own function" in refusal


def test_the_host_tells_whether_another_statement_ran_between_two_queries(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """Every statement on the database takes the next transaction id: a query's own
    statements end with the host's note of it (``settle``), so the next query sees whether
    anything else ran; the catalog is read again only then."""
    with Session(con, device="duckdb") as session:
        sql = "SELECT k, sum(i) FROM t GROUP BY k"
        session.sql(sql, device_share=0.5)
        session.sql(sql, device_share=0.5)
        kinds = session.functions.kinds(sql)
        session.sql(sql, device_share=0.5, params=None)
        session.explain(sql)
        session.sql("SELECT k, sum(i) FROM t WHERE i > $1 GROUP BY k", params=[3])
        session.sql(sql, device_share=0.5)
        assert session.functions.kinds(sql) is kinds  # nothing else ran: not read again
        con.execute("SET VARIABLE v = 1")
        session.sql(sql, device_share=0.5)
        assert session.functions.kinds(sql) is not kinds
        # Another connection open (it may commit a change later, which takes no id): no note.
        other = con.cursor()
        kinds = session.functions.kinds(sql)
        session.sql(sql, device_share=0.5)
        session.sql(sql, device_share=0.5)
        assert session.functions.kinds(sql) is not kinds
        other.close()


def test_explain_inside_an_aborted_transaction_reads_the_catalog_on_a_cursor(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The function catalog is read on the connection itself, except where a read there would
    fail or abort the user's transaction: explain raised 'Current transaction is aborted'."""
    with Session(con, device="duckdb") as session:
        sql = "SELECT k, sum(i) FROM t GROUP BY k"
        session.sql(sql, device_share=0.5)
        con.execute("CREATE MACRO m1(x) AS x")  # the catalog is read again at the next query
        con.execute("BEGIN")
        with pytest.raises(duckdb.CatalogException):
            con.execute("SELECT * FROM nothing_here")
        assert session.explain(sql).refusal is None
        con.execute("ROLLBACK")


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_an_unfinished_result_of_the_users_is_named_and_kept(
    con: duckdb.DuckDBPyConnection, device: str
) -> None:
    """DuckDB 2.0's connection holds the result of an ``execute()`` until a fetch comes back
    empty; a statement the Session ``execute()``-d there dropped its unread rows (the user's
    next ``fetchone()`` gave None, in the constructor and every entry point). As DuckDB's
    ``con.sql`` does, each refuses by name before anything runs, and every row is kept."""
    sql = "SELECT k, sum(i) FROM t GROUP BY k"

    def unfinished() -> None:
        con.execute("SELECT i FROM t ORDER BY i")
        assert con.fetchone() == (0,)

    def kept() -> None:
        assert con.fetchone() == (1,)
        assert len(con.fetchall()) == 998

    unfinished()
    with pytest.raises(SqlError, match="unfinished result of execute"):
        Session(con, device=device)
    kept()
    with Session(con, device=device) as session:
        for ask in (
            lambda: session.sql(sql, device_share=0.5),
            lambda: session.sql("SELECT count(*) FROM t WHERE i > ?", params=[5]),
            lambda: session.explain(sql),
            lambda: session.profile(sql),
        ):
            unfinished()
            with pytest.raises(SqlError, match="unfinished result of execute"):
                ask()
            kept()
        assert _same(session, con, sql) is None  # and answered once it is finished
