"""Python functions registered on a user's connection (``create_function``): DuckDB lists them
among its own functions, so the Session tells them by their absence from a database DuckDB has
just opened. One named as DuckDB's own adds an overload DuckDB calls where its own does not
take the arguments, which the arms and the rewrite read as DuckDB's own; one named as a
function sqlglot knows is written as that function; one with side effects runs once per arm
(docs/exactness.md, sixtieth session)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import duckdb
import pytest
from duckdb.sqltypes import BIGINT, DOUBLE, VARCHAR

from dau_scheduler import Session
from dau_scheduler.function_catalog import function_kinds, rows_of
from dau_scheduler.rewrite.volatility import NONDETERMINISTIC
from host_checks import same_or_refusal as _same


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i, i % 5 AS k, i::VARCHAR AS v FROM range(1000) r(i)")
    yield con
    con.close()


def _register(
    con: duckdb.DuckDBPyConnection, name: str, fn: Callable[..., Any], *types: Any
) -> None:
    *arguments, returns = types
    con.create_function(name, fn, list(arguments), returns)


#: (device, name, function, argument and return types, query): each split wrong before.
WRONG_BEFORE = [
    # An overload of DuckDB's ln for text: the Polars arm took the logarithm of the numbers the
    # text holds (-inf for 0), 1219.47 for DuckDB's 1400.0 in a group.
    ("polars", "ln", lambda x: 7.0, (VARCHAR, DOUBLE), "SELECT k, sum(ln(v)) FROM t GROUP BY k"),
    # A name sqlglot reads as its own function (T-SQL's SPACE): written as repeat(' ', k).
    (
        "duckdb",
        "space",
        lambda x: "x",
        (BIGINT, VARCHAR),
        "SELECT k, max(space(k)) FROM t GROUP BY k",
    ),
    # T-SQL's CHARINDEX, written as strpos: 54 for DuckDB's 1,400 in a group.
    (
        "duckdb",
        "charindex",
        lambda a, b: 7,
        (VARCHAR, VARCHAR, BIGINT),
        "SELECT k, sum(charindex('1', v)) FROM t GROUP BY k",
    ),
]


@pytest.mark.parametrize("after", [False, True], ids=["before", "after-a-query"])
@pytest.mark.parametrize(
    ("device", "name", "fn", "types", "sql"), WRONG_BEFORE, ids=[c[1] for c in WRONG_BEFORE]
)
def test_a_registered_function_duckdb_or_sqlglot_reads_as_its_own_is_refused(
    con: duckdb.DuckDBPyConnection,
    device: str,
    name: str,
    fn: Callable[..., Any],
    types: tuple[Any, ...],
    sql: str,
    after: bool,
) -> None:
    """Registered before the Session, or between two of its queries (the registration moves
    the database's transaction id, so the catalog is read again)."""
    if not after:
        _register(con, name, fn, *types)
    with Session(con, device=device) as session:
        if after:
            assert _same(session, con, "SELECT k, count(*) FROM t GROUP BY k") is None
            _register(con, name, fn, *types)
        refusal = _same(session, con, sql)
    assert refusal is not None and f"function {name}() registered on the connection" in refusal


def test_an_overload_of_duckdbs_own_refuses_every_split_until_removed(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """As a macro named as DuckDB's own does: the split's own SQL calls DuckDB's functions."""
    with Session(con, device="duckdb") as session:
        _register(con, "upper", lambda x: 7, BIGINT, BIGINT)
        refusal = _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k")
        assert refusal is not None and "DuckDB's own function upper()" in refusal
        con.remove_function("upper")
        assert _same(session, con, "SELECT k, sum(i) FROM t GROUP BY k") is None


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_a_registered_function_of_a_new_name_is_called_by_the_arm_that_runs_it(
    con: duckdb.DuckDBPyConnection, device: str
) -> None:
    """DuckDB's arm calls it as the query does; the Polars arm knows no such function and
    refuses the partial by name."""
    _register(con, "twice_plus_one", lambda x: 2 * x + 1, BIGINT, BIGINT)
    with Session(con, device=device) as session:
        refusal = _same(session, con, "SELECT k, sum(twice_plus_one(i)) FROM t GROUP BY k")
        refusal_where = _same(
            session, con, "SELECT k, count(*) FROM t WHERE twice_plus_one(i) > 500 GROUP BY k"
        )
    if device == "duckdb":
        assert refusal is None and refusal_where is None
    else:
        assert refusal is not None and refusal_where is not None


def test_a_registered_function_with_side_effects_is_refused(
    con: duckdb.DuckDBPyConnection,
) -> None:
    con.create_function("noise", lambda x: random.random(), [BIGINT], DOUBLE, side_effects=True)
    with Session(con, device="duckdb") as session:
        refusal = _same(session, con, "SELECT k, count(*) FROM t WHERE noise(i) < 2 GROUP BY k")
    assert refusal is not None and "noise() registered on the connection" in refusal
    assert "side effects" in refusal


def test_a_connection_without_registered_functions_lists_none() -> None:
    """Every function of a new connection is one a database DuckDB has just opened holds: no
    function of DuckDB's own is taken for a registered one (which would refuse every split)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT 1 AS i")
    con.execute("SELECT list_sum([i]), upper('a') FROM t").fetchall()
    con.execute("SELECT sum(i) FROM t").fetchall()
    kinds = function_kinds(rows_of(con), NONDETERMINISTIC)
    assert kinds.registered == frozenset() and kinds.shadowing == frozenset()
