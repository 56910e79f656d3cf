"""Random join conditions: LEFT/RIGHT/FULL/INNER/SEMI/ANTI with ON conditions on either side,
ORs, inequalities, chains of three tables, USING, and filters after the join."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE i % 11 END AS k, (i % 7 - 3)::INTEGER AS n, ['a','b',NULL,'ab'][i % 4 + 1] AS s FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT i AS j, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 13 END AS k, (i % 5 - 2)::INTEGER AS n, ['a','b','z',NULL][i % 4 + 1] AS s FROM range(60) r(i)",
    "",
    "statement ok",
    "CREATE TABLE v AS SELECT i AS m, i % 4 AS n, ['a','z'][i % 2 + 1] AS s FROM range(8) r(i)",
    "",
]


def side(a):
    return R.choice(
        [
            f"{a}.n > 0",
            f"{a}.s = 'a'",
            f"{a}.k IS NULL",
            f"{a}.n IN (1, -1)",
            f"{a}.s IS NOT NULL",
        ]
    )


def on(a, b):
    parts = [f"{a}.k = {b}.k" if b != "v" else f"{a}.n = v.n"]
    r = R.random()
    if r < 0.25:
        parts.append(side(a))
    elif r < 0.5:
        parts.append(side(b) if b != "v" else "v.s = 'a'")
    elif r < 0.6:
        parts.append(f"{a}.n < {b}.n")
    elif r < 0.7:
        parts = [f"({parts[0]} OR {a}.s = {b}.s)"]
    elif r < 0.8:
        parts.append(f"{a}.s = {b}.s")
    return " AND ".join(parts)


for _j in range(COUNT):
    kind = R.choice(
        [
            "JOIN",
            "LEFT JOIN",
            "RIGHT JOIN",
            "FULL JOIN",
            "LEFT JOIN",
            "SEMI JOIN",
            "ANTI JOIN",
        ]
    )
    q_from = f"t {kind} u ON {on('t', 'u')}"
    if kind not in ("SEMI JOIN", "ANTI JOIN") and R.random() < 0.4:
        kind2 = R.choice(["JOIN", "LEFT JOIN"])
        q_from += f" {kind2} v ON {on(R.choice(['t', 'u']), 'v')}"
    w = (
        R.choice(["", f" WHERE {side('t')}", " WHERE u.j IS NULL", " WHERE t.i % 2 = 0"])
        if kind not in ("SEMI JOIN", "ANTI JOIN")
        else R.choice(["", f" WHERE {side('t')}"])
    )
    if kind in ("SEMI JOIN", "ANTI JOIN"):
        q = f"SELECT count(*), sum(t.i), count(t.s) FROM {q_from}{w}"
    else:
        sel = R.choice(
            [
                "count(*), sum(t.i), count(u.j), sum(u.j)",
                "t.s AS g, count(*), count(u.j)",
                "u.s AS g, count(*), sum(t.i)",
            ]
        )
        q = f"SELECT {sel} FROM {q_from}{w}" + (" GROUP BY g" if "AS g" in sel else "")
    lines += ["query I", q, ""]
write(out, lines)
