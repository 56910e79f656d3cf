"""Random windows over a grouped block's groups: rank, dense_rank, row_number, percent_rank,
cume_dist, ntile, lag, lead, first_value, last_value and framed aggregates of aggregates,
partitioned or not, ordered by keys or by an aggregate, and QUALIFY over them (split from the
thirtieth session on). Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, i % 7 AS k, i % 3 AS g, "
    "CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37) % 1000 END::INTEGER AS n, "
    "((i * 7919) % 10000 / 100.0)::DECIMAL(9,2) AS d, ['a','b',NULL][i % 3 + 1] AS s "
    "FROM range(4000) r(i)",
    "",
]
AGGS = ["count(*)", "sum(n)", "min(n)", "max(d)", "sum(d)", "count(DISTINCT s)", "count(n)"]
RANKS = ["rank()", "dense_rank()", "row_number()", "percent_rank()", "cume_dist()", "ntile(3)"]
SHIFTS = ["lag({a})", "lead({a}, 2)"]
FRAMED = ["first_value({a})", "last_value({a})", "sum({a})", "min({a})", "max({a})"]
FRAMED += ["count({a})", "avg({a})"]
FRAMES = [
    "",
    " ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
    " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
    " RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
]
for _ in range(COUNT):
    a = R.choice(AGGS)
    family = R.choice([RANKS, SHIFTS, FRAMED])
    function = R.choice(family).format(a=R.choice(AGGS))
    frame = R.choice(FRAMES) if family is FRAMED else ""
    part = R.choice(["", "PARTITION BY g ", "PARTITION BY k % 2 "])
    order = R.choice(["k", "k DESC", f"{a}, k", f"{a} DESC, k"])
    window = f"{function} OVER ({part}ORDER BY {order}{frame})"
    if R.random() < 0.3:
        q = f"SELECT k, g, {a} AS v FROM t GROUP BY k, g QUALIFY {window} <= 3 ORDER BY k, g"
    else:
        q = f"SELECT k, g, {a} AS v, {window} AS w FROM t GROUP BY k, g ORDER BY k, g"
    lines += ["query I", q, ""]
write(out, lines)
