"""A random walk of changes to a database file under one Session kept open over its
connection: rows inserted, updated and deleted (by value, by range, by rowid, all of them),
CHECKPOINT and VACUUM, with a query after each change at a random device share, checked
against DuckDB on the same connection. The table holds several row groups (122,880 rows
each), so a CHECKPOINT drops whole row groups of deleted rows and leaves rowids with gaps
(the class the forty-third session fixed). Not a sqllogictest file: the runner opens a new
Session after each statement. Arguments: SEED DEVICE STEPS; prints each wrong answer and a
count, and exits 1 if there is one.

    python probes/walks/connection_walk.py 1 polars 40
"""

import os
import random
import sys
import tempfile
import warnings

import duckdb

from dau_scheduler import Session
from dau_scheduler.compare import compare_tables

QUERIES = [
    "SELECT k, count(*), sum(x), min(v), max(v) FROM t GROUP BY k ORDER BY k",
    "SELECT count(*), sum(v) FROM t WHERE v > 50",
    "SELECT u.name, count(*) FROM t JOIN u ON t.k = u.k GROUP BY u.name ORDER BY 1",
    "SELECT x, v FROM t WHERE k = 3 ORDER BY x DESC LIMIT 5",
    "SELECT count(DISTINCT v) FROM t",
]


def change(rng: random.Random) -> str:
    """One change to the table, drawn."""
    lo = rng.randint(0, 300000)
    return rng.choice(
        [
            f"INSERT INTO t SELECT i, i % 7, (i * 13) % 101 FROM range({rng.randint(1, 200000)}) r(i)",
            f"DELETE FROM t WHERE x % {rng.randint(2, 50)} = {rng.randint(0, 1)}",
            f"DELETE FROM t WHERE x BETWEEN {lo} AND {lo + rng.randint(1000, 200000)}",
            "CHECKPOINT",
            f"UPDATE t SET v = v + 1 WHERE k = {rng.randint(0, 6)}",
            "DELETE FROM t" if rng.random() < 0.3 else "CHECKPOINT",
            "VACUUM t",
            f"DELETE FROM t WHERE rowid % {rng.randint(2, 9)} = 0",
            f"INSERT INTO t SELECT x + 1000000, k, v FROM t WHERE k = {rng.randint(0, 6)}",
        ]
    )


def main() -> int:
    warnings.simplefilter("ignore")
    seed, device, steps = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    folder = tempfile.mkdtemp(prefix="dau-walk-")
    con = duckdb.connect(os.path.join(folder, "walk.db"))
    con.execute(
        "CREATE TABLE t AS SELECT i AS x, i % 7 AS k, (i * 13) % 101 AS v FROM range(300000) r(i)"
    )
    con.execute("CREATE TABLE u AS SELECT i AS k, 'n' || i AS name FROM range(7) r(i)")
    wrong = 0
    with Session(con, device=device) as session:
        for step in range(steps):
            statement = change(rng)
            con.execute(statement)
            sql = rng.choice(QUERIES)
            result = session.sql(sql, device_share=rng.choice([0.2, 0.5, 0.8]))
            want = con.sql(sql).to_arrow_table()
            diff = compare_tables(result.table, want, ordered="ORDER BY" in sql)
            if diff is not None:
                wrong += 1
                print(f"wrong at step {step}, after {statement}: {sql}: {diff}")
    con.close()
    print(f"{device}, seed {seed}, {steps} steps: {wrong} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
