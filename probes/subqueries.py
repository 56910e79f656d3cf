"""Random subquery forms: scalar, IN, EXISTS, ANY/ALL, correlated by equality or not (also
in every branch of an OR), in WHERE, SELECT and HAVING, over NULL keys, empty results and ties."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, (i % 7 - 3)::INTEGER AS n, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 37) % 101 + 0.25)::DECIMAL(9,2) END AS p, (i % 5) * 0.5 AS x, "
    "['a','b','c',NULL,'ab'][i % 5 + 1] AS s, DATE '2000-01-01' + (i % 40)::INTEGER AS d FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT i AS j, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 13 END AS k, (i % 5 - 2)::INTEGER AS n, "
    "((i * 7) % 50 + 0.5)::DECIMAL(9,2) AS p, ['a','b','z',NULL][i % 4 + 1] AS s, DATE '2000-01-10' + (i % 20)::INTEGER AS d FROM range(60) r(i)",
    "",
    "statement ok",
    "CREATE TABLE e AS SELECT * FROM u WHERE false",
    "",
]
AGG = ["max", "min", "sum", "count", "avg", "any_value"]


def inner(corr):
    src = R.choice(["u", "u", "u", "e"])
    col = R.choice(["k", "n", "p", "d", "s"])
    agg = R.choice(AGG)
    if agg in ("sum", "avg") and col in ("s", "d"):
        col = "p"
    if agg == "any_value":
        agg = "max"
    where = []
    if corr:
        family = R.choice([("k", "n", "p"), ("s",), ("d",)])
        op = R.choice(["=", "=", "<>", "<", ">=", "IS NOT DISTINCT FROM"])
        where.append(
            f"{src}.{R.choice(['k', 'n', 's'])} = t.{R.choice(['k', 'n', 's'])}"
            if R.random() < 0.2
            else f"{src}.{R.choice(family)} {op} t.{R.choice(family)}"
            if R.random() < 0.3
            else f"{src}.k = t.k"
        )
    if R.random() < 0.4:
        where.append(f"{src}.n {R.choice(['>', '<=', '<>'])} {R.randint(-2, 2)}")
    w = (" WHERE " + " AND ".join(where)) if where else ""
    if corr and R.random() < 0.25:  # TPC-DS Q41: each branch of an OR repeats the correlation
        branches = []
        for _b in range(R.randint(2, 3)):
            terms = [
                where[0],
                f"{src}.{R.choice(['n', 'k'])} {R.choice(['>', '=', '<>'])} {R.randint(-2, 4)}",
            ]
            if R.random() < 0.4:
                terms.append(f"{src}.s {R.choice(['=', '<>'])} '{R.choice('abz')}'")
            R.shuffle(terms)
            branches.append("(" + " AND ".join(terms) + ")")
        w = " WHERE " + " OR ".join(branches)
    return src, col, agg, w


def scalar(corr):
    src, col, agg, w = inner(corr)
    return f"(SELECT {agg}({src}.{col}) FROM {src}{w})", col


def pred():
    corr = R.random() < 0.6
    k = R.randint(1, 8)
    if k == 1:
        sub, col = scalar(corr)
        tcol = col if col != "s" or R.random() < 0.8 else "s"
        return f"t.{tcol} {R.choice(['=', '>', '<=', '<>'])} {sub}"
    src, col, agg, w = inner(corr)
    if k == 2:
        return f"t.{col} {R.choice(['IN', 'NOT IN'])} (SELECT {src}.{col} FROM {src}{w})"
    if k == 3:
        return f"{R.choice(['', 'NOT '])}EXISTS (SELECT 1 FROM {src}{w})"
    if k == 4:
        return f"t.{col} {R.choice(['>', '=', '<>', '<='])} {R.choice(['ANY', 'ALL'])} (SELECT {src}.{col} FROM {src}{w})"
    if k == 5:
        return (
            f"(t.{col}, t.n) IN (SELECT {src}.{col}, {src}.n FROM {src}{w})"
            if col != "d"
            else f"t.d IN (SELECT {src}.d FROM {src}{w})"
        )
    if k == 6:
        return f"t.x > (SELECT avg({src}.n) FROM {src}{w})"
    if k == 7:
        return f"t.{col} IS NOT DISTINCT FROM {scalar(corr)[0].replace(agg + '(', 'max(') if False else scalar(corr)[0]}"
    return f"t.p > (SELECT {R.choice(['max', 'min', 'sum'])}({src}.p) FROM {src}{w}) * 0.5"


for _j in range(COUNT):
    form = R.randint(1, 8)
    p = pred()
    if R.random() < 0.3:
        p = f"{p} {R.choice(['AND', 'OR'])} {pred()}"
    if form == 1:
        q = f"SELECT count(*), sum(i), count(p) FROM t WHERE {p}"
    elif form == 2:
        q = f"SELECT k, count(*), sum(p) FROM t WHERE {p} GROUP BY k"
    elif form == 3:
        sub, col = scalar(R.random() < 0.7)
        q = f"SELECT sum(i), count({sub}), max({sub}) FROM t"
    elif form == 4:
        sub, col = scalar(R.random() < 0.5)
        q = f"SELECT {sub} AS v, count(*) FROM t GROUP BY v"
    elif form == 5:
        q = f"SELECT n, count(*) FROM t GROUP BY n HAVING count(*) > (SELECT count(*) FROM u WHERE u.n = t.n) * {R.choice([1, 5, 10, 100])}"
    elif form == 7:
        # Subqueries inside the aggregates of a grouped block, correlated by a key or not
        # (fortieth session: Polars read one as its group's first value).
        key = R.choice(["k", "n", "s"])
        sub, col = scalar(R.random() < 0.7)
        q = (
            f"SELECT {key}, count(*) FILTER (WHERE {p}), sum(CASE WHEN {pred()} THEN i END), "
            f"max({sub}) FROM t GROUP BY {key}"
        )
    elif form == 8:
        sub, col = scalar(R.random() < 0.7)
        q = f"SELECT n, sum(i * coalesce({sub}, 1)), count({sub}) FROM t WHERE {p} GROUP BY n"
    else:
        q = f"SELECT s, sum(p), count(*) FROM t WHERE {p} GROUP BY s"
    lines += ["query I", q, ""]
write(out, lines)
