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


def arguments():
    """The seed's random source, the file to write and how many queries to draw, from the
    command line."""
    return random.Random(int(sys.argv[1])), sys.argv[2], int(sys.argv[3])


def write(out, lines):
    """The file ``out``: ``lines``, one a line."""
    Path(out).write_text("\n".join(lines) + "\n")
