"""Random decimal arithmetic over a small dimension table joined to a split fact table: the
conversions of decimals to floats the Polars arm writes through text (arms/polars_doubles.py)."""

from _probe import arguments, write
from _typed_table import draw, literal, values_table

R, out, COUNT = arguments()
COLS = {
    "a": "DECIMAL(4,1)",
    "b": "DECIMAL(9,2)",
    "c": "DECIMAL(18,4)",
    "e": "DECIMAL(38,10)",
    "z": "DECIMAL(10,0)",
    "n": "INTEGER",
    "g": "BIGINT",
    "x": "DOUBLE",
    "f": "FLOAT",
}
VALS = {
    "DECIMAL(4,1)": ["0.0", "-0.5", "999.9", "-999.9", "1.5", "2.5", "0.1"],
    "DECIMAL(9,2)": [
        "0.00",
        "1234567.89",
        "-0.01",
        "2.50",
        "-2.50",
        "0.05",
        "9999999.99",
    ],
    "DECIMAL(18,4)": [
        "0.0000",
        "12345678901234.5678",
        "-0.0001",
        "0.5000",
        "3.1416",
        "-99999999999999.9999",
    ],
    "DECIMAL(38,10)": [
        "0",
        "1234567890123456789012345678.0123456789",
        "-0.0000000001",
        "0.3333333333",
        "2.5",
    ],
    "DECIMAL(10,0)": ["0", "9999999999", "-1", "7", "3"],
    "INTEGER": ["0", "-1", "2147483647", "7", "3", "-2147483648"],
    "BIGINT": ["0", "9223372036854775807", "-5", "100"],
    "DOUBLE": ["0.1", "-2.5", "1e20", "0.0", "3.0"],
    "FLOAT": ["0.5", "-1.25", "3.0", "0.1"],
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
    "CREATE TABLE f AS SELECT r % 300 AS i, r % 5 AS m FROM range(6000) s(r)",
    "",
]
DEC = ["a", "b", "c", "e", "z"]
LITS = [
    "1.5",
    "0.01",
    "100",
    "-3",
    "2.25",
    "0.333",
    "1234567.891",
    "1e2",
    "0.0000001",
    "99999999999999999999.99",
]


def d(depth):
    if depth == 0 or R.random() < 0.35:
        return R.choice(DEC * 3 + ["n", "g"] + LITS)
    k = R.randint(1, 9)
    if k <= 3:
        return f"({d(depth - 1)} {R.choice('+-*')} {d(depth - 1)})"
    if k == 4:
        return f"({d(depth - 1)} / {d(depth - 1)})"
    if k == 5:
        return f"CAST({d(depth - 1)} AS DECIMAL({R.choice(['4,1', '9,2', '18,4', '38,10', '10,0', '38,0', '18,9'])}))"
    if k == 6:
        return f"{R.choice(['abs', 'ceil', 'floor'])}({d(depth - 1)})"
    if k == 7:
        return f"CASE WHEN {d(depth - 1)} > {d(0)} THEN {d(depth - 1)} ELSE {d(depth - 1)} END"
    if k == 8:
        return f"{R.choice(['coalesce', 'greatest', 'least', 'nullif'])}({d(depth - 1)}, {d(depth - 1)})"
    return f"(-{d(depth - 1)})"


for _j in range(COUNT):
    e = d(R.randint(1, 3))
    w = f"{d(1)} {R.choice(['<', '>=', '=', '<>'])} {d(1)}"
    form = R.randint(1, 5)
    if form == 1:
        q = f"SELECT sum({e}), count({e}) FROM f JOIN t USING (i)"
    elif form == 2:
        q = f"SELECT avg({e}) FROM f JOIN t USING (i) WHERE {w}"
    elif form == 3:
        q = f"SELECT {e} AS v, count(*) FROM f JOIN t USING (i) GROUP BY v"
    elif form == 4:
        q = f"SELECT min({e}), max({e}) FROM f JOIN t USING (i) WHERE {w}"
    else:
        q = f"SELECT count(*), sum(i) FROM f JOIN t USING (i) WHERE {w}"
    lines += ["query I", q, ""]
write(out, lines)
