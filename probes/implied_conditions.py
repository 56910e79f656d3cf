"""Random ORs across joined tables: the conditions on one table each that the Polars arm derives
from them (``arms/polars_implied.py``). Two or three of a split table ``t``, a small ``u`` (or a
derived table over it, or ``t`` again) and a tiny ``v``, joined inner, by commas, crossed or
(rarely, left as written) left-joined; a WHERE of ORs of two to four branches, each an AND of
terms on one table (comparisons with constants written as sums and casts, IN lists holding
NULL, BETWEEN, IS [NOT] NULL, IS [NOT] DISTINCT FROM, nested ORs and NOTs), terms across
tables, and terms that call functions; over integers, text, doubles with NaN and infinities,
decimals and dates, each with NULLs. Beside them, IN and NOT IN of uncorrelated subqueries on
one table's column (sets holding NULL, empty sets), which the arm applies to that table before
the joins, and subqueries correlated with the column a set tests, which share the set
(``arms/polars_early_semijoins.py``)."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, "
    "CASE WHEN i % 23 = 0 THEN NULL ELSE (i % 7 - 3)::INTEGER END AS n, "
    "['a','b',NULL,'ab'][i % 4 + 1] AS s, "
    "CASE WHEN i % 13 = 0 THEN NULL ELSE ['nan', '-0.0', '0.5', 'inf', '-inf', '1.5', '2.25'][i % 7 + 1]::DOUBLE END AS f, "
    "CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 37) % 500 / 100.0)::DECIMAL(9,2) END AS d, "
    "CASE WHEN i % 29 = 0 THEN NULL ELSE DATE '2020-01-01' + (i % 40)::INTEGER END AS dt "
    "FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT i AS j, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 13 END AS k, "
    "(i % 5 - 2)::INTEGER AS n, ['a','b','z',NULL][i % 4 + 1] AS s, "
    "CASE WHEN i % 8 = 0 THEN NULL ELSE ['nan', '1.5', '-inf', '0.5', '3.0'][i % 5 + 1]::DOUBLE END AS f, "
    "((i % 11) / 4)::DECIMAL(6,2) AS d, DATE '2020-01-05' + (i % 30)::INTEGER AS dt "
    "FROM range(60) r(i)",
    "",
    "statement ok",
    "CREATE TABLE v AS SELECT i AS m, i % 4 AS n, ['a','z',NULL][i % 3 + 1] AS s, i % 3 AS k, "
    "(i / 2)::DOUBLE AS f, (i / 4)::DECIMAL(6,2) AS d, DATE '2020-01-10' + i::INTEGER AS dt "
    "FROM range(8) r(i)",
    "",
    "statement ok",
    "CREATE TABLE x AS SELECT i AS m, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 4 END AS n, "
    "['a','b',NULL][i % 3 + 1] AS s, CASE WHEN i % 7 = 0 THEN NULL ELSE i % 13 END AS k "
    "FROM range(40) r(i)",
    "",
]


def constant():
    n = R.randint(-3, 4)
    return R.choice([str(n), f"{n - 1} + 1", f"CAST({n} AS SMALLINT)", f"-({-n})", f"2 * {n}"])


def one_table(a):
    """A term reading ``a``'s columns alone."""
    r = R.random()
    if r < 0.08:
        return f"({one_table(a)} OR {one_table(a)})"
    if r < 0.12:
        return f"NOT ({one_table(a)})"
    return R.choice(
        [
            f"{a}.k = {R.randint(0, 12)}",
            f"{a}.k {R.choice(['<', '>=', '<>'])} {R.randint(0, 12)}",
            f"{a}.n {R.choice(['=', '<>', '<', '<=', '>', '>='])} {constant()}",
            f"{a}.s = '{R.choice(['a', 'b', 'z', 'ab'])}'",
            f"{a}.s <> 'b'",
            f"{a}.s IN ('a', {R.choice(['NULL', chr(39) + 'z' + chr(39)])})",
            f"{a}.s NOT IN ('z'{R.choice(['', ', NULL'])})",
            f"{a}.k IN ({R.randint(0, 5)}, {R.randint(6, 12)})",
            f"{a}.{R.choice(['k', 's', 'f', 'd', 'dt', 'n'])} IS {R.choice(['', 'NOT '])}NULL",
            f"{a}.n {R.choice(['', 'NOT '])}BETWEEN {R.randint(-3, 0)} AND {R.randint(0, 3)}",
            f"{a}.k IS {R.choice(['', 'NOT '])}DISTINCT FROM {R.choice(['3', 'NULL'])}",
            f"{a}.f {R.choice(['>', '<', '=', '<='])} {R.choice(['0.5', '1.5', '-1', '1e300'])}",
            f"{a}.d {R.choice(['<', '>', '='])} {R.choice(['1.25', '2.5', '0', '3'])}",
            f"{a}.dt {R.choice(['<', '>=', '='])} DATE '2020-01-{R.randint(1, 28):02d}'",
        ]
    )


def other_term(names):
    """A term the derivation does not take: across tables, or calling a function."""
    a, b = R.sample(names, 2) if len(names) > 1 else (names[0], names[0])
    return R.choice(
        [
            f"{a}.n < {b}.n",
            f"{a}.s = {b}.s",
            f"abs({a}.n) = 1",
            f"length({a}.s) = 2",
            f"{a}.k + {b}.n > 5",
            f"{a}.s LIKE 'a%'",
        ]
    )


def branch(names):
    terms = []
    for _ in range(R.randint(1, 3)):
        if R.random() < 0.8:
            terms.append(one_table(R.choice(names)))
        else:
            terms.append(other_term(names))
    return " AND ".join(terms)


def semijoin(names):
    """An IN or NOT IN of an uncorrelated subquery on one table's column (a semi or anti join
    the Polars arm applies to that table before the joins: ``arms/polars_early_semijoins.py``)."""
    a = R.choice(names)
    column, values = R.choice(
        [
            ("k", "SELECT v.k FROM v WHERE v.m > 2"),
            ("k", "SELECT u2.k FROM u AS u2 WHERE u2.j < 20"),
            ("n", "SELECT v.n FROM v WHERE v.s IS NOT NULL"),
            ("n", "SELECT CASE WHEN v.m = 3 THEN NULL ELSE v.n END FROM v"),
            ("s", "SELECT v.s FROM v"),
            ("k", "SELECT v.k FROM v WHERE v.m > 100"),
        ]
    )
    return a, column, f"{a}.{column} {R.choice(['', 'NOT '])}IN ({values})"


def correlated(a, column):
    """A subquery over ``x`` correlated with ``a.column`` (which an IN set tests): one row of
    aggregates, EXISTS or NOT EXISTS, the set shared with it (TPC-H Q20's form)."""
    match = f"x.{column} = {a}.{column}"
    extra = R.choice(["", " AND x.m > 1", f" AND x.s = {a}.s"])
    return R.choice(
        [
            f"{a}.n > (SELECT avg(x.m) - 3 FROM x WHERE {match}{extra})",
            f"{a}.k >= (SELECT count(*) FROM x WHERE {match}{extra})",
            f"EXISTS (SELECT 1 FROM x WHERE {match}{extra})",
            f"NOT EXISTS (SELECT 1 FROM x WHERE {match}{extra})",
            f"({a}.n < (SELECT max(x.n) FROM x WHERE {match}) OR {a}.s = 'a')",
        ]
    )


def disjunction(names):
    return "(" + " OR ".join(f"({branch(names)})" for _ in range(R.randint(2, 4))) + ")"


for _q in range(COUNT):
    form = R.choice(["join", "join", "comma", "derived", "self", "three", "cross", "left"])
    joins = []
    if form == "join":
        source, names = "t JOIN u ON t.k = u.k", ["t", "u"]
    elif form == "comma":
        source, names = "t, u", ["t", "u"]
        joins.append("t.n = u.n")
    elif form == "derived":
        source = "t JOIN (SELECT j, k, n, s, f, d, dt FROM u WHERE j % 3 <> 1) AS u ON t.k = u.k"
        names = ["t", "u"]
    elif form == "self":
        source, names = "t JOIN t AS u ON t.i = u.i + 1", ["t", "u"]
    elif form == "three":
        source, names = "t JOIN u ON t.k = u.k JOIN v ON u.n = v.n", ["t", "u", "v"]
    elif form == "cross":
        source, names = "t CROSS JOIN v", ["t", "v"]
    else:
        source, names = "t LEFT JOIN u ON t.k = u.k", ["t", "u"]
    conditions = [*joins, disjunction(names)]
    if R.random() < 0.3:
        conditions.append(disjunction(names))
    if R.random() < 0.3:
        conditions.append(one_table("t"))
    for _ in range(R.choice([0, 0, 1, 1, 2])):
        a, column, term = semijoin(names)
        conditions.append(term)
        if R.random() < 0.4:
            conditions.append(correlated(a, column))
    where = " AND ".join(conditions)
    other = names[1]
    select = R.choice(
        [
            f"count(*), sum(t.i), count({other}.s)",
            "t.k AS g, count(*), sum(t.i)",
            f"{other}.s AS g, count(*), max(t.i)",
        ]
    )
    group = " GROUP BY g" if "AS g" in select else ""
    lines += ["query I", f"SELECT {select} FROM {source} WHERE {where}{group}", ""]
write(out, lines)
