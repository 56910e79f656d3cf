"""Random correlated subqueries with a join inside (inner, left, comma), correlated on a column
of the subquery's first table or of the table joined to it, as a scalar count or max, EXISTS,
NOT EXISTS and IN, over small tables whose columns share names, with NULL keys. Run it over Arrow
copies (``--arrow``) too: Polars 1.44 answered a correlation on the joined table wrongly over
Arrow frames and right over a connection's (forty-second session). Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
COLUMNS = {"u": "knm", "v": "kmn", "w": "km"}
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i AS id, CASE WHEN i % 11 = 0 THEN NULL ELSE i % 6 END AS k, "
    "CASE WHEN i % 7 = 0 THEN NULL ELSE i % 5 END AS n FROM range(600) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT CASE WHEN i = 4 THEN NULL ELSE i % 5 END AS k, i % 4 AS n, "
    "i + 5 AS m FROM range(12) r(i)",
    "",
    "statement ok",
    "CREATE TABLE v AS SELECT i AS k, i % 3 AS m, i % 4 AS n FROM range(6) r(i)",
    "",
    "statement ok",
    "CREATE TABLE w AS SELECT i % 4 AS k, i % 5 AS m FROM range(9) r(i)",
    "",
]


def body() -> tuple[str, str]:
    """A subquery's FROM and WHERE with a join and one correlation, and its first table."""
    a, b = R.sample(sorted(COLUMNS), 2)
    shared = [c for c in COLUMNS[a] if c in COLUMNS[b]]
    key = R.choice(shared)
    side = R.choice([a, b])
    correlation = f"{side}.{R.choice(COLUMNS[side])} = t.{R.choice('kn')}"
    kind = R.choice(["JOIN", "LEFT JOIN", ","])
    if kind == ",":
        return f"FROM {a}, {b} WHERE {a}.{key} = {b}.{key} AND {correlation}", a
    return f"FROM {a} {kind} {b} ON {a}.{key} = {b}.{key} WHERE {correlation}", a


for _ in range(COUNT):
    inner, first = body()
    form = R.choice(["count", "max", "exists", "not exists", "in"])
    if form == "count":
        lines += ["query II rowsort", f"SELECT t.id, (SELECT count(*) {inner}) FROM t", ""]
    elif form == "max":
        lines += ["query II rowsort", f"SELECT t.id, (SELECT max({first}.k) {inner}) FROM t", ""]
    elif form == "in":
        sql = f"SELECT count(*), sum(t.id) FROM t WHERE t.k IN (SELECT {first}.k {inner})"
        lines += ["query II", sql, ""]
    else:
        sql = f"SELECT count(*), sum(t.id) FROM t WHERE {form.upper()} (SELECT 1 {inner})"
        lines += ["query II", sql, ""]
write(out, lines)
