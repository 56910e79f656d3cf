"""Random holistic aggregates (median, quantile_cont, quantile_disc, quantile, mad and their list
forms) beside the aggregates the median path computes over the arms' rows: SUM and AVG (DISTINCT
too, of integers, decimals and floats near the double's limit), COUNT, MIN, MAX, the boolean and
bitwise folds, regr_count, and the moments it refuses; with FILTER, ROLLUP/CUBE/GROUPING SETS,
in HAVING, ORDER BY (before another key and LIMIT), a window over the groups, SELECT DISTINCT
and a query around the block. Arguments: SEED FILE COUNT [COPIES]."""

from _probe import arguments, copies, write
from _typed_table import keyed_table

R, out, COUNT = arguments()
COPIES = copies()
COLS = {
    "ti": "TINYINT",
    "ii": "INTEGER",
    "bi": "BIGINT",
    "hg": "HUGEINT",
    "ub": "UBIGINT",
    "d9": "DECIMAL(9,2)",
    "d38": "DECIMAL(38,10)",
    "f": "FLOAT",
    "db": "DOUBLE",
    "b": "BOOLEAN",
    "dt": "DATE",
    "ts": "TIMESTAMP",
    "iv": "INTERVAL",
    "s": "VARCHAR",
}
VALS = {
    "TINYINT": [0, 1, -1, 127, -128, 5, 17, 3, 3],
    "INTEGER": [0, -1, 2**31 - 1, -(2**31), 70000, 3, 42, 42],
    "BIGINT": [0, -1, 2**63 - 1, -(2**63), 2**53 + 1, 12345678901, 7],
    "HUGEINT": [0, -1, 2**100, -(2**90), 2**64, 99],
    "UBIGINT": [0, 1, 2**64 - 1, 2**63, 2**53 + 1, 5],
    "DECIMAL(9,2)": ["0.00", "-0.01", "9999999.99", "-9999999.99", "1.10", "2.20", "2.20"],
    "DECIMAL(38,10)": ["0", "1234567890123456789012345678.0123456789", "-0.0000000001", "3.14"],
    "FLOAT": ["0", "-0.0", "1.5", "3.4e38", "-1e-30", "nan", "inf", "-inf", "0.1", "2.5"],
    "DOUBLE": ["0", "-0.0", "0.1", "1e308", "-1e308", "nan", "inf", "-inf", "1e-300", "3.25"],
    "BOOLEAN": ["true", "false"],
    "DATE": ["1970-01-01", "2024-02-29", "0001-01-01", "9999-12-31", "2000-06-15"],
    "TIMESTAMP": ["1970-01-01 00:00:00", "2024-02-29 23:59:59.999999", "1900-01-01 12:00:00"],
    "INTERVAL": ["1 day", "24 hours", "1 month", "30 days", "-1 day", "0 seconds"],
    "VARCHAR": ["", "a", "A", "ab", "é", "Z", "zz", "10", "9"],
}
#: A column whose values stay small: a sum of it is far from any limit.
SMALL = {"ti": "ti", "ii": "ii % 1000", "d9": "d9", "db": "db", "f": "f"}
NUMERIC = ["ti", "ii", "bi", "hg", "ub", "d9", "d38", "f", "db"]
ORDERED = [*NUMERIC, "dt", "ts", "iv", "s"]
INTEGERS = ["ti", "ii", "bi", "hg", "ub"]
N = 200
create = keyed_table(R, COLS, VALS, N, COPIES)


def cond():
    r = R.random()
    if r < 0.25:
        return f"{R.choice(list(COLS))} IS NULL"
    if r < 0.5:
        return f"k {R.choice(['=', '<', '>=', '<>'])} {R.randint(0, 3)}"
    if r < 0.7:
        return f"{R.choice(NUMERIC)} > 0"
    if r < 0.8:
        return "b"
    return f"g {R.choice(['=', '<>', '<'])} '{R.choice('xyz')}'"


def fraction():
    return R.choice(["0.5", "0.25", "0.9", "0", "1", "0.333"])


def holistic():
    r = R.random()
    if r < 0.35:
        call = f"median({R.choice(ORDERED)})"
    elif r < 0.55:
        call = f"quantile_cont({R.choice([*NUMERIC, 'dt', 'ts'])}, {fraction()})"
    elif r < 0.7:
        call = f"quantile_disc({R.choice(ORDERED)}, {fraction()})"
    elif r < 0.8:
        column = R.choice([*NUMERIC, "dt", "ts"])
        call = f"quantile_cont({column}, [{fraction()}, {fraction()}])"
    elif r < 0.9:
        call = f"mad({R.choice(['ti', 'ii', 'd9', 'db', 'f', 'dt', 'ts'])})"
    else:
        call = f"quantile({R.choice(ORDERED)}, {fraction()})"
    if R.random() < 0.15:
        call += f" FILTER (WHERE {cond()})"
    return call


def beside():
    r = R.random()
    if r < 0.3:
        column = R.choice(list(SMALL) if R.random() < 0.6 else NUMERIC)
        value = SMALL.get(column, column) if R.random() < 0.7 else column
        fn = R.choice(["sum", "avg", "mean"])
        call = f"{fn}({'DISTINCT ' if R.random() < 0.2 else ''}{value})"
    elif r < 0.4:
        call = f"sum({R.choice(['db * 2', 'db / 3', 'd9 * 2', 'ti / 2', 'f::DOUBLE'])})"
    elif r < 0.6:
        call = f"{R.choice(['count', 'min', 'max'])}({R.choice(list(COLS))})"
    elif r < 0.7:
        call = "count(*)"
    elif r < 0.78:
        call = f"{R.choice(['bool_and', 'bool_or'])}({R.choice(['b', f'({cond()})'])})"
    elif r < 0.85:
        call = f"{R.choice(['bit_and', 'bit_or', 'bit_xor'])}({R.choice(INTEGERS)})"
    elif r < 0.9:
        call = f"regr_count({R.choice(NUMERIC)}, {R.choice(NUMERIC)})"
    else:  # refused beside a median
        call = R.choice(["stddev(db)", "var_pop(ii)", "corr(ti, ii)", "stddev(d9)"])
    if R.random() < 0.15:
        call += f" FILTER (WHERE {cond()})"
    return call


def where():
    r = R.random()
    if r < 0.55:
        return ""
    if r < 0.6:
        return " WHERE false"
    if r < 0.65:
        return " WHERE k = 4"
    return f" WHERE {cond()}"


lines = ["statement ok", create, ""]
for _ in range(COUNT):
    h, o = holistic(), beside()
    key = R.choice(["k", "g", "k, g", "b", "k % 2"])
    form = R.randint(1, 10)
    if form <= 2:
        q = f"SELECT {h}, {o} FROM t{where()}"
    elif form <= 4:
        q = f"SELECT {key}, {h}, {o} FROM t{where()} GROUP BY {key} ORDER BY ALL"
    elif form == 5:
        q = f"SELECT k, {h} FROM t{where()} GROUP BY k HAVING {o} > {R.randint(-2, 60)} ORDER BY k"
    elif form == 6:
        sets = "(k), (g)" if R.random() < 0.3 else "k, g"
        how = R.choice(["ROLLUP", "CUBE", "GROUPING SETS"])
        q = f"SELECT k, g, {h}, {o} FROM t{where()} GROUP BY {how} ({sets}) ORDER BY ALL"
    elif form == 7:
        q = (
            f"SELECT k, {h} AS v, {o} AS w FROM t{where()} GROUP BY k "
            f"ORDER BY w NULLS FIRST, k LIMIT {R.randint(1, 4)}"
        )
    elif form == 8:
        q = f"SELECT DISTINCT {o} AS w, {h} AS v FROM t{where()} GROUP BY k ORDER BY ALL"
    elif form == 9:
        q = (
            f"SELECT k, {h} AS v, rank() OVER (ORDER BY {o} NULLS FIRST, k) AS r "
            f"FROM t{where()} GROUP BY k ORDER BY k"
        )
    else:
        q = (
            f"SELECT count(*), count(v), count(w) FROM (SELECT k, {h} AS v, {o} AS w "
            f"FROM t{where()} GROUP BY k) s WHERE w IS NOT NULL AND w > 0"
        )
    lines += ["query I", q, ""]
write(out, lines)
