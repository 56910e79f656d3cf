"""Numeric operators and functions whose engines differ at the edges: ``%`` and ``//`` with
negative or zero operands, ``/`` by zero, round/round_even/trunc to negative and positive
digits, ceil and floor of decimals, gcd/lcm, bit operators and shifts, powers, logarithms and
roots of zero, negatives, NaN and infinities, over every integer width (signed, unsigned,
HUGEINT), four decimal scales, DOUBLE and FLOAT, beside another column or a literal, one inside
another up to two deep; as GROUP BY keys, extremes, sums, conditions and sort keys. Many
overflow or are out of a function's domain, where DuckDB raises and the split must raise too.
Arguments: SEED FILE COUNT."""

from _probe import arguments, write
from _typed_table import draw, literal, values_table

R, out, COUNT = arguments()

SMALL = ["0", "1", "-1", "2", "-2", "7", "-7", "13", "-13", "100", "-100"]
VALUES = {
    "TINYINT": [*SMALL, "127", "-128", "64"],
    "SMALLINT": [*SMALL, "32767", "-32768", "255"],
    "INTEGER": [*SMALL, "2147483647", "-2147483648", "65536", "99999"],
    "BIGINT": [*SMALL, "9223372036854775807", "-9223372036854775808", "4294967296", "10000000000"],
    "HUGEINT": [*SMALL, "170141183460469231731687303715884105727", "-18446744073709551616"],
    "UTINYINT": ["0", "1", "2", "7", "13", "100", "255", "128"],
    "USMALLINT": ["0", "1", "2", "7", "13", "65535", "32768"],
    "UINTEGER": ["0", "1", "2", "7", "13", "4294967295", "2147483648"],
    "UBIGINT": ["0", "1", "2", "7", "13", "18446744073709551615", "9223372036854775808"],
    "DECIMAL(4,1)": ["0.0", "2.5", "-2.5", "0.5", "-0.5", "1.4", "-1.5", "999.9", "-999.9", "7.0"],
    "DECIMAL(9,2)": [
        "0.00",
        "2.50",
        "-2.50",
        "0.05",
        "-0.05",
        "1.45",
        "1234567.89",
        "-7.00",
        "13.13",
    ],
    "DECIMAL(18,4)": ["0.0000", "0.5000", "-0.5000", "1.2345", "-98765432109876.5432", "7.0000"],
    "DECIMAL(38,10)": ["0", "2.5", "-2.5", "0.0000000001", "-1234567890123456789012.5", "13"],
    "DOUBLE": [
        "0",
        "-0.0",
        "2.5",
        "-2.5",
        "0.5",
        "nan",
        "inf",
        "-inf",
        "1e300",
        "-1e-310",
        "7",
        "1e15",
    ],
    "FLOAT": [
        "0",
        "-0.0",
        "2.5",
        "-2.5",
        "0.5",
        "nan",
        "inf",
        "-inf",
        "3.4e38",
        "1e-40",
        "7",
        "16777217",
    ],
}
COLUMNS = {
    "ti": "TINYINT",
    "si": "SMALLINT",
    "n": "INTEGER",
    "bi": "BIGINT",
    "hg": "HUGEINT",
    "ut": "UTINYINT",
    "us": "USMALLINT",
    "ui": "UINTEGER",
    "ub": "UBIGINT",
    "d1": "DECIMAL(4,1)",
    "d2": "DECIMAL(9,2)",
    "d4": "DECIMAL(18,4)",
    "d10": "DECIMAL(38,10)",
    "x": "DOUBLE",
    "f": "FLOAT",
}
INTEGERS = [c for c, t in COLUMNS.items() if "INT" in t]
LITERALS = ["0", "1", "-1", "2", "3", "-3", "7", "10", "2.5", "-0.5", "0.0", "1e0", "-2e0", "255"]

rows = []
for i in range(300):
    typed = draw(R, list(COLUMNS.values()), VALUES, 0.1)
    rows.append(
        [str(i), str(R.randint(0, 5))]
        + [literal(v, t) for v, t in zip(typed, COLUMNS.values(), strict=True)]
    )
lines = ["statement ok", values_table("t", ["i", "k", *COLUMNS], rows), ""]


def operand() -> str:
    return f"t.{R.choice(list(COLUMNS))}" if R.random() < 0.75 else R.choice(LITERALS)


def digits() -> str:
    return R.choice(["-3", "-2", "-1", "0", "1", "2", "3", "5"])


def call(depth: int) -> str:
    """A numeric expression over the columns, ``depth`` deep."""
    a = f"t.{R.choice(list(COLUMNS))}" if depth <= 1 else call(depth - 1)
    b = operand()
    whole = f"t.{R.choice(INTEGERS)}"
    return R.choice(
        [
            f"({a} % {b})",
            f"({a} // {b})",
            f"({a} / {b})",
            f"({a} {R.choice('+-*')} {b})",
            f"round({a})",
            f"round({a}, {digits()})",
            f"round_even({a}, {digits()})",
            f"trunc({a})",
            f"ceil({a})",
            f"floor({a})",
            f"abs({a})",
            f"sign({a})",
            f"(-{a})",
            f"gcd({whole}, {R.choice(['t.' + c for c in INTEGERS] + ['0', '6', '-4'])})",
            f"lcm({whole}, {R.choice(['3', '-4', '0', 't.ti', 't.ut'])})",
            f"({whole} {R.choice(['&', '|'])} {R.choice(['t.' + c for c in INTEGERS] + ['5', '-1'])})",
            f"xor({whole}, {R.choice(['5', '-1', whole])})",
            f"({whole} {R.choice(['<<', '>>'])} {R.choice(['0', '1', '3', '7', '63', '64'])})",
            f"(~{whole})",
            f"bit_count({whole})",
            f"even({a})",
            f"pow({a}, {R.choice(['2', '0.5', '-1', '0', '3', b])})",
            f"({a} ^ {R.choice(['2', '0.5', '3'])})",
            f"{R.choice(['sqrt', 'cbrt', 'ln', 'log10', 'log2', 'exp'])}({a})",
            f"log({R.choice(['2', '10', '0.5'])}, {a})",
            f"{R.choice(['sin', 'cos', 'atan', 'degrees', 'radians'])}({a})",
            f"atan2({a}, {b})",
            f"{R.choice(['isnan', 'isinf', 'isfinite'])}({a})",
            f"{R.choice(['greatest', 'least'])}({a}, {b})",
            f"CAST({a} AS {R.choice(['INTEGER', 'BIGINT', 'DOUBLE', 'DECIMAL(9,2)', 'UTINYINT', 'HUGEINT'])})",
            f"TRY_CAST({a} AS {R.choice(['SMALLINT', 'UBIGINT', 'DECIMAL(4,1)', 'FLOAT'])})",
            f"coalesce({a}, {b})",
            f"nullif({a}, {b})",
            f"CASE WHEN {a} > {b} THEN {a} ELSE {b} END",
        ]
    )


for _ in range(COUNT):
    e = call(R.choice([1, 1, 1, 2]))
    form = R.randint(1, 6)
    if form == 1:
        q = f"SELECT e, count(*) FROM (SELECT {e} AS e FROM t) GROUP BY e ORDER BY e NULLS FIRST"
    elif form == 2:
        q = f"SELECT min(e), max(e), count(DISTINCT e), count(e) FROM (SELECT {e} AS e FROM t)"
    elif form == 3:
        q = f"SELECT count(*) FROM t WHERE ({e}) {R.choice(['>', '<=', '=', '<>'])} {operand()}"
    elif form == 4:
        q = f"SELECT t.k, sum({e}), count({e}) FROM t GROUP BY t.k ORDER BY t.k"
    elif form == 5:
        q = f"SELECT count(*), count(e), count(DISTINCT e) FROM (SELECT {e} AS e FROM t) WHERE e IS NOT NULL"
    else:
        q = f"SELECT t.i, {e} AS e FROM t ORDER BY e NULLS LAST, t.i LIMIT {R.randint(3, 20)}"
    lines += ["query I", q, ""]
write(out, lines)
