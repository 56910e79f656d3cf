"""Random outer joins with the split table in every place: first (its rows preserved by a
LEFT join, or not by a RIGHT or FULL one), as the joined item of a RIGHT, LEFT or FULL join,
after an outer join of two other tables, joined to another table before an outer join, after
a comma and inside a parenthesized join group; followed by filters and inner joins that may or
may not remove the rows an outer join adds (``t.n > 0`` does, ``coalesce(t.n, 0) > 0``,
``t.n IS NULL`` and ``NOT (t.n > 0) OR ...`` do not). Arguments: SEED FILE COUNT."""

from _probe import JOINED_TABLES, arguments, write

R, out, COUNT = arguments()
lines = [
    *JOINED_TABLES,
    "statement ok",
    "CREATE TABLE v AS SELECT i AS m, i % 4 AS n, ['a','z'][i % 2 + 1] AS s FROM range(8) r(i)",
    "",
]
OUTER = ["LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "FULL OUTER JOIN", "RIGHT OUTER JOIN"]


def condition(a):
    """A filter on table ``a``: some remove the rows whose ``a`` columns are all NULL."""
    return R.choice(
        [
            f"{a}.n > 0",
            f"{a}.s = 'a'",
            f"{a}.n IN (1, -1)",
            f"{a}.s IS NOT NULL",
            f"{a}.n + 1 BETWEEN 0 AND 2",
            f"NOT ({a}.n > 0)",
            f"{a}.s LIKE 'a%'",
            f"CAST({a}.n AS VARCHAR) <> '1'",
            f"coalesce({a}.n, 0) > 0",
            f"{a}.n IS NULL",
            f"({a}.n > 0 OR {a}.n IS NULL)",
            f"{a}.s || 'x' = 'ax'",
            f"{a}.n IN (SELECT n FROM v WHERE m > 5)",
        ]
    )


def on(a, b):
    key = f"{a}.n = {b}.n" if "v" in (a, b) else f"{a}.k = {b}.k"
    extra = R.choice(["", f" AND {condition(a)}", f" AND {condition(b)}", f" AND {a}.s = {b}.s"])
    return key + extra


for _j in range(COUNT):
    shape = R.randint(1, 6)
    if shape == 1:  # t first
        q_from = f"t {R.choice(OUTER)} u ON {on('t', 'u')}"
        tables = ["t", "u"]
    elif shape == 2:  # t joined to u
        q_from = f"u {R.choice(OUTER)} t ON {on('u', 't')}"
        tables = ["u", "t"]
    elif shape == 3:  # t after an outer join of u and v
        q_from = f"u {R.choice(OUTER)} v ON {on('u', 'v')} {R.choice(['JOIN', *OUTER])} t ON {on('t', 'u')}"
        tables = ["u", "v", "t"]
    elif shape == 4:  # a comma: the outer join is its own FROM item
        q_from = R.choice(
            [
                f"t, u {R.choice(OUTER)} v ON {on('u', 'v')}",
                f"v, u {R.choice(OUTER)} t ON {on('u', 't')}",
            ]
        )
        tables = ["t", "u", "v"]
    elif shape == 6:  # t joined to v first, then an outer join of u
        first = R.choice(
            [
                f"t JOIN v ON {on('t', 'v')}",
                f"v JOIN t ON {on('t', 'v')}",
                f"t LEFT JOIN v ON {on('t', 'v')}",
                f"v RIGHT JOIN t ON {on('t', 'v')}",
            ]
        )
        q_from = f"{first} {R.choice(['RIGHT JOIN', 'FULL JOIN', 'FULL OUTER JOIN'])} u ON {on('t', 'u')}"
        tables = ["t", "v", "u"]
    else:  # a parenthesized join group
        q_from = R.choice(
            [
                f"u {R.choice(OUTER)} (t JOIN v ON {on('t', 'v')}) ON {on('t', 'u')}",
                f"(t {R.choice(OUTER)} v ON {on('t', 'v')}) {R.choice(OUTER)} u ON {on('t', 'u')}",
            ]
        )
        tables = ["t", "u", "v"]
    if shape < 3 and R.random() < 0.4:
        q_from += f" {R.choice(['JOIN', 'LEFT JOIN', 'JOIN'])} v ON {on(R.choice(tables), 'v')}"
        tables.append("v")
    where = [condition(R.choice(tables)) for _ in range(R.choice([0, 1, 1, 2]))]
    w = f" WHERE {' AND '.join(where)}" if where else ""
    sel = R.choice(
        [
            "count(*), sum(t.i), count(u.j), sum(u.j)",
            "t.s AS g, count(*), count(u.j), sum(t.n)",
            "u.s AS g, count(*), sum(t.i), count(t.k)",
            "coalesce(t.k, u.k) AS g, count(*), min(t.i), max(u.j)",
        ]
    )
    q = f"SELECT {sel} FROM {q_from}{w}" + (" GROUP BY g" if "AS g" in sel else "")
    lines += ["query I", q, ""]
write(out, lines)
