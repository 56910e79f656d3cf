"""DuckDB's function catalog as an oracle (``catalog_check``): a slice of its functions over
edge values, split on each device, equal DuckDB's answers or refused. The whole catalog runs
with ``python -m dau_scheduler.catalog_check`` (docs/exactness.md)."""

from __future__ import annotations

import pytest

from conftest import DEVICES
from dau_scheduler import catalog_check


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "polars-separate"])
@pytest.mark.parametrize(("kind", "like"), [("scalar", "p%"), ("aggregate", "s%")])
def test_a_slice_of_the_catalog_is_exact_or_refused(device: str, kind: str, like: str) -> None:
    records = catalog_check.check(device, kind, like)
    assert records, "the slice holds calls"
    assert [r for r in records if r["outcome"] in ("wrong", "crashed")] == []
    if kind == "scalar":  # pow(x, 0.5) over -inf and -0.0 (Polars' square root) splits exactly
        assert {"call": "pow(f, 0.5)", "outcome": "split"} in records
