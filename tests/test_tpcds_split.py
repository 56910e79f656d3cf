"""TPC-DS SF 0.01 (tpcgen-cli's data, the 99 queries DuckDB ships): every query on every CPU
device, at two shares, equals DuckDB's unsplit answer, and no arm fails on the way."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from dau_scheduler import Session, tpcds
from dau_scheduler.compare import compare_tables

QUERIES = tpcds.queries()
#: Split (both arms get rows at share 0.5) at least this many of the 99 queries per device.
MIN_SPLIT = {"duckdb": 94, "polars": 90}


@pytest.fixture(scope="module")
def tpcds_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tpcds.generate(0.01, tmp_path_factory.mktemp("tpcds-sf0.01"))


@pytest.fixture(scope="module", params=["duckdb", "polars"])
def tpcds_session(request: pytest.FixtureRequest, tpcds_dir: Path) -> Iterator[Session]:
    with Session(tpcds_dir, device=request.param) as session:
        yield session


@pytest.fixture(scope="module")
def tpcds_expected(tpcds_dir: Path) -> dict[str, pa.Table]:
    with Session(tpcds_dir, device=None) as s:
        return {name: s.sql(sql).table for name, sql in QUERIES.items()}


def test_the_99_queries_are_there() -> None:
    assert sorted(QUERIES) == [f"q{i:02d}" for i in range(1, 100)]


@pytest.mark.parametrize("share", [0.5, 0.1])
def test_every_query_matches_duckdb(
    tpcds_session: Session, tpcds_expected: dict[str, pa.Table], share: float
) -> None:
    device = tpcds_session.device.name if tpcds_session.device else "none"
    split, wrong, failed = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name, sql in QUERIES.items():
            result = tpcds_session.sql(sql, device_share=share)
            diff = compare_tables(result.table, tpcds_expected[name])
            if diff is not None:
                wrong.append(f"{name}: {diff}")
            if result.fallback is not None:
                failed.append(f"{name}: {result.fallback}")
            ex = result.execution
            if ex is not None and ex.device_rows > 0 and ex.host_rows > 0:
                split.append(name)
            elif ex is None:
                assert result.refusal, f"{name} ran unsplit without saying why"
    assert wrong == [], wrong
    assert failed == [], failed
    if share == 0.5:
        assert len(split) >= MIN_SPLIT[device], sorted(set(QUERIES) - set(split))
