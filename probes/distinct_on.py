"""Random DISTINCT ON queries over rows: one or two keys (columns or expressions, NULLs among
them), an ORDER BY led by the keys or not, one to three further keys of every type (NaN, -0.0,
infinities, NULLs, ties) ASC or DESC with NULLS FIRST or LAST, outputs that leave keys and
ORDER BY values out or read a star, a WHERE, a join to a small table, a derived table around
it (and a filter above it), LIMIT and OFFSET. Ties on every ORDER BY value are drawn often: DuckDB's pick among such
rows is its own, and the split answers them unsplit. Arguments: SEED FILE COUNT."""

from _probe import TIES_TABLE, arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    TIES_TABLE,
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
