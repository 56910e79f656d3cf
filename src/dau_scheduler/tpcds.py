"""TPC-DS: data through tpcgen-cli (no network), and the 99 queries as DuckDB ships them.

TPC-DS reads what TPC-H does not: CTEs used twice, ROLLUP, window functions, INTERSECT and
EXCEPT, correlated and scalar subqueries, joins written with parentheses. The queries are a check
no one here wrote (``sql/tpcds/README.md``); the data is tpcgen-cli's, which is not dsdgen's row
for row, so the answers are DuckDB's own over the same files, not DuckDB's answer files.
"""

from __future__ import annotations

from pathlib import Path

from dau_scheduler.tpch import (
    cache_folder,
    check_queries,
    check_scale,
    generator,
    query_folder,
    run_generator,
)

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


def check(data: Path | str, device: str, shares: list[float]) -> dict[str, list[str]]:
    """Every query at every share on ``device`` against DuckDB's unsplit answer over ``data``:
    query labels by outcome (``tpch.check_queries``; there is no reference here)."""
    return check_queries(data, device, queries(), shares)


def main(argv: list[str] | None = None) -> int:
    """``python -m dau_scheduler.tpcds --scale 0.01 --device polars --shares 0.5,0.1``."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--data", help="a folder of TPC-DS Parquet files (default: generated)")
    parser.add_argument(
        "--device", default="polars", help="a Session device, polars-separate or gpu-limited"
    )
    parser.add_argument("--shares", default="0.5,0.1")
    parser.add_argument("--verbose", action="store_true", help="list every refusal and fallback")
    args = parser.parse_args(argv)
    data = Path(args.data) if args.data else cached(args.scale)
    shares = [float(s) for s in args.shares.split(",")]
    outcomes = check(data, args.device, shares)
    for kind in ("wrong", "crashed", *(("fallback", "refused") if args.verbose else ())):
        for line in outcomes[kind]:
            print(f"{kind}: {line[:400]}")
    kinds = ("split", "refused", "fallback", "wrong", "crashed")
    print(", ".join(f"{len(outcomes[k])} {k}" for k in kinds))
    return 1 if outcomes["wrong"] or outcomes["crashed"] else 0


__all__ = ["TABLES", "cached", "check", "generate", "main", "queries"]

if __name__ == "__main__":
    raise SystemExit(main())
