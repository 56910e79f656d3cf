"""sqllogictest files replayed with each query's literals made parameters: every number and
text literal (not a LIMIT, OFFSET, interval, type or ORDER BY's) becomes ``$1``, ``$2``... and
its value (an int, a Decimal, a float, a str) is passed as ``params``; the split's answer is
checked against DuckDB's with the same parameters (``con.sql(sql, params=...)``). Both raising
is agreement. Not a file the runner reads: it passes parameters, which a file cannot hold.
Arguments: DEVICE FILE...; prints each wrong answer or lone error and the counts, and exits 1
if there is one.

    python probes/walks/literal_parameters.py duckdb tests/slt/*.test
"""

import contextlib
import decimal
import sys
import warnings
from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from dau_scheduler import Session, slt
from dau_scheduler.compare import compare_tables
from dau_scheduler.guards import is_query
from dau_scheduler.rewrite.dialect import DIALECT

#: Where a literal stays: DuckDB takes no parameter there, or it is the query's shape.
KEPT = (exp.Limit, exp.Offset, exp.Fetch, exp.Interval, exp.DataType, exp.Ordered)


def parameterized(sql: str) -> tuple[str, list[object]] | None:
    """``sql`` with its literals as numbered parameters, and their values; None where sqlglot
    cannot read it or it holds no literal."""
    try:
        tree = sqlglot.parse_one(sql, read=DIALECT)
    except (sqlglot.errors.SqlglotError, IndexError):  # (IndexError: a lone SHOW)
        return None
    values: list[object] = []
    for literal in list(tree.find_all(exp.Literal)):
        if literal.find_ancestor(*KEPT) is not None:
            continue
        text = str(literal.this)
        if isinstance(literal.parent, exp.Bracket):
            # sqlglot holds an index it types zero-based: the value is the one written
            shown = DIALECT().generator().bracket_offset_expressions(literal.parent)
            if len(shown) != 1 or not isinstance(shown[0], exp.Literal):
                continue
            text = str(shown[0].this)
        if literal.is_string:
            values.append(text)
        elif literal.is_int:
            values.append(int(text))
        elif "e" in text.lower():
            try:
                values.append(float(text))
            except ValueError:  # (sqlglot reads 1e308+1 as one literal)
                return None
        else:
            values.append(decimal.Decimal(text))
        literal.replace(exp.Placeholder(this=str(len(values))))
    return (tree.sql(dialect=DIALECT), values) if values else None


def check(con: duckdb.DuckDBPyConnection, session: Session, sql: str) -> str | None:
    """The outcome of ``sql`` with its literals made parameters: ``split``, ``unsplit``,
    ``raised`` (both), ``unstable`` (DuckDB's own answer varies), or a defect's description."""
    found = parameterized(sql)
    if found is None:
        return None
    query, params = found
    try:
        expected = con.sql(query, params=params).to_arrow_table()
    except duckdb.Error:
        expected = None
    try:
        result = session.sql(query, params=params, device_share=0.5)
    except Exception as exc:  # noqa: BLE001 (any error: DuckDB's or ours)
        return "raised" if expected is None else f"raised where DuckDB answers: {exc!r:.200}"
    if expected is None:
        return "answered where DuckDB raises"
    ordered = "order by" in query.lower()
    with contextlib.suppress(sqlglot.errors.SqlglotError):  # (sqlglot reads $9:$7 as a string)
        ordered = sqlglot.parse_one(query, read=DIALECT).args.get("order") is not None
    why = compare_tables(result.table, expected, ordered=ordered)
    if why is None and result.table.column_names != expected.column_names:
        why = f"names {result.table.column_names} for {expected.column_names}"
    if why is None:
        return "split" if result.execution is not None else "unsplit"
    again = con.sql(query, params=params).to_arrow_table()
    if compare_tables(again, expected, ordered=ordered) is not None:
        return "unstable"
    return f"wrong: {why} ({query} with {params})"


def _select(sql: str) -> bool:
    """Whether ``sql`` is one query that changes nothing (a file's query records hold INSERTs
    with RETURNING, and SELECTs over a CTE that inserts)."""
    try:
        found = duckdb.extract_statements(sql)
    except duckdb.Error:
        return False
    return len(found) == 1 and is_query(sql, found[0].type)  # (no INSERT in a CTE either)


def replay(path: Path, device: str, counts: dict[str, int]) -> list[str]:
    """One file's statements run, its queries checked; the defects found."""
    records, why = slt.parse(path.read_text(errors="replace"))
    defects: list[str] = []
    if why is not None:
        return defects
    con = duckdb.connect()
    session = None
    for record in records:
        if record.kind == "statement":
            if session is not None:
                session.close()
                session = None
            with contextlib.suppress(duckdb.Error):  # (fetched: DuckDB 2.0 holds the
                done = con.execute(record.sql)  # connection for an unfinished result; a
                if done is not None:  # statement of comments alone gives none)
                    done.fetchall()
            continue
        if record.kind != "query" or slt.VOLATILE.search(record.sql) or not _select(record.sql):
            continue
        try:
            session = session or Session(con, device=device)
        except duckdb.Error:  # (an aborted transaction: DuckDB's own run raises too)
            continue
        outcome = check(con, session, record.sql)
        if outcome is None:
            continue
        kind = outcome if outcome in ("split", "unsplit", "raised", "unstable") else "defect"
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "defect":
            defects.append(f"{path}:{record.line}: {outcome}")
    if session is not None:
        session.close()
    con.close()
    return defects


def main() -> int:
    warnings.simplefilter("ignore", DeprecationWarning)
    device, files = sys.argv[1], sys.argv[2:]
    counts: dict[str, int] = {}
    defects = [d for f in files for d in replay(Path(f), device, counts)]
    for defect in defects:
        print(defect)
    print(device, dict(sorted(counts.items())))
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
