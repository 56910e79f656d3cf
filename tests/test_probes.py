"""The random probes in probes/ write files the runner reads, and the same file for a seed; one
small file each is replayed on the Polars arm with no defect."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dau_scheduler import slt

#: The probe scripts (a module whose name starts with _ is their shared code; probes/walks/
#: change a database under one Session and check it there, writing no file).
PROBES = sorted(
    p for p in (Path(__file__).parent.parent / "probes").glob("*.py") if not p.name.startswith("_")
)


def _write(script: Path, seed: int, path: Path, count: int) -> str:
    order = [seed, count, path] if script.stem == "typed_expressions" else [seed, path, count]
    subprocess.run([sys.executable, str(script), *map(str, order)], check=True)
    return path.read_text()


@pytest.mark.parametrize("script", PROBES, ids=[p.stem for p in PROBES])
def test_a_probe_writes_a_file_the_runner_replays(script: Path, tmp_path: Path) -> None:
    text = _write(script, 7, tmp_path / "a.test", 6)
    assert _write(script, 7, tmp_path / "b.test", 6) == text  # (a seed draws the same file)
    records, left_out = slt.parse(text)
    assert left_out is None
    assert sum(r.kind == "query" for r in records) == 6
    report = slt.run_file(tmp_path / "a.test", "polars", 0.5, True)
    assert not any(report.outcomes[d] for d in slt.DEFECTS), report.details


def test_the_connection_walk_finds_no_wrong_answer() -> None:
    """Thirty steps of the walk over a database file of three row groups (each checked
    against DuckDB; at the forty-second session's code seed 5 found 4 wrong in 30 steps, the
    rowid span a CHECKPOINT left with gaps)."""
    script = Path(__file__).parent.parent / "probes" / "walks" / "connection_walk.py"
    done = subprocess.run(
        [sys.executable, str(script), "5", "polars", "30"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_corpus_queries_with_their_literals_as_parameters_answer_as_duckdb() -> None:
    """Queries of the corpus with their literals made parameters (``$1``...) against DuckDB
    with the same parameters (``probes/walks/literal_parameters.py``): a placeholder written
    into sqlglot's tree as an index came back one higher (text_slices, nested_values)."""
    script = Path(__file__).parent.parent / "probes" / "walks" / "literal_parameters.py"
    corpus = Path(__file__).parent / "slt"
    files = [
        corpus / f"{stem}.test" for stem in ("text_slices", "nested_values", "date_text_literals")
    ]
    done = subprocess.run(
        [sys.executable, str(script), "duckdb", *map(str, files)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "'split'" in done.stdout
