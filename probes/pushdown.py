"""Random filters above a split block: an enclosing WHERE over a derived table or CTE, and a
HAVING over the keys, over blocks that group (by columns, expressions, ROLLUP, GROUPING SETS),
DISTINCT, DISTINCT ON, windows, LIMIT, set operations of mixed types (UNION [ALL], INTERSECT,
EXCEPT, BY NAME), beside outer joins, with conditions over keys, aggregates, expressions of
keys, NULL tests, COALESCE, CASE, IN lists and subqueries: what rewrite/pushdown.py copies into
the partial must not change the answer. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, (i % 7 - 3)::INTEGER AS n, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 37) % 101 + 0.25)::DECIMAL(9,2) END AS p, "
    "['a','b','c',NULL,'ab', '05', '5'][i % 7 + 1] AS s FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT i AS j, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 13 END AS k, ['a','05','z',NULL][i % 4 + 1] AS s FROM range(40) r(i)",
    "",
]
CONDITIONS = [
    "x.k > 3",
    "x.k IS NULL",
    "x.k IS NOT NULL",
    "coalesce(x.k, 0) < 2",
    "x.k IN (1, 2, NULL)",
    "x.k NOT IN (1, 2)",
    "CASE WHEN x.k IS NULL THEN true ELSE x.k % 2 = 0 END",
    "x.a > 10",
    "x.a IS NULL",
    "x.k IN (SELECT k FROM u)",
    "x.k NOT IN (SELECT k FROM u WHERE k IS NOT NULL)",
    "x.k = (SELECT max(k) FROM u) - 4",
    "x.m >= 1",
    "x.m IS NULL",
    "x.s > '1'",
    "x.s = '5'",
    "x.k + x.a > 7",
    "NOT (x.k > 5)",
]


def block():
    kind = R.randint(1, 11)
    if kind == 1:
        return "SELECT k, k % 3 AS m, s, count(*) AS a FROM t GROUP BY k, s"
    if kind == 2:
        return "SELECT k % 3 AS k, k AS m, NULL::VARCHAR AS s, sum(n) AS a FROM t GROUP BY k"
    if kind == 3:
        return "SELECT k, n AS m, s, count(*) AS a FROM t GROUP BY ROLLUP (k, n, s)"
    if kind == 4:
        return "SELECT k, n AS m, s, count(p) AS a FROM t GROUP BY GROUPING SETS ((k), (k, n), (s))"
    if kind == 5:
        return "SELECT DISTINCT k, n AS m, s, n * 2 AS a FROM t"
    if kind == 6:
        return "SELECT DISTINCT ON (k) k, n AS m, s, i AS a FROM t ORDER BY k, i DESC"
    if kind == 7:
        return "SELECT k, n AS m, s, count(*) OVER (PARTITION BY k) AS a FROM t"
    if kind == 8:
        return "SELECT k, n AS m, s, i AS a FROM t ORDER BY i LIMIT 40"
    if kind == 9:
        return "SELECT k, n AS m, s, i AS a FROM t WHERE p > 20"
    if kind == 10:
        return "SELECT k, max(n) AS m, max(s) AS s, count(*) AS a FROM t GROUP BY k HAVING count(*) > 200"
    return "SELECT k, n AS m, s, sum(i) AS a FROM t GROUP BY ALL"


def derived():
    b = block()
    if R.random() < 0.3:
        other = R.choice(
            [
                "SELECT k, j AS m, s, j AS a FROM u",
                "SELECT k::VARCHAR AS k, j AS m, s, j AS a FROM u",
                "SELECT k, j AS m, j::VARCHAR AS s, 1 AS a FROM u",
                "SELECT 1 AS k, 2 AS m, '05' AS s, 3 AS a",
            ]
        )
        op = R.choice(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "UNION ALL BY NAME"])
        b = f"({b}) {op} {other}" if R.random() < 0.5 else f"{other} {op} ({b})"
    return b


for _j in range(COUNT):
    b = derived()
    where = " AND ".join(R.sample(CONDITIONS, R.randint(1, 2)))
    shape = R.randint(1, 6)
    if shape == 1:
        q = f"SELECT count(*), count(x.k), sum(x.a) FROM ({b}) x WHERE {where}"
    elif shape == 2:
        q = f"WITH x AS ({b}) SELECT x.s, count(*) FROM x WHERE {where} GROUP BY x.s"
    elif shape == 3:
        join = R.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
        q = f"SELECT count(*), count(u.j), count(x.k) FROM u {join} ({b}) x ON u.k = x.k WHERE {where}"
    elif shape == 4:
        q = f"SELECT count(*), max(x.k) FROM ({b}) x JOIN u ON u.k = x.k WHERE {where}"
    elif shape == 5:
        q = f"SELECT count(*), sum(y.a) FROM (SELECT * FROM ({b}) x WHERE {where}) y WHERE y.k IS NOT NULL OR y.m > 0"
    else:
        having = R.choice(
            ["k > 3", "k IS NULL", "k IN (1, 2)", "count(*) > 100", "s IS NULL OR k = 2"]
        )
        q = f"SELECT k, s, count(*), sum(n) FROM t GROUP BY {R.choice(['k, s', 'ROLLUP (k, s)', 'CUBE (k, s)', 'GROUPING SETS ((k), (k, s))'])} HAVING {having}"
    lines += ["query I", q, ""]
write(out, lines)
