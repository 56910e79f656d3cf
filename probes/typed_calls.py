"""Functions and operators called on a column of every plain type, where DuckDB casts the
argument to the type the function takes (a number or a BLOB written as text for upper,
concat, LIKE; text read as a date for year): text, numeric, temporal, hashing and casting
calls, one inside another up to two deep, as a GROUP BY key, a WHERE condition's operand,
MIN/MAX/count(DISTINCT) and an ORDER BY key. Most pairs DuckDB cannot bind and raises on; the
split must raise too. Arguments: SEED FILE COUNT."""

from _probe import TYPED_TABLE, arguments, write

R, out, COUNT = arguments()
lines = ["statement ok", TYPED_TABLE, ""]
COLUMNS = ["n", "d", "x", "f", "ub", "b", "dt", "ts", "ms", "ns", "tm", "iv", "u", "bl", "s"]
CALLS = [
    "upper({})",
    "lower({})",
    "length({})",
    "substr({}, 1, 3)",
    "substring({}, 2)",
    "left({}, 2)",
    "right({}, 2)",
    "replace({}, '1', 'x')",
    "starts_with({}, '1')",
    "contains({}, '0')",
    "strpos({}, '0')",
    "trim({})",
    "ltrim({}, '0')",
    "reverse({})",
    "{} || 'x'",
    "concat({}, 'x')",
    "concat('x', {}, {})",
    "concat_ws('-', {}, 'x')",
    "lpad({}, 5, '0')",
    "split_part({}, '-', 1)",
    "{} LIKE '1%'",
    "{} ILIKE '%0%'",
    "regexp_matches({}, '^1')",
    "md5({})",
    "hash({})",
    "abs({})",
    "round({})",
    "round({}, 1)",
    "ceil({})",
    "floor({})",
    "{} + 1",
    "{} * 2",
    "-{}",
    "{} % 2",
    "{} // 2",
    "{} / 2",
    "sign({})",
    "year({})",
    "month({})",
    "dayofweek({})",
    "date_trunc('month', {})",
    "date_part('hour', {})",
    "epoch({})",
    "strftime({}, '%Y-%m')",
    "{} - INTERVAL 1 DAY",
    "{} + INTERVAL 90 MINUTE",
    "CAST({} AS VARCHAR)",
    "CAST({} AS DATE)",
    "CAST({} AS INTEGER)",
    "CAST({} AS DOUBLE)",
    "CAST({} AS DECIMAL(10, 2))",
    "CAST({} AS BIGINT)",
    "CAST({} AS BOOLEAN)",
    "CAST({} AS TIMESTAMP)",
    "TRY_CAST({} AS INTEGER)",
    "TRY_CAST({} AS DATE)",
    "coalesce({}, {})",
    "greatest({}, {})",
    "nullif({}, {})",
    "{} IS NULL",
    "NOT {}",
    "octet_length({})",
    "strlen({})",
    "to_hex({})",
    "format('{{}}', {})",
    "ascii({})",
    "instr({}, '1')",
    "ends_with({}, '0')",
    "repeat({}, 2)",
    "isnan({})",
    "{} IN (1, 2)",
    "{} BETWEEN 1 AND 2",
]


def call(depth: int) -> str:
    """A call on a column, or on a call, ``depth`` deep."""
    inner = f"t.{R.choice(COLUMNS)}" if depth <= 1 else call(depth - 1)
    form = R.choice(CALLS)
    return form.format(*[inner] * form.count("{}"))


for _ in range(COUNT):
    e = call(R.choice([1, 1, 1, 2]))
    form = R.randint(1, 5)
    if form == 1:
        q = f"SELECT e, count(*) FROM (SELECT {e} AS e FROM t) GROUP BY e ORDER BY e NULLS FIRST"
    elif form == 2:
        q = f"SELECT min(e), max(e), count(DISTINCT e), count(e) FROM (SELECT {e} AS e FROM t)"
    elif form == 3:
        q = f"SELECT count(*) FROM t WHERE ({e}) IS NOT DISTINCT FROM (SELECT max({e}) FROM t)"
    elif form == 4:
        q = f"SELECT t.k, count(DISTINCT {e}) FROM t GROUP BY t.k ORDER BY t.k"
    else:
        q = f"SELECT t.i, {e} AS e FROM t ORDER BY e NULLS LAST, t.i LIMIT {R.randint(3, 20)}"
    lines += ["query I", q, ""]
write(out, lines)
