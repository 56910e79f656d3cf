"""Text literals where DuckDB reads them as another type: beside a UUID, a date, a timestamp,
a time, an interval, a number, a boolean or a BLOB column, each spelled as DuckDB writes that
type and otherwise (upper case, braces, missing hyphens or zeros, a T, spaces, '24 hours' for
'1 day'), in a comparison, IN, BETWEEN, IS DISTINCT FROM, COALESCE, NULLIF, GREATEST, LEAST, a
CASE's results or WHEN values, and a column of a set operation; counted, grouped, sorted and
taken as MIN and MAX. A literal DuckDB cannot read as the type raises there and must raise in
the split too. The text is a literal mostly, else computed (``'x' || ''``, ``upper('x')``) or
a text column's; or the text of a second table, joined, in IN, a scalar subquery or EXISTS.
Arguments: SEED FILE COUNT."""

import random
import sys

from _probe import TYPED_TABLE, UUIDS, arguments, write

R, out, COUNT = arguments()
#: The draws of the queries that read a second table (their own source, so a seed's other
#: queries are those it drew before they were added).
J = random.Random(sys.argv[1] + " joined")
lines = ["statement ok", TYPED_TABLE, ""]


def uuid_text(r: random.Random) -> str:
    u = r.choice(UUIDS)
    form = r.randint(1, 5)
    if form == 1:
        return u.upper()
    if form == 2:
        return "{" + u + "}"
    if form == 3:
        return u.replace("-", "")
    return u


#: Each column and spellings of values it holds (and some it does not), drawn from a source.
TEXTS = {
    "u": uuid_text,
    "dt": lambda r: r.choice(
        [
            "2020-01-05",
            "2020-1-5",
            "2020-01-40",
            "2020-02-09",
            "20200105",
            "2020-01-05 12:00",
            "infinity",
        ]
    ),
    "ts": lambda r: r.choice(
        [
            "2020-01-01 03:00:00",
            "2020-01-01 3:00",
            "2020-01-01T03:00:00",
            "2020-01-01",
            "2020-01-02 1:30",
            "2020-01-01 03:00:00.0000001",
            "epoch",
        ]
    ),
    "tm": lambda r: r.choice(
        ["03:00:00", "3:00", "03:00", "12:30:00.000", "23:59:59.999999", "03:00:00.0000001"]
    ),
    "iv": lambda r: r.choice(["1 day", "24 hours", "3 hours", "03:00:00", "180 minutes", "1 d"]),
    "n": lambda r: r.choice(["2", "02", " 2", "-3", "+1", "1.0", "1e0"]),
    "d": lambda r: r.choice(["0.5", "0.50", ".5", "1", "2.25", "1e0"]),
    "x": lambda r: r.choice(["0.5", "1.75", "2", "1e0", "inf", "-0.0"]),
    "b": lambda r: r.choice(["true", "t", "TRUE", "false", "f", "0", "1", "yes"]),
    "bl": lambda r: r.choice(["a", "B", "\\x00", "\\x61", ""]),
    "ns": lambda r: r.choice(
        [
            "2020-01-01 03:00:00",
            "2020-01-01 03:00:00.000001",
            "2020-01-01",
            "2020-01-01 03:00:00.0000000001",
        ]
    ),
    "ms": lambda r: r.choice(
        ["2020-01-01 03:00:00", "2020-01-01 03:00:00.0005", "2020-01-01T01:30"]
    ),
    "f": lambda r: r.choice(["0.5", "1.75", "2", "1e0", "0.1"]),
    "ub": lambda r: r.choice(["2", "02", "-1", "18446744073709551615", "1.5"]),
}


def lit(column: str) -> str:
    """Text of a value of ``column``'s type: a literal mostly, else text computed or read."""
    text = "'" + TEXTS[column](R) + "'"
    form = R.randint(1, 10)
    if form == 1:
        return f"({text} || '')"
    if form == 2:
        return f"{R.choice(['upper', 'lower', 'trim'])}({text})"
    if form == 3:
        return "t.s"
    return text


def meeting(column: str) -> tuple[str, bool]:
    """An expression where ``column`` meets text, and whether it is a condition."""
    form = R.randint(1, 11)
    c = f"t.{column}"
    if form == 1:
        return f"{c} {R.choice(['=', '<>', '<', '<=', '>', '>='])} {lit(column)}", True
    if form == 2:
        return f"{lit(column)} {R.choice(['=', '<', '>='])} {c}", True
    if form == 3:
        return f"{c} {R.choice(['IN', 'NOT IN'])} ({lit(column)}, {lit(column)})", True
    if form == 4:
        return f"{c} BETWEEN {lit(column)} AND {lit(column)}", True
    if form == 5:
        return f"{c} IS {R.choice(['', 'NOT '])}DISTINCT FROM {lit(column)}", True
    if form == 6:
        return f"coalesce({c}, {lit(column)})", False
    if form == 7:
        return f"nullif({c}, {lit(column)})", False
    if form == 8:
        return f"{R.choice(['greatest', 'least'])}({c}, {lit(column)})", False
    if form == 9:
        return f"CASE WHEN t.k > {R.randint(0, 6)} THEN {c} ELSE {lit(column)} END", False
    if form == 10:
        return (
            f"CASE {c} WHEN {lit(column)} THEN 'a' WHEN {lit(column)} THEN 'b' ELSE 'c' END",
            False,
        )
    return f"coalesce(nullif({c}, {lit(column)}), {lit(column)})", False


# A second table of text: four spellings of each column's values, by the column's name.
SPELLED = [(column, TEXTS[column](J)) for column in TEXTS for _ in range(4)]
lines += [
    "statement ok",
    "CREATE TABLE w AS SELECT * FROM (VALUES "
    + ", ".join(f"('{c}', '{text}')" for c, text in SPELLED)
    + ") v(kind, s)",
    "",
]


def joined(column: str) -> str:
    """A query where ``column`` meets the text of the second table: a join, IN, a scalar
    subquery, EXISTS (DuckDB casts the text, or refuses to compare)."""
    c, w = f"t.{column}", f"(SELECT s FROM w WHERE kind = '{column}')"
    form = J.randint(1, 5)
    if form == 1:
        return f"SELECT count(*) FROM t JOIN w ON {c} = w.s AND w.kind = '{column}'"
    if form == 2:
        return f"SELECT count(*) FROM t WHERE {c} {J.choice(['IN', 'NOT IN'])} {w}"
    if form == 3:
        agg = J.choice(["min", "max"])
        return (
            f"SELECT count(*) FROM t WHERE {c} = (SELECT {agg}(s) FROM w WHERE kind = '{column}')"
        )
    if form == 4:
        return (
            f"SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM w WHERE w.kind = '{column}' "
            f"AND w.s = {c})"
        )
    return (
        f"SELECT t.k, count(*) FROM t LEFT JOIN w ON w.s = {c} AND w.kind = '{column}' "
        "GROUP BY t.k ORDER BY t.k"
    )


queries: list[str] = []
for _ in range(COUNT):
    if J.random() < 0.2:
        queries.append(joined(J.choice(list(TEXTS))))
    column = R.choice(list(TEXTS))
    expr, condition = meeting(column)
    form = R.randint(1, 6)
    if form == 6:  # a set operation's column
        op = R.choice(["UNION", "UNION ALL", "INTERSECT", "EXCEPT"])
        where = f" WHERE t.k = {R.randint(0, 6)}" if R.random() < 0.5 else ""
        q = (
            f"SELECT count(*), count(DISTINCT v) FROM (SELECT t.{column} AS v FROM t{where} "
            f"{op} SELECT {lit(column)})"
        )
    elif condition:
        if form <= 3:
            q = f"SELECT count(*) FROM t WHERE {expr}"
        else:
            q = f"SELECT t.k, count(*) FROM t WHERE {expr} GROUP BY t.k ORDER BY t.k"
    elif form <= 2:
        q = f"SELECT e, count(*) FROM (SELECT {expr} AS e FROM t) GROUP BY e ORDER BY e NULLS FIRST"
    elif form == 3:
        q = f"SELECT min(e), max(e), count(DISTINCT e) FROM (SELECT {expr} AS e FROM t)"
    elif form == 4:
        q = f"SELECT count(*) FROM t WHERE {expr} = {lit(column)}"
    else:
        q = f"SELECT t.i, {expr} AS e FROM t ORDER BY e NULLS LAST, t.i LIMIT {R.randint(3, 30)}"
    queries.append(q)
# COUNT queries in all (the second table's are drawn among the others from a source of their
# own, so the file of a seed is the first COUNT of the queries it drew before they were added,
# with theirs among them)
for q in queries[:COUNT]:
    lines += ["query I", q, ""]
write(out, lines)
