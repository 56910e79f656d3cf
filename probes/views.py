"""Random queries over views: views that filter, compute, rename their columns, aggregate,
join, dedupe, window, limit, hold a CTE or a UNION, and views of views; read alone, joined to
each other or to tables, in subqueries, under an alias named like another view or table.
Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
SETUP = [
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, "
    "((i * 7919) % 1000 - 500)::INTEGER AS n, ((i * 37) % 10000 / 100.0)::DECIMAL(9,2) AS d, "
    "['a', 'b', NULL, 'é'][i % 4 + 1] AS s, DATE '2020-01-01' + (i % 500)::INTEGER AS dt "
    "FROM range(5000) r(i)",
    "CREATE TABLE u AS SELECT i AS k, 'u' || i AS name, (i % 3)::INTEGER AS grp FROM range(12) r(i)",
    "CREATE VIEW pos AS SELECT * FROM t WHERE n > 0",
    "CREATE VIEW calc(i, key, twice, label) AS SELECT i, k, n * 2, s || '!' FROM t",
    "CREATE VIEW agg AS SELECT k, count(*) AS c, sum(n) AS total, avg(d) AS mean FROM t GROUP BY k",
    "CREATE VIEW joined AS SELECT t.i, t.n, t.d, u.name, u.grp FROM t JOIN u ON t.k = u.k",
    "CREATE VIEW dedup AS SELECT DISTINCT k, s FROM t",
    "CREATE VIEW ranked AS SELECT i, k, n, row_number() OVER (PARTITION BY k ORDER BY n, i) AS r FROM t",
    "CREATE VIEW top AS SELECT i, n FROM t ORDER BY n DESC, i LIMIT 50",
    "CREATE VIEW withcte AS WITH w AS (SELECT k, n FROM t WHERE d > 20) SELECT k, n FROM w",
    "CREATE VIEW both AS SELECT i, n FROM t WHERE n < -400 UNION ALL SELECT i, n FROM t WHERE n > 400",
    "CREATE VIEW onpos AS SELECT k, n, d FROM pos WHERE k IS NOT NULL",
    "CREATE VIEW onagg AS SELECT k, total FROM agg WHERE c > 100",
]
VIEWS = {
    "pos": ["i", "k", "n", "d", "s", "dt"],
    "calc": ["i", "key", "twice", "label"],
    "agg": ["k", "c", "total", "mean"],
    "joined": ["i", "n", "d", "name", "grp"],
    "dedup": ["k", "s"],
    "ranked": ["i", "k", "n", "r"],
    "top": ["i", "n"],
    "withcte": ["k", "n"],
    "both": ["i", "n"],
    "onpos": ["k", "n", "d"],
    "onagg": ["k", "total"],
}
NUMERIC = {"i", "k", "n", "d", "key", "twice", "c", "total", "mean", "grp", "r"}


def num(view):
    return R.choice([c for c in VIEWS[view] if c in NUMERIC])


def anycol(view):
    return R.choice(VIEWS[view])


lines = []
for statement in SETUP:
    lines += ["statement ok", statement, ""]
for _ in range(COUNT):
    v = R.choice(list(VIEWS))
    alias = R.choice([v, "x", "t", "u", "agg"]) if R.random() < 0.3 else v
    a = f"{alias}."
    form = R.randint(1, 7)
    if form == 1:
        q = f"SELECT count(*), sum({a}{num(v)}), min({a}{anycol(v)}) FROM {v} AS {alias}"
    elif form == 2:
        g = anycol(v)
        q = f"SELECT {a}{g} AS g, count(*), max({a}{num(v)}) FROM {v} AS {alias} GROUP BY g ORDER BY ALL"
    elif form == 3:
        w = R.choice(list(VIEWS))
        q = f"SELECT count(*), sum({a}{num(v)}) FROM {v} AS {alias} WHERE {a}{num(v)} IN (SELECT {num(w)} FROM {w})"
    elif form == 4:
        q = f"SELECT count(*), sum(t.n) FROM t JOIN {v} AS {alias if alias != 't' else 'x'} ON t.i = {alias if alias != 't' else 'x'}.{num(v)}"
    elif form == 5:
        q = f"SELECT * FROM {v} AS {alias} ORDER BY ALL LIMIT {R.randint(1, 30)}"
    elif form == 6:
        q = f"SELECT u.grp, count(*), sum({a}{num(v)}) FROM {v} AS {alias if alias != 'u' else 'x'} LEFT JOIN u ON u.k = {alias if alias != 'u' else 'x'}.{num(v)} GROUP BY u.grp ORDER BY ALL"
        q = q.replace(f"sum({a}", f"sum({(alias if alias != 'u' else 'x')}.")
    else:
        q = f"SELECT count(*) FROM {v} AS {alias} WHERE EXISTS (SELECT 1 FROM t WHERE t.i = {a}{num(v)} AND t.n > 0)"
    lines += ["query I", q, ""]
write(out, lines)
