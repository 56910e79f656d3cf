"""Random queries in DuckDB's own syntax: GROUP BY ALL, ORDER BY ALL, SELECT * EXCLUDE/REPLACE,
COLUMNS(...), FROM-first, QUALIFY, USING and NATURAL joins, positional and aliased GROUP BY,
FILTER, DISTINCT ON, struct and list literals, string slicing and the || and ^ operators."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, "
    "(i % 7 - 3)::INTEGER AS n, ['a', 'b', NULL, 'ab'][i % 4 + 1] AS s, (i % 5) * 0.5 AS x "
    "FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT i AS j, i % 11 AS k, ['a', 'z'][i % 2 + 1] AS s FROM range(11) r(i)",
    "",
]
AGG = ["count(*)", "sum(i)", "max(s)", "min(x)", "count(DISTINCT n)", "avg(n)", "sum(x)"]
WHERE = ["", " WHERE n > 0", " WHERE s IS NOT NULL", " WHERE k IN (1, 2, 3)"]
FORMS = [
    "SELECT k, n, {a} FROM t{w} GROUP BY ALL",
    "SELECT k, {a} AS v FROM t{w} GROUP BY ALL ORDER BY ALL",
    "SELECT * EXCLUDE (i, x) FROM t{w} ORDER BY ALL LIMIT 10",
    "SELECT * REPLACE (n * 2 AS n) FROM t{w} ORDER BY i LIMIT 10",
    "SELECT max(COLUMNS('[in]')) FROM t{w}",
    "FROM t{w} SELECT k, {a} GROUP BY k",
    "SELECT k, n, row_number() OVER (PARTITION BY k ORDER BY i) AS r FROM t{w} QUALIFY r <= 2",
    "SELECT s, {a} FROM t JOIN u USING (k, s){w} GROUP BY s",
    "SELECT count(*), {a} FROM t NATURAL JOIN u",
    "SELECT k % 3 AS g, {a} FROM t{w} GROUP BY 1",
    "SELECT k % 3 AS g, {a} FROM t{w} GROUP BY g HAVING count(*) > 10",
    "SELECT count(*) FILTER (WHERE n > 0), sum(i) FILTER (s = 'a') FROM t{w}",
    "SELECT DISTINCT ON (k) k, i FROM t{w} ORDER BY k, i",
    "SELECT {{'k': k, 'n': n}} AS st, count(*) FROM t{w} GROUP BY st",
    "SELECT [k, n] AS l, count(*) FROM t{w} GROUP BY l",
    "SELECT s[1:1] AS p, {a} FROM t{w} GROUP BY p",
    "SELECT n ^ 2 AS p, count(*) FROM t{w} GROUP BY p",
    "SELECT s || '-' || k AS p, count(*) FROM t{w} GROUP BY p",
    "SELECT k, {a} FROM t{w} GROUP BY k ORDER BY 2 DESC, 1 LIMIT 3",
    "SELECT k, {a} FROM t{w} GROUP BY CUBE (k, n % 2)",
]
for _ in range(COUNT):
    form = R.choice(FORMS)
    lines += ["query I", form.format(a=R.choice(AGG), w=R.choice(WHERE)), ""]
write(out, lines)
