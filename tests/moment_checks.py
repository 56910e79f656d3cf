"""What the moment tests (``test_moments``, ``test_comoments``) share: the devices they run on
and the check that every query splits on both arms and equals DuckDB's answer."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import duckdb
import pytest

from dau_scheduler import Session
from dau_scheduler.arms.polars import gpu_available
from dau_scheduler.compare import compare_tables
from suite_sample import cells

#: The CPU devices, and cudf where a GPU is (the GPU kit runs ``-m gpu``).
ARMS = [
    "duckdb",
    "polars",
    pytest.param(
        "cudf",
        marks=[pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="no CUDA GPU")],
    ),
]
#: The paths that fold partials: resident, lazy, and chunks folded again and again.
PATHS: dict[str, dict[str, object]] = {
    "resident": {},
    "lazy": {"lazy": True},
    "streamed": {"mem_budget_mb": 64, "strategy": "streamed", "chunk_rows": 1000},
}
OPTIONS = pytest.mark.parametrize("options", list(PATHS.values()), ids=list(PATHS))
_CELLS = cells(
    [(device, path) for device in ("duckdb", "polars") for path in PATHS],
    # Each device and each path once: the fold is the same code on either device.
    [("duckdb", "resident"), ("polars", "lazy"), ("polars", "streamed")],
)
#: (device, options) over the devices and paths (``suite_sample``), and cudf resident.
ARMS_AND_PATHS = pytest.mark.parametrize(
    ("device", "options"),
    [
        *(pytest.param(device, PATHS[path], id=f"{path}-{device}") for device, path in _CELLS),
        pytest.param(
            "cudf",
            {},
            id="resident-cudf",
            marks=[pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="no CUDA GPU")],
        ),
    ],
)


def check_splits(
    con: duckdb.DuckDBPyConnection,
    device: str,
    options: dict[str, object],
    queries: Sequence[str],
    *,
    device_may_refuse: bool = False,
) -> None:
    """Every query, at shares 0.3 and 0.8 (resident; one of them lazily or streamed), splits
    with rows on both arms and equals DuckDB's answer. ``device_may_refuse``: the device arm
    may refuse by name (the host then answers)."""
    if device == "cudf" and options:
        pytest.skip("resident only on the GPU: the kit's gpu-tests step has 150 s in all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        session = Session(con, device=device, **options)  # type: ignore[arg-type]
    # Both cuts where the rows are resident; one each on the lazy and streamed paths (the
    # suite's ten minutes on two cores), so the three paths together still see both.
    shares = (0.3, 0.8) if not options else (0.8,) if options.get("lazy") else (0.3,)
    with session:
        for sql in queries:
            for share in shares:
                result = session.sql(sql, device_share=share)
                expected = con.sql(sql).to_arrow_table()
                ordered = "ORDER BY" in sql
                assert compare_tables(result.table, expected, ordered=ordered) is None, sql
                if device_may_refuse and result.refusal is not None:
                    continue
                assert result.execution is not None, (sql, result.refusal, result.fallback)
                assert result.execution.device_rows > 0 and result.execution.host_rows > 0
                if "chunk_rows" in options:
                    assert result.strategy is not None and result.strategy.chunks >= 5
