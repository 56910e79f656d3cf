"""Random text patterns and comparisons: LIKE, ILIKE and NOT LIKE with `_`, `%` and ESCAPE over
non-ASCII text and regex syntax (`.`, `(`, `$`, `|`, a backslash), SIMILAR TO, GLOB, regexp_matches (classes, anchors, alternation, counts, flags),
`~`, regexp_replace and regexp_extract, starts_with/ends_with/contains/prefix/suffix, and text
compared, ordered, grouped and taken MIN/MAX of where bytes, case and trailing spaces differ.
Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
TEXTS = [
    "abc",
    "ABC",
    "",
    " ",
    "a b",
    "a_b",
    "a%b",
    "a\\\\b",
    "héllo",
    "HÉLLO",
    "ß",
    "SS",
    "İi",
    "ǅ",
    "日本語",
    "x1",
    "x10",
    "x9",
    "a,b,,c",
    "tab\\there",
    "naïve",
    "e\u0301",
    "é",
    "zz",
    "abc ",
    "Ab",
    "12",
    "1.5",
    "-3",
    "\u00a0a",
    "ﬁ",
    "ǆ",
    "Ω",
    "ω",
    "a.b",
    "(x)",
    "$5",
    "x+y",
    "a|b.",
    "[1]",
]
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, ["
    + ", ".join("'" + s.replace("'", "''") + "'" for s in TEXTS)
    + f", NULL][i % {len(TEXTS) + 1} + 1] AS s, ['a', '%', '_', 'é', NULL, 'b'][i % 6 + 1] AS c, "
    "(i % 9)::INTEGER AS n FROM range(3000) r(i)",
    "",
    "statement ok",
    "CREATE TABLE u AS SELECT DISTINCT s AS s2, upper(s) AS up FROM t",
    "",
]
LIKES = ["a%", "%b", "_", "__", "%é%", "a_b", "%\\%%", "a\\_b", "%", "", "x_", "x%0", "%ß%", "_b%"]
LIKES += [
    "%.%",
    "a.%",
    "%.b",
    "a.b",
    "%(x)%",
    "$%",
    "%+%",
    "%|%",
    "%[1]",
    "%.",
    "%.%_",
    "_.%",
    "%\\%",
]
REGEXES = [
    "^a",
    "b$",
    "a|b",
    "[0-9]+",
    "^[a-z]+$",
    "x[0-9]{2}",
    "(ab|AB)c",
    ".",
    "^.$",
    "\\s",
    "[[:alpha:]]",
    "é",
    "^$",
    "a.?b",
    "[^a-z]",
    "\\d",
    "\\w+",
    "(?i)abc",
]


def text():
    return R.choice(["s", "s", "c", "upper(s)", "lower(s)", "trim(s)", "s || c", "left(s, 2)"])


def cond():
    k = R.randint(1, 12)
    a = text()
    if k == 1:
        return f"{a} {R.choice(['LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE'])} '{R.choice(LIKES)}'"
    if k == 2:
        return f"{a} LIKE '{R.choice(['a!_b', '%!%%', 'a!%', '!_%'])}' ESCAPE '!'"
    if k == 3:
        return f"{a} {R.choice(['SIMILAR TO', 'NOT SIMILAR TO'])} '{R.choice(['a.*', '.*b', '[a-z]+', 'x[0-9]*'])}'"
    if k == 4:
        return f"{a} GLOB '{R.choice(['a*', '*b', '?', '[a-c]*', 'x?'])}'"
    if k == 5:
        flags = R.choice(["", ", 'i'", ", 'c'", ", 's'"])
        return f"regexp_matches({a}, '{R.choice(REGEXES)}'{flags})"
    if k == 6:
        return f"{a} {R.choice(['~', '!~'])} '{R.choice(REGEXES)}'"
    if k == 7:
        fn = R.choice(["starts_with", "ends_with", "contains", "prefix", "suffix"])
        return f"{fn}({a}, {R.choice(['c', repr('a'), repr('b'), repr('')])})"
    if k == 8:
        return f"{a} {R.choice(['<', '<=', '>', '>=', '=', '<>'])} {R.choice(['c', repr('b'), repr('é'), repr('ab'), repr('B'), 's'])}"
    if k == 9:
        return f"{a} BETWEEN {R.choice([repr('a'), 'c'])} AND {R.choice([repr('z'), repr('é')])}"
    if k == 10:
        return f"{a} IN ('abc', 'ß', 'é', '', c)"
    if k == 11:
        return f"regexp_replace({a}, '{R.choice(REGEXES)}', '#'{R.choice(['', ', ' + repr('g')])}) = {R.choice(['s', repr('#'), repr('#bc')])}"
    return f"regexp_extract({a}, '{R.choice(['([a-z])([0-9])', '^(.)', '(b+)'])}', {R.choice(['0', '1'])}) <> ''"


for _ in range(COUNT):
    form = R.randint(1, 6)
    if form == 1:
        q = f"SELECT count(*), sum(n) FROM t WHERE {cond()}"
    elif form == 2:
        q = f"SELECT n, count(*) FROM t WHERE {cond()} {R.choice(['AND', 'OR'])} {cond()} GROUP BY n ORDER BY n"
    elif form == 3:
        q = f"SELECT {text()} AS k, count(*), min(i) FROM t GROUP BY k ORDER BY k NULLS FIRST"
    elif form == 4:
        q = f"SELECT min({text()}), max({text()}), count(DISTINCT {text()}) FROM t WHERE {cond()}"
    elif form == 5:
        q = f"SELECT ({cond()}) AS b, count(*) FROM t GROUP BY b ORDER BY b"
    else:
        q = (
            f"SELECT count(*), count(u.up) FROM t JOIN u ON {R.choice(['t.s = u.s2', 'upper(t.s) = u.up', 't.s < u.s2 AND t.n = 1'])}"
            f" WHERE {cond()}"
        )
    lines += ["query I", q, ""]
write(out, lines)
