"""Values of two different types meeting as keys: a join's ON, IN and NOT IN of a subquery,
a correlated EXISTS, a set operation's column, a comparison of two columns, a literal of a
third type, COALESCE and GROUP BY of both. The numbers are one pool of values (halves,
thirds, tenths, 2**53 + 1, the edges of the narrow integers, negatives) held as every integer
width, unsigned, HUGEINT, three DECIMAL scales, DOUBLE, FLOAT and text; the instants one pool
(midnights, noons, a millisecond, a microsecond and a nanosecond past) held as DATE, TIMESTAMP
in four units, TIMESTAMPTZ (under a TimeZone that is not UTC) and text. Where a value does not
fit a type the column holds NULL. DuckDB picks the type both are compared in; the split must
compare in the same one. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()

NUMBERS = [
    "-2",
    "-1",
    "0",
    "0.1",
    "0.5",
    "1",
    "1.25",
    "1/3",
    "2",
    "3",
    "127",
    "128",
    "255",
    "256",
    "-128",
    "-129",
    "9007199254740993",
    "2.675",
    "1e10",
    "NULL",
]
NUMERIC = {
    "ti": "TINYINT",
    "si": "SMALLINT",
    "n": "INTEGER",
    "b": "BIGINT",
    "hb": "HUGEINT",
    "ut": "UTINYINT",
    "ub": "UBIGINT",
    "d2": "DECIMAL(6,2)",
    "d0": "DECIMAL(18,0)",
    "d4": "DECIMAL(14,4)",
    "x": "DOUBLE",
    "f": "FLOAT",
}
INSTANTS = [
    "2020-01-01",
    "2020-01-01 12:00:00",
    "2020-01-02",
    "2020-01-01 00:00:00.001",
    "2020-01-01 00:00:00.000001",
    "2020-01-01 00:00:00.000000001",
    "2020-01-01 05:00:00",
    "2019-12-31 19:00:00",
    "2020-03-08 02:30:00",
    "NULL",
]
TEMPORAL = {
    "dt": "DATE",
    "ts": "TIMESTAMP",
    "ms": "TIMESTAMP_MS",
    "sec": "TIMESTAMP_S",
    "ns": "TIMESTAMP_NS",
    "tz": "TIMESTAMPTZ",
}
#: Text spellings of both pools (the column ``s`` of numbers, ``st`` of instants).
TEXT_NUMBERS = ["'1'", "'1.0'", "'0.5'", "'-2'", "' 3'", "'1e1'", "'x'", "'256'", "NULL"]
TEXT_INSTANTS = ["'2020-01-01'", "'2020-01-01 12:00:00'", "'2020-01-02 00:00'", "NULL"]


def number(v: str, ty: str) -> str:
    """``v`` as ``ty``, NULL where it does not fit (TRY_CAST)."""
    if v == "NULL":
        return "NULL"
    return (
        f"TRY_CAST(({v})::DOUBLE AS {ty})" if "/" in v or "e" in v else (f"TRY_CAST({v} AS {ty})")
    )


def instant(v: str, ty: str) -> str:
    if v == "NULL":
        return "NULL"
    if ty == "TIMESTAMP_NS":
        return f"TIMESTAMP_NS '{v}'"
    if ty == "TIMESTAMPTZ":
        return f"TIMESTAMP '{v}' AT TIME ZONE 'UTC'"
    return f"CAST(TIMESTAMP '{v}' AS {ty})"


def table(name: str, rows: int, stride: int) -> str:
    """A table of ``rows`` rows; row i holds the pools' values at (i * stride) mod their size,
    each column from its own offset so columns of one row differ."""
    cols = [f"i AS {'i' if name == 't' else 'j'}"]
    for c, (col, ty) in enumerate(NUMERIC.items()):
        cases = " ".join(f"WHEN {k} THEN {number(v, ty)}" for k, v in enumerate(NUMBERS))
        cols.append(f"CASE (i * {stride} + {c}) % {len(NUMBERS)} {cases} END::{ty} AS {col}")
    for c, (col, ty) in enumerate(TEMPORAL.items()):
        cases = " ".join(f"WHEN {k} THEN {instant(v, ty)}" for k, v in enumerate(INSTANTS))
        cols.append(f"CASE (i * {stride} + {c}) % {len(INSTANTS)} {cases} END::{ty} AS {col}")
    cases = " ".join(f"WHEN {k} THEN {v}" for k, v in enumerate(TEXT_NUMBERS))
    cols.append(f"CASE (i * {stride}) % {len(TEXT_NUMBERS)} {cases} END::VARCHAR AS s")
    cases = " ".join(f"WHEN {k} THEN {v}" for k, v in enumerate(TEXT_INSTANTS))
    cols.append(f"CASE (i * {stride}) % {len(TEXT_INSTANTS)} {cases} END::VARCHAR AS st")
    return f"CREATE TABLE {name} AS SELECT {', '.join(cols)} FROM range({rows}) r(i)"


lines = [
    "statement ok",
    "SET TimeZone = 'America/New_York'",
    "",
    "statement ok",
    table("t", 2600, 7),
    "",
    "statement ok",
    table("u", 50, 3),
    "",
]


def pair() -> tuple[str, str]:
    """Two key columns of one family, usually of different types."""
    if R.random() < 0.6:
        cols = list(NUMERIC) + (["s"] if R.random() < 0.15 else [])
    else:
        cols = list(TEMPORAL) + (["st"] if R.random() < 0.15 else [])
    a, b = R.choice(cols), R.choice(cols)
    return a, b


def literal(col: str) -> str:
    """A literal of the column's family, of some type."""
    if col in TEMPORAL or col == "st":
        v = R.choice([x for x in INSTANTS if x != "NULL"])
        ty = R.choice([*TEMPORAL.values(), "TEXT"])
        return (
            f"'{v}'"
            if ty == "TEXT"
            else f"{ty} '{v}'"
            if ty != "TIMESTAMPTZ"
            else (f"'{v}'::TIMESTAMPTZ")
        )
    v = R.choice([x for x in NUMBERS if x != "NULL"])
    form = R.random()
    if form < 0.4:
        return v if "/" not in v else "0.3333333333333333"
    if form < 0.5:
        return f"'{v}'" if "/" not in v else "'0.3333'"
    ty = R.choice(list(NUMERIC.values()))
    return f"TRY_CAST({v} AS {ty})" if "/" not in v else f"(1/3)::{ty}"


def op() -> str:
    return R.choice(
        ["=", "=", "=", "<", "<=", ">", "<>", "IS NOT DISTINCT FROM", "IS DISTINCT FROM"]
    )


def query() -> tuple[str, str]:
    a, b = pair()
    o = op()
    shape = R.randint(1, 14)
    if shape == 1:
        return "I", f"SELECT count(*) FROM t JOIN u ON t.{a} {o} u.{b}"
    if shape == 2:
        return "II", f"SELECT count(*), count(u.j) FROM t LEFT JOIN u ON t.{a} = u.{b}"
    if shape == 3:
        neg = R.choice(["", "NOT "])
        return "I", f"SELECT count(*) FROM t WHERE {a} {neg}IN (SELECT {b} FROM u)"
    if shape == 4:
        neg = R.choice(["", "NOT "])
        return "I", (
            f"SELECT count(*) FROM t WHERE {neg}EXISTS (SELECT 1 FROM u WHERE u.{b} {o} t.{a})"
        )
    if shape == 5:
        setop = R.choice(
            ["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL"]
        )
        return (
            "I",
            f"SELECT count(*), count(DISTINCT v) FROM (SELECT {a} AS v FROM t {setop} SELECT {b} FROM u)",
        )
    if shape == 6:
        setop = R.choice(["UNION", "INTERSECT", "EXCEPT"])
        return (
            "T",
            f"SELECT v::VARCHAR FROM (SELECT {a} AS v FROM t {setop} SELECT {b} FROM u) ORDER BY v NULLS FIRST",
        )
    if shape == 7:
        return "I", f"SELECT count(*) FROM t WHERE {a} {o} {b}"
    if shape == 8:
        return "I", f"SELECT count(*) FROM t WHERE {a} {o} {literal(a)}"
    if shape == 9:
        lits = ", ".join(literal(a) for _ in range(R.randint(1, 3)))
        neg = R.choice(["", "NOT "])
        return "I", f"SELECT count(*) FROM t WHERE {a} {neg}IN ({lits})"
    if shape == 10:
        return "TI", (
            f"SELECT coalesce({a}, {b})::VARCHAR AS v, count(*) FROM t GROUP BY coalesce({a}, {b}) "
            "ORDER BY v NULLS FIRST"
        )
    if shape == 11:
        return "TTI", (
            f"SELECT {a}::VARCHAR, {b}::VARCHAR, count(*) FROM t WHERE {a} {o} {b} "
            f"GROUP BY {a}, {b} ORDER BY 1 NULLS FIRST, 2 NULLS FIRST"
        )
    if shape == 12:
        return "TI", (
            f"SELECT t.{a}::VARCHAR, count(*) FROM t JOIN u ON t.{a} = u.{b} GROUP BY t.{a} "
            "ORDER BY 1 NULLS FIRST"
        )
    if shape == 13:
        fn = R.choice(["min", "max", "count"])
        return "I", (
            f"SELECT count(*) FROM t WHERE {a} {o} (SELECT {fn}({b}) FROM u WHERE u.j % 5 = 1)"
        )
    return "TI", (
        f"SELECT CASE WHEN {a} {o} {b} THEN 'y' WHEN {a} IS NULL OR {b} IS NULL THEN 'n' "
        f"ELSE 'x' END AS w, count(*) FROM t GROUP BY w ORDER BY w"
    )


for _ in range(COUNT):
    kinds, sql = query()
    lines += [f"query {kinds}", sql, ""]
write(out, lines)
