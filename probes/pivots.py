"""Random PIVOT queries (rewrite/pivots.py writes them as the grouped query of filtered
aggregates DuckDB binds them to): ON items of every type whose text is a value's own (integer,
DECIMAL, text, DATE, BOOLEAN) and some whose text is not (DOUBLE, TIMESTAMP), with NULLs and
text holding 'NULL'; values listed (constants, NULL, typed literals, names) or found from the
rows (DuckDB's MULTI statement), one or two ON items, an expression as an ON item; one to three
USING aggregates (aliased or not, DISTINCT, an expression of one); GROUP BY or the columns
nothing reads; a table, a filtered subquery or a CTE as the source; the FROM clause's form
(``FROM src PIVOT (aggs FOR p IN (...) GROUP BY g)``); ORDER BY and LIMIT after it; and ``pivot_filter_threshold`` set low between queries, so DuckDB answers some with its
list plan instead of filtered aggregates. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, i % 3 AS k, ['x', 'y', NULL][i % 3 + 1] AS g, "
    "CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7) % 5 END::INTEGER AS n, "
    "CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 3) % 4 / 2)::DECIMAL(5,1) END AS d, "
    "CASE WHEN i % 23 = 0 THEN NULL WHEN i % 29 = 0 THEN 'NULL' "
    "ELSE ['a', 'B', 'é', '', 'a b'][i % 5 + 1] END AS s, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE DATE '2020-01-30' + (i % 4)::INTEGER END AS dt, "
    "CASE WHEN i % 11 = 0 THEN NULL ELSE i % 2 = 0 END AS b, "
    "CASE WHEN i % 7 = 0 THEN NULL ELSE [0.5, -0.0, 0.0, 2.25][i % 4 + 1]::DOUBLE END AS x, "
    "TIMESTAMP '2020-01-01' + to_hours(i % 3) AS ts, "
    "(i * 37) % 101 AS v, ((i * 13) % 50 / 4)::DECIMAL(9,2) AS m FROM range(3000) r(i)",
    "",
]
ONS = {
    "n": ["0", "1", "4", "NULL", "'2'", "7"],
    "d": ["0.0", "0.5", "1.5", "'1.0'", "1", "NULL"],
    "s": ["'a'", "'B'", "'é'", "''", "'NULL'", "a", "NULL"],
    "dt": ["'2020-01-30'", "DATE '2020-01-31'", "'2020-2-1'", "NULL"],
    "b": ["true", "false", "NULL", "'true'"],
    "x": ["0.5", "'-0.0'", "0.0", "2.25"],
    "ts": ["'2020-01-01 01:00:00'", "TIMESTAMP '2020-01-01'"],
    "k": ["0", "1", "2"],
    "n % 3": ["0", "1", "2"],
}
AGGREGATES = [
    "sum(v)",
    "count(*)",
    "min(m)",
    "max(s)",
    "avg(v)",
    "count(DISTINCT k)",
    "sum(m)",
    "count(n)",
    "first(v ORDER BY i)",
    "sum(v) + 1",
    "bool_or(b)",
]
SOURCES = ["t", "t", "(SELECT * FROM t WHERE i > 400)", "(SELECT k, n, d, s, v, m FROM t)"]
for _ in range(COUNT):
    if R.random() < 0.15:
        lines += ["statement ok", f"SET pivot_filter_threshold = {R.choice([1, 2, 20])}", ""]
    ons = R.sample(list(ONS), R.choice([1, 1, 1, 2]))
    written = []
    for on in ons:
        if R.random() < 0.5 and on != "n % 3":
            values = R.sample(ONS[on], R.randint(1, min(4, len(ONS[on]))))
            written.append(f"{on} IN ({', '.join(values)})")
        else:
            written.append(on)
    using = R.sample(AGGREGATES, R.randint(0, 3))
    using = [u + (f" AS a{n}" if R.random() < 0.3 else "") for n, u in enumerate(using)]
    source = R.choice(SOURCES)
    group = R.choice(["", " GROUP BY k", " GROUP BY g", " GROUP BY k, g", " GROUP BY i"])
    if source.startswith("(SELECT k") and "g" in group:
        group = " GROUP BY k"
    q = f"PIVOT {source} ON {', '.join(written)}"
    if using:
        q += f" USING {', '.join(using)}"
    q += group
    if using and all(" IN (" in w for w in written) and R.random() < 0.4:
        # the FROM clause's form of the same pivot
        alias = R.choice(["", " AS p"])
        q = f"SELECT * FROM {source} PIVOT ({', '.join(using)} FOR {' '.join(written)}{group}){alias}"
    if R.random() < 0.3 and group:
        q = f"WITH p AS ({q}) SELECT * FROM p"
    if group and R.random() < 0.6:
        q += f" ORDER BY ALL{R.choice(['', ' LIMIT 3', ' LIMIT 2 OFFSET 1'])}"
        lines += ["query I", q, ""]
    else:
        lines += ["query I rowsort", q, ""]
write(out, lines)
