"""Arrow copies of a test file's tables, for the sqllogictest runner's ``--cluster`` and
``--arrow`` modes.

A cluster cannot reach the DuckDB connection a test file builds its tables in, so under
``--cluster`` (and ``--arrow``, the same without one) the runner gives the Session Arrow copies
of those tables instead, and takes its
oracle from a fresh DuckDB connection over the same copies: the answer a Session over those
Arrow tables must give. A query that connection cannot answer (it reads a view, a macro, another
schema, or a table Arrow cannot hold or a Session cannot name) is skipped, and so is one whose
value describes how the rows are stored (``stats``). Where DuckDB raises over the copies on a
value (an overflow, a conversion), the Session over them must raise too (``raises``).
"""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from dau_scheduler.arms.duckdb import quote
from dau_scheduler.errors import SqlError
from dau_scheduler.function_catalog import called_names
from dau_scheduler.refusals import PLAN_DEPENDENT
from dau_scheduler.tables import check_name

#: DuckDB's errors about a value, which the same query over the same rows raises anywhere.
_VALUE_ERRORS = (
    duckdb.OutOfRangeException,
    duckdb.ConversionException,
    duckdb.InvalidInputException,
)


class ArrowCopies:
    """The connection's base tables in its current schema, as Arrow, and an oracle over them."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.tables: dict[str, pa.Table] = {}
        self.oracle = duckdb.connect(":memory:")
        try:
            names = con.execute(
                "SELECT table_name FROM duckdb_tables() "
                "WHERE database_name = current_database() AND schema_name = current_schema() "
                "ORDER BY table_name"
            ).fetchall()
        except duckdb.Error:  # no current database (DETACH memory): no tables to copy
            names = []
        for (name,) in names:
            try:
                check_name(name)
                table = con.table(quote(name)).to_arrow_table()
            except (SqlError, duckdb.Error, pa.ArrowException, ValueError):
                continue  # a name a Session refuses, or a type Arrow cannot hold
            # A table, not a registered view, as the Session holds it: outputs are named alike.
            self.oracle.register("__dau_copy", table)
            try:
                self.oracle.execute(f"CREATE TABLE {quote(name)} AS FROM __dau_copy")
                self.tables[name] = table
            except duckdb.Error:
                continue
            finally:
                self.oracle.unregister("__dau_copy")

    def answer(self, sql: str) -> Any:
        """DuckDB's answer over the copies, or None where it is not the Session's to match."""
        if not self.tables or called_names(sql) & PLAN_DEPENDENT:
            return None
        try:
            return self.oracle.sql(sql).to_arrow_table()
        except (duckdb.Error, AttributeError, ValueError):
            return None

    def raises(self, sql: str) -> bool:
        """Whether DuckDB raises over the copies on a value (an overflow, a conversion, an
        invalid input): the error a Session over them must raise too. Another error (a view,
        a macro, another schema the copies lack) says nothing of the Session's."""
        if not self.tables or called_names(sql) & PLAN_DEPENDENT:
            return False
        try:
            self.oracle.sql(sql).to_arrow_table()
        except _VALUE_ERRORS:
            return True
        except (duckdb.Error, AttributeError, ValueError):
            return False
        return False

    def close(self) -> None:
        self.oracle.close()
