"""TPC-H against DuckDB's reference answers (dbgen's answer files, sql/tpch/answers): a check
no one here wrote. DuckDB's unsplit answers over tpchgen-cli's data hold them, and so do the
split answers on every device, share, posture and memory strategy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from dau_scheduler import SqlError, tpch

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_duckdb_over_tpchgen_data_holds_the_reference(tpch_expected: dict[str, pa.Table]) -> None:
    assert len(tpch_expected) == 22
    for name, table in tpch_expected.items():
        assert tpch.compare_reference(table, name, 0.01) is None, name


@pytest.mark.parametrize("device", ["duckdb", "polars"])
def test_split_answers_hold_the_reference(tpch_dir: Path, device: str) -> None:
    shares = [0.5, 0.1, None]  # None: the default posture
    outcomes = tpch.check(tpch_dir, 0.01, device, shares)
    bad = outcomes["wrong"] + outcomes["off_reference"] + outcomes["crashed"] + outcomes["data"]
    assert not bad, bad
    assert len(outcomes["split"]) >= 2 * 22  # both fixed shares split every query


def test_sf01_read_lazily_holds_the_reference() -> None:
    """SF 0.1 read from its files as each query runs. (Under a budget, chunked and streamed,
    the same queries equal DuckDB's answers in test_strategies.test_tpch_under_a_budget_is_exact,
    and DuckDB's hold the reference: the first test here.)"""
    device, options = "polars", {"lazy": True}
    outcomes = tpch.check(tpch.cached(0.1), 0.1, device, [0.5], **options)
    bad = outcomes["wrong"] + outcomes["off_reference"] + outcomes["crashed"] + outcomes["data"]
    assert not bad, bad
    assert not outcomes["fallback"], outcomes["fallback"]
    assert len(outcomes["split"]) + len(outcomes["refused"]) == 22


def test_a_changed_value_row_or_type_is_off_the_reference(
    tpch_expected: dict[str, pa.Table],
) -> None:
    q01 = tpch_expected["q01"]
    assert tpch.compare_reference(q01.slice(1), "q01", 0.01) == (
        "row count 3 != 4 in the reference"
    )
    flipped = pa.concat_tables([q01.slice(1, 1), q01.slice(0, 1), q01.slice(2)])
    assert "row 0, column 'l_returnflag'" in str(tpch.compare_reference(flipped, "q01", 0.01))
    index = q01.schema.get_field_index("sum_qty")
    bumped = pa.array([v + 1 for v in q01.column(index).to_pylist()], q01.schema.field(index).type)
    changed = q01.set_column(index, q01.schema.field(index), bumped)
    assert "column 'sum_qty'" in str(tpch.compare_reference(changed, "q01", 0.01))
    # A decimal with fewer digits than the reference's values cannot hold them: a difference.
    index = q01.schema.get_field_index("sum_charge")
    narrow = pa.field("sum_charge", pa.decimal128(38, 2))
    cut = q01.set_column(index, narrow, q01.column(index).cast(narrow.type, safe=False))
    assert "not decimal128(38, 2)" in str(tpch.compare_reference(cut, "q01", 0.01))
    dropped = q01.drop_columns(["l_returnflag"])
    assert "10 columns in the reference, 9" in str(tpch.compare_reference(dropped, "q01", 0.01))


def test_text_tpchgen_draws_itself_is_left_out(tpch_expected: dict[str, pa.Table]) -> None:
    q15 = tpch_expected["q15"]
    index = q15.schema.get_field_index("s_address")
    other = pa.array(["elsewhere"] * q15.num_rows, q15.schema.field(index).type)
    assert tpch.compare_reference(q15.set_column(index, "s_address", other), "q15", 0.01) is None
    assert tpch.compare_reference(tpch_expected["q13"].slice(0, 0), "q13", 0.01) is None


def test_reference_lookups_name_what_is_missing() -> None:
    with pytest.raises(SqlError, match=r"no TPC-H reference answers at scale 3; .*0\.01, 0\.1, 1"):
        tpch.reference("q01", 3)
    with pytest.raises(SqlError, match="no TPC-H reference answer for 'q23'"):
        tpch.reference("q23", 0.1)
    header, rows = tpch.reference("q17", 0.01)
    assert header == ["avg_yearly"] and rows == [[""]]  # NULL: no part qualifies at SF 0.01


def test_the_command_exits_zero_when_every_answer_holds(
    tpch_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tpch.main(["--scale", "0.01", "--data", str(tpch_dir), "--shares", "0.5"]) == 0
    # (Q17 and Q22 split on the Polars arm too: the host computes their subqueries' AVG.)
    assert "22 split, 0 refused" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        tpch.main(["--scale", "2"])


def test_processes_filling_the_cache_at_once_take_turns(tmp_path: Path) -> None:
    """Two processes asking for the same uncached scale both get the whole folder (pytest's
    workers did on a fresh machine: one's rename failed under the other's)."""
    script = "from dau_scheduler import tpch; print(tpch.cached(0.01))"
    env = {**os.environ, "DAU_DATA_DIR": str(tmp_path)}
    runs = [
        subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE)
        for _ in range(3)
    ]
    outs = [run.communicate(timeout=120)[0].decode().strip() for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0]
    folder = Path(outs[0])
    assert set(outs) == {str(folder)}
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{t}.parquet" for t in tpch.TABLES)
    assert not folder.with_name(folder.name + ".partial").exists()
