"""Random text and temporal function calls the Polars arm may let through."""

from _probe import arguments, write

R, out, COUNT = arguments()
lines = [
    "statement ok",
    "CREATE TABLE t AS SELECT i, ['abc', 'ABC', '', ' a b ', 'héllo', 'ß', NULL, 'a,b,,c', '12', 'x_y%z', 'İi', 'tab\there', 'AbCdEf', '  ', 'ǅ'][i % 15 + 1] AS s, "
    "['a', 'b', 'C', '', NULL, ',', 'é'][i % 7 + 1] AS c, (i % 9 - 2)::INTEGER AS n, "
    "['abc', '', 'a,b', 'xYz', NULL, 'ba b', 'bb'][i % 7 + 1] AS a, "
    "DATE '1999-12-25' + ((i * 37) % 800)::INTEGER AS d, TIMESTAMP '2000-02-28 22:00:00' + INTERVAL (i * 7919 % 100000) MINUTE AS ts FROM range(2000) r(i)",
    "",
]


def text(dd):
    if dd == 0 or R.random() < 0.3:
        return R.choice(["s", "c", "'xY'", "s", "a"])  # a: all ASCII (strpos, upper split)
    k = R.randint(1, 17)
    a = text(dd - 1)
    if k == 1:
        return f"upper({a})"
    if k == 2:
        return f"lower({a})"
    if k == 3:
        return f"substring({a}, {R.choice(['1', '2', '0', '-1', 'n'])}, {R.choice(['1', '2', '3', 'n'])})"
    if k == 4:
        return f"replace({a}, {R.choice(['c', chr(39) + 'b' + chr(39), chr(39) + chr(39)])}, {R.choice(['c', chr(39) + 'Z' + chr(39)])})"
    if k == 5:
        return f"{R.choice(['trim', 'ltrim', 'rtrim'])}({a})"
    if k == 6:
        return f"concat({a}, {text(dd - 1)})"
    if k == 7:
        return f"{a} || {text(dd - 1)}"
    if k == 8:
        return f"{R.choice(['left', 'right'])}({a}, {R.choice(['1', '2', 'n', '0', '-1'])})"
    if k == 9:
        return f"{R.choice(['lpad', 'rpad'])}({a}, {R.choice(['3', 'n', '0'])}, {R.choice([chr(39) + '*' + chr(39), chr(39) + 'ab' + chr(39), 'c'])})"
    if k == 10:
        return f"reverse({a})"
    if k == 11:
        return f"repeat({a}, {R.choice(['2', 'n', '0'])})"
    if k == 12:
        return f"strftime(d, '{R.choice(['%Y-%m', '%d/%m/%Y', '%j', '%a', '%b %d', '%W', '%u'])}')"
    if k == 13:
        return f"CAST({R.choice(['n', 'd', 'ts', 'i * 0.5', 'n = 1'])} AS VARCHAR)"
    if k == 14:
        return f"coalesce({a}, {text(dd - 1)})"
    if k == 15:
        return f"split_part({a}, ',', {R.choice(['1', '2', '-1', 'n'])})"
    if k == 16:
        bounds = ["", "0", "1", "2", "3", "5", "-1", "-2"]
        return f"({a})[{R.choice(bounds)}:{R.choice(bounds)}]"
    return f"CASE WHEN {a} < {text(dd - 1)} THEN {a} ELSE 'q' END"


def num():
    k = R.randint(1, 12)
    a = text(R.randint(0, 2))
    if k == 1:
        return f"length({a})"
    if k == 2:
        needle = R.choice(["c", "'b'", "''", "'b b'", "'é'"])
        call = R.choice(["strpos({0}, {1})", "instr({0}, {1})", "position({1} IN {0})"])
        return call.format(R.choice([a, "a"]), needle)
    if k == 3:
        return f"{R.choice(['year', 'month', 'day', 'dayofweek', 'dayofyear', 'week', 'quarter', 'isodow', 'yearweek'])}({R.choice(['d', 'ts'])})"
    if k == 4:
        return f"date_part('{R.choice(['hour', 'minute', 'epoch', 'decade', 'century', 'isoyear', 'doy'])}', {R.choice(['d', 'ts'])})"
    if k == 5:
        return f"date_diff('{R.choice(['day', 'month', 'year', 'week', 'hour'])}', d, {R.choice(['ts', 'DATE ' + chr(39) + '2000-03-01' + chr(39)])})"
    if k == 6:
        return f"ascii({a})"
    if k == 7:
        pat = R.choice(["a%", "%b%", "_", "%x_y%"])
        return f"{a} LIKE '{pat}'"
    if k == 8:
        return f"starts_with({a}, {R.choice(['c', chr(39) + 'a' + chr(39)])})"
    if k == 9:
        return f"contains({a}, {R.choice(['c', chr(39) + 'b' + chr(39)])})"
    if k == 10:
        return f"date_trunc('{R.choice(['month', 'week', 'year', 'day', 'hour', 'quarter'])}', {R.choice(['d', 'ts'])})"
    if k == 11:
        return f"{R.choice(['d', 'ts'])} + INTERVAL {R.randint(1, 40)} {R.choice(['DAY', 'MONTH', 'HOUR', 'YEAR'])}"
    return f"{a} ILIKE '{R.choice(['A%', '%B%', 'ß'])}'"


for _j in range(COUNT):
    e = R.choice([text(R.randint(1, 3)), num()])
    form = R.randint(1, 4)
    if form == 1:
        q = f"SELECT {e} AS v, count(*) FROM t GROUP BY v"
    elif form == 2:
        q = f"SELECT count(*), sum(i) FROM t WHERE ({e})::VARCHAR > 'b'"
    elif form == 3:
        q = f"SELECT min({e}), max({e}), count(DISTINCT {e}) FROM t"
    else:
        q = f"SELECT count(*) FROM t WHERE ({e}) IS NOT DISTINCT FROM ({R.choice([text(1), num()])})"
    lines += ["query I", q, ""]
write(out, lines)
