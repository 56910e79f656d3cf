"""Expressions spelled the ways DuckDB's parser reads and sqlglot may not: numbers with no digit
before the point, exponents followed at once by a sign, underscores, hex and binary; typed
literals (DATE '...', JSON '...', DECIMAL(9,2) '...', INT[] '...') with a cast, a bracket or an
arrow after them; prefix @, unary minus and ~ beside casts, powers, bitwise operators, ``||``
and ``//``; casts chained with ``::``; COLLATE; over the typed table's columns, as aggregates'
arguments, keys, conditions and sort keys. The runner compares each split answer with DuckDB's:
every operator sqlglot places elsewhere than DuckDB does changes the value (``x / 1e0+1::INT``
was ``x / CAST(1e0+1 AS INT)``: 47th session). Arguments: SEED FILE COUNT."""

from _probe import TYPED_TABLE, arguments, write

R, out, COUNT = arguments()

NUMBERS = [
    "1",
    "0",
    "7",
    "1.5",
    ".5",
    "5.",
    "1e2",
    "1E2",
    "1e+2",
    "1e-2",
    "1.5e1",
    ".5e1",
    "1_000",
    "1_0e1",
    "0x1F",
    "0b101",
    "2.e1",
    "00012",
    "1.50",
    "DECIMAL(9,2) '1.5'",
    "INTEGER '5'",
    "DOUBLE '2.5'",
]
NUMBER_COLUMNS = ["n", "d", "x", "f", "i", "k", "ub"]
NUMBER_CASTS = ["::INT", "::DOUBLE", "::DECIMAL(9,2)", "::BIGINT", "::TINYINT", "::FLOAT", ""]
NUMBER_OPERATORS = ["+", "-", "*", "/", "//", "%", "^", "**", "<<", ">>", "&", "|"]
PREFIXES = ["-", "@ ", "~", "- ", "@"]
TEXTS = ["'a'", "'ab''c'", "'1'", "'2020-01-05'", "''", "'.5'", "'1e2'", "'3:00'", "s"]
TEXT_OF = [
    "DATE '2020-01-05'::VARCHAR",
    "TIMESTAMP '2020-01-01 10:00'::VARCHAR",
    "TIME '03:00'::VARCHAR",
    "DECIMAL(9,2) '1.5'::VARCHAR",
    "JSON '{\"a\": 1}'",
    "VARCHAR 'ab'",
    "INT[] '[1, 2]'::VARCHAR",
    "dt::VARCHAR",
    "ts::VARCHAR",
    "tm::VARCHAR",
    "JSON '{\"a\": 1}'->>'a'",
    "VARCHAR 'abc'[2]",
    "s COLLATE nocase",
]
INSTANTS = [
    "dt",
    "ts",
    "DATE '2020-01-05'",
    "TIMESTAMP '2020-01-01 10:00'",
    "DATE '2020-01-05' + INTERVAL 2 DAY",
    "TIMESTAMP '2020-01-01' + INTERVAL '1 day'",
    "dt + 1",
    "DATE '2020-01-05'::TIMESTAMP",
    "'2020-01-05'::DATE",
]
COMPARISONS = ["=", "<", ">=", "<>", "IS DISTINCT FROM"]


def number(depth: int = 0) -> str:
    roll = R.random()
    if depth >= 2 or roll < 0.3:
        value = R.choice(NUMBERS) if R.random() < 0.5 else R.choice(NUMBER_COLUMNS)
        if R.random() < 0.2:
            value = R.choice(PREFIXES) + value
        return value + (R.choice(NUMBER_CASTS) if R.random() < 0.3 else "")
    if roll < 0.45:
        form = R.choice(
            [
                "abs({})",
                "round({}, 1)",
                "coalesce({}, {})",
                "greatest({}, {})",
                "({})",
                "TRY_CAST({} AS INTEGER)",
                "length({}::VARCHAR)",
            ]
        )
        return form.format(*(number(depth + 1) for _ in range(form.count("{}"))))
    space = R.choice(["", " "])
    left, right = number(depth + 1), number(depth + 1)
    return f"{left}{space}{R.choice(NUMBER_OPERATORS)}{space}{right}"


def text(depth: int = 0) -> str:
    roll = R.random()
    if depth >= 2 or roll < 0.4:
        return R.choice(TEXTS + TEXT_OF)
    if roll < 0.6:
        return f"{number(1)}::VARCHAR"
    form = R.choice(["{} || {}", "{}||{}", "upper({})", "coalesce({}, {})", "{}[1:2]"])
    return form.format(*(text(depth + 1) for _ in range(form.count("{}"))))


def expression() -> tuple[str, str]:
    """An expression and the family of its values."""
    roll = R.random()
    if roll < 0.55:
        return number(), "number"
    if roll < 0.85:
        return text(), "text"
    return R.choice(INSTANTS), "instant"


def condition() -> str:
    e, family = expression()
    other = {"number": number, "text": text}.get(family, lambda: R.choice(INSTANTS))()
    return f"{e} {R.choice(COMPARISONS)} {other}"


lines = ["statement ok", "SET TimeZone = 'UTC'", "", "statement ok", TYPED_TABLE, ""]
for _ in range(COUNT):
    e, family = expression()
    shape = R.randrange(6)
    if shape == 0:
        q = f"SELECT k, max({e}), count({e}) FROM t GROUP BY k ORDER BY k"
    elif shape == 1:
        q = f"SELECT count(*), sum(i) FROM t WHERE {condition()}"
    elif shape == 2:
        q = f"SELECT {e} AS v, count(*) FROM t GROUP BY v ORDER BY v NULLS LAST LIMIT 20"
    elif shape == 3:
        q = f"SELECT min({e}), max({e}) FROM t WHERE {condition()}"
    elif shape == 4:
        q = f"SELECT sum({e}) FROM t" if family == "number" else f"SELECT max({e}) FROM t"
    else:
        q = f"SELECT i, {e} AS v FROM t ORDER BY v NULLS FIRST, i LIMIT 7"
    lines += ["query I", q, ""]
write(out, lines)
