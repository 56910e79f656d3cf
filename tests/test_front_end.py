"""The front-end check (``rewrite.reading.written_otherwise``): DuckDB's own parse of a query
against its parse of sqlglot's rendering. A rendering that changes a call's arguments is named;
one that only spells the query otherwise is not (docs/exactness.md, fourteenth session)."""

from __future__ import annotations

import pytest
import sqlglot

from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.reading import written_otherwise


@pytest.mark.parametrize(
    ("query", "rendered"),
    [
        # regexp options sqlglot cut short: the literal match ('l') dropped
        (
            "SELECT regexp_replace(s, 'a.', 'X', 'li') FROM t",
            "SELECT regexp_replace(s, 'a.', 'X', 'i') FROM t",
        ),
        (
            "SELECT regexp_replace(s, 'a.', 'X', 'ng') FROM t",
            "SELECT regexp_replace(s, 'a.', 'X', 'g') FROM t",
        ),
        # a date part DuckDB computes otherwise (Sunday is 0 to dow, 7 to isodow)
        ("SELECT extract(dow FROM d) FROM t", "SELECT extract(isodow FROM d) FROM t"),
        # a number changed, a text changed in case
        ("SELECT round(f, 2) FROM t", "SELECT round(f, 3) FROM t"),
        ("SELECT strftime(d, '%m') FROM t", "SELECT strftime(d, '%M') FROM t"),
    ],
)
def test_a_changed_argument_is_named(query: str, rendered: str) -> None:
    assert written_otherwise(query, rendered) is not None


@pytest.mark.parametrize(
    "query",
    [
        "SELECT extract(dow FROM d), date_trunc('y', d), date_diff('d', d, d) FROM t",
        "SELECT count(*) FROM range(10)",
        "SELECT string_agg(s) FROM t",
        "SELECT regexp_extract(s, 'a(.)', 0) FROM t",
        "SELECT ARRAY[1, 2] FROM t",
        "SELECT d + INTERVAL '2 days', d - INTERVAL '1 month ago', INTERVAL 90 DAY FROM t",
        "SELECT round(f, 1_0), f > .5 FROM t",
    ],
)
def test_the_same_query_spelt_otherwise_is_not(query: str) -> None:
    rendered = sqlglot.parse_one(query, read=DIALECT).sql(dialect=DIALECT)
    assert written_otherwise(query, rendered) is None, rendered


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("SELECT INTERVAL '14 months ago'", "INTERVAL '14 months ago'"),
        ("SELECT INTERVAL ' 2 days '", "INTERVAL ' 2 days '"),
        ("SELECT list_sort(l, 'DESC', 'NULLS LAST') FROM t", "LIST_SORT(l, 'DESC', 'NULLS LAST')"),
        ("SELECT (x,) FROM t", "(x,)"),
        ("SELECT x NOT IN [1, NULL] FROM t", "x IN [1, NULL]"),
        ("SELECT * FROM (VALUES (1), (2)) v(a)", "VALUES (1), (2)"),
    ],
)
def test_the_dialect_writes_back_what_sqlglot_would_change(query: str, kept: str) -> None:
    assert kept in sqlglot.parse_one(query, read=DIALECT).sql(dialect=DIALECT)
