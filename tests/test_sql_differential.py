"""Differential property test: random aggregate queries (inner, outer and comma joins, semi and
anti joins, subqueries over the whole split table), split at random shares, equal DuckDB's
unsplit answer or are refused by name."""

from __future__ import annotations

import datetime as dt
import re
import tempfile
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import device as make_device
from dau_scheduler import Session
from dau_scheduler.compare import compare_tables
from dau_scheduler.rewrite import fold
from suite_sample import FULL

FACT = pa.schema(
    [
        ("seq", pa.int64()),
        ("k1", pa.int32()),
        ("k2", pa.string()),
        ("d", pa.date32()),
        ("v", pa.decimal128(10, 2)),
        ("x", pa.float64()),
        ("i", pa.int64()),
        ("fk", pa.int32()),
        ("big", pa.int64()),  # near 2**62: two of them overflow a 64-bit sum
        ("r", pa.float32()),
        ("w", pa.decimal128(38, 2)),  # past Python's 28 decimal digits
        ("fd", pa.date32()),  # DuckDB's infinities and years Python's datetime cannot hold
    ]
)
#: Day numbers: DuckDB's infinity and -infinity, years after 9999 and before 1, a year past
#: Polars' calendar (year 273021), and ordinary.
FAR_DAYS = st.sampled_from(
    [2**31 - 1, -(2**31) + 1, 4_452_059, -800_000, 18_262, 18_263, 99_000_000]
)
#: NaN and the infinities: DuckDB takes NaN as the largest value, pyarrow and Polars skip it.
SPECIAL = st.sampled_from([float("nan"), float("inf"), float("-inf")])

maybe = st.none().__or__
rows = st.lists(
    st.tuples(
        maybe(st.integers(0, 3)),
        maybe(st.sampled_from(["a", "b", "c", "é"])),
        maybe(st.dates(dt.date(2020, 1, 1), dt.date(2020, 1, 5))),
        maybe(st.decimals(-1000, 1000, places=2, allow_nan=False, allow_infinity=False)),
        maybe(st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False) | SPECIAL),
        maybe(st.integers(-(2**40), 2**40)),
        st.integers(0, 4),
        maybe(st.integers(2**62 - 100, 2**62)),
        maybe(st.floats(-1e3, 1e3, width=32, allow_nan=False, allow_infinity=False) | SPECIAL),
        maybe(st.integers(-(10**4), 10**4).map(lambda i: Decimal(f"{10**27 + i}.{i % 100:02d}"))),
        maybe(FAR_DAYS),
    ),
    max_size=40,
)

KEYS = [
    "f.k1",
    "f.k2",
    "f.d",
    "g.name",
    "f.k1 % 2",
    "f.fd",
    "dayofweek(f.fd)",
    "f.x > 0",
    "coalesce(f.k2, 'none')",
    "date_trunc('month', f.d)",
    "f.r",  # float keys: NaN, -0.0 and the infinities group as DuckDB groups them
    "f.x",
    "f.v",
    "upper(f.k2)",  # the Polars arm splits it where the drawn k2 values are all ASCII (no é)
    "lower(g.name)",
    # Quotients and powers by a constant: Polars computed them a rounding off DuckDB, which split
    # a value both arms hold into two groups (3 / 10 is 0.3 in DuckDB, 0.30000000000000004 as
    # 3 * 0.1).
    "f.i / 10",
    "f.x / 10.0",
    "pow(f.x, 3)",
    # a FLOAT beside constants: single precision where DuckDB computes in it, DOUBLE beside one
    "f.r * 0.3",
    "f.r / 3",
    "f.r * 1e1",
]
AGGREGATES = [
    "sum(f.v)",
    "sum(f.i)",
    "sum(f.x)",
    "count(*)",
    "count(f.v)",
    "min(f.k2)",
    "max(f.d)",
    "avg(f.v)",
    "avg(f.x)",
    "min(f.x)",
    "max(f.i)",
    "sum(f.v) / nullif(count(*), 0)",
    "sum(case when f.k1 > 1 then f.v else 0 end)",
    "count(f.x) + 1",
    "max(f.v) - min(f.v)",
    "sum(f.i) filter (where f.k2 = 'a')",
    "median(f.x)",
    "count(distinct f.k1)",
    "count(*) * 1000 + (select count(*) from fact)",  # a scalar subquery over the whole table
    "sum(f.big)",
    "avg(f.big)",
    "sum(f.big - f.i)",
    "sum(f.r)",
    "avg(f.r)",
    "sum(f.k1 * 1000000000)",  # INTEGER * INTEGER: DuckDB raises when it overflows
    "sum(1)",
    "sum(-3) filter (where f.k1 = 2)",
    "max(f.x)",
    "min(f.r)",
    "sum(f.w)",
    "max(f.w) - min(f.w)",
    "avg(f.w)",
    "min(f.fd)",
    "max(f.fd)",
    "count(distinct f.fd)",
    "string_agg(f.k2, ',')",
    # ordered: without it DuckDB's own order of a DISTINCT's values varies between runs (a
    # UNION of the same string_agg twice gave DuckDB 2 rows once, 1 row the next time)
    "string_agg(distinct f.k2, '|' order by f.k2)",
    "bool_and(f.i > 0)",
    "bool_or(f.k1 = 2)",
    "bit_or(f.k1)",
    "bit_and(f.fk)",
    "bit_xor(f.i)",
    "arg_min(f.seq, f.i)",
    "arg_max(f.k2, f.seq)",
    "max_by(f.seq, f.x)",
    "first(f.seq order by f.seq)",
    "list(f.seq order by f.seq)",
    "approx_count_distinct(f.k1)",
    "quantile_cont(f.x, 0.5)",
    "stddev_samp(f.i)",
    "var_pop(f.v)",
    "covar_pop(f.i, f.x)",
    "corr(f.i, f.k1)",
    "product(f.k1)",
    "fsum(f.x)",
    "sum(f.k1::hugeint * 10)",
    "avg(f.k1)",
    "count(*) filter (where f.x > 0)",
    "min(f.k2 collate nocase)",
    "max(length(f.k2))",
    "sum(coalesce(f.v, 0))",
    "count(distinct (f.k1, f.k2))",
    "sum(f.i) / count(*)",
    "avg(f.x) filter (where f.k1 <> 1)",
    "histogram(f.k1)",
    # (a plain mode splits since the forty-first session, but DuckDB's own pick among tied
    # values varies from run to run: the draws tie often, so the refused form stays here;
    # tests/slt/aggregate_mode.test and probes/aggregates.py cover the split)
    "mode(f.k1) filter (where f.k1 is not null)",
    "entropy(f.k1)",
    "kurtosis(f.x)",
    "skewness(f.i)",
    "regr_slope(f.x, f.i)",
    "sum(distinct f.k1)",
    "avg(distinct f.i)",
    "min(f.d) + 1",
    "max(f.fd) - min(f.d)",
    "any_value(f.k1) is not null or true",
    "count(if(f.k1 > 1, 1, null))",
    "sum(case when f.k2 like 'a%' then 1 end)",
    "max(f.x::decimal(18,3))",
    "sum(f.r::double)",
    # a decimal column cast to its own digits or more splits on Polars; fewer, or computed, not
    "sum(f.v::decimal(12, 2))",
    "avg(f.v::decimal(18, 4))",
    "sum(f.v::decimal(12, 1))",
    "sum((f.v * 1.5)::decimal(12, 2))",
    "max((f.v * f.v)::decimal(18, 2))",
]
FILTERS = [
    "",
    "f.i > 0",
    "f.k1 is not null",
    "f.d >= date '2020-01-03'",
    "f.v < 10.5",
    "f.seq < {half}",
    "f.seq >= {half}",
    "f.seq < 0",
    "f.k2 in ('a', 'é')",
    # subqueries: over the small table, and over the whole split table (never the arm's rows)
    "f.fk in (select fk from dim where name is not null)",
    "f.fk not in (select fk from dim where name like 'o%')",
    "f.k1 not in (select k1 from fact where k2 = 'a')",
    "f.k1 in (select k1 from fact where i > 0)",
    "exists (select 1 from dim g2 where g2.fk = f.fk and g2.name is null)",
    "not exists (select 1 from fact f2 where f2.k1 = f.k1 and f2.seq > f.seq)",
    "f.x > (select avg(x) from fact)",
    "f.i >= (select min(i) from fact f2 where f2.k2 = f.k2)",
    "f.x >= (select avg(f.x) from fact f where f.k1 is not null)",  # inner f hides the outer f
    "f.fk in (select g2.fk from dim g2, fact f2 where g2.fk = f2.fk and f2.k1 = 1)",
    "f.i >= (select min(f2.i) from fact f2, dim g2 where g2.fk = f2.fk and f2.k2 = f.k2)",
    "f.k2 like 'a%' or f.k2 is null",
    "f.x between -10 and 500",
    "f.d - interval '1 day' > date '2020-01-02'",
    "coalesce(f.k1, -1) <> 2",
    "f.k2 ilike 'É'",
    "f.i % 3 = 1",
    "f.v::double > 0.5",
    "f.k1 in (1, null)",
    "not (f.k1 in (1, 2))",
    "f.seq = any (select fk from dim)",
    "f.x is nan or f.x > 1",
    "isfinite(f.fd)",
    "f.fd > date '2020-01-01'",
    # set operations and CTEs inside the split block (the Polars arm runs them within limits)
    "f.fk in (select fk from dim intersect select k1 from fact)",
    "f.k1 in (select fk from dim except select k1 from fact where k2 = 'a')",
    "f.fk in (select fk from dim where name is null union select k1 from fact where i > 0)",
    "f.k1 in (select k1 from fact intersect all select fk from dim)",
    "f.fk in (with d as (select fk from dim where name is not null) select fk from d)",
    "f.k1 in (with fact as (select fk as k1 from dim) select k1 from fact)",
    "f.x in (select x from fact where i > 0 union select 0.5)",
    "lower(f.k2) = 'a' or upper(f.k2) = 'É'",
    "f.r > 0.1 or f.r in (2.5, -1e0)",
    "f.r / 2 <= 12.3",
    # over whole tables, windows and joins the host may compute for the Polars arm
    "f.fk in (select fk from (select fk, rank() over (order by name nulls first) as r from dim)"
    " t where r <= 2)",
    "f.k1 in (select t.k1 from (select k1, row_number() over (partition by k2 order by seq) as rn"
    " from fact) t where t.rn = 1)",
    "f.fk in (select a.fk from dim a join fact b on a.fk = b.k1 where b.i > 0)",
    "f.fk in (with w as (select fk, count(*) over () as c from dim) select fk from w where c > 3)",
]
#: How the split table is read: alone, joined, on either side of an outer join.
SOURCES = [
    "fact f",
    "fact f join dim g on f.fk = g.fk",
    "fact f join dim g on f.fk = g.fk and g.name <> 'one'",
    "fact f left join dim g on f.fk = g.fk",
    "fact f left join dim g on f.fk = g.fk and g.name like '%e%'",
    "fact f left join dim g on f.fk = g.fk and f.k1 > 1",
    "dim g left join fact f on f.fk = g.fk",
    "fact f right join dim g on f.fk = g.fk",
    "fact f, dim g where f.fk = g.fk and",
    "fact f join (select fk, name, rank() over (order by fk desc) as r from dim) g on f.fk = g.fk",
    "fact f left join (select fk, name from dim where fk in (select k1 from fact where x > 0)) g"
    " on f.fk = g.fk",
]


@st.composite
def queries(draw: st.DrawFn, n: int) -> str:
    source = draw(st.sampled_from(SOURCES))
    join = "dim" in source
    keys = draw(
        st.lists(
            st.sampled_from([k for k in KEYS if join or "g." not in k]), unique=True, max_size=2
        )
    )
    where = draw(st.sampled_from(FILTERS)).format(half=n // 2)
    if source.endswith(" and"):  # a comma join: its condition is the first WHERE conjunct
        source, where = (
            source.removesuffix(" where f.fk = g.fk and"),
            (f"f.fk = g.fk and ({where})" if where else "f.fk = g.fk"),
        )
    if draw(st.integers(0, 5)) == 0:  # a row-level query: concatenation, or per-arm top-k
        limit = draw(st.sampled_from(["", " limit 3", " limit 2 offset 1"]))
        order = "f.seq, g.fk" if join else "f.seq"
        if draw(st.booleans()):
            order = draw(st.sampled_from(["all", "all desc", "all nulls first"]))
        return (
            f"select f.seq, f.k2, f.v from {source}"
            f"{' where ' + where if where else ''} order by {order}{limit}"
        )
    aggs = draw(st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=3, unique=True))
    select = ", ".join([*keys, *(f"{a} as a{i}" for i, a in enumerate(aggs))])
    sql = f"select {select} from {source}"
    if where:
        sql += f" where {where}"
    if keys:
        sql += " group by " + ", ".join(keys)
        if draw(st.booleans()):
            sql += " having count(*) > 1"
        if draw(st.booleans()):
            sql += " order by " + ", ".join(f"{i + 1}" for i in range(len(keys)))
        else:  # every output, keys and aggregates: the same rows in a deterministic order
            sql += " order by all"
        if draw(st.booleans()):
            sql += " limit 2"
    return sql


#: Blocks around the query (``{q}``); their rows come back in no promised order.
WRAPPERS = [
    "select * from ({q}) q",
    "with q as ({q}) select * from q",
    "select count(*) as c from ({q}) q",
    "select * from ({q}) q union all select * from ({q}) q2",
    # set operations at the top: the final cast wraps them (rewrite.outputs._cast_set_operation)
    "select * from ({q}) q union select * from ({q}) q2",
    "select * from ({q}) q except all select * from ({q}) q2 where q2.a0 is null",
    "select * from ({q}) q intersect select * from ({q}) q2 where q2.a0 is not null",
    "select * from ({q}) q where q.a0 is not null",
    "select distinct * from ({q}) q",
    "select count(distinct a0) as c from ({q}) q",
]


#: Blocks around the query ordered by every output (rows tied in every column are alike).
ORDERED_WRAPPERS = [
    "select * from ({q}) q order by all",
    "select * from ({q}) q order by all desc limit 3",
    "select * from ({q}) q union select * from ({q}) q2 order by all nulls first",
]


@st.composite
def wrapped(draw: st.DrawFn, n: int) -> tuple[str, bool]:
    """A query, as it is (ordered) or inside another block (compared as a multiset)."""
    sql = draw(queries(n))
    if draw(st.integers(0, 3)) or sql.startswith("select f.seq"):
        return sql, True
    if draw(st.integers(0, 4)) == 0:  # ORDER BY ALL over whole rows: one order, ties equal
        around = draw(st.sampled_from(ORDERED_WRAPPERS))
        return around.format(q=sql), True
    return draw(st.sampled_from(WRAPPERS)).format(q=sql), False


def tables(data: list[tuple[Any, ...]]) -> dict[str, pa.Table]:
    columns = list(zip(*data, strict=True)) if data else [[] for _ in range(len(FACT) - 1)]
    fact = pa.table([list(range(len(data))), *columns], schema=FACT)
    dim = pa.table(
        {"fk": pa.array([0, 1, 2, 3], pa.int32()), "name": ["zero", "one", None, "three"]}
    )
    return {"fact": fact, "dim": dim}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("device", ["duckdb", "polars-separate"])
@settings(
    max_examples=60 if FULL else 40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=rows, pick=st.data())
def test_split_equals_unsplit_or_is_refused(
    device: str, data: list[tuple[Any, ...]], pick: st.DataObject
) -> None:
    check_split(device, {"tables": tables(data)}, data, pick)


def _arriving(way: str, named: dict[str, pa.Table], folder: Path) -> dict[str, Any]:
    """Session arguments for ``named`` tables arriving ``way``: a user's connection holding
    them, or Parquet files (row groups of 7 rows) read lazily or in chunks under a budget."""
    if way == "connection":
        con = duckdb.connect()
        for name, table in named.items():
            con.register("arriving", table)
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM arriving")
            con.unregister("arriving")
        return {"tables": con}
    for name, table in named.items():
        pq.write_table(table, folder / f"{name}.parquet", row_group_size=7)
    if way == "lazy":
        return {"tables": folder, "lazy": True}
    return {"tables": folder, "mem_budget_mb": 64, "strategy": way, "chunk_rows": 7}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("way", ["connection", "lazy", "chunked", "streamed"])
@pytest.mark.parametrize("device", ["duckdb", "polars-separate"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=rows, pick=st.data())
def test_every_way_tables_arrive_splits_equal_or_is_refused(
    device: str, way: str, data: list[tuple[Any, ...]], pick: st.DataObject
) -> None:
    """The same random queries over a user's connection and over Parquet files read lazily,
    chunked and streamed (8,000 examples offline: 0 wrong; ``make fuzz`` draws new ones)."""
    with tempfile.TemporaryDirectory() as folder:
        check_split(device, _arriving(way, tables(data), Path(folder)), data, pick)


def _values_out(message: str) -> str:
    """An error message without the values it names (numbers, ``inf``, ``nan``)."""
    return re.sub(r"-?(inf|nan|\d+(\.\d+)?)", "_", message)


def check_split(
    device: str, source: dict[str, Any], data: list[tuple[Any, ...]], pick: st.DataObject
) -> None:
    """One random query over ``source`` (Session arguments) split at a random share: DuckDB's
    own answer on the Session's host, its own error, or a refusal or fallback by name."""
    n = len(data)
    sql, ordered = pick.draw(wrapped(n), label="sql")
    share = pick.draw(
        st.sampled_from(
            [0.0, 1.0, 0.25, 0.5, 1 / n if n else 0.0, (n - 1) / n if n else 1.0, None]
        ),
        label="share",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        fast = pick.draw(st.booleans(), label="fast_fold")
        # 0: every grouped fast fold through pyarrow's group-by; 256: small ones in Python.
        small = pick.draw(st.sampled_from([0, fold.SMALL]), label="small")
        # 0: every non-empty fast-foldable partial folded by DuckDB's final query instead
        # (but a row block's unsorted rows, which pass through at any count).
        large = pick.draw(st.sampled_from([0, fold.LARGE]), label="large")
        saved, fold.SMALL = fold.SMALL, small
        saved_large, fold.LARGE = fold.LARGE, large
        try:
            with Session(**source, device=make_device(device), fast_fold=fast) as session:
                try:
                    expected = session.host.cursor().sql(sql).to_arrow_table()
                except duckdb.Error as exc:  # DuckDB fails it (integer overflow): so must the split
                    event("fails unsplit")
                    with pytest.raises(Exception) as raised:
                        session.sql(sql, device_share=share, split_table="fact")
                    # DuckDB's own error, or an ArmError naming the arm that hit it; which of
                    # several bad values DuckDB names is its own run's (inf or -inf: both seen)
                    assert _values_out(str(exc).splitlines()[0]) in _values_out(
                        str(raised.value)
                    ), raised.value
                    return
                result = session.sql(sql, device_share=share, split_table="fact")
        finally:
            fold.SMALL = saved
            fold.LARGE = saved_large
    if result.fallback is not None:
        # An arm's partial computed an output the unsplit query prunes, and overflowed there
        # (SUM(k * 1e9) under an outer COUNT(*)): the unsplit answer is returned instead.
        # Or a variance's moments too ill-conditioned to fold within the float tolerance. Or
        # a connection's value a copying device finds only when it reads the rows (DuckDB's
        # infinity date, which Polars cannot hold).
        words = ("Overflow", "overflow", "conversion", "moments", "could not load")
        assert any(w in result.fallback for w in words), result.fallback
        event("fell back")
        assert compare_tables(result.table, expected, ordered=ordered) is None
        return
    event("refused" if result.refusal is not None else "split")
    if result.refusal is not None:
        assert result.execution is None
        words = ("output", "arm", "column", "reads", "fact", "query", "aggregate", "collation")
        assert any(word in result.refusal for word in words), result.refusal
        return
    diff = compare_tables(result.table, expected, ordered=ordered)
    assert diff is None, f"{sql} at share {share}: {diff}"


def test_decimals_stay_exact_through_the_polars_arm() -> None:
    values = [Decimal("0.07"), Decimal("1.25"), Decimal("3.33"), None]
    data = pa.table(
        {
            "v": pa.array(values, pa.decimal128(15, 2)),
            "w": pa.array([Decimal("0.11")] * 4, pa.decimal128(15, 2)),
        }
    )
    sql = "select sum(v * w) as s, sum(v * (1 - w) * (1 + w)) as t, sum(v) * 0.5 as h from t"
    with Session({"t": data}, device="polars") as session:
        result = session.sql(sql, device_share=0.5)
        expected = session.host.cursor().sql(sql).to_arrow_table()
    assert result.execution is not None
    assert compare_tables(result.table, expected) is None
    assert result.table.column("t").to_pylist() == [Decimal("4.593735")]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("device", ["duckdb", "polars"])
@pytest.mark.parametrize("path", ["python", "arrow", "duckdb"])
def test_wide_decimal_sums_keep_every_digit(device: str, path: str) -> None:
    """Sums with more than Python's 28 default decimal digits (DECIMAL(38, 2) totals near 1e29,
    HUGEINT totals of BIGINTs) fold exactly: the Python fold once rounded them to 28 digits
    (371111111111111111111111278000.00 for ...277990.50)."""
    n = 1000
    data = pa.table(
        {
            "k": pa.array([i % 3 for i in range(n)], pa.int32()),
            "v": pa.array(
                [Decimal("1111111111111111111111111111.25") + i for i in range(n)],
                pa.decimal128(38, 2),
            ),
            "b": pa.array([9_000_000_000_000_000_000 - i for i in range(n)], pa.int64()),
        }
    )
    queries = [
        "select k, sum(v) as s, min(v) as lo, max(v) as hi, sum(b) as t, avg(v) as m "
        "from t group by k order by k",
        "select sum(v) as s, sum(b) as t, max(v) as hi from t",
    ]
    small, large = {"python": (fold.SMALL, fold.LARGE), "arrow": (0, fold.LARGE)}.get(path, (0, 0))
    saved = fold.SMALL, fold.LARGE
    fold.SMALL, fold.LARGE = small, large
    try:
        with Session({"t": data}, device=device) as session:
            for sql in queries:
                expected = session.host.cursor().sql(sql).to_arrow_table()
                for share in (0.5, 0.1):
                    result = session.sql(sql, device_share=share)
                    assert compare_tables(result.table, expected) is None, (sql, share)
                    assert result.fallback is None, result.fallback
                    if device == "polars":
                        # Polars holds decimals at scale 12: a 28-digit integer part does not
                        # fit DECIMAL(38, 12), so the column is not loaded into Polars and the
                        # query is refused before either arm runs (it failed on the arm).
                        assert result.refusal is not None and "26 integer digits" in (
                            result.refusal
                        )
                    else:
                        assert result.execution is not None, result.refusal
    finally:
        fold.SMALL, fold.LARGE = saved
