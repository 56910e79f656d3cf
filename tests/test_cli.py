"""The dau command, end to end through typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from dau_scheduler.cli import app

runner = CliRunner()


def test_run_prints_the_answer_and_the_split_report(tpch_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "run",
            "q06",
            "--data",
            str(tpch_dir),
            "--device",
            "duckdb",
            "--share",
            "0.5",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert list(rows[0]) == ["revenue"]
    assert "split report" in result.stderr and "device share" in result.stderr


def test_run_sql_text_and_csv(tpch_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "run",
            "select count(*) as n from nation",
            "--data",
            str(tpch_dir),
            "--device",
            "none",
            "--format",
            "csv",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ['"n"', "25"]
    # The report says why the host ran alone, not only that nothing was cut.
    assert "split table" in result.stderr and "none" in result.stderr
    assert "no device arm" in result.stderr


def test_run_takes_the_query_s_parameters_as_text(tpch_dir: Path) -> None:
    """``--param`` values are text, which DuckDB reads as a string literal (here a number and
    a date); the split's answer is DuckDB's with them, and too few is DuckDB's error. (The
    Polars arm refused the text compared with a number until it learned to read it as
    DuckDB does: arms/polars_texts.py.)"""
    sql = "select count(*) as n from lineitem where l_quantity > $1 and l_shipdate < $2"
    argv = ["run", sql, "--data", str(tpch_dir), "--device", "polars", "--share", "0.5"]
    result = runner.invoke(
        app, [*argv, "--format", "csv", "--param", "45", "--param", "1995-01-01"]
    )
    assert result.exit_code == 0, result.output
    lineitem = tpch_dir / "lineitem.parquet"
    expected = duckdb.sql(
        f"select count(*) from '{lineitem}' where l_quantity > 45 and l_shipdate < '1995-01-01'"
    ).fetchall()[0]
    assert result.stdout.splitlines() == ['"n"', str(expected[0])]
    assert "refusal" not in result.stderr
    short = runner.invoke(app, [*argv, "--param", "45"])
    assert short.exit_code == 2 and "parameter" in short.output.lower(), short.output


def test_explain_shows_partial_and_final_sql(tpch_dir: Path) -> None:
    result = runner.invoke(app, ["explain", "q01", "--data", str(tpch_dir)])
    assert result.exit_code == 0, result.output
    assert "split table: lineitem" in result.stdout
    assert "__dau_split__" in result.stdout and "__dau_partials" in result.stdout
    # With parameters: the plan of the query with them written in, as run splits it.
    sql = "select sum(l_quantity) from lineitem where l_quantity > $1"
    argv = ["explain", sql, "--data", str(tpch_dir)]
    bound = runner.invoke(app, [*argv, "--param", "45"])
    assert bound.exit_code == 0, bound.output
    assert "split table: lineitem" in bound.stdout and "'45'" in bound.stdout
    unbound = runner.invoke(app, [*argv, "--param", "45", "--param", "46"])
    assert unbound.exit_code == 0 and "refusal: the query's parameters" in unbound.stdout


def test_errors_are_named_with_exit_code_2(tpch_dir: Path, tmp_path: Path) -> None:
    bad = runner.invoke(app, ["run", "select nope from nation", "--data", str(tpch_dir)])
    assert bad.exit_code == 2 and "nope" in bad.stderr
    missing = runner.invoke(app, ["run", "q01", "--data", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    share = runner.invoke(app, ["run", "q01", "--data", str(tpch_dir), "--share", "2"])
    assert share.exit_code == 2 and "device_share" in share.stderr
    unknown = runner.invoke(app, ["run", "q23", "--data", str(tpch_dir)])
    assert unknown.exit_code == 2 and "unknown query 'q23'" in unknown.stderr


def test_data_may_be_a_duckdb_database_file(tpch_dir: Path, tmp_path: Path) -> None:
    import duckdb

    database = tmp_path / "tpch.duckdb"
    with duckdb.connect(str(database)) as con:
        for name in ("lineitem", "orders"):
            con.execute(f"CREATE TABLE {name} AS FROM read_parquet('{tpch_dir / name}.parquet')")
        expected = con.sql(
            "SELECT o_orderpriority, count(*) AS n, sum(l_quantity) AS q FROM "
            "lineitem JOIN orders ON l_orderkey = o_orderkey GROUP BY 1 ORDER BY 1"
        ).fetchall()
    before = database.read_bytes()
    sql = (
        "SELECT o_orderpriority, count(*) AS n, sum(l_quantity) AS q FROM lineitem JOIN "
        "orders ON l_orderkey = o_orderkey GROUP BY 1 ORDER BY 1"
    )
    for device in ("polars", "duckdb"):
        result = runner.invoke(
            app,
            [
                "run",
                sql,
                "--data",
                str(database),
                "--device",
                device,
                "--share",
                "0.5",
                "--format",
                "json",
            ],
        )
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)
        assert [(r["o_orderpriority"], r["n"], float(r["q"])) for r in rows] == [
            (p, n, float(q)) for p, n, q in expected
        ]
        assert "split table" in result.stderr and "lineitem" in result.stderr
    explained = runner.invoke(app, ["explain", sql, "--data", str(database)])
    assert explained.exit_code == 0 and "split table: lineitem" in explained.stdout
    # Opened read-only and closed: the file is as it was, and a writer may open it again.
    assert database.read_bytes() == before
    duckdb.connect(str(database)).close()


def test_without_data_a_query_reads_its_files_inline(tpch_dir: Path) -> None:
    """Without --data the command opens an empty DuckDB: the files a query reads inline (a
    glob too) are its tables, split as any table (decision 028)."""
    sql = (
        f"SELECT l_returnflag, count(*) AS n, sum(l_quantity) AS q FROM '{tpch_dir}/line*.parquet'"
        " GROUP BY 1 ORDER BY 1"
    )
    result = runner.invoke(
        app, ["run", sql, "--device", "polars", "--share", "0.5", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    expected = duckdb.sql(sql).fetchall()
    assert [tuple(row.values()) for row in json.loads(result.stdout)] == [
        (flag, n, str(q)) for flag, n, q in expected
    ]
    assert "device rows" in result.stderr and "refusal" not in result.stderr


def test_data_that_is_neither_a_folder_nor_a_database_is_named(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    result = runner.invoke(app, ["run", "select 1", "--data", str(text)])
    assert result.exit_code == 2
    assert str(text) in result.stderr and "not a DuckDB database" in result.stderr
    assert text.read_text() == "not a database\n"


def test_a_query_number_without_its_zero_is_the_query(tpch_dir: Path) -> None:
    short = runner.invoke(app, ["explain", "q6", "--data", str(tpch_dir)])
    assert short.exit_code == 0, short.output
    assert short.stdout == runner.invoke(app, ["explain", "q06", "--data", str(tpch_dir)]).stdout


def test_tpch_generate(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["tpch", "generate", "--scale", "0.001", "--out", str(tmp_path / "d")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d" / "lineitem.parquet").exists()
    bad = runner.invoke(app, ["tpch", "generate", "--scale", "-1", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "scale" in bad.stderr


def test_demo_splits_every_query_and_checks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAU_DATA_DIR", str(tmp_path / "data"))
    result = runner.invoke(app, ["demo", "--scale", "0.01", "--device", "duckdb"])
    assert result.exit_code == 0, result.output
    assert "22 of 22 answers match" in result.stdout


def test_size_and_calibrate(
    tpch_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAU_CACHE_DIR", str(tmp_path))
    sized = runner.invoke(app, ["size", "q01", "--data", str(tpch_dir), "--mem-budget", "1"])
    assert sized.exit_code == 0, sized.output
    assert "streamed" in sized.stdout and "uncalibrated" in sized.stdout
    calibrated = runner.invoke(
        app, ["calibrate", "q01", "--data", str(tpch_dir), "--device", "polars", "--repeats", "1"]
    )
    assert calibrated.exit_code == 0, calibrated.output
    assert "polars" in calibrated.stdout and (tmp_path / "calibration.json").exists()
    again = runner.invoke(app, ["size", "q01", "--data", str(tpch_dir), "--device", "polars"])
    assert again.exit_code == 0 and "placement (calibration)" in again.stdout
    refused = runner.invoke(
        app, ["size", "select entropy(l_quantity) from lineitem", "--data", str(tpch_dir)]
    )
    assert refused.exit_code == 2 and "refused" in refused.stderr


def test_run_under_a_budget_reports_the_strategy(tpch_dir: Path) -> None:
    result = runner.invoke(
        app,
        [
            "run",
            "q01",
            "--data",
            str(tpch_dir),
            "--device",
            "duckdb",
            "--share",
            "0.5",
            "--mem-budget",
            "16",
            "--strategy",
            "streamed",
            "--chunk-rows",
            "20000",
            "--format",
            "csv",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "streamed" in result.stderr and "of 20000 rows" in result.stderr


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_values_python_cannot_hold_print_as_duckdb_writes_them(tpch_dir: Path, fmt: str) -> None:
    """DuckDB's infinity, a year past 9999 and TIME '24:00:00': the table and JSON crashed
    (Python's datetime holds none of them), CSV wrote '<value out of range: ...>', and pyarrow
    read 24:00:00 as 00:00:00."""
    sql = (
        "select 'infinity'::DATE as d, DATE '12000-01-01' as e, TIME '24:00:00' as t, "
        "count(*) as n from nation"
    )
    result = runner.invoke(app, ["run", sql, "--data", str(tpch_dir), "--format", fmt])
    assert result.exit_code == 0, result.output
    for text in ("infinity", "12000-01-01", "24:00:00", "25"):
        assert text in result.stdout
    assert "out of range" not in result.stdout and "00:00:00" not in result.stdout.replace(
        "24:00:00", ""
    )


def test_a_time_zone_pytz_does_not_know_is_compared_and_printed() -> None:
    """A TIMESTAMPTZ read under ``SET TimeZone = 'ECT'`` (an ICU name) carries that zone in
    Arrow; pytz raised KeyError for it, and the comparator of DuckDB's test/optimizer sweep
    crashed. Such a column is compared by its instants and printed as DuckDB writes it."""
    import duckdb

    from dau_scheduler.cli_output import displayable, python_holds
    from dau_scheduler.compare import compare_tables

    con = duckdb.connect()
    con.execute("SET TimeZone = 'ECT'")
    table = con.sql("SELECT TIMESTAMPTZ '2020-01-01 00:00:00+00' AS t").to_arrow_table()
    assert table.schema.field("t").type.tz == "ECT"
    later = con.sql("SELECT TIMESTAMPTZ '2020-01-01 00:00:01+00' AS t").to_arrow_table()
    assert compare_tables(table, table) is None
    assert compare_tables(table, later) is not None
    assert not python_holds(table.column("t"))
    assert "2020-01-01" in str(displayable(table).column("t")[0])
