"""Random boolean conditions mixing comparisons, IS [NOT] DISTINCT FROM, BETWEEN, IN, IS NULL,
LIKE, IS TRUE, ||, NOT, AND and OR: how Polars' SQL parser binds what the arm writes."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, (i % 7 - 3)::INTEGER AS n, "
    "['a','b',NULL,'ab','a%'][i % 5 + 1] AS s, [true, false, NULL][i % 3 + 1] AS b, (i % 5) * 0.5 AS x FROM range(2000) r(i)",
    "",
]
NUM = ["k", "n", "i % 13", "x", "2", "-1", "NULL"]


def num(d):
    if d == 0 or R.random() < 0.4:
        return R.choice(NUM)
    return (
        f"{num(d - 1)} {R.choice(['+', '-', '*', '%', '//'])} {num(d - 1)}"
        if R.random() < 0.7
        else f"-{num(d - 1)}"
    )


def atom(d):
    k = R.randint(1, 12)
    a, b = num(d), num(d)
    if k == 1:
        return f"{a} {R.choice(['=', '<>', '<', '>=', '!='])} {b}"
    if k == 2:
        return f"{a} IS {R.choice(['', 'NOT '])}DISTINCT FROM {b}"
    if k == 3:
        return f"{a} {R.choice(['', 'NOT '])}BETWEEN {b} AND {num(d)}"
    if k == 4:
        return f"{a} {R.choice(['', 'NOT '])}IN ({b}, {num(0)})"
    if k == 5:
        return f"{a} IS {R.choice(['', 'NOT '])}NULL"
    if k == 6:
        return f"s {R.choice(['', 'NOT '])}{R.choice(['LIKE', 'ILIKE'])} '{R.choice(['a%', '%b', '_', 'a'])}'"
    if k == 7:
        return "b"
    if k == 8:
        return f"b IS {R.choice(['', 'NOT '])}{R.choice(['TRUE', 'FALSE', 'NULL'])}"
    if k == 9:
        return f"s || 'x' {R.choice(['=', '<>', '<'])} '{R.choice(['ax', 'bx', 'x'])}'"
    if k == 10:
        return f"b = ({a} > {b})"
    if k == 11:
        return f"{a} IS NOT DISTINCT FROM {b} = b"
    return f"NOT {atom(d)}"


def cond(d):
    if d == 0 or R.random() < 0.35:
        return atom(1)
    return f"{cond(d - 1)} {R.choice(['AND', 'OR', 'AND NOT', 'OR NOT'])} {cond(d - 1)}"


for _j in range(COUNT):
    c = cond(R.randint(1, 3))
    form = R.randint(1, 4)
    if form == 1:
        q = f"SELECT count(*), sum(i) FROM t WHERE {c}"
    elif form == 2:
        q = f"SELECT {c} AS v, count(*) FROM t GROUP BY v"
    elif form == 3:
        q = f"SELECT count(*) FILTER (WHERE {c}), sum(CASE WHEN {c} THEN i END) FROM t"
    else:
        q = f"SELECT k, count(*) FROM t WHERE {c} GROUP BY k"
    lines += ["query I", q, ""]
write(out, lines)
