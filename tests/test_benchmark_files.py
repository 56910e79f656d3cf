"""DuckDB's benchmark files turned into sqllogictest files (``benchmark_files``) and replayed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dau_scheduler import benchmark_files, slt

#: A DuckDB source tree in miniature: a plain benchmark, one from a template that includes a
#: shared part and reads its query from a file, and one naming a file that is not there.
TREE = {
    "benchmark/micro/sum.benchmark": """# name: benchmark/micro/sum.benchmark
name Sum
group micro

load
CREATE TABLE integers AS SELECT i % 5 AS i, i % 25 AS j FROM range(0, 10_000_000) t(i);

run
SELECT j, sum(i), count(*) FROM integers WHERE i < 4000000 GROUP BY j ORDER BY j

result II
0	0
""",
    "benchmark/micro/templated.benchmark": """template benchmark/micro/groups.benchmark.in
COLUMN=g
""",
    "benchmark/micro/groups.benchmark.in": """argument rows 250000
require parquet

include benchmark/micro/load.benchmark.in

run benchmark/micro/groups.sql

result_query II
SELECT count(*) FROM t
----
3
""",
    "benchmark/micro/load.benchmark.in": """load
CREATE TABLE t AS SELECT i % 3 AS ${COLUMN}, i AS v FROM range(${rows}) r(i);
""",
    "benchmark/micro/groups.sql": "SELECT ${COLUMN}, sum(v) FROM t GROUP BY ${COLUMN};\n",
    "benchmark/micro/missing.benchmark": "run benchmark/micro/nowhere.sql\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for relative, text in TREE.items():
        (tmp_path / "duckdb" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "duckdb" / relative).write_text(text)
    return tmp_path / "duckdb"


def test_benchmarks_become_tests_scaled_down(tree: Path, tmp_path: Path) -> None:
    written, skipped = benchmark_files.convert(tree, tmp_path / "out", factor=100)
    assert written == 2 and len(skipped) == 1 and "missing.benchmark" in skipped[0]
    plain = (tmp_path / "out/benchmark/micro/sum.test").read_text()
    assert "range(0, 100000)" in plain and "i < 40000" in plain  # both sides scaled alike
    templated = (tmp_path / "out/benchmark/micro/templated.test").read_text()
    assert "require parquet" in templated
    assert "i % 3 AS g" in templated and "range(2500)" in templated  # argument, scaled
    assert "SELECT g, sum(v) FROM t GROUP BY g" in templated  # the run block's own file
    assert "SELECT count(*) FROM t" in templated  # the result query, as a query too
    assert benchmark_files.scaled("SELECT 199999, 'x1000000', 1.5000000, 300_000", 10) == (
        "SELECT 199999, 'x1000000', 1.5000000, 30000"
    )


def test_the_runner_replays_them_against_duckdb(tree: Path, tmp_path: Path) -> None:
    assert benchmark_files.main([str(tree), str(tmp_path / "out")]) == 0
    report = tmp_path / "report.json"
    code = slt.main([str(tmp_path / "out"), "--device", "duckdb", "--json", str(report)])
    assert code == 0
    assert json.loads(report.read_text())["totals"] == {"equal": 3}


def test_a_folder_without_benchmarks_is_named(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        benchmark_files.main([str(tmp_path), str(tmp_path / "out")])
