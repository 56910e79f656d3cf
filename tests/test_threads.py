"""One Session, queries from several threads at once: every answer exact, and each query splits
as it would alone (no query sees another's rows, columns or refusals), over every way the
tables arrive. Budgets and clusters have theirs in test_strategies, test_dask and test_spark."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from dau_scheduler import Session, tpch
from dau_scheduler.arms.polars import gpu_available
from dau_scheduler.compare import compare_tables

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

#: Queries that split on every device at any share (Q13's NOT LIKE in a join and Q2's and
#: Q17's correlated subqueries do on Polars too; these mix joins, groups and top-k).
NAMES = ["q01", "q03", "q05", "q06", "q07", "q10", "q12", "q14", "q18", "q19"]


def _tables(form: str, folder: Path) -> Any:
    if form != "connection":
        return folder
    con = duckdb.connect()
    for path in sorted(folder.glob("*.parquet")):
        con.execute(f"CREATE TABLE {path.stem} AS SELECT * FROM '{path}'")
    return con


@pytest.mark.parametrize("form", ["resident", "lazy", "connection"])
@pytest.mark.parametrize(
    "device",
    [
        "duckdb",
        "polars",
        pytest.param(
            "cudf",
            marks=[pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="no GPU")],
        ),
    ],
)
def test_queries_from_several_threads_split_as_alone(
    tpch_dir: Path, tpch_expected: dict[str, pa.Table], device: str, form: str
) -> None:
    rnd = random.Random(7)
    work = [(rnd.choice(NAMES), round(rnd.uniform(0.1, 0.9), 2)) for _ in range(32)]
    with Session(_tables(form, tpch_dir), device=device, lazy=form == "lazy") as session:

        def run(job: tuple[str, float]) -> Any:
            return session.sql(tpch.queries()[job[0]], device_share=job[1])

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(run, work))
        # Each query alone, after: what it splits, or why not (the cudf arm refuses some:
        # arms/polars_gpu.py).
        alone = {name: run((name, 0.5)) for name in sorted({name for name, _ in work})}
    for (name, share), result in zip(work, results, strict=True):
        assert compare_tables(result.table, tpch_expected[name]) is None, (name, share)
        solo = alone[name]
        if device != "cudf":
            assert solo.refusal is None and solo.fallback is None, (name, solo.refusal)
        # A connection's rows read by another query (its columns) made Polars refuse.
        assert (result.refusal, result.fallback) == (solo.refusal, solo.fallback), name
        if solo.refusal is None and solo.fallback is None:
            assert result.execution is not None and result.execution.device_rows > 0, name
