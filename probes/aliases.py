"""Random name resolution: output aliases that shadow or swap input columns (``SELECT n AS k,
k AS n``), aliases read again later in the SELECT list (DuckDB's lateral aliases), in WHERE,
GROUP BY, HAVING, ORDER BY and QUALIFY, where DuckDB prefers a column in some clauses and an
alias in others; mixed-case and quoted names, a column named like its table or like a
function, names with spaces. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 13 = 0 THEN NULL ELSE i % 7 END AS k, "
    '((i * 7919) % 200 - 100)::INTEGER AS n, (i % 5)::INTEGER AS "Mixed", '
    '(i % 3)::INTEGER AS "two words", (i % 4)::INTEGER AS t, (i % 6)::INTEGER AS "sum", '
    "['a', 'b', NULL][i % 3 + 1] AS s FROM range(3000) r(i)",
    "",
]
COLS = ["i", "k", "n", '"Mixed"', '"two words"', "t", '"sum"', "t.t", "mixed"]
NUMS = ["k", "n", '"Mixed"', '"two words"', "t", '"sum"', "t.t", "mixed", "i % 10"]
NAMES = ["k", "n", "t", "i", "x", "mixed", '"Mixed"', "s", '"sum"', "total"]


def value():
    a, b = R.choice(NUMS), R.choice(NUMS)
    return R.choice([a, f"{a} + {b}", f"{a} * 2", f"-{a}", f"coalesce({a}, 0)", f"{a} % 3"])


for _ in range(COUNT):
    form = R.randint(1, 8)
    x, y = R.sample(NAMES, 2)
    if form == 1:  # aliases that shadow columns, grouped by the name
        q = f"SELECT {value()} AS {x}, count(*) AS c, sum(n) AS {y} FROM t GROUP BY {x} ORDER BY ALL"
    elif form == 2:  # ...and HAVING on it
        q = f"SELECT {value()} AS {x}, sum({R.choice(NUMS)}) AS {y} FROM t GROUP BY 1 HAVING {x} > {R.randint(-3, 3)} ORDER BY ALL"
    elif form == 3:  # ORDER BY an alias that shadows a column
        q = f"SELECT i, {value()} AS {x}, {value()} AS {y} FROM t ORDER BY {x}, {y}, i LIMIT {R.randint(5, 40)}"
    elif form == 4:  # lateral aliases
        q = f"SELECT {value()} AS {x}, {x} * 2 AS {'z' if y == x else y}, count(*) FROM t GROUP BY ALL ORDER BY ALL"
    elif form == 5:  # WHERE names a column also used as an alias
        q = f"SELECT {value()} AS {x}, count(*) FROM t WHERE {R.choice(NUMS)} > {R.randint(-50, 50)} GROUP BY {x} ORDER BY ALL"
    elif form == 6:  # aggregate over an alias name
        q = "SELECT k AS n, n AS k, count(*) FROM t GROUP BY k, n ORDER BY n, k"
        q = R.choice(
            [
                q,
                f"SELECT {x}, sum({y}) FROM (SELECT {value()} AS {x}, {value()} AS {y} FROM t) t GROUP BY {x} ORDER BY ALL",
            ]
        )
    elif form == 7:  # QUALIFY with an alias
        q = f"SELECT i, {value()} AS {x} FROM t QUALIFY row_number() OVER (PARTITION BY {x} ORDER BY i) <= 2 ORDER BY i"
    else:  # a subquery reading the outer alias name
        q = f"SELECT {value()} AS {x}, count(*) FROM t WHERE n IN (SELECT n FROM t AS u WHERE u.k = {R.randint(0, 6)}) GROUP BY 1 ORDER BY ALL"
    lines += ["query I", q, ""]
write(out, lines)
