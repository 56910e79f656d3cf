"""Random expressions of unsigned and huge integers against signed, decimal and floating-point
values and negative constants."""

from _probe import arguments, write
from _typed_table import draw, literal, values_table

R, out, COUNT = arguments()
COLS = {
    "ub": "UBIGINT",
    "ui": "UINTEGER",
    "us": "USMALLINT",
    "ut": "UTINYINT",
    "bi": "BIGINT",
    "ii": "INTEGER",
    "si": "SMALLINT",
    "ti": "TINYINT",
    "hg": "HUGEINT",
    "uh": "UHUGEINT",
    "dm": "DECIMAL(18,2)",
    "db": "DOUBLE",
}
VALS = {
    "UBIGINT": [
        0,
        1,
        2**64 - 1,
        2**63,
        2**63 - 1,
        2**53 + 1,
        9007199254740993,
        18446744073709551614,
    ],
    "UINTEGER": [0, 1, 2**32 - 1, 2**31],
    "USMALLINT": [0, 65535, 32768],
    "UTINYINT": [0, 255, 128],
    "BIGINT": [
        0,
        -1,
        1,
        2**63 - 1,
        -(2**63),
        2**53 + 1,
        9007199254740993,
        -9007199254740993,
    ],
    "INTEGER": [0, -1, 2**31 - 1, -(2**31)],
    "SMALLINT": [0, -1, 32767, -32768],
    "TINYINT": [0, -1, 127, -128],
    "HUGEINT": [
        0,
        -1,
        2**64 - 1,
        2**64,
        -(2**64),
        2**100,
        2**53 + 1,
        18446744073709551614,
    ],
    "UHUGEINT": [0, 1, 2**64, 2**64 - 1, 2**100],
    "DECIMAL(18,2)": [
        "0.00",
        "-1.50",
        "9223372036854775.80",
        "18446744073709551.61"[:19] if False else "1234567890123456.78",
    ],
    "DOUBLE": [
        0.0,
        -1.0,
        1.8446744073709552e19,
        9.223372036854776e18,
        9007199254740992.0,
    ],
}
N = 200
rows = []
for i in range(N):
    drawn = draw(R, COLS.values(), VALS, 0.05)
    rows.append([str(i), *(literal(v, t) for v, t in zip(drawn, COLS.values(), strict=True))])
create = values_table("t", ["i", *COLS], rows)
LITS = [
    "-1",
    "0",
    "1",
    "-9223372036854775808",
    "9223372036854775807",
    "18446744073709551615",
    "9007199254740993",
    "-5",
    "1.5",
    "-0.5",
    "1e19",
    "18446744073709551616",
    "2147483648",
]


def side():
    return R.choice(list(COLS) * 2 + LITS)


lines = ["statement ok", create, ""]
un = ["ub", "ui", "us", "ut", "uh", "hg"]
for _j in range(COUNT):
    a = R.choice(un)
    b = side()
    op = R.choice(["=", "<>", "<", "<=", ">", ">=", "IS DISTINCT FROM"])
    form = R.randint(1, 10)
    if form == 1:
        q = f"SELECT count(*), sum(i) FROM t WHERE {a} {op} {b}"
    elif form == 2:
        q = f"SELECT count(*) FROM t WHERE {a} {R.choice(['', 'NOT '])}BETWEEN {side()} AND {side()}"
    elif form == 3:
        q = f"SELECT count(*) FROM t WHERE {a} {R.choice(['', 'NOT '])}IN ({side()}, {side()}, {side()})"
    elif form == 4:
        q = f"SELECT {R.choice(['least', 'greatest', 'coalesce'])}({a}, {b}) AS v, count(*) FROM t GROUP BY v"
    elif form == 5:
        q = f"SELECT max(CASE WHEN {a} {op} {b} THEN {a} ELSE {side()} END), min({R.choice(['least', 'greatest', 'coalesce'])}({a}, {b})) FROM t"
    elif form == 6:
        q = f"SELECT sum({a} {R.choice('+-*')} {b}) FROM t"
    elif form == 7:
        q = f"SELECT {a} {R.choice('+-*')} {b} AS v, count(*) FROM t GROUP BY v"
    elif form == 8:
        q = f"SELECT count(DISTINCT {a}), min({a}), max({a}), sum({a}) FROM t WHERE {a} {op} {b}"
    elif form == 9:
        q = f"SELECT i, nullif({a}, {b}) AS v FROM t WHERE {a} {op} {side()}"
    else:
        q = f"SELECT count(*) FROM t WHERE ({a} {op} {b}) = ({side()} {op} {a})"
    lines += ["query I", q, ""]
write(out, lines)
