"""Random typed-expression probe: writes an slt file of queries over one table with edge values."""

import os
import random
import sys
from pathlib import Path

seed = int(sys.argv[1])
n_q = int(sys.argv[2])
out = sys.argv[3]
fams = sys.argv[4].split(",") if len(sys.argv) > 4 else None
R = random.Random(seed)
N = 240


def q(s):
    return "'" + s.replace("'", "''") + "'"


LIKES = ["a%", "%b", "_", "%", "a\\_b", "%é%", ""]
TEXTS = [
    "a",
    "b",
    "",
    " a ",
    "é",
    "ß",
    "İx",
    "abc",
    "a%b",
    "a_b",
    "ab\\c",
    "x-y-z",
    "🙂",
    "A",
    "aB",
    "12",
    "-3",
    "1.5",
    "2020-01-02",
    "nan",
    "null",
    "a b c",
    "  ",
]
DATES = [
    "1970-01-01",
    "1969-12-31",
    "2000-02-29",
    "1900-03-01",
    "0001-01-01",
    "9999-12-31",
    "2024-12-31",
    "1992-01-01",
    "1998-12-01",
    "2020-06-15",
    "infinity",
    "-infinity",
    "0044-03-15 (BC)",
    "1582-10-10",
]
TSS = [
    "1970-01-01 00:00:00",
    "1969-12-31 23:59:59.999999",
    "2000-02-29 12:34:56.789",
    "1900-01-01 00:00:00.000001",
    "2262-04-11 23:47:16.854775",
    "1677-09-21 00:12:43.145225",
    "2024-03-10 02:30:00",
    "infinity",
    "-infinity",
    "0001-01-01 00:00:00",
    "9999-12-31 23:59:59.999999",
    "2020-06-15 00:00:00",
]
TIMES = ["00:00:00", "23:59:59.999999", "12:00:00", "01:02:03.5"]


if os.environ.get("NOINF"):
    DATES = [x for x in DATES if "infinity" not in x]
    TSS = [x for x in TSS if "infinity" not in x]
EXT = bool(os.environ.get("EXT"))
rows = []
for i in range(N):

    def pick(vals, p_null=0.08):
        return None if R.random() < p_null else R.choice(vals)

    ti = pick([*list(range(-128, 128, 17)), 127, -128, 0, 1])
    si = pick([0, 1, -1, 32767, -32768, 1000, -999, 7])
    bi = pick([0, 1, -1, 2**62, -(2**62), 2**63 - 1, -(2**63), 123456789012, 5])
    dm = pick(
        [
            "0.00",
            "1.25",
            "-1.25",
            "9999999.99",
            "-9999999.99",
            "0.01",
            "2.50",
            "-2.50",
            "3.14",
        ]
    )
    dw = pick(
        [
            "0.0000",
            "1.0001",
            "-12345.6789",
            "99999999999999.9999",
            "0.5000",
            "-0.5000",
            "7.0000",
        ]
    )
    db = pick(
        [
            "0.0",
            "-0.0",
            "1.5",
            "-2.5",
            "1e300",
            "-1e-300",
            "'nan'",
            "'inf'",
            "'-inf'",
            "0.1",
            "3.0",
            "1e15",
            "123.456",
        ]
    )
    fl = pick(
        [
            "0.0",
            "1.5",
            "-2.5",
            "3.4e38",
            "1e-40",
            "'nan'",
            "'inf'",
            "0.1",
            "16777217",
            "-7.25",
        ]
    )
    s = pick(TEXTS)
    s2 = pick(TEXTS)
    d = pick(DATES)
    ts = pick(TSS)
    tz = pick([*TSS[:7], "2024-03-10 02:30:00+05:30"])
    tm = pick(TIMES)
    b = pick(["true", "false"])
    k = R.randint(0, 5)
    ut = pick([0, 1, 255, 128, 17])
    ub = pick([0, 1, 2**64 - 1, 2**63, 12345])
    hg = pick([0, 1, -1, 10**30, -(10**30), 2**100, 42])
    tsn = pick(
        [
            "2020-01-01 00:00:00.123456789",
            "1970-01-01 00:00:00.000000001",
            "2000-02-29 23:59:59.999999999",
            "1969-12-31 23:59:59.5",
        ]
    )
    tss = pick(
        [
            "2020-01-01 00:00:07",
            "1970-01-01 00:00:00",
            "1999-12-31 23:59:59",
            "2262-01-01 00:00:00",
        ]
    )
    tms = pick(
        [
            "2020-01-01 00:00:00.123",
            "1970-01-01 00:00:00.001",
            "1969-12-31 23:59:59.999",
        ]
    )
    iv = pick(
        [
            "1 day",
            "2 months 3 days",
            "-1 hour",
            "36 hours",
            "1 year",
            "00:00:00.5",
            "0 seconds",
        ]
    )
    u = pick(
        [
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "12345678-1234-5678-1234-567812345678",
            "80000000-0000-0000-0000-000000000000",
            "7fffffff-ffff-ffff-ffff-ffffffffffff",
        ]
    )
    bl = pick(["\\x00", "abc", "", "\\xFF\\x00", "a"])
    rows.append(
        (
            i,
            ti,
            si,
            bi,
            dm,
            dw,
            db,
            fl,
            s,
            s2,
            d,
            ts,
            tz,
            tm,
            b,
            k,
            ut,
            ub,
            hg,
            tsn,
            tss,
            tms,
            iv,
            u,
            bl,
        )
    )


def lit(v, cast):
    return (
        "NULL::" + cast
        if v is None
        else f"({v})::{cast}"
        if cast
        in (
            "TINYINT",
            "SMALLINT",
            "BIGINT",
            "DOUBLE",
            "FLOAT",
            "BOOLEAN",
            "INTEGER",
            "UTINYINT",
            "UBIGINT",
            "HUGEINT",
        )
        else f"{q(str(v))}::{cast}"
    )


cols = [
    ("i", "INTEGER"),
    ("ti", "TINYINT"),
    ("si", "SMALLINT"),
    ("bi", "BIGINT"),
    ("dm", "DECIMAL(9,2)"),
    ("dw", "DECIMAL(18,4)"),
    ("db", "DOUBLE"),
    ("fl", "FLOAT"),
    ("s", "VARCHAR"),
    ("s2", "VARCHAR"),
    ("d", "DATE"),
    ("ts", "TIMESTAMP"),
    ("tz", "TIMESTAMPTZ"),
    ("tm", "TIME"),
    ("b", "BOOLEAN"),
    ("k", "INTEGER"),
    ("ut", "UTINYINT"),
    ("ub", "UBIGINT"),
    ("hg", "HUGEINT"),
    ("tsn", "TIMESTAMP_NS"),
    ("tss", "TIMESTAMP_S"),
    ("tms", "TIMESTAMP_MS"),
    ("iv", "INTERVAL"),
    ("u", "UUID"),
    ("bl", "BLOB"),
]
values = ",\n".join(
    "(" + ", ".join(lit(v, c[1]) for v, c in zip(r, cols, strict=False)) + ")" for r in rows
)
create = (
    "CREATE TABLE t AS SELECT * FROM (VALUES "
    + values.replace("\n", " ")
    + ") v("
    + ", ".join(c[0] for c in cols)
    + ")"
)


def lit_int():
    return str(R.choice([0, 1, 2, -1, 3, 100, 127, 128, 32768, 2**31, -5, 7]))


def lit_dec():
    return R.choice(["1.5", "0.25", "-2.75", "100.01", "0.001", "3.14159", "99999.5"])


def lit_dbl():
    return R.choice(["1.5e0", "0.1e0", "-2e0", "1e10", "2.5e-3"])


def lit_txt():
    return q(R.choice(TEXTS))


def lit_date():
    return "DATE " + q(R.choice(DATES[:10]))


def lit_ts():
    return "TIMESTAMP " + q(R.choice(TSS[:7] + TSS[9:11]))


def expr(t, depth):
    leaf = depth <= 0 or R.random() < 0.3
    if t == "int":
        if leaf:
            return R.choice(
                ["i", "ti", "si", "bi", "k", lit_int()] + (["ut", "ub", "hg"] if EXT else [])
            )
        return R.choice(
            [
                lambda: f"({expr('int', depth - 1)} {R.choice('+-*')} {expr('int', depth - 1)})",
                lambda: f"abs({expr('int', depth - 1)})",
                lambda: f"(-{expr('int', depth - 1)})",
                lambda: f"sign({expr('num', depth - 1)})",
                lambda: f"length({expr('txt', depth - 1)})",
                lambda: (
                    f"extract({R.choice(['year', 'month', 'day', 'dow', 'doy', 'quarter', 'week', 'hour', 'minute', 'epoch', 'isodow'])} from {expr(R.choice(['date', 'ts']), depth - 1)})"
                ),
                lambda: (
                    f"CASE WHEN {expr('bool', depth - 1)} THEN {expr('int', depth - 1)} ELSE {expr('int', depth - 1)} END"
                ),
                lambda: f"coalesce({expr('int', depth - 1)}, {expr('int', depth - 1)})",
                lambda: (
                    f"{R.choice(['greatest', 'least'])}({expr('int', depth - 1)}, {expr('int', depth - 1)})"
                ),
                lambda: f"nullif({expr('int', depth - 1)}, {expr('int', depth - 1)})",
                lambda: (
                    f"CAST({expr(R.choice(['dec', 'dbl', 'txt', 'int']), depth - 1)} AS {R.choice(['INTEGER', 'BIGINT', 'SMALLINT', 'TINYINT', 'HUGEINT', 'UBIGINT'])})"
                ),
                lambda: f"{R.choice(['ceil', 'floor'])}({expr('dec', depth - 1)})",
                lambda: f"({expr('date', depth - 1)} - {expr('date', depth - 1)})",
            ]
        )()
    if t == "dec":
        if leaf:
            return R.choice(["dm", "dw", lit_dec()])
        return R.choice(
            [
                lambda: (
                    f"({expr('dec', depth - 1)} {R.choice('+-*')} {expr(R.choice(['dec', 'int']), depth - 1)})"
                ),
                lambda: f"abs({expr('dec', depth - 1)})",
                lambda: f"{R.choice(['ceil', 'floor'])}({expr('dec', depth - 1)})",
                lambda: (
                    f"CAST({expr(R.choice(['int', 'dec', 'dbl', 'txt']), depth - 1)} AS DECIMAL({R.choice(['9,2', '18,4', '4,1', '38,10', '10,0'])}))"
                ),
                lambda: (
                    f"CASE WHEN {expr('bool', depth - 1)} THEN {expr('dec', depth - 1)} ELSE {expr('dec', depth - 1)} END"
                ),
                lambda: (
                    f"coalesce({expr('dec', depth - 1)}, {expr(R.choice(['dec', 'int']), depth - 1)})"
                ),
                lambda: (
                    f"{R.choice(['greatest', 'least'])}({expr('dec', depth - 1)}, {expr(R.choice(['dec', 'int']), depth - 1)})"
                ),
            ]
        )()
    if t == "dbl":
        if leaf:
            return R.choice(["db", "fl", lit_dbl()])
        return R.choice(
            [
                lambda: f"({expr('num', depth - 1)} / {expr('num', depth - 1)})",
                lambda: f"({expr('dbl', depth - 1)} {R.choice('+-*')} {expr('num', depth - 1)})",
                lambda: (
                    f"{R.choice(['sqrt', 'ln', 'exp', 'abs', 'ceil', 'floor'])}({expr('dbl', depth - 1)})"
                ),
                lambda: f"pow({expr('dbl', depth - 1)}, {R.choice(['2', '0.5', '3', '-1'])})",
                lambda: (
                    f"CAST({expr(R.choice(['int', 'dec', 'txt', 'dbl']), depth - 1)} AS {R.choice(['DOUBLE', 'FLOAT'])})"
                ),
                lambda: (
                    f"CASE WHEN {expr('bool', depth - 1)} THEN {expr('dbl', depth - 1)} ELSE {expr('num', depth - 1)} END"
                ),
                lambda: (
                    f"{R.choice(['greatest', 'least'])}({expr('dbl', depth - 1)}, {expr('num', depth - 1)})"
                ),
                lambda: f"coalesce({expr('dbl', depth - 1)}, {expr('num', depth - 1)})",
            ]
        )()
    if t == "num":
        return expr(R.choice(["int", "dec", "dbl"]), depth)
    if t == "txt":
        if leaf:
            return R.choice(
                ["s", "s2", lit_txt()]
                + (["CAST(u AS VARCHAR)", "CAST(iv AS VARCHAR)"] if EXT else [])
            )
        return R.choice(
            [
                lambda: (
                    f"({expr('txt', depth - 1)} || {expr(R.choice(['txt', 'int', 'date']), depth - 1)})"
                ),
                lambda: (
                    f"concat({expr('txt', depth - 1)}, {expr(R.choice(['txt', 'int', 'dec', 'date', 'ts', 'bool']), depth - 1)})"
                ),
                lambda: (
                    f"concat_ws({lit_txt()}, {expr('txt', depth - 1)}, {expr('txt', depth - 1)})"
                ),
                lambda: (
                    f"{R.choice(['left', 'right'])}({expr('txt', depth - 1)}, {R.choice(['0', '1', '2', '-1', '5'])})"
                ),
                lambda: (
                    f"substring({expr('txt', depth - 1)}, {R.choice(['0', '1', '2', '-2'])}, {R.choice(['1', '2', '3', '0'])})"
                ),
                lambda: f"replace({expr('txt', depth - 1)}, {lit_txt()}, {lit_txt()})",
                lambda: f"reverse({expr('txt', depth - 1)})",
                lambda: f"{R.choice(['trim', 'ltrim', 'rtrim'])}({expr('txt', depth - 1)})",
                lambda: (
                    f"{R.choice(['lpad', 'rpad'])}({expr('txt', depth - 1)}, {R.choice(['0', '3', '5'])}, {q(R.choice(['*', 'ab', 'é']))})"
                ),
                lambda: (
                    f"split_part({expr('txt', depth - 1)}, {q(R.choice(['-', 'a', ' ', '']))}, {R.choice(['1', '2', '-1', '0'])})"
                ),
                lambda: (
                    f"CAST({expr(R.choice(['int', 'dec', 'dbl', 'date', 'ts', 'bool', 'tm']), depth - 1)} AS VARCHAR)"
                ),
                lambda: (
                    f"strftime({expr(R.choice(['date', 'ts']), depth - 1)}, {q(R.choice(['%Y-%m-%d', '%Y', '%m/%d', '%H:%M', '%j', '%a', '%b %e']))})"
                ),
                lambda: (
                    f"CASE WHEN {expr('bool', depth - 1)} THEN {expr('txt', depth - 1)} ELSE {expr('txt', depth - 1)} END"
                ),
                lambda: f"coalesce({expr('txt', depth - 1)}, {expr('txt', depth - 1)})",
                lambda: (
                    f"{R.choice(['greatest', 'least'])}({expr('txt', depth - 1)}, {expr('txt', depth - 1)})"
                ),
                lambda: f"nullif({expr('txt', depth - 1)}, {lit_txt()})",
            ]
        )()
    if t == "date":
        if leaf:
            return R.choice(["d", lit_date()])
        return R.choice(
            [
                lambda: (
                    f"({expr('date', depth - 1)} + INTERVAL {R.choice(['1 DAY', '2 MONTH', '1 YEAR', '-3 DAY', '36 HOUR'])})"
                ),
                lambda: f"({expr('date', depth - 1)} {R.choice('+-')} {expr('int', depth - 1)})",
                lambda: f"CAST({expr(R.choice(['ts', 'tz', 'txt']), depth - 1)} AS DATE)",
                lambda: (
                    f"CASE WHEN {expr('bool', depth - 1)} THEN {expr('date', depth - 1)} ELSE {expr('date', depth - 1)} END"
                ),
                lambda: (
                    f"{R.choice(['greatest', 'least', 'coalesce'])}({expr('date', depth - 1)}, {expr('date', depth - 1)})"
                ),
            ]
        )()
    if t == "ts":
        if leaf:
            return R.choice(["ts", lit_ts()] + (["tsn", "tss", "tms"] if EXT else []))
        return R.choice(
            [
                lambda: (
                    f"({expr('ts', depth - 1)} + INTERVAL {R.choice(['1 DAY', '2 MONTH', '90 MINUTE', '1 SECOND', '-1 MICROSECOND'])})"
                ),
                lambda: f"CAST({expr(R.choice(['date', 'tz', 'txt']), depth - 1)} AS TIMESTAMP)",
                lambda: (
                    f"CASE WHEN {expr('bool', depth - 1)} THEN {expr('ts', depth - 1)} ELSE {expr(R.choice(['ts', 'date']), depth - 1)} END"
                ),
                lambda: (
                    f"{R.choice(['greatest', 'least', 'coalesce'])}({expr('ts', depth - 1)}, {expr(R.choice(['ts', 'date']), depth - 1)})"
                ),
            ]
        )()
    if t == "tz":
        return R.choice(
            [
                "tz",
                "CAST(ts AS TIMESTAMPTZ)",
                "CAST(d AS TIMESTAMPTZ)",
                "TIMESTAMPTZ '2020-06-15 00:00:00+00'",
            ]
        )
    if t == "tm":
        return R.choice(["tm", "TIME '12:00:00'", "CAST(ts AS TIME)"])
    if t == "bool":
        if leaf:
            return R.choice(["b", "(i % 3 = 0)" if False else "(k > 2)"])
        fam = R.choice(["int", "dec", "dbl", "txt", "date", "ts", "num", "tz", "tm", "mix"])
        if fam == "mix":
            a, c = R.choice(
                [
                    ("date", "ts"),
                    ("txt", "date"),
                    ("txt", "int"),
                    ("int", "dbl"),
                    ("dec", "dbl"),
                    ("tz", "ts"),
                    ("tz", "date"),
                    ("txt", "ts"),
                    ("dec", "txt"),
                ]
            )
        else:
            a = c = fam
        op = R.choice(
            [
                "=",
                "<>",
                "<",
                "<=",
                ">",
                ">=",
                "IS DISTINCT FROM",
                "IS NOT DISTINCT FROM",
            ]
        )
        return R.choice(
            [
                lambda: f"({expr(a, depth - 1)} {op} {expr(c, depth - 1)})",
                lambda: f"({expr(a, depth - 1)} IS {R.choice(['', 'NOT '])}NULL)",
                lambda: (
                    f"({expr(a, depth - 1)} {R.choice(['', 'NOT '])}IN ({expr(c, depth - 1)}, {expr(c, 0)}, {expr(c, 0)}))"
                ),
                lambda: (
                    f"({expr(a, depth - 1)} {R.choice(['', 'NOT '])}BETWEEN {expr(c, depth - 1)} AND {expr(c, 0)})"
                ),
                lambda: (
                    f"({expr('txt', depth - 1)} {R.choice(['LIKE', 'NOT LIKE'])} {q(R.choice(LIKES))})"
                ),
                lambda: (
                    f"{R.choice(['starts_with', 'ends_with', 'contains', 'regexp_matches'])}({expr('txt', depth - 1)}, {q(R.choice(['a', 'b', '', 'é', '^a', '[0-9]']))})"
                ),
                lambda: (
                    f"({expr('bool', depth - 1)} {R.choice(['AND', 'OR'])} {expr('bool', depth - 1)})"
                ),
                lambda: f"(NOT {expr('bool', depth - 1)})",
                lambda: (
                    f"({R.choice(['u', 'bl', 'iv'])} {op} {R.choice(['u', 'bl', 'iv'])})"
                    if False
                    else f"(u {op} {R.choice(['u', q('12345678-1234-5678-1234-567812345678'), 'CAST(' + q('80000000-0000-0000-0000-000000000000') + ' AS UUID)'])})"
                ),
                lambda: (
                    f"(iv {op} {R.choice(['iv', 'INTERVAL 1 DAY', 'INTERVAL 30 DAY', 'INTERVAL 1 MONTH'])})"
                ),
                lambda: f"(bl {op} {R.choice(['bl', 'CAST(' + q('abc') + ' AS BLOB)'])})",
            ]
        )()
    raise ValueError(t)


FAMS = fams or ["int", "dec", "dbl", "txt", "date", "ts", "bool"]
out_lines = ["statement ok", create, ""]
for _j in range(n_q):
    f = R.choice(FAMS)
    depth = R.randint(1, 3)
    e = expr(f, depth)
    w = expr("bool", R.randint(1, 2))
    form = R.randint(1, 6)
    if form == 1:
        sql = f"SELECT count(*), sum(i) FROM t WHERE {w}"
    elif form == 2:
        sql = f"SELECT {e} AS g, count(*), sum(i) FROM t GROUP BY g"
    elif form == 3:
        sql = f"SELECT min({e}), max({e}), count({e}), count(DISTINCT {e}) FROM t"
    elif form == 4 and f in ("int", "dec", "dbl"):
        sql = f"SELECT sum({e}), avg({e}) FROM t WHERE {w}"
    elif form == 5:
        sql = f"SELECT i, {e} AS v FROM t WHERE {w}"
    else:
        sql = f"SELECT k, {R.choice(['min', 'max', 'count', 'sum' if f in ('int', 'dec', 'dbl') else 'count'])}({e}) FROM t WHERE {w} GROUP BY k"
    out_lines += ["query I", sql, ""]
Path(out).write_text("\n".join(out_lines) + "\n")
