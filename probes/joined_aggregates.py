"""Random aggregates over joins: a fact table joined to dimension tables (inner, left, right,
full, semi and anti; keys with NULLs, duplicate dimension keys that fan rows out, keys no row
matches), grouped by either side's columns, aggregating either side's values (a dimension's
value counted once per matching fact row), with DISTINCT, FILTER and HAVING; the dimension
read in a subquery, a CTE or a derived table too. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE f AS SELECT i, CASE WHEN i % 23 = 0 THEN NULL ELSE i % 13 END AS k, "
    "CASE WHEN i % 19 = 0 THEN NULL ELSE (i * 7) % 5 END AS j, "
    "((i * 7919) % 2000 - 1000)::INTEGER AS n, "
    "CASE WHEN i % 31 = 0 THEN NULL ELSE ((i * 37) % 10000 / 100.0)::DECIMAL(9,2) END AS d, "
    "CASE WHEN i % 29 = 0 THEN NULL ELSE ((i * 13) % 1000) / 8.0 END::DOUBLE AS x, "
    "['a', 'b', NULL, 'é', ''][i % 5 + 1] AS s, DATE '2020-01-01' + (i % 400)::INTEGER AS dt, "
    "i % 3 = 0 AS b FROM range(6000) r(i)",
    "",
    "statement ok",
    # k 0..14 (13, 14 match no fact row; 11 twice: fan-out; one NULL key)
    "CREATE TABLE dk AS SELECT * FROM (VALUES (0, 'zero', 1.50::DECIMAL(9,2), 10), "
    "(1, 'one', 2.25, 20), (2, 'two', NULL, 30), (3, NULL, 4.00, NULL), (4, 'four', 0.10, 50), "
    "(5, 'five', -1.00, 60), (6, 'six', 7.77, 70), (7, 'seven', 8.88, 80), (8, 'eight', 9.99, 90), "
    "(9, 'nine', 0.01, 100), (10, 'ten', 100.00, 110), (11, 'eleven', 11.11, 120), "
    "(11, 'eleven again', 12.12, 121), (13, 'thirteen', 13.13, 130), (14, 'fourteen', 14.14, 140), "
    "(NULL, 'nothing', 0.00, 0)) v(k, name, w, c)",
    "",
    "statement ok",
    "CREATE TABLE dj AS SELECT * FROM (VALUES (0, 'a'), (1, 'b'), (2, 'a'), (3, NULL), (5, 'c')) v(j, grp)",
    "",
]
JOINS = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT JOIN", "JOIN"]
FACT = ["f.n", "f.d", "f.x", "f.i"]
DIM = ["dk.w", "dk.c"]
KEYS = ["dk.name", "dk.k", "f.s", "f.b", "dj.grp", "f.k", "dk.c % 3", "year(f.dt)"]


def agg(dims):
    r = R.random()
    value = R.choice(FACT + (DIM if "dk" in dims else []))
    if r < 0.3:
        call = f"{R.choice(['sum', 'avg', 'min', 'max', 'count'])}({value})"
    elif r < 0.4:
        call = "count(*)"
    elif r < 0.55:
        call = f"{R.choice(['var_samp', 'stddev_pop', 'covar_pop', 'corr', 'regr_slope'])}({value}{', ' + R.choice(FACT) if R.random() < 0.5 else ''})"
        if call.startswith(("covar", "corr", "regr")) and "," not in call:
            call = call[:-1] + ", f.n)"
        if call.startswith(("var_", "stddev")) and "," in call:
            call = call.split(",")[0] + ")"
    elif r < 0.7:
        call = f"{R.choice(['count', 'sum', 'min', 'max', 'avg'])}(DISTINCT {R.choice(FACT + (['dk.name', 'dk.w'] if 'dk' in dims else []))})"
    elif r < 0.8:
        call = f"{R.choice(['bool_and', 'bool_or'])}({R.choice(['f.b', 'f.n > 0', 'f.s IS NULL'])})"
    elif r < 0.9:
        call = f"{R.choice(['min', 'max', 'count'])}({R.choice(['f.s', 'f.dt'] + (['dk.name'] if 'dk' in dims else []))})"
    else:
        call = f"sum({value} * {R.choice(['2', '0.5', 'f.n'])})"
    if R.random() < 0.15:
        call += (
            f" FILTER (WHERE {R.choice(['f.n > 0', 'f.s = ' + chr(39) + 'a' + chr(39), 'f.b'])})"
        )
    return call


def source():
    """FROM clause and the dimension tables it reads."""
    r = R.random()
    if r < 0.45:
        return f"f {R.choice(JOINS)} dk ON f.k = dk.k", {"dk"}
    if r < 0.6:
        return f"f {R.choice(JOINS)} dk ON f.k = dk.k {R.choice(JOINS)} dj ON f.j = dj.j", {
            "dk",
            "dj",
        }
    if r < 0.7:
        return f"f {R.choice(JOINS)} dj ON f.j = dj.j AND dj.grp IS NOT NULL", {"dj"}
    if r < 0.8:
        return f"f {R.choice(['SEMI', 'ANTI'])} JOIN dk ON f.k = dk.k", set()
    if r < 0.9:
        return (
            f"f {R.choice(JOINS)} (SELECT k, max(w) AS w, count(*) AS c, min(name) AS name FROM dk GROUP BY k) dk ON f.k = dk.k",
            {"dk"},
        )
    return "f, dk WHERE f.k = dk.k AND dk.c > 40", {"dk"}


def where():
    return R.choice(
        [
            "",
            "",
            f" WHERE f.n {R.choice(['>', '<'])} {R.randint(-500, 500)}",
            " WHERE f.k IN (SELECT k FROM dk WHERE c > 50)",
            " WHERE NOT EXISTS (SELECT 1 FROM dj WHERE dj.j = f.j)",
            " WHERE f.x > 10",
        ]
    )


for _ in range(COUNT):
    frm, dims = source()
    keys = [k for k in KEYS if not k.startswith(("dk", "dj")) or k.split(".")[0] in dims]
    key = R.choice(keys)
    w = where()
    if "WHERE" in frm and w:
        w = " AND" + w[len(" WHERE") :]
    form = R.randint(1, 6)
    if form == 1:
        q = f"SELECT {agg(dims)}, {agg(dims)} FROM {frm}{w}"
    elif form <= 3:
        q = f"SELECT {key} AS g, {agg(dims)}, {agg(dims)} FROM {frm}{w} GROUP BY g ORDER BY ALL"
    elif form == 4:
        q = f"SELECT {key} AS g, {agg(dims)} FROM {frm}{w} GROUP BY g HAVING count(*) > {R.randint(0, 300)} ORDER BY ALL"
    elif form == 5:
        q = f"WITH s AS (SELECT {key} AS g, {agg(dims)} AS v FROM {frm}{w} GROUP BY g) SELECT count(*), min(v), max(v) FROM s"
    else:
        q = f"SELECT {key} AS g, {agg(dims)} AS v FROM {frm}{w} GROUP BY ROLLUP (g) ORDER BY ALL"
    lines += ["query I", q, ""]
write(out, lines)
