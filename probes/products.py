"""Random decimal products whose operands are CASE, COALESCE, GREATEST, round, trunc, derived
tables' columns and scalar subqueries, at scales past the Polars arm's 12 digits."""

from _probe import arguments, write
from _typed_table import draw, literal, values_table

R, out, COUNT = arguments()
COLS = {
    "a": "DECIMAL(4,1)",
    "b": "DECIMAL(9,2)",
    "c": "DECIMAL(18,4)",
    "h": "DECIMAL(18,9)",
    "e": "DECIMAL(38,10)",
    "q": "DECIMAL(9,7)",
    "n": "INTEGER",
    "g": "BIGINT",
    "x": "DOUBLE",
}
VALS = {
    "DECIMAL(4,1)": ["0.0", "-0.5", "999.9", "1.5", "2.5", "0.1"],
    "DECIMAL(9,2)": ["0.00", "1234567.89", "-0.01", "2.50", "0.05"],
    "DECIMAL(18,4)": ["0.0000", "12345678901234.5678", "-0.0001", "0.5000", "3.1416"],
    "DECIMAL(18,9)": ["0.000000001", "123456789.123456789", "-0.000000007", "1.5", "0"],
    "DECIMAL(38,10)": [
        "0",
        "1234567890123456789012345678.0123456789",
        "-0.0000000001",
        "0.3333333333",
        "2.5",
    ],
    "DECIMAL(9,7)": ["0.0000001", "0.0000003", "-0.0000009", "1.2345678", "0"],
    "INTEGER": ["0", "-1", "2147483647", "7", "3"],
    "BIGINT": ["0", "9223372036854775807", "-5", "100"],
    "DOUBLE": ["0.1", "-2.5", "1e20", "0.0", "3.0"],
}
rows = []
for i in range(300):
    drawn = draw(R, COLS.values(), VALS, 0.06)
    rows.append([str(i), *(literal(v, t) for v, t in zip(drawn, COLS.values(), strict=True))])
lines = [
    "statement ok",
    values_table("t", ["i", *COLS], rows),
    "",
    "statement ok",
    "CREATE TABLE s AS SELECT i % 7 AS k, (i * 0.0000001)::DECIMAL(9,7) AS sq, (i * 1.25)::DECIMAL(6,2) AS sb FROM range(20) r(i)",
    "",
]
DEC = ["a", "b", "c", "h", "e", "q"]
LITS = [
    "1.5",
    "0.01",
    "100",
    "-3",
    "0.0000001",
    "0.000001",
    "0.00001",
    "1234567.891",
    "1e2",
    "0.5",
]


def leaf():
    return R.choice(DEC * 3 + ["n", "g", "x"] + LITS)


def d(depth):
    if depth == 0 or R.random() < 0.3:
        return leaf()
    k = R.randint(1, 11)
    if k <= 3:
        return f"({d(depth - 1)} * {d(depth - 1)})"
    if k == 4:
        return f"({d(depth - 1)} {R.choice('+-')} {d(depth - 1)})"
    if k == 5:
        return f"{R.choice(['round', 'trunc'])}({d(depth - 1)}, {R.randint(-1, 9)})"
    if k == 6:
        return f"{R.choice(['abs', 'ceil', 'floor', 'round'])}({d(depth - 1)})"
    if k == 7:
        return f"CASE WHEN {leaf()} > {leaf()} THEN {d(depth - 1)} ELSE {d(depth - 1)} END"
    if k == 8:
        return f"{R.choice(['coalesce', 'greatest', 'least', 'nullif'])}({d(depth - 1)}, {d(depth - 1)})"
    if k == 9:
        return f"(SELECT {R.choice(['max', 'min', 'sum', 'first'])}({R.choice(['sq', 'sb'])}) FROM s WHERE s.k = t.n % 7)"
    if k == 10:
        return f"if({leaf()} < {leaf()}, {d(depth - 1)}, {d(depth - 1)})"
    return f"(-{d(depth - 1)})"


def prod(depth):
    return f"({d(depth)} * {d(depth)})"


for _j in range(COUNT):
    e = prod(R.randint(1, 2))
    w = f"{prod(1)} {R.choice(['<', '>=', '=', '<>'])} {R.choice(['0', leaf(), d(1)])}"
    form = R.randint(1, 7)
    if form == 1:
        q = f"SELECT sum({e}), count({e}) FROM t"
    elif form == 2:
        q = f"SELECT count(*) FROM t WHERE {w}"
    elif form == 3:
        q = f"SELECT {e} AS v, count(*) FROM t GROUP BY v"
    elif form == 4:
        q = f"SELECT min({e}), max({e}) FROM t WHERE {w}"
    elif form == 5:
        q = f"SELECT count(*), sum(i) FROM (SELECT *, {e} AS v FROM t) u WHERE v <> 0"
    elif form == 6:
        q = f"WITH u AS (SELECT i, {d(1)} AS v FROM t) SELECT count(*) FROM u WHERE v * {R.choice(LITS)} {R.choice(['<>', '>', '='])} 0"
    else:
        q = f"SELECT count(*) FROM t WHERE ({e}) IS DISTINCT FROM 0"
    lines += ["query I", q, ""]
write(out, lines)
