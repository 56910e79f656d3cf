"""Random decimals made DOUBLE or FLOAT values: casts, comparisons with floats and arithmetic
beside them, as GROUP BY keys, filters and folds, over columns whose largest magnitudes lie
either side of what a double holds exactly at the Polars arm's 12 decimal digits (2**53 / 10**12,
about 9,007), a column held finer than 12 digits, and a joined dimension. Each value repeats
across the table, so the split's two arms convert the same decimal: a key a last bit apart on
one arm is another group."""

from _probe import arguments, write

R, out, COUNT = arguments()

lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 40 END AS k, "
    # under the bound: at most 8,999.9987
    "CASE WHEN i % 19 = 0 THEN NULL ELSE ((i % 97) * 185.567 - 9000 + (i % 7) * 0.0001)"
    "::DECIMAL(18, 4) END AS a, "
    # past it: digits at 12 decimals beyond 2**53
    "((i % 89) * 271828.1828 - 12000000.0001)::DECIMAL(18, 4) AS b, "
    # DECIMAL(9, 2) by its type passes 2**53 at 12 digits; its data does not
    "((i % 83) * 61.37 - 2500)::DECIMAL(9, 2) AS c, "
    "((i % 79) * 1.2345678901 - 48.1)::DECIMAL(38, 10) AS e, "
    # held at its own 14 digits, past the arm's 12
    "((i % 71) * 0.00000000012345)::DECIMAL(18, 14) AS h, "
    "((i * 31) % 200 - 100)::SMALLINT AS n, (i % 13) * 0.25 - 1.5 AS x "
    "FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE g AS SELECT i AS k, ((i * 37) % 41 * 21.9 - 400)::DECIMAL(18, 6) AS ga, "
    "((i * 13) % 7 * 123456789012.34)::DECIMAL(38, 2) AS gb FROM range(40) r(i)",
    "",
]
FACT = ["t.a", "t.b", "t.c", "t.e", "t.h"]
DIM = ["g.ga", "g.gb"]
LITERALS = ["1.000", "0.5", "2", "-3.25", "0.001", "1000", "9007.2", "1.1", "0.0001"]
FLOATS = ["1e3", "0.1", "-2.5e2", "CAST(0.3 AS DOUBLE)", "t.x", "4500.5", "CAST(1 AS FLOAT)"]


def leaf(joined):
    pool = FACT * 2 + (DIM if joined else []) + LITERALS + ["t.n"]
    return R.choice(pool)


def decimal(joined, depth=2):
    """A decimal expression: columns, literals, + - *, a cast to a narrower decimal, abs."""
    if depth == 0 or R.random() < 0.35:
        column = R.choice(FACT + (DIM if joined else []))
        return column if R.random() < 0.7 else leaf(joined)
    k = R.randint(1, 8)
    if k <= 3:
        return f"({decimal(joined, depth - 1)} * {R.choice([*LITERALS, 't.n'])})"
    if k <= 5:
        return f"({decimal(joined, depth - 1)} {R.choice('+-')} {decimal(joined, depth - 1)})"
    if k == 6:
        return f"CAST({decimal(joined, depth - 1)} AS DECIMAL(18, {R.choice([2, 3, 6])}))"
    if k == 7:
        return f"abs({decimal(joined, depth - 1)})"
    return f"-{decimal(joined, depth - 1)}"


def source(joined):
    if not joined:
        return "t"
    return R.choice(["t JOIN g ON t.k = g.k", "t LEFT JOIN g ON t.k = g.k", "t, g WHERE t.k = g.k"])


def where(text, condition):
    """``text`` (a FROM list, perhaps with its WHERE) with ``condition`` ANDed in."""
    if condition is None:
        return text
    return f"{text} AND {condition}" if " WHERE " in text else f"{text} WHERE {condition}"


def query():
    joined = R.random() < 0.45
    value = decimal(joined)
    src = source(joined)
    kind = R.choice(["DOUBLE", "DOUBLE", "FLOAT"])
    filt = R.choice([None, None, "t.n > -40", f"{decimal(joined, 1)} > {R.choice(FLOATS)}"])
    shape = R.randint(1, 7)
    if shape <= 2:
        return (
            f"SELECT CAST({value} AS {kind}) AS v, count(*) AS c FROM {where(src, filt)} GROUP BY v"
        )
    if shape == 3:
        return f"SELECT count(*) FROM {where(src, f'{value} > {R.choice(FLOATS)}')}"
    if shape == 4:
        return (
            f"SELECT t.k, max(CAST({value} AS {kind})) AS m, count(*) AS c "
            f"FROM {where(src, filt)} GROUP BY t.k"
        )
    if shape == 5:
        return f"SELECT count(DISTINCT CAST({value} AS {kind})) FROM {where(src, filt)}"
    if shape == 6:
        return (
            f"SELECT {value} + {R.choice(FLOATS)} AS v, count(*) AS c FROM {where(src, filt)} "
            "GROUP BY v"
        )
    return (
        f"SELECT count(*) FILTER (WHERE CAST({value} AS {kind}) = CAST({decimal(joined, 1)} AS "
        f"{kind})) AS same, count(*) AS c FROM {where(src, filt)}"
    )


for _ in range(COUNT):
    lines += ["query I", query(), ""]
write(out, lines)
