"""Random query shapes: CTEs, derived tables, set operations, DISTINCT, HAVING, ORDER BY/LIMIT,
windows, joins to small tables, over NULLs and ties."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, (i % 7 - 3)::INTEGER AS n, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 37) % 101 + 0.25)::DECIMAL(9,2) END AS p, (i % 5) * 0.5 AS x, "
    "['a','b','c',NULL,'ab'][i % 5 + 1] AS s FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT i AS j, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 13 END AS k, (i % 5 - 2)::INTEGER AS n, ['a','b','z',NULL][i % 4 + 1] AS s FROM range(60) r(i)",
    "",
]


def agg():
    return R.choice(
        [
            "count(*)",
            "sum(i)",
            "sum(p)",
            "min(s)",
            "max(n)",
            "count(DISTINCT k)",
            "avg(n)",
            "count(p)",
            "sum(x)",
            "max(p)",
        ]
    )


def where():
    return R.choice(
        [
            "",
            " WHERE n > 0",
            " WHERE k IS NULL",
            " WHERE s <> 'a'",
            " WHERE p < 50",
            " WHERE i % 3 = 0",
            " WHERE k IN (SELECT k FROM u)",
        ]
    )


def block():
    kind = R.randint(1, 10)
    w = where()
    if kind == 1:
        return f"SELECT k, {agg()} AS a FROM t{w} GROUP BY k"
    if kind == 2:
        return f"SELECT DISTINCT k, n FROM t{w}"
    if kind == 3:
        return f"SELECT k, {agg()} AS a FROM t{w} GROUP BY k HAVING {agg()} > {R.randint(0, 200)}"
    if kind == 4:
        return f"SELECT t.k, {agg().replace('(i)', '(t.i)').replace('(p)', '(t.p)').replace('(s)', '(t.s)').replace('(n)', '(t.n)').replace('(k)', '(t.k)').replace('(x)', '(t.x)')} AS a FROM t {R.choice(['JOIN', 'LEFT JOIN'])} u ON t.k = u.k GROUP BY t.k"
    if kind == 5:
        return f"SELECT k, n FROM t{w} ORDER BY i LIMIT {R.randint(1, 50)}"
    if kind == 6:
        return f"SELECT k, sum(n) OVER (PARTITION BY k) AS a FROM t{w}"
    if kind == 7:
        return f"SELECT s AS k, {agg()} AS a FROM t{w} GROUP BY ROLLUP (s)"
    if kind == 8:
        return f"SELECT k, row_number() OVER (PARTITION BY k ORDER BY i) AS a FROM t{w}"
    if kind == 9:
        return f"SELECT n AS k, {agg()} AS a FROM t{w} GROUP BY n"
    return f"SELECT k, n AS a FROM t{w}"


for _j in range(COUNT):
    shape = R.randint(1, 7)
    b = block()
    if shape == 1:
        q = f"WITH c AS ({b}) SELECT count(*), count(DISTINCT k) FROM c"
    elif shape == 2:
        q = f"SELECT k, count(*) FROM ({b}) d GROUP BY k"
    elif shape == 3:
        b2 = block()
        op = R.choice(["UNION", "UNION ALL", "EXCEPT", "INTERSECT", "EXCEPT ALL", "INTERSECT ALL"])
        q = f"SELECT count(*) FROM (SELECT k FROM ({b}) x {op} SELECT k FROM ({b2}) y) z"
    elif shape == 4:
        q = f"SELECT * FROM ({b}) d ORDER BY k NULLS FIRST, 2 LIMIT {R.randint(1, 20)}"
    elif shape == 5:
        q = f"WITH c AS ({b}) SELECT c.k, count(*) FROM c JOIN u ON c.k = u.k GROUP BY c.k"
    elif shape == 6:
        q = f"SELECT max(k), min(k), count(*) FROM ({b}) d WHERE k IS NOT NULL"
    else:
        q = b
    lines += ["query I", q, ""]
write(out, lines)
