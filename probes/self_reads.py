"""Random queries that read the split table more than once: self-joins (inner, left, semi,
anti, on keys and inequalities), the table in FROM and again in an IN, EXISTS or scalar
subquery (correlated or not), in a CTE read twice, in both branches of a UNION ALL, and in a
derived table joined back to it. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 19 = 0 THEN NULL ELSE i % 23 END AS k, "
    "(i % 7)::INTEGER AS g, ((i * 7919) % 1000 - 500)::INTEGER AS n, "
    "((i * 37) % 10000 / 100.0)::DECIMAL(9,2) AS d, ['a', 'b', NULL][i % 3 + 1] AS s "
    "FROM range(4000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE small AS SELECT i AS k, i % 3 AS grp FROM range(30) r(i)",
    "",
]
AGG = ["count(*)", "sum(a.n)", "min(a.d)", "max(a.i)", "count(DISTINCT a.k)", "avg(a.n)"]


def agg():
    return R.choice(AGG)


def cond(a, b):
    return R.choice(
        [
            f"{a}.k = {b}.k",
            f"{a}.k = {b}.k AND {a}.g = {b}.g",
            f"{a}.i = {b}.i + 1",
            f"{a}.g = {b}.g AND {a}.n < {b}.n",
            f"{a}.i = {b}.k",
        ]
    )


def where():
    return R.choice(["", "", " WHERE a.n > 0", " WHERE a.g = 3", " WHERE a.s IS NOT NULL"])


for _ in range(COUNT):
    form = R.randint(1, 9)
    if form == 1:  # self-join (small side filtered so the rows stay few)
        kind = R.choice(["JOIN", "LEFT JOIN", "SEMI JOIN", "ANTI JOIN"])
        q = f"SELECT {agg()}, {agg()} FROM t a {kind} (SELECT * FROM t WHERE i % 50 = 0) b ON {cond('a', 'b')}{where()}"
    elif form == 2:  # grouped self-join
        q = f"SELECT a.g, {agg()} FROM t a JOIN t b ON a.i = b.i + {R.randint(-3, 3)} {where().replace('WHERE', 'AND') if where() else ''} GROUP BY a.g ORDER BY a.g"
    elif form == 3:  # uncorrelated IN over the same table
        q = f"SELECT {agg()} FROM t a WHERE a.k IN (SELECT k FROM t WHERE n > {R.randint(300, 490)})"
    elif form == 4:  # correlated scalar subquery over the same table
        q = f"SELECT {agg()} FROM t a WHERE a.n > (SELECT avg(n) FROM t b WHERE b.g = a.g)"
    elif form == 5:  # EXISTS over the same table
        q = f"SELECT a.g, {agg()} FROM t a WHERE {R.choice(['', 'NOT '])}EXISTS (SELECT 1 FROM t b WHERE b.k = a.k AND b.i <> a.i AND b.n > 450) GROUP BY a.g ORDER BY ALL"
    elif form == 6:  # a CTE read twice
        q = "WITH c AS (SELECT g, k, sum(n) AS total FROM t GROUP BY g, k) SELECT count(*), sum(x.total), max(y.total) FROM c x JOIN c y ON x.k = y.k AND x.g = (y.g + 1) % 7"
    elif form == 7:  # UNION ALL of two reads
        q = "SELECT g, count(*), sum(n) FROM (SELECT g, n FROM t WHERE n > 0 UNION ALL SELECT g, -n FROM t WHERE s = 'a') u GROUP BY g ORDER BY g"
    elif form == 8:  # a grouped derived table joined back
        q = f"SELECT {agg()}, count(*) FROM t a JOIN (SELECT g, max(n) AS top FROM t GROUP BY g) m ON a.g = m.g AND a.n = m.top"
    else:  # the table in FROM, a scalar over it in SELECT
        q = f"SELECT a.g, {agg()}, (SELECT count(*) FROM t WHERE n > 400) AS c FROM t a JOIN small ON small.k = a.k GROUP BY a.g ORDER BY a.g"
    lines += ["query I", q.replace("  ", " "), ""]
write(out, lines)
