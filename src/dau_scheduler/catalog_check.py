"""DuckDB's function catalog as an oracle: every function of a few plain parameter types,
called over columns of edge values, split on a device, against DuckDB's unsplit answer.

``duckdb_functions()`` lists each overload's parameter types. For every scalar function (and
operator) of one to three parameters among the plain types, and every aggregate of one or two,
this module builds calls over a table whose columns hold the values engines disagree on (the
int64 extremes, -0.0, NaN and the infinities, far dates, TIME '24:00:00', non-ASCII text, empty
strings, NULL), runs each at two device shares, and compares (``compare.compare_tables``) with
DuckDB on the same connection. A DOUBLE result is also read through ``1 / v``, so the
sign of a zero shows. Found so (2026-12-02): Polars takes ``pow(x, 0.5)`` as a square root,
which differs from C's pow at -inf and -0.0; and ``min(x, n)`` (a list of the n least) was
read as ``min(x)``, a crash.

    python -m dau_scheduler.catalog_check --device polars [--kind scalar|aggregate]
        [--like PATTERN] [--params N] [--way connection|lazy|resident|chunked|streamed]
        [--json F]

An outcome is ``split``, ``refused``, ``fallback``, ``unanswered`` (DuckDB itself fails it),
``wrong`` or ``crashed``; exit 1 on a wrong or crashed call. ``mode``, ``first`` and the like
are refused (their answer depends on ties or order), so a refused call is compared too: the
unsplit answer must be DuckDB's, and a tie broken otherwise is reported as ``wrong``, a finding
to read, not a defect of the split.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

import duckdb

from dau_scheduler.compare import compare_tables, report_outcomes
from dau_scheduler.parquet_check import folder_session

#: The table every call reads: k is the group key, one column per plain type.
TABLE = """CREATE TABLE t AS SELECT i % 3 AS k,
  [0, 1, -1, 2, -7, 9223372036854775807, -9223372036854775808, 42, NULL, 100][i % 10 + 1]::BIGINT
    AS b,
  [0, 3, -3, 127, NULL][i % 5 + 1]::INTEGER AS n,
  [0.0, -0.0, 1.5, -2.5, 'nan', 'inf', '-inf', 1e300, 1e-300, NULL, 0.1, 2.0][i % 12 + 1]::DOUBLE
    AS f,
  ['', 'abc', 'ÄÖü', ' x ', 'a,b', NULL, '12', '-3.5', 'İ', 'ß', 'x' || chr(9) || 'y',
   '2020-01-02'][i % 12 + 1] AS s,
  ['2020-02-29', '1970-01-01', '0001-01-01', '9999-12-31', NULL, '1969-12-31', '2000-03-01'
  ][i % 7 + 1]::DATE AS d,
  ['2020-02-29 12:34:56.789', '1970-01-01', '1969-12-31 23:59:59.999999', NULL,
   '2262-04-11 23:47:16'][i % 5 + 1]::TIMESTAMP AS ts,
  ['01:02:03', '00:00:00', '24:00:00', NULL][i % 4 + 1]::TIME AS tm,
  [1.25, -0.5, 0, NULL, 9999999.99][i % 5 + 1]::DECIMAL(9, 2) AS dc,
  [true, false, NULL][i % 3 + 1]::BOOLEAN AS bo,
  [[1, 2, 3], [], NULL, [NULL, 5], [9223372036854775807, -1], [3, 3, 1]][i % 6 + 1]::BIGINT[] AS l,
  [['a', 'b'], [], NULL, ['', NULL], ['ÄÖ', 'z', 'a']][i % 5 + 1]::VARCHAR[] AS ls,
  [['1.5', 'nan'], [], NULL, ['-0.0', '0.0'], ['inf', NULL, '-inf']][i % 5 + 1]::DOUBLE[] AS lf,
  [{'a': 1, 'b': 'x'}, NULL, {'a': NULL, 'b': NULL}, {'a': -5, 'b': 'ÄÖ'}][i % 4 + 1] AS st,
  [MAP {'a': 1, 'b': 2}, MAP {}, NULL, MAP {'z': NULL}][i % 4 + 1] AS m,
  [INTERVAL 1 DAY, INTERVAL (-1) MONTH, INTERVAL '1 year 2 months 3 days 04:05:06',
   INTERVAL 1 MICROSECOND, NULL][i % 5 + 1] AS iv,
  ['\\x00\\xFF'::BLOB, ''::BLOB, 'abc'::BLOB, NULL][i % 4 + 1] AS bl,
  ['2020-02-29 12:34:56+00'::TIMESTAMPTZ, '1970-01-01 00:00:00+05:30', NULL][i % 3 + 1] AS tz,
  [170141183460469231731687303715884105727::HUGEINT, -170141183460469231731687303715884105727,
   0, NULL][i % 4 + 1] AS h,
  ['nan', 'inf', '-0.0', '1.5', NULL, '3.4e38'][i % 6 + 1]::FLOAT AS fl,
  [32767, -32768, 0, NULL][i % 4 + 1]::SMALLINT AS si,
  [18446744073709551615, 0, NULL, 1][i % 4 + 1]::UBIGINT AS ub
  FROM range(60) r(i)"""
#: Columns and literals by DuckDB parameter type.
COLUMNS = {
    "BIGINT": ["b"],
    "INTEGER": ["n"],
    "DOUBLE": ["f"],
    "VARCHAR": ["s"],
    "DATE": ["d"],
    "TIMESTAMP": ["ts"],
    "TIME": ["tm"],
    "DECIMAL": ["dc"],
    "BOOLEAN": ["bo"],
    "ANY": ["b", "s"],
    "T": ["b", "s"],
    "K": ["s"],
    "V": ["n"],
    "ANY[]": ["l", "ls"],
    "T[]": ["l", "ls", "lf"],
    "BIGINT[]": ["l"],
    "VARCHAR[]": ["ls"],
    "DOUBLE[]": ["lf"],
    "FLOAT[]": ["lf"],
    "STRUCT": ["st"],
    "MAP(K, V)": ["m"],
    "INTERVAL": ["iv"],
    "BLOB": ["bl"],
    "TIMESTAMP WITH TIME ZONE": ["tz"],
    "HUGEINT": ["h"],
    "FLOAT": ["fl"],
    "SMALLINT": ["si"],
    "UBIGINT": ["ub"],
    "LAMBDA": [],
}
LITERALS = {
    "BIGINT": ["2", "0", "-1"],
    "INTEGER": ["2", "0"],
    "DOUBLE": ["0.5", "2.0"],
    "VARCHAR": ["'b'", "''", "'%Y'"],
    "DATE": ["DATE '2020-01-01'"],
    "TIMESTAMP": ["TIMESTAMP '2020-01-01'"],
    "TIME": ["TIME '12:00:00'"],
    "BOOLEAN": ["true"],
    "DECIMAL": ["1.5"],
    "ANY": ["1"],
    "T": ["1", "'a'"],
    "K": ["'a'"],
    "V": ["1"],
    "ANY[]": ["[1, 2]"],
    "T[]": ["[1, NULL]"],
    "BIGINT[]": ["[2, 3]"],
    "VARCHAR[]": ["['a']"],
    "DOUBLE[]": ["[0.5]"],
    "FLOAT[]": ["[0.5]"],
    "STRUCT": ["{'a': 1}"],
    "MAP(K, V)": ["MAP {'a': 1}"],
    "INTERVAL": ["INTERVAL 1 DAY"],
    "BLOB": ["'a'::BLOB"],
    "TIMESTAMP WITH TIME ZONE": ["TIMESTAMPTZ '2020-01-01 00:00:00+00'"],
    "HUGEINT": ["2"],
    "FLOAT": ["0.5"],
    "SMALLINT": ["2"],
    "UBIGINT": ["2"],
    "LAMBDA": ["lambda x: x", "lambda x: x IS NULL", "lambda x, y: x"],
}
OPERATORS = ("+", "-", "*", "/", "//", "%")
#: Functions with side effects, or whose value is the run's own.
SKIPPED = frozenset(
    {"error", "sleep_ms", "write_log", "setseed", "nextval", "currval", "setval", "stats"}
)


def calls(
    con: duckdb.DuckDBPyConnection, kind: str, like: str = "%", most: int | None = None
) -> list[str]:
    """The calls to make: for each overload of plain parameter types (at most ``most``: 3 for
    a scalar, 2 for an aggregate unless given), its first parameter a column and the others
    each literal and column of their type."""
    rows = con.execute(
        "SELECT function_name, parameter_types FROM duckdb_functions() WHERE function_type = $1 "
        "AND len(parameter_types) BETWEEN 1 AND $2 AND function_name LIKE $3 "
        "AND regexp_full_match(function_name, '[a-z][a-z_0-9]*')",
        [kind, most or (3 if kind == "scalar" else 2), like],
    ).fetchall()
    made: set[str] = set()
    for name, params in rows:
        kinds = ["DECIMAL" if str(p).startswith("DECIMAL") else str(p) for p in params]
        if name in SKIPPED or not all(k in COLUMNS for k in kinds):
            continue
        rest = [LITERALS[k] + COLUMNS[k] for k in kinds[1:]]
        for first in COLUMNS[kinds[0]]:
            for more in itertools.product(*rest):
                made.add(f"{name}({', '.join([first, *more])})")
    if kind == "scalar" and like == "%":
        operands = ["b", "n", "f", "dc", "2", "-0.0", "0.0"]
        for op, a, b in itertools.product(OPERATORS, operands, operands):
            if a[0].isalpha() or b[0].isalpha():
                made.add(f"({a} {op} {b})")
    return sorted(made)


def _sql(con: duckdb.DuckDBPyConnection, call: str, kind: str) -> str | None:
    """The query of ``call``: per row (scalar, filtered so the split cannot pass the table
    through) or per group and whole (aggregate); None where DuckDB cannot type it."""
    try:
        typed = str(con.sql(f"SELECT typeof({call}) FROM t LIMIT 1").fetchall()[0][0])
    except (duckdb.Error, UnicodeError):
        return None
    if kind == "aggregate":
        return f"SELECT k, {call} AS v FROM t GROUP BY k"
    sign = f", 1 / ({call}) AS w" if typed in ("DOUBLE", "FLOAT") else ""
    return f"SELECT k, {call} AS v{sign} FROM t WHERE k >= 0"


#: Where the table is: a connection's table, or a Parquet file read by a folder Session lazily,
#: loaded, or in chunks under a memory budget (three chunks: the partials fold again).
WAYS = ("connection", "lazy", "resident", "chunked", "streamed")


def check(
    device: str,
    kind: str = "scalar",
    like: str = "%",
    most: int | None = None,
    way: str = "connection",
) -> list[dict[str, Any]]:
    """One record per call: its outcome at shares 0.3 and 0.7 (the first that is not equal).
    Over Parquet (``way`` other than ``connection``) DuckDB over the same file is the oracle."""
    if way not in WAYS:
        raise ValueError(f"way {way!r}: one of {', '.join(WAYS)}")
    con = duckdb.connect()
    con.execute(TABLE)
    records: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="dau-catalog-check-") as folder,
        _session(con, device, way, Path(folder)) as session,
    ):
        for call in calls(con, kind, like, most):
            records.append({"call": call, **_one(session, con, call, kind)})
    con.close()
    return records


def _session(con: duckdb.DuckDBPyConnection, device: str, way: str, folder: Path) -> Any:
    """The Session under test; over Parquet, ``con``'s ``t`` becomes a view of the file."""
    from dau_scheduler.session import Session

    if way == "connection":
        return Session(con, device=device)
    # (Parquet holds no negative interval: the one such value is turned around.)
    con.execute(
        "COPY (SELECT * REPLACE (CASE WHEN iv < INTERVAL 0 DAY THEN -iv ELSE iv END AS iv) "
        f"FROM t) TO '{folder / 't.parquet'}' (FORMAT parquet, ROW_GROUP_SIZE 20)"
    )
    con.execute("DROP TABLE t")
    con.execute(f"CREATE VIEW t AS FROM read_parquet('{folder / 't.parquet'}')")
    return folder_session(folder, device, way)


def _one(session: Any, con: duckdb.DuckDBPyConnection, call: str, kind: str) -> dict[str, Any]:
    sql = _sql(con, call, kind)
    if sql is None:
        return {"outcome": "unanswered"}
    try:
        expected = con.sql(sql).to_arrow_table()
    except (duckdb.Error, UnicodeError):  # a value that is not text (chr of a half of a pair)
        return {"outcome": "unanswered"}
    outcome: dict[str, Any] = {}
    for share in (0.3, 0.7):
        try:
            result = session.sql(sql, device_share=share)
        except Exception as exc:  # noqa: BLE001 - a crash is an outcome here, reported by name
            return {"outcome": "crashed", "share": share, "why": f"{type(exc).__name__}: {exc}"}
        diff = compare_tables(result.table, expected, ordered=False)
        if diff is not None:
            return {"outcome": "wrong", "share": share, "why": diff[:300]}
        if result.refusal is not None:
            outcome = {"outcome": "refused", "why": result.refusal[:200]}
        elif result.fallback is not None:
            outcome = {"outcome": "fallback", "why": result.fallback[:200]}
        else:
            outcome = {"outcome": "split"}
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="polars")
    parser.add_argument("--kind", choices=("scalar", "aggregate"), default="scalar")
    parser.add_argument("--like", default="%", help="only functions whose name is LIKE this")
    parser.add_argument("--params", type=int, help="most parameters (3 scalar, 2 aggregate)")
    parser.add_argument("--way", choices=WAYS, default="connection")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    records = check(args.device, args.kind, args.like, args.params, args.way)
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return report_outcomes(records, f"{len(records)} calls: ", lambda r: str(r["call"]))


if __name__ == "__main__":
    raise SystemExit(main())
