"""The DuckDB arm: native tables in one in-memory database; an arm's rows are a rowid range."""

from __future__ import annotations

import re

import duckdb
import pyarrow as pa

from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.planner import PLACEHOLDER, CompiledSplit

_TOKEN = re.compile(rf"\b{PLACEHOLDER}\b")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class DuckDBArm:
    """Runs partial queries on DuckDB native tables.

    A second arm can share the first one's database (``DuckDBArm(share=host)``): both read the
    same resident tables through their own cursors, so a host/host split costs no second copy.
    """

    def __init__(
        self, *, share: DuckDBArm | None = None, threads: int | None = None, name: str = "duckdb"
    ) -> None:
        self.name = name
        #: A DuckDB device runs on the host's own cores: the arms' rates do not add.
        self.shares_host_cores = True
        self.resident = True
        self._shared = share is not None
        self.con: duckdb.DuckDBPyConnection = (
            share.con if share is not None else duckdb.connect(":memory:")
        )
        if threads is not None and not self._shared:
            self.con.execute(f"SET threads = {int(threads)}")

    def load(self, tables: dict[str, pa.Table]) -> None:
        if self._shared:
            return
        self.con.execute("SET preserve_insertion_order = true")
        for name, table in tables.items():
            self.con.register("__dau_load", table)
            try:
                self.con.execute(f"CREATE TABLE {quote(name)} AS SELECT * FROM __dau_load")
            finally:
                self.con.unregister("__dau_load")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self.con.cursor()

    def refusal(self, compiled: CompiledSplit) -> str | None:
        return None

    def sql_for(self, compiled: CompiledSplit) -> str:
        text = compiled.arm_sql.get("duckdb")
        if text is None:
            if compiled.partial is None:
                raise SqlError("this query has no partial to run")
            text = compiled.partial.sql(dialect="duckdb")
            compiled.arm_sql["duckdb"] = text
        return text

    def run_partial(self, compiled: CompiledSplit, start: int, stop: int) -> pa.Table:
        return self.run_partial_on(self.cursor(), compiled, start, stop)

    def run_partial_on(
        self, cursor: duckdb.DuckDBPyConnection, compiled: CompiledSplit, start: int, stop: int
    ) -> pa.Table:
        """The partial over rows ``[start, stop)`` on a given cursor (e.g. one profiling)."""
        table = quote(compiled.plan.split_table or "")
        rows = f"(SELECT * FROM {table} WHERE rowid >= {int(start)} AND rowid < {int(stop)})"
        sql = _TOKEN.sub(lambda _m: rows, self.sql_for(compiled))
        return cursor.sql(sql).to_arrow_table()


__all__ = ["DuckDBArm", "quote"]
