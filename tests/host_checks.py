"""Checks shared by the tests of what the host computes for the Polars arm
(test_host_subqueries.py, test_host_tables.py) and of a Session over a user's connection
(test_connection_state.py, test_registered_functions.py)."""

from __future__ import annotations

import duckdb

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables


def splits_through_changes(
    session: Session, connection: duckdb.DuckDBPyConnection, sql: str, changes: tuple[str, ...]
) -> None:
    """``sql`` split on ``session`` equals DuckDB's answer on ``connection`` before and after
    each of ``changes`` to its rows, with rows on the device arm every time."""
    for change in ("", *changes):
        if change:
            connection.execute(change)
        result = session.sql(sql, device_share=0.5, strict=True)
        expected = connection.sql(sql).to_arrow_table()
        assert compare_tables(result.table, expected) is None, change
        assert result.execution is not None and result.execution.device_rows > 0


def same_or_refusal(
    session: Session, connection: duckdb.DuckDBPyConnection, sql: str
) -> str | None:
    """``sql`` on ``session`` (share 0.5) equals DuckDB's answer on ``connection``, split or
    not; why it was not split, or None."""
    result = session.sql(sql, device_share=0.5)
    expected = connection.sql(sql).to_arrow_table()
    assert compare_tables(result.table, expected, ordered=False) is None
    return result.refusal
