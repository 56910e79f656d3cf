"""TPC-DS: data through tpcgen-cli (no network), and the 99 queries as DuckDB ships them.

TPC-DS reads what TPC-H does not: CTEs used twice, ROLLUP, window functions, INTERSECT and
EXCEPT, correlated and scalar subqueries, joins written with parentheses. The queries are a check
no one here wrote (``sql/tpcds/README.md``); the data is tpcgen-cli's, which is not dsdgen's row
for row, so the answers are DuckDB's own over the same files, not DuckDB's answer files.
"""

from __future__ import annotations

from pathlib import Path

from dau_scheduler.tpch import cache_folder, check_scale, generator, query_folder, run_generator

TABLES: tuple[str, ...] = (
    "call_center",
    "catalog_page",
    "catalog_returns",
    "catalog_sales",
    "customer",
    "customer_address",
    "customer_demographics",
    "date_dim",
    "household_demographics",
    "income_band",
    "inventory",
    "item",
    "promotion",
    "reason",
    "ship_mode",
    "store",
    "store_returns",
    "store_sales",
    "time_dim",
    "warehouse",
    "web_page",
    "web_returns",
    "web_sales",
    "web_site",
)


def queries() -> dict[str, str]:
    """The 99 queries by name (``q01`` .. ``q99``)."""
    folder = query_folder("tpcds")
    return {p.stem: p.read_text() for p in sorted(folder.glob("q*.sql"))}


def generate(scale: float, out: Path | str) -> Path:
    """Write TPC-DS at ``scale`` as ``<table>.parquet`` files under ``out``; returns ``out``."""
    scale = check_scale(scale)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    command = [generator("tpcgen-cli"), "tpcds", "parquet", "-s", f"{scale:g}", f"-o={out}"]
    return run_generator(command, out, TABLES)


def cached(scale: float) -> Path:
    """TPC-DS at ``scale`` in the cache folder, generated the first time it is asked for."""
    scale = check_scale(scale)
    return cache_folder(f"tpcds-sf{scale:g}", TABLES, lambda out: generate(scale, out))


__all__ = ["TABLES", "cached", "generate", "queries"]
