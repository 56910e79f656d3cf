"""Random DISTINCT ON queries over rows: one or two keys (columns or expressions, NULLs among
them), an ORDER BY led by the keys or not, one to three further keys of every type (NaN, -0.0,
infinities, NULLs, ties) ASC or DESC with NULLS FIRST or LAST, outputs that leave keys and
ORDER BY values out or read a star, a WHERE, a join to a small table, a derived table around
it (and a filter above it), LIMIT and OFFSET. Ties on every ORDER BY value are drawn often: DuckDB's pick among such
rows is its own, and the split answers them unsplit. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, "
    "CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 23 END AS k, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE ['nan', '-0.0', '0.0', 'inf', '-inf', '1.5', '-2.25', '1e300'][i % 8 + 1]::DOUBLE END AS x, "
    "CASE WHEN i % 11 = 0 THEN NULL ELSE ['a', 'B', 'é', '', 'ab', 'a ', 'Z', 'zz', '10', '9'][i % 10 + 1] END AS s, "
    "CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 37) % 1000 / 10.0)::DECIMAL(9,2) END AS d, "
    "CASE WHEN i % 23 = 0 THEN NULL ELSE DATE '2000-01-01' + ((i * 101) % 5000)::INTEGER END AS dt, "
    "CASE WHEN i % 29 = 0 THEN NULL ELSE TIMESTAMP '2020-01-01' + to_seconds((i * 7777) % 100000) END AS ts, "
    "CASE WHEN i % 7 = 0 THEN NULL ELSE i % 3 = 0 END AS b, "
    "((i * 31) % 200 - 100)::SMALLINT AS n "
    "FROM range(4000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE g AS SELECT i AS k, ['p', 'q', NULL][i % 3 + 1] AS grp FROM range(20) r(i)",
    "",
]
COLS = ["i", "k", "x", "s", "d", "dt", "ts", "b", "n"]
KEYS = ["k", "s", "b", "n % 5", "year(dt)", "d > 50", "coalesce(k, -1)", "upper(s)"]
WHERE = ["n > -50", "s <> 'a'", "k IS NOT NULL", "x > 0 OR x IS NULL", "dt < DATE '2010-01-01'"]

for _j in range(COUNT):
    on = R.sample(KEYS, R.choice([1, 1, 2]))
    later = [
        f"{c}{R.choice(['', ' DESC'])}{R.choice(['', ' NULLS FIRST', ' NULLS LAST'])}"
        for c in R.sample(COLS, R.randint(1, 3))
    ]
    order = [*on, *later] if R.random() < 0.7 else [*later, *on]
    star = R.random() < 0.15
    outputs = "*" if star else ", ".join(R.sample(COLS, R.randint(1, 4)))
    if R.random() < 0.5:
        outputs = outputs if star else f"{on[0]} AS key0, {outputs}"
    where = f" WHERE {R.choice(WHERE)}" if R.random() < 0.5 else ""
    source = "t"
    if R.random() < 0.2:
        source = "t JOIN g USING (k)"
        outputs = outputs if star else f"{outputs}, grp"
    q = f"SELECT DISTINCT ON ({', '.join(on)}) {outputs} FROM {source}{where} ORDER BY {', '.join(order)}"
    if R.random() < 0.3:
        q += f" LIMIT {R.randint(1, 12)}"
        if R.random() < 0.4:
            q += f" OFFSET {R.randint(1, 5)}"
    if R.random() < 0.15:
        q = f"SELECT count(*), count(DISTINCT i) FROM ({q}) AS x"
    elif R.random() < 0.2 and not star:  # a filter above: never pushed past the pick
        column = R.choice([c for c in COLS if c in outputs.split(", ")] or ["key0"])
        if column in outputs:
            q = f"SELECT * FROM ({q}) AS x WHERE x.{column} IS NOT NULL AND x.{column} {R.choice(['<>', '>', '<='])} (SELECT min({column}) FROM t)"
    lines += ["query I", q, ""]
write(out, lines)
