"""A check shared by the tests of the Polars arm's rewrites for speed (test_prefilter.py,
test_implied.py, test_early_semijoins.py): TPC-H queries the rewrite writes split exactly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from dau_scheduler.tpch import queries


def tpch_written_and_exact(tpch_dir: Path, written: dict[str, Callable[[str, str], bool]]) -> None:
    """Each query of ``written`` (name -> whether the arm's SQL, given the query's, shows the
    rewrite) is written so on the Polars arm and splits at share 0.5 to DuckDB's answer, with
    rows on the device."""
    with Session(tpch_dir, device="polars") as session:
        for name, shows in written.items():
            sql = queries()[name]
            compiled = session.compile(sql, None)
            assert session.device is not None
            text = session.device.sql_for(compiled)  # type: ignore[attr-defined]
            assert shows(text, sql), name
            result = session.sql(sql, device_share=0.5)
            assert result.execution is not None and result.execution.device_rows > 0, name
            expected = session.host.cursor().sql(sql).to_arrow_table()
            assert compare_tables(result.table, expected) is None, name
