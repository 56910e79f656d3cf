"""Random aggregates: every kind the split folds (and some it refuses), with DISTINCT, FILTER,
grouping sets, HAVING and expressions over them, over every numeric width, decimals, floats
with NaN and infinities, booleans, text, temporal values, intervals and UUIDs, with NULLs,
extremes, empty groups and all-NULL groups. Arguments: SEED FILE COUNT [COPIES]."""

from _probe import arguments, copies, write
from _typed_table import keyed_table

R, out, COUNT = arguments()
COPIES = copies()
COLS = {
    "ti": "TINYINT",
    "si": "SMALLINT",
    "ii": "INTEGER",
    "bi": "BIGINT",
    "hg": "HUGEINT",
    "ut": "UTINYINT",
    "ui": "UINTEGER",
    "ub": "UBIGINT",
    "d4": "DECIMAL(4,1)",
    "d9": "DECIMAL(9,2)",
    "d18": "DECIMAL(18,3)",
    "d38": "DECIMAL(38,10)",
    "f": "FLOAT",
    "db": "DOUBLE",
    "b": "BOOLEAN",
    "s": "VARCHAR",
    "dt": "DATE",
    "ts": "TIMESTAMP",
    "tz": "TIMESTAMPTZ",
    "tm": "TIME",
    "iv": "INTERVAL",
    "uu": "UUID",
}
VALS = {
    "TINYINT": [0, 1, -1, 127, -128, 5, 17],
    "SMALLINT": [0, -1, 32767, -32768, 300, 12],
    "INTEGER": [0, -1, 2**31 - 1, -(2**31), 70000, 3, 42],
    "BIGINT": [0, -1, 2**63 - 1, -(2**63), 2**53 + 1, 12345678901, 7],
    "HUGEINT": [0, -1, 2**100, -(2**90), 2**64, 99],
    "UTINYINT": [0, 1, 255, 128, 9],
    "UINTEGER": [0, 1, 2**32 - 1, 2**31, 77],
    "UBIGINT": [0, 1, 2**64 - 1, 2**63, 2**53 + 1, 5],
    "DECIMAL(4,1)": ["0.0", "-0.1", "999.9", "-999.9", "12.5", "3.3"],
    "DECIMAL(9,2)": ["0.00", "-0.01", "9999999.99", "-9999999.99", "1.10", "2.20"],
    "DECIMAL(18,3)": ["0.000", "123456789012345.678", "-999999999999999.999", "0.001", "7.125"],
    "DECIMAL(38,10)": ["0", "1234567890123456789012345678.0123456789", "-0.0000000001", "3.14"],
    "FLOAT": ["0", "-0.0", "1.5", "3.4e38", "-1e-30", "nan", "inf", "-inf", "0.1", "2.5"],
    "DOUBLE": ["0", "-0.0", "0.1", "1e308", "-1e308", "nan", "inf", "-inf", "1e-300", "3.25"],
    "BOOLEAN": ["true", "false"],
    "VARCHAR": ["", "a", "A", "ab", "é", "Z", "zz", "a ", "\u00e9t\u00e9", "10", "9"],
    "DATE": ["1970-01-01", "2024-02-29", "0001-01-01", "9999-12-31", "2000-06-15"],
    "TIMESTAMP": ["1970-01-01 00:00:00", "2024-02-29 23:59:59.999999", "1900-01-01 12:00:00"],
    "TIMESTAMPTZ": ["1970-01-01 00:00:00+00", "2024-02-29 23:59:59.5+00", "2001-01-01 01:00:00+00"],
    "TIME": ["00:00:00", "23:59:59.999999", "12:30:00"],
    "INTERVAL": [
        "1 day",
        "24 hours",
        "1 month",
        "30 days",
        "-1 day",
        "0 seconds",
        "1 year 2 hours",
    ],
    "UUID": [
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
        "7fffffff-ffff-ffff-ffff-ffffffffffff",
        "80000000-0000-0000-0000-000000000000",
    ],
}
NUMERIC = ["ti", "si", "ii", "bi", "hg", "ut", "ui", "ub", "d4", "d9", "d18", "d38", "f", "db"]
SMALL = ["ti", "si", "ii", "ut", "ui", "d4", "d9", "f", "db"]  # sums that cannot overflow
INTEGERS = ["ti", "si", "ii", "bi", "hg", "ut", "ui", "ub"]
ORDERED = [c for c in COLS if c not in ("b",)]
N = 240
create = keyed_table(R, COLS, VALS, N, COPIES)

ONE = ["count", "min", "max"]
NUM_ONE = ["sum", "avg", "mean", "var_samp", "var_pop", "variance", "stddev", "stddev_samp"]
NUM_ONE += ["stddev_pop", "kurtosis", "skewness", "median", "product", "fsum"]
PAIRS = ["covar_pop", "covar_samp", "corr", "regr_count", "regr_avgx", "regr_avgy"]
PAIRS += ["regr_slope", "regr_intercept", "regr_r2", "regr_sxx", "regr_syy", "regr_sxy"]
OTHERS = ["arg_min", "arg_max", "any_value", "first", "mode", "string_agg", "approx_count_distinct"]


def numeric():
    c = R.choice(NUMERIC)
    r = R.random()
    if r < 0.15:
        return f"{c} * {R.choice(['2', '0.5', '-1', '1e3', 'k'])}"
    if r < 0.25:
        return f"CASE WHEN {cond()} THEN {c} END"
    if r < 0.3:
        return f"{c}::DOUBLE"
    return c


def cond():
    c = R.choice(list(COLS))
    r = R.random()
    if r < 0.3:
        return f"{c} IS NULL"
    if r < 0.5:
        return f"k {R.choice(['=', '<', '>=', '<>'])} {R.randint(0, 3)}"
    if r < 0.7 and c in NUMERIC:
        return f"{c} > 0"
    if r < 0.8:
        return "b"
    return f"g {R.choice(['=', '<>', '<'])} '{R.choice('xyz')}'"


def aggregate():
    r = R.random()
    if r < 0.25:
        fn, args = R.choice(ONE), R.choice(list(COLS))
    elif r < 0.55:
        fn = R.choice(NUM_ONE)
        args = (
            R.choice(SMALL) if fn in ("sum", "product", "fsum") and R.random() < 0.7 else numeric()
        )
    elif r < 0.7:
        fn, args = R.choice(PAIRS), f"{numeric()}, {numeric()}"
    elif r < 0.78:
        fn, args = R.choice(["bool_and", "bool_or"]), R.choice(["b", f"({cond()})"])
    elif r < 0.86:
        fn, args = R.choice(["bit_and", "bit_or", "bit_xor"]), R.choice(INTEGERS)
    elif r < 0.92:
        fn = R.choice(["count", "sum", "avg", "min", "max", "var_samp", "stddev_pop"])
        col = R.choice(SMALL if fn != "count" and fn not in ("min", "max") else list(COLS))
        args = f"DISTINCT {col}"
    else:
        fn = R.choice(OTHERS)
        args = {
            "arg_min": f"i, {R.choice(ORDERED)}",
            "arg_max": f"i, {R.choice(ORDERED)}",
            "string_agg": "s, ','",
        }.get(fn, R.choice(list(COLS)))
    call = f"{fn}({args})"
    if R.random() < 0.2:
        call += f" FILTER (WHERE {cond()})"
    return call


def select_list(n):
    return ", ".join(aggregate() for _ in range(n))


def where():
    r = R.random()
    if r < 0.55:
        return ""
    if r < 0.6:
        return " WHERE false"
    if r < 0.65:
        return " WHERE k = 4"  # the all-NULL group alone
    return f" WHERE {cond()}"


lines = ["statement ok", create, ""]
for _ in range(COUNT):
    form = R.randint(1, 9)
    if form <= 2:
        q = f"SELECT {select_list(R.randint(1, 3))} FROM t{where()}"
    elif form <= 4:
        key = R.choice(["k", "g", "k, g", "b", "dt", "k % 2"])
        q = f"SELECT {key}, {select_list(R.randint(1, 3))} FROM t{where()} GROUP BY {key} ORDER BY ALL"
    elif form == 5:
        a = aggregate()
        q = f"SELECT k, {a} FROM t{where()} GROUP BY k HAVING {R.choice(['count(*)', 'sum(ti)', 'min(ii)'])} > {R.randint(0, 60)} ORDER BY k"
    elif form == 6:
        q = f"SELECT k, g, {aggregate()} FROM t{where()} GROUP BY {R.choice(['ROLLUP', 'CUBE', 'GROUPING SETS'])} ({'(k), (g)' if R.random() < 0.3 else 'k, g'}) ORDER BY ALL"
    elif form == 7:
        a, b = aggregate(), aggregate()
        op = R.choice(["+", "-", "*", "/"])
        q = f"SELECT k, ({a}) {op} ({b}) AS v FROM t{where()} GROUP BY k ORDER BY k"
    elif form == 8:
        q = f"SELECT k, {aggregate()} AS v, {aggregate()} AS w FROM t{where()} GROUP BY k ORDER BY v NULLS FIRST, k LIMIT {R.randint(1, 4)}"
    else:
        q = f"SELECT count(*), min(v), max(v) FROM (SELECT k, {aggregate()} AS v FROM t{where()} GROUP BY k) s"
    lines += ["query I", q, ""]
write(out, lines)
