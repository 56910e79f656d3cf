"""Random subqueries that take rows by LIMIT or OFFSET, under an ORDER BY whose keys tie often
(or hold every output, or a GROUP BY key), or under none (a plain scan, a join, a GROUP BY, a
DISTINCT), read by the split block as IN, NOT IN, a scalar comparison, a joined derived table,
a CTE and EXISTS. Every subquery's outputs are unique (the row number ``i`` or a GROUP BY key)
and the outer query counts them (a v's distinct values), so DuckDB's own answer is the same
whichever tied rows a run takes; a split whose arms took other rows counts otherwise. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, i % 7 AS k, (i * 37) % 101 AS v, "
    "CASE WHEN i % 9 = 0 THEN NULL ELSE (i * 13) % 17 END AS n FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT i AS j, i % 7 AS k, (i * 5) % 3 AS w FROM range(40) r(i)",
    "",
]
#: ORDER BY keys over t's columns: most tie (v, k, n, an expression), some are total.
KEYS = ["v", "k", "n", "v % 10", "k DESC", "n NULLS FIRST", "v DESC, k", "v, i", "i DESC"]


def clause() -> str:
    limit = f" LIMIT {R.randint(1, 60)}"
    return R.choice(
        [limit, limit, f"{limit} OFFSET {R.randint(1, 30)}", f" OFFSET {R.randint(2900, 2995)}"]
    )


def subquery() -> str:
    """A query of one column of unique values, ``x``, taking rows by LIMIT/OFFSET."""
    where = R.choice(["", "", " WHERE v > 20", " WHERE n IS NOT NULL"])
    form = R.randint(1, 6)
    if form <= 2:  # rows under an ORDER BY that may tie
        return f"SELECT i AS x FROM t AS s{where} ORDER BY {R.choice(KEYS)}{clause()}"
    if form == 3:  # rows in their own order (a plain scan)
        return f"SELECT i AS x FROM t AS s{where}{clause()}"
    if form == 4:  # a GROUP BY's groups, ordered by the key or not
        order = R.choice(["", " ORDER BY 1", " ORDER BY count(*)", " ORDER BY count(*), 1"])
        return f"SELECT v AS x FROM t AS s{where} GROUP BY v{order}{clause()}"
    if form == 5:  # a join's rows
        order = R.choice(["", " ORDER BY u.w", " ORDER BY s.i"])
        return f"SELECT s.i AS x FROM t AS s JOIN u ON s.k = u.j AND u.w = 1{order}{clause()}"
    return f"SELECT DISTINCT v AS x FROM t AS s{where}{R.choice(['', ' ORDER BY 1'])}{clause()}"


for _ in range(COUNT):
    sub, form = subquery(), R.randint(1, 6)
    col = "v" if " v AS x" in sub else "i"
    # (a v is held by many rows: what is counted of them is its distinct values)
    counted = "count(DISTINCT t.v)" if col == "v" else "count(*)"
    if form == 1:
        q = f"SELECT {counted} FROM t WHERE t.{col} IN ({sub})"
    elif form == 2:
        q = f"SELECT {counted} FROM t WHERE t.{col} NOT IN ({sub})"
    elif form == 3:
        q = f"SELECT count(*) FROM t WHERE t.k < (SELECT count(*) FROM ({sub}) m) % 7"
    elif form == 4:
        q = f"SELECT {counted} FROM t JOIN ({sub}) d ON t.{col} = d.x"
    elif form == 5:
        q = f"WITH d AS ({sub}) SELECT {counted} FROM t WHERE t.{col} IN (SELECT x FROM d)"
    else:
        q = f"SELECT count(*) FROM t WHERE EXISTS ({sub}) AND t.k > 2"
    lines += ["query I", q, ""]
write(out, lines)
