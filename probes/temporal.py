"""Random temporal queries under a TimeZone that changes between them: DATE, TIMESTAMP (at
seconds, microseconds and nanoseconds), TIMESTAMPTZ, TIME and INTERVAL columns with NULLs,
infinities, years past Polars' calendar and daylight-saving edges, and text holding dates
compared with temporal values; grouped by date_trunc, date_part, time_bucket, strftime and
casts, filtered by ranges of literals, aggregated by MIN/MAX/arg_min/COUNT DISTINCT and
differences of extremes. Arguments: SEED FILE COUNT."""

from _probe import arguments, write

R, out, COUNT = arguments()
SETUP = [
    "CREATE TABLE t AS SELECT i, i % 6 AS k, "
    "CASE WHEN i % 29 = 0 THEN NULL WHEN i = 31 THEN 'infinity'::DATE WHEN i = 62 THEN '-infinity'::DATE "
    "ELSE DATE '2019-12-30' + ((i * 37) % 900)::INTEGER END AS dt, "
    "CASE WHEN i % 31 = 0 THEN NULL WHEN i = 93 THEN 'infinity'::TIMESTAMP "
    "ELSE TIMESTAMP '2021-03-13 22:00:00' + (i * 1777) * INTERVAL '1 second' END AS ts, "
    "CASE WHEN i % 37 = 0 THEN NULL "
    "ELSE TIMESTAMPTZ '2021-11-06 20:00:00+00' + (i * 911) * INTERVAL '1 second' END AS tz, "
    "CASE WHEN i % 41 = 0 THEN NULL ELSE TIME '00:00:00' + (i * 4099 % 86400) * INTERVAL '1 second' END AS tm, "
    "CASE WHEN i % 43 = 0 THEN NULL ELSE to_months(i % 14) + to_days(i % 45) + to_hours(i % 30) END AS iv, "
    "(TIMESTAMP '2020-02-28 23:59:59' + (i * 123457) * INTERVAL '1 microsecond')::TIMESTAMP_NS "
    "+ (i % 1000) * INTERVAL '1 microsecond' AS tn, "
    "(TIMESTAMP '1999-12-31 23:00:00' + (i * 3607) * INTERVAL '1 second')::TIMESTAMP_S AS tsec, "
    "CASE i % 5 WHEN 0 THEN DATE '5000000-03-14' WHEN 1 THEN DATE '-200000-02-29' "
    "WHEN 2 THEN DATE '262142-12-31' ELSE DATE '0001-01-01' + (i * 7)::INTEGER END AS fd, "
    "['2021-01-04 10:00:00', '2021-01-04', '2021-03-14 02:30', '2021-11-07', '2021-01-04 00:00:00.5', "
    "NULL][i % 6 + 1] AS st "
    "FROM range(4000) r(i)",
    # The same without what the Polars arm does not load (infinities, years past its calendar).
    "CREATE TABLE p AS SELECT * REPLACE (CASE WHEN isfinite(dt) THEN dt END AS dt, "
    "CASE WHEN isfinite(ts) THEN ts END AS ts, "
    "CASE WHEN year(fd) BETWEEN -262000 AND 262000 THEN fd END AS fd) FROM t",
]
ZONES = [
    "UTC",
    "America/New_York",
    "Europe/Berlin",
    "Asia/Kolkata",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "America/St_Johns",
]
PARTS = ["year", "quarter", "month", "week", "day", "hour", "minute"]
LOCAL = ["ts", "tn", "tsec"]
TEMPORAL = ["dt", "ts", "tz", "tn", "tsec", "fd"]
KEYS = [
    "date_trunc('{p}', {c})",
    "date_part('{p}', {c})",
    "extract({p} FROM {c})",
    "time_bucket(INTERVAL '{n} hours', {c})",
    "strftime({c}, '%Y-%m %H')",
    "{c}::DATE",
    "dayname({c})",
    "yearweek({c})",
    "isodow({c})",
    "last_day({c})",
    "epoch({c})",
    "date_diff('{p}', TIMESTAMP '2020-06-01', {c})",
    "{c} + INTERVAL '{n} hours'",
    "{c} {sign} INTERVAL {long} {unit}",
    "date_trunc('{p}', {c} - iv)",
    "make_date(year({c}), 1, 1)",
    "tz::TIMESTAMP",
    "tm",
    "date_trunc('hour', tm)",
    "iv",
    "to_days(k) + iv",
    "{c} AT TIME ZONE 'UTC'",
]
#: Parts the Polars arm computes (polars_temporal._EXTRACTED), drawn as often as the rest.
KEYS += [
    "year({c})",
    "month({c})",
    "dayofweek({c})",
    "extract(doy FROM {c})",
    "quarter({c})",
    "hour({c})",
    "day({c}) + k",
    "strftime({c}, '%m-%d')",
    "{c}::DATE",
    "week({c})",
] * 2
AGGS = [
    "count(*)",
    "min({c})",
    "max({c})",
    "count(DISTINCT {c})",
    "arg_min(i, {c})",
    "arg_max(k, {c})",
    "max({c}) - min({c})",
    "date_diff('day', min({c}), max({c}))",
    "min(tm)",
    "max(iv)",
    "min(iv)",
    "count(DISTINCT iv)",
    "sum(epoch({c}))",
    "max(date_trunc('{p}', {c}))",
    "count({c}) FILTER (WHERE {c} > {lit})",
]
AGGS += [
    "sum(year({c}))",
    "sum(month({c}) + day({c}))",
    "max(dayofweek({c}))",
    "count(DISTINCT {c}::DATE)",
    "sum(extract(doy FROM {c}))",
    "min({c}::DATE)",
] * 2
LITERALS = [
    "DATE '2020-06-15'",
    "TIMESTAMP '2021-03-14 02:30:00'",
    "TIMESTAMPTZ '2021-11-07 01:30:00-04'",
    "'2021-03-14 03:00'",
    "DATE '2021-01-01'",
    "TIMESTAMP '2022-01-01 12:00:00.123456'",
]
CONDS = [
    "{c} > {lit}",
    "{c} BETWEEN {lit} AND {lit} + INTERVAL '60 days'",
    "{c} IS NULL",
    "extract(hour FROM {c}) < 12",
    "{c}::DATE = DATE '2021-11-07'",
    "tm > TIME '12:00:00'",
    "iv > INTERVAL '20 days'",
    "date_trunc('month', {c}) = TIMESTAMP '2021-03-01'",
    "isfinite({c})",
    "{c} < 'infinity'",
    "year({c}) = 2021",
    "st = {lit}",
    "st = DATE '2021-01-01' + INTERVAL '3 days'",
    "st <> {lit} + INTERVAL '1 day'",
    "st = {lit} - INTERVAL '{n} hours'",
    "st IN ({lit}, DATE '2021-01-04')",
    "st::DATE = {lit}",
    "{lit} + INTERVAL '{n} days' = st",
    "st = DATE '2021-01-04' + INTERVAL '1 month'",
]


def fill(template):
    return template.format(
        p=R.choice(PARTS),
        c=R.choice(TEMPORAL),
        n=R.choice([1, 6, 24, 36]),
        lit=R.choice(LITERALS),
        # Shifts past 292 years in days or hours, where Polars' offset_by wrapped (thirty-eighth
        # session), and others in every fixed unit.
        sign=R.choice(["+", "-"]),
        long=R.choice([3, 90, 106751, 106752, 200000, 1000000, 2562048, 40000000]),
        unit=R.choice(["DAY", "HOUR", "MINUTE", "WEEK", "SECOND", "MONTH"]),
    )


def where():
    return f" WHERE {fill(R.choice(CONDS))}" if R.random() < 0.5 else ""


lines = []
for statement in SETUP:
    lines += ["statement ok", statement, ""]
for _ in range(COUNT):
    if R.random() < 0.15:
        lines += ["statement ok", f"SET TimeZone = '{R.choice(ZONES)}'", ""]
    table = R.choice(["t", "p", "p"])
    form = R.randint(1, 5)
    if form == 1:
        q = f"SELECT {fill(R.choice(AGGS))}, {fill(R.choice(AGGS))} FROM {table}{where()}"
    elif form == 2:
        key, agg = fill(R.choice(KEYS)), fill(R.choice(AGGS))
        q = f"SELECT {key} AS g, {agg} FROM {table}{where()} GROUP BY g ORDER BY ALL"
    elif form == 3:
        q = (
            f"SELECT {fill(R.choice(KEYS))} AS g, k, count(*), {fill(R.choice(AGGS))} "
            f"FROM {table}{where()} "
            f"GROUP BY ALL HAVING count(*) > 1 ORDER BY ALL LIMIT {R.randint(5, 60)}"
        )
    elif form == 4:
        key = fill(R.choice(KEYS))
        q = f"SELECT i, {key} AS v FROM {table}{where()} ORDER BY i LIMIT {R.randint(1, 50)}"
    else:
        q = f"SELECT DISTINCT {fill(R.choice(KEYS))} AS v FROM {table}{where()} ORDER BY ALL"
    lines += ["query I", q, ""]
write(out, lines)
