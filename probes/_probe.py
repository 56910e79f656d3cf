"""What the probes that take ``SEED FILE COUNT`` share: their arguments and the file they
write."""

import random
import sys
from pathlib import Path

#: A table of every ordering type with NULLs, NaN, -0.0, infinities, non-ASCII text and ties
#: (``ordered_rows.py``, ``distinct_on.py``).
TIES_TABLE = (
    "CREATE TABLE t AS SELECT i, "
    "CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 23 END AS k, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE ['nan', '-0.0', '0.0', 'inf', '-inf', '1.5', '-2.25', '1e300'][i % 8 + 1]::DOUBLE END AS x, "
    "CASE WHEN i % 11 = 0 THEN NULL ELSE ['a', 'B', 'é', '', 'ab', 'a ', 'Z', 'zz', '10', '9'][i % 10 + 1] END AS s, "
    "CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 37) % 1000 / 10.0)::DECIMAL(9,2) END AS d, "
    "CASE WHEN i % 23 = 0 THEN NULL ELSE DATE '2000-01-01' + ((i * 101) % 5000)::INTEGER END AS dt, "
    "CASE WHEN i % 29 = 0 THEN NULL ELSE TIMESTAMP '2020-01-01' + to_seconds((i * 7777) % 100000) END AS ts, "
    "CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END AS b, "
    "((i * 31) % 200 - 100)::SMALLINT AS n, (i % 5)::FLOAT / 3 AS f "
    "FROM range(4000) r(i)"
)


#: The split table ``t`` and a small ``u`` whose columns share names with it, with NULL keys
#: (``outer_joins.py``, ``correlated_joins.py``): each a "statement ok" block of lines.
JOINED_TABLES = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, "
    "CASE WHEN i % 23 = 0 THEN NULL ELSE (i % 7 - 3)::INTEGER END AS n, "
    "['a','b',NULL,'ab'][i % 4 + 1] AS s FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT i AS j, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 13 END AS k, "
    "(i % 5 - 2)::INTEGER AS n, ['a','b','z',NULL][i % 4 + 1] AS s FROM range(60) r(i)",
    "",
]


#: The UUIDs of ``TYPED_TABLE``'s column u.
UUIDS = [
    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    "47183823-2574-4bfd-b411-99ed177d3e43",
    "10203040-5060-7080-0102-030405060708",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "00000000-0000-0000-0000-000000000001",
]
#: A table of a column of every plain type DuckDB reads text as (UUID, DATE, TIMESTAMP in
#: three units, TIME, INTERVAL, INTEGER, UBIGINT, DECIMAL, DOUBLE, FLOAT, BOOLEAN, BLOB),
#: each with NULLs, and a text column of their spellings (``typed_texts.py``,
#: ``typed_calls.py``).
TYPED_TABLE = (
    "CREATE TABLE t AS SELECT i, i % 7 AS k, "
    "CASE WHEN i % 11 = 0 THEN NULL ELSE (" + repr(UUIDS).replace('"', "'") + ")[i % 5 + 1]::UUID "
    "END AS u, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE DATE '2020-01-01' + (i % 40)::INTEGER END AS dt, "
    "CASE WHEN i % 17 = 0 THEN NULL ELSE TIMESTAMP '2020-01-01' + to_minutes((i % 50) * 30) "
    "END AS ts, "
    "CASE WHEN i % 19 = 0 THEN NULL ELSE TIME '00:00:00' + to_minutes((i % 48) * 30) END AS tm, "
    "CASE WHEN i % 23 = 0 THEN NULL ELSE to_hours(i % 30) END AS iv, "
    "CASE WHEN i % 29 = 0 THEN NULL ELSE (i % 9 - 4)::INTEGER END AS n, "
    "CASE WHEN i % 31 = 0 THEN NULL ELSE ((i % 9) / 4)::DECIMAL(6,2) END AS d, "
    "CASE WHEN i % 37 = 0 THEN NULL ELSE (i % 9) / 4 END AS x, "
    "CASE WHEN i % 41 = 0 THEN NULL ELSE i % 3 = 0 END AS b, "
    "CASE WHEN i % 43 = 0 THEN NULL ELSE ['a', 'B', '\\x00', ''][i % 4 + 1]::BLOB END AS bl, "
    "CASE WHEN i % 47 = 0 THEN NULL ELSE (TIMESTAMP '2020-01-01' + to_minutes((i % 50) * 30) "
    "+ to_microseconds(i % 3))::TIMESTAMP_NS END AS ns, "
    "CASE WHEN i % 53 = 0 THEN NULL ELSE (TIMESTAMP '2020-01-01' + to_minutes((i % 50) * 30))"
    "::TIMESTAMP_MS END AS ms, "
    "CASE WHEN i % 59 = 0 THEN NULL ELSE ((i % 9) / 4)::FLOAT END AS f, "
    "CASE WHEN i % 61 = 0 THEN NULL ELSE (i % 9)::UBIGINT END AS ub, "
    "CASE WHEN i % 67 = 0 THEN NULL ELSE ['03:00:00', '3:00', '2020-01-05', '1', '0.5', "
    "'true', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '1 day', '2020-01-01 03:00:00'][i % 9 + 1] "
    "END AS s "
    "FROM range(2500) r(i)"
)


def arguments():
    """The seed's random source, the file to write and how many queries to draw, from the
    command line."""
    return random.Random(int(sys.argv[1])), sys.argv[2], int(sys.argv[3])


def copies():
    """The optional fourth argument: how many times each row of the table is written (1)."""
    return int(sys.argv[4]) if len(sys.argv) > 4 else 1


def write(out, lines):
    """The file ``out``: ``lines``, one a line."""
    Path(out).write_text("\n".join(lines) + "\n")
