"""Random expressions whose values come from branches, not columns: CASE/IF with literal results,
NULLIF(literal, column), and literals, as arguments of LEAST/GREATEST, COALESCE, arithmetic and
text functions, under aggregates with and without GROUP BY, in WHERE and as GROUP BY keys.
Polars' streaming engine counted half the rows of ``greatest(CASE WHEN n > 5 THEN 2 ELSE 3 END,
1)`` under an aggregate without GROUP BY (thirty-fourth session). Arguments: SEED FILE COUNT."""

from _probe import TIES_TABLE, arguments, write

R, out, COUNT = arguments()
CONDITIONS = ["n > 5", "k IS NULL", "d < 50", "s = 'a'", "b", "i % 3 = 0", "x > 0"]
NUMBERS = ["2", "-3", "1.5", "0.25", "NULL", "100"]
COLUMNS = ["n", "k", "d", "i % 7"]


def branch() -> str:
    """A value from branches only, or (rarely) one that reads a column."""
    kind = R.randrange(6)
    cond = R.choice(CONDITIONS)
    a, b = R.choice(NUMBERS), R.choice(NUMBERS)
    if kind == 0:
        return f"CASE WHEN {cond} THEN {a} ELSE {b} END"
    if kind == 1:
        return f"CASE WHEN {cond} THEN {a} END"
    if kind == 2:
        return f"NULLIF({a}, {R.choice(COLUMNS)})"
    if kind == 3:
        return f"if({cond}, {a}, {b})"
    if kind == 4:
        return R.choice(NUMBERS)
    return R.choice(COLUMNS)


def value() -> str:
    args = ", ".join(branch() for _ in range(R.randint(2, 3)))
    form = R.randrange(6)
    if form == 0:
        return f"least({args})"
    if form == 1:
        return f"greatest({args})"
    if form == 2:
        return f"coalesce({args})"
    if form == 3:
        return f"({branch()} + {branch()})"
    if form == 4:
        return f"abs({branch()})"
    return f"({branch()} * 2)"


lines = ["statement ok", TIES_TABLE, ""]
for _ in range(COUNT):
    v = value()
    shape = R.randrange(5)
    if shape == 0:
        q = f"SELECT sum({v}), count({v}), min({v}) FROM t"
    elif shape == 1:
        q = f"SELECT k % 3 AS g, sum({v}), count({v}) FROM t GROUP BY g ORDER BY g"
    elif shape == 2:
        q = f"SELECT count(*), sum(i) FROM t WHERE {v} > 1"
    elif shape == 3:
        q = f"SELECT {v} AS g, count(*) FROM t GROUP BY g ORDER BY g"
    else:
        q = f"SELECT avg({v}), max({v}) FROM t WHERE n > -50"
    lines += ["query I", q, ""]
write(out, lines)
