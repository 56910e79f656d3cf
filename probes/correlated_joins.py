"""Correlated subqueries under joined outer rows: the outer query joins the split table to one
or two others (inner, left, comma), every table holding columns of the same names, and a
scalar, IN, NOT IN, EXISTS or NOT EXISTS subquery in WHERE reads a column of any outer source;
IN and NOT IN of uncorrelated subqueries over any outer source's column too. Arguments: SEED
FILE COUNT."""

from _probe import JOINED_TABLES, arguments, write

R, out, COUNT = arguments()
lines = [
    *JOINED_TABLES,
    "statement ok",
    "CREATE TABLE w AS SELECT i AS k, (i % 3)::INTEGER AS n, ['z','a'][i % 2 + 1] AS s "
    "FROM range(12) r(i)",
    "",
    "statement ok",
    "CREATE TABLE v AS SELECT i AS m, i % 4 AS n, ['a','z'][i % 2 + 1] AS s, i % 13 AS k "
    "FROM range(8) r(i)",
    "",
    "statement ok",
    "CREATE TABLE e AS SELECT * FROM v WHERE false",
    "",
]
COLUMNS = ["k", "n", "s"]


def outer_from():
    """The outer FROM and the aliases it defines."""
    first = R.choice(["JOIN", "LEFT JOIN", ","])
    text = "FROM t " + (
        "JOIN u ON t.k = u.k"
        if first == "JOIN"
        else "LEFT JOIN u ON t.k = u.k"
        if first == "LEFT JOIN"
        else ", u"
    )
    aliases = ["t", "u"]
    where = ["t.k = u.k"] if first == "," else []
    if R.random() < 0.4:
        text += R.choice(
            [" JOIN w ON u.n = w.n", " LEFT JOIN w ON t.k = w.k", " JOIN w ON t.s = w.s"]
        )
        aliases.append("w")
    return text, aliases, where


def subquery(aliases):
    src = R.choice(["v", "v", "e"])
    outer = R.choice(aliases)
    col = R.choice(COLUMNS)
    kind = R.randint(1, 5)
    corr = f"{src}.{col} {R.choice(['=', '=', '<>', '>'])} {outer}.{col}"
    extra = f" AND {src}.m > {R.randint(0, 6)}" if R.random() < 0.5 else ""
    if kind == 1:
        return f"(SELECT max({src}.m) FROM {src} WHERE {corr}{extra}) > {R.randint(0, 6)}"
    if kind == 2:
        return f"{R.choice(['', 'NOT '])}EXISTS (SELECT 1 FROM {src} WHERE {corr}{extra})"
    if kind == 3:
        other = R.choice(aliases)
        return (
            f"{outer}.{col} {R.choice(['IN', 'NOT IN'])} (SELECT {src}.{col} FROM {src} "
            f"WHERE {src}.m > {R.randint(0, 6)} AND {src}.s = {other}.s)"
        )
    where = f" WHERE {src}.m > {R.randint(0, 7)}" if R.random() < 0.7 else ""
    return f"{outer}.{col} {R.choice(['IN', 'NOT IN'])} (SELECT {src}.{col} FROM {src}{where})"


for _j in range(COUNT):
    text, aliases, where = outer_from()
    terms = [*where, subquery(aliases)]
    if R.random() < 0.3:
        terms.append(subquery(aliases))
    if R.random() < 0.4:
        terms.append(f"{R.choice(aliases)}.s = '{R.choice('abz')}'")
    key = R.choice(["t.s", "u.s", "t.n"] + (["w.n"] if "w" in aliases else []))
    q = (
        f"SELECT {key} AS g, count(*), count(u.j), sum(t.n) {text} WHERE "
        f"{' AND '.join(terms)} GROUP BY g ORDER BY ALL"
    )
    lines += ["query I", q, ""]
write(out, lines)
