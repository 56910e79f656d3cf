"""Golden rewrite fixtures: the partial and final SQL (or refusal) each input compiles to, and an
execution check that the split answer equals the unsplit one. Text alone proves nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from rewrite_fixtures import FIXTURES, read


@pytest.fixture(scope="module")
def session(tpch_dir: Path) -> Session:
    return Session(tpch_dir, device="duckdb")


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.sql")), ids=lambda p: p.stem)
def test_rewrite_matches_fixture_and_answer(session: Session, fixture: Path) -> None:
    sections = read(fixture)
    plan = session.explain(sections["input"])
    assert (plan.refusal or "") == sections.get("refusal", "")
    assert (plan.partial_sql or "") == sections.get("partial", "")
    assert (plan.complement_sql or "") == sections.get("complement", "")
    assert (plan.final_sql or "") == sections.get("final", "")
    expected = session.host.cursor().sql(sections["input"]).to_arrow_table()
    for share in (0.0, 0.3, 1.0, None):
        result = session.sql(sections["input"], device_share=share)
        assert compare_tables(result.table, expected) is None
        assert (result.execution is None) == bool(sections.get("refusal"))


@pytest.mark.parametrize(
    "sql",
    [
        "select l_orderkey from lineitem using sample 5",
        "select * from (select l_orderkey from lineitem) using sample 10%",
        "select count(*) from lineitem tablesample 10%",
        "select l_orderkey from (select * from lineitem using sample 3 rows) s",
    ],
)
def test_samples_are_refused(session: Session, sql: str) -> None:
    """Which rows a sample keeps depends on the rows and order each engine sees (a USING SAMPLE
    on the query's SELECT was split like a plain scan: DuckDB's set_seed_for_sample.test)."""
    refusal = session.explain(sql).refusal
    assert refusal is not None and "samples rows" in refusal, refusal
