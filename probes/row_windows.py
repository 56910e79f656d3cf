"""Random window functions over a block without aggregation: ranking, numbering, COUNT, MIN,
MAX and value functions (and SUM, AVG, refused), partitioned by zero to two keys and ordered by
zero to three (unique ones among them, so that some numbering windows split), with frames, in
outputs, QUALIFY and ORDER BY, under a WHERE, a join, LIMIT, DISTINCT and a derived table, over
NULLs, NaN and ties. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 23 END AS k, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE ['nan', '-0.0', '0.0', '1.5', '-2.25'][i % 5 + 1]::DOUBLE END AS x, "
    "CASE WHEN i % 11 = 0 THEN NULL ELSE ['a', 'B', 'é', '', 'ab'][i % 5 + 1] END AS s, "
    "CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 37) % 1000 / 10.0)::DECIMAL(9,2) END AS d, "
    "CASE WHEN i % 23 = 0 THEN NULL ELSE DATE '2000-01-01' + ((i * 101) % 500)::INTEGER END AS dt, "
    "((i * 31) % 200 - 100)::SMALLINT AS n FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE g AS SELECT i AS k, ['p', 'q', NULL][i % 3 + 1] AS grp FROM range(20) r(i)",
    "",
]
COLS = ["k", "x", "s", "d", "dt", "n"]
FUNCTIONS = [
    "rank()",
    "dense_rank()",
    "row_number()",
    "percent_rank()",
    "cume_dist()",
    "ntile(3)",
    "count(*)",
    "count(x)",
    "min(d)",
    "max(s)",
    "min(x)",
    "max(dt)",
    "lag(n)",
    "lead(s, 2)",
    "first_value(d)",
    "last_value(k)",
    "nth_value(n, 2)",
    "sum(n)",
    "avg(d)",
    "count(DISTINCT s)",
]


def window():
    function = R.choice(FUNCTIONS)
    parts = R.sample(["k", "s", "n % 3", "dt"], R.randint(0, 2))
    order = [
        f"{c}{R.choice(['', ' DESC'])}{R.choice(['', ' NULLS FIRST'])}"
        for c in R.sample(COLS, R.randint(0, 2))
    ]
    if R.random() < 0.4:
        order.append(f"i{R.choice(['', ' DESC'])}")  # unique: the order is total
    spec = []
    if parts:
        spec.append("PARTITION BY " + ", ".join(parts))
    if order:
        spec.append("ORDER BY " + ", ".join(order))
        if R.random() < 0.2:
            spec.append(
                R.choice(
                    [
                        "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
                        "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                    ]
                )
            )
    return f"{function} OVER ({' '.join(spec)})"


for _j in range(COUNT):
    where = R.choice(["", " WHERE n > -40", " WHERE s <> 'a'", " WHERE k IS NOT NULL"])
    source = "t" if R.random() < 0.8 else "t JOIN g USING (k)"
    cols = ", ".join(["i", *R.sample(COLS, R.randint(1, 2))])
    shape = R.randint(1, 6)
    if shape == 1:
        q = f"SELECT {cols}, {window()} AS w FROM {source}{where}"
    elif shape == 2:
        q = f"SELECT {cols} FROM {source}{where} QUALIFY {window()} {R.choice(['= 1', '<= 2', '> 1', 'IS NULL'])}"
    elif shape == 3:
        q = f"SELECT {cols}, {window()} AS w FROM {source}{where} ORDER BY w DESC NULLS LAST, i LIMIT {R.randint(1, 30)}"
    elif shape == 4:
        q = f"SELECT DISTINCT k, {window()} AS w FROM {source}{where}"
    elif shape == 5:
        q = f"SELECT count(*), count(w), min(w) FROM (SELECT i, {window()} AS w FROM {source}{where}) x"
    else:
        q = f"SELECT {cols}, {window()} AS w1, {window()} AS w2 FROM {source}{where} QUALIFY x IS NULL OR x = max(x) OVER (PARTITION BY k)"
    lines += ["query I", q, ""]
write(out, lines)
