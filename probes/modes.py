"""Random mode() and histogram() queries over skewed values, so that most groups have one most
frequent value (rewrite/modes.py splits them; a mode's tie is answered unsplit): every column
type the split takes and those it refuses (FLOAT, DOUBLE, INTERVAL), with GROUP BY, WHERE,
HAVING on the aggregate, other aggregates beside it, a derived table around it and a join to a
small table. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
# v: 0..9, value j on 2j + 1 of every 100 rows (distinct counts, so one mode over the table).
V = "floor(sqrt((i * 7919) % 100))::INTEGER"
COLS = {
    "ti": f"{V}::TINYINT",
    "bi": f"({V} - 4)::BIGINT * 1000000000000",
    "hg": f"{V}::HUGEINT * 18446744073709551616",
    "ub": f"({V} + 18446744073709551605)::UBIGINT",
    "d9": f"({V} / 4)::DECIMAL(9,2)",
    "d38": f"({V} / 3)::DECIMAL(38,10)",
    "s": f"['', 'a', 'A', 'é', 'zz', 'a ', 'ß', '10', '9', 'Z'][{V} + 1]",
    "b": f"{V} > 6",
    "dt": f"DATE '2020-02-27' + {V}",
    "ts": f"TIMESTAMP '1999-12-31 23:59:59' + INTERVAL ({V}) SECOND",
    "tz": f"TIMESTAMPTZ '2024-02-29 23:59:59+00' + INTERVAL ({V}) HOUR",
    "tm": f"TIME '23:59:50' + INTERVAL ({V}) SECOND",
    "uu": f"('0000000' || {V} || '-0000-0000-0000-000000000000')::UUID",
    "f": f"({V} - 4.5)::FLOAT",
    "db": f"({V} / 10)::DOUBLE",
    "iv": f"INTERVAL ({V}) DAY",
}
columns = ", ".join(
    f"CASE WHEN (i * 31 + {n}) % 17 = 0 THEN NULL ELSE {e} END AS {c}"
    for n, (c, e) in enumerate(COLS.items())
)
lines = [
    "statement ok",
    f"CREATE TABLE t AS SELECT i, i % 4 AS k, ['x', 'y', NULL][i % 3 + 1] AS g, {columns} "
    "FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE small AS SELECT i AS k, i % 2 AS grp FROM range(3) r(i)",
    "",
]
OTHERS = ["count(*)", "sum(i)", "min({c})", "max({c})", "count(DISTINCT {c})", "count({c})"]
WHERE = ["", "", " WHERE i > 700", " WHERE i % 3 <> 1", " WHERE g IS NOT NULL", " WHERE i < 0"]

for _ in range(COUNT):
    c = R.choice(list(COLS))
    keys = R.choice(["", "", "k", "g", "k, g", "k % 2 = 0"])
    call = f"{R.choice(['mode', 'mode', 'histogram'])}({c})"
    if R.random() < 0.08:
        # (histogram, not mode, of DISTINCT values: each value once, every mode ties, and
        # DuckDB's pick among them is its threads'; a CI run met another pick than its reruns)
        call = R.choice(
            [f"histogram(DISTINCT {c})", f"mode({c} ORDER BY i)", f"{call} FILTER (WHERE i > 9)"]
        )
    outputs = [call] + [o.format(c=c) for o in R.sample(OTHERS, R.randint(0, 2))]
    where = R.choice(WHERE)
    form = R.randint(1, 5)
    if form == 1 or not keys:
        q = f"SELECT {', '.join(outputs)} FROM t{where}"
        if keys:
            q += f" GROUP BY {keys}"
    elif form == 2:
        q = f"SELECT {keys}, {', '.join(outputs)} FROM t{where} GROUP BY ALL"
    elif form == 3:
        q = f"SELECT {keys}, {', '.join(outputs)} FROM t{where} GROUP BY {keys} HAVING {call} IS NOT NULL"
    elif form == 4:
        q = f"SELECT * FROM (SELECT {keys}, {call} AS m FROM t{where} GROUP BY {keys}) q WHERE m IS NOT NULL"
    else:
        q = f"SELECT s.grp, {', '.join(outputs)} FROM t JOIN small s ON t.k = s.k{where} GROUP BY s.grp"
    lines += ["query I", q + " ORDER BY ALL", ""]
write(out, lines)
