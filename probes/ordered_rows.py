"""Random row queries: filters, projections of expressions, DISTINCT, ORDER BY one to three keys
of every type (NaN, -0.0, infinities, NULLs, non-ASCII and empty text, ties) ASC or DESC with
NULLS FIRST or LAST, LIMIT and OFFSET (with and without a full order), ORDER BY positions,
aliases and expressions, and top-k over grouped rows. Every column an ORDER BY reads is selected, so that the runner
tells tied rows apart (their order, and which of them a LIMIT keeps, is the engine's).
Arguments: SEED FILE COUNT."""

from _probe import TIES_TABLE, arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    TIES_TABLE,
    "",
]
COLS = ["i", "k", "x", "s", "d", "dt", "ts", "b", "n", "f"]
#: Key expressions and the columns each reads: those are selected too, so the runner can tell
#: rows whose keys tie (DuckDB leaves their order, and which of them a LIMIT keeps, open).
READS = {
    "k + n": ["k", "n"],
    "abs(n)": ["n"],
    "s || 'x'": ["s"],
    "upper(s)": ["s"],
    "d * 2": ["d"],
    "x * -1": ["x"],
    "dt + 1": ["dt"],
    "n % 7": ["n"],
    "length(s)": ["s"],
    "CASE WHEN b THEN s ELSE 'q' END": ["b", "s"],
    "coalesce(k, -1)": ["k"],
    "year(dt)": ["dt"],
    "least(n, k)": ["n", "k"],
}
EXPRS = list(READS)


def key(read):
    r = R.random()
    if r < 0.6:
        item = R.choice(COLS)
        read.append(item)
    else:
        item = R.choice(EXPRS)
        read.extend(READS[item])
    if R.random() < 0.5:
        item += R.choice([" ASC", " DESC"])
    if R.random() < 0.4:
        item += R.choice([" NULLS FIRST", " NULLS LAST"])
    return item


def where():
    return R.choice(
        [
            "",
            "",
            f" WHERE n > {R.randint(-100, 100)}",
            " WHERE x > 0",
            " WHERE s < 'b'",
            " WHERE k IS NOT NULL AND b",
            f" WHERE dt BETWEEN DATE '2003-01-01' AND DATE '2010-01-01' OR i % {R.randint(2, 9)} = 0",
            " WHERE isnan(x) OR x IS NULL",
        ]
    )


for _ in range(COUNT):
    w = where()
    read = []
    keys = ", ".join(key(read) for _ in range(R.randint(1, 3)))
    full = R.random() < 0.5  # an order to the unique i: no ties
    order = keys + (", i" if full else "")
    limit = R.choice(
        ["", f" LIMIT {R.randint(1, 40)}", f" LIMIT {R.randint(1, 20)} OFFSET {R.randint(0, 30)}"]
    )
    cols = ", ".join(dict.fromkeys(R.sample(COLS, R.randint(1, 4)) + read))
    form = R.randint(1, 7)
    if form <= 3:
        q = f"SELECT i, {cols} FROM t{w} ORDER BY {order}{limit}"
    elif form == 4:
        q = f"SELECT DISTINCT {cols} FROM t{w} ORDER BY ALL{limit}"
    elif form == 5:
        e = R.choice(EXPRS)
        q = f"SELECT i, {e} AS e FROM t{w} ORDER BY e{R.choice([' DESC', ''])}, i{limit}"
    elif form == 6:
        g = R.choice(["k", "s", "b", "dt", "n % 5"])
        a = R.choice(["count(*)", "sum(n)", "min(s)", "max(d)", "max(dt)"])
        q = f"SELECT {g} AS g, {a} AS a FROM t{w} GROUP BY g ORDER BY a DESC, g NULLS FIRST{limit}"
    else:
        q = f"SELECT * FROM (SELECT i, {cols} FROM t{w} ORDER BY {keys}, i LIMIT {R.randint(5, 60)}) s ORDER BY i"
    lines += ["query I", q, ""]
write(out, lines)
