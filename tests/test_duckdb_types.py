"""The Polars arm's types of mixed numeric values are DuckDB's (arms/duckdb_types.py): sqlglot
ranks neither the unsigned integers nor HUGEINT and keeps a DECIMAL over a DOUBLE, so the arm
summed a double through DECIMAL(38, 0) and let a MAX of floats through as one of decimals."""

from __future__ import annotations

import random
import re

import pytest
from sqlglot import exp, parse_one

from conftest import bound_types
from dau_scheduler.arms.duckdb_types import annotate, binder_type, kind

TYPES = {
    "ti": "TINYINT",
    "s": "SMALLINT",
    "n": "INTEGER",
    "b": "BIGINT",
    "h": "HUGEINT",
    "ut": "UTINYINT",
    "us": "USMALLINT",
    "ui": "UINTEGER",
    "ub": "UBIGINT",
    "f": "FLOAT",
    "x": "DOUBLE",
    "d4": "DECIMAL(4,1)",
    "d18": "DECIMAL(18,3)",
    "d38": "DECIMAL(38,10)",
}
LITERALS = ["1", "2", "300", "70000", "3000000000", "-5"]


def _expression(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([*TYPES, *TYPES, *LITERALS])
    pick = rng.randrange(9)
    a, b = _expression(rng, depth - 1), _expression(rng, depth - 1)
    if pick == 0:
        return f"coalesce({a}, {b})"
    if pick == 1:
        return f"greatest({a}, {b})"
    if pick == 2:
        return f"CASE WHEN n > 0 THEN {a} ELSE {b} END"
    if pick == 3:
        return f"-({a})"
    return f"({a} {rng.choice(['+', '-', '*', '/', '%'])} {b})"


def test_mixed_numeric_values_are_typed_as_duckdb_types_them() -> None:
    compared = 0
    for sql, expected in bound_types(TYPES, lambda rng: _expression(rng, 3), 24, 400):
        tree = parse_one(f"SELECT {sql} AS v FROM t AS t", dialect="duckdb")
        for column in tree.find_all(exp.Column):
            column.set("table", exp.to_identifier("t"))
        found = annotate(tree, {"t": TYPES}).selects[0].type
        assert found is not None
        if re.search(r"\b(h|ub)\b", sql) and re.search(r"\bd\d+\b", sql):
            continue  # a decimal beside a HUGEINT or UBIGINT: refused on the arm (DuckDB may
            # need more than 38 digits and compute a DOUBLE, which this typing leaves out)
        assert kind(found) == kind(exp.DataType.build(expected, dialect="duckdb")), (sql, expected)
        compared += 1
    assert compared > 150


@pytest.mark.parametrize(
    ("left", "right", "operator", "expected"),
    [
        ("UTINYINT", "DOUBLE", "*", "DOUBLE"),
        ("DOUBLE", "UBIGINT", "+", "DOUBLE"),
        ("DECIMAL(4,1)", "DOUBLE", "+", "DOUBLE"),
        ("UINTEGER", "FLOAT", "+", "REAL"),
        ("HUGEINT", "DOUBLE", "-", "DOUBLE"),
        ("DECIMAL(15,2)", "DECIMAL(15,2)", "*", "DECIMAL(18, 4)"),  # narrowed to 18 digits
    ],
)
def test_one_operator_takes_binder_type(
    left: str, right: str, operator: str, expected: str
) -> None:
    tree = parse_one(f"SELECT t.a {operator} t.b FROM t AS t", dialect="duckdb")
    node = annotate(tree, {"t": {"a": left, "b": right}}).selects[0]
    found = binder_type(node)
    assert found is not None and found.sql("duckdb") == expected
    assert kind(node.type) == kind(found)


def test_signed_integers_and_other_types_keep_sqlglot_types() -> None:
    tree = parse_one("SELECT t.a + t.b, t.a || 'x', t.a + t.c FROM t AS t", dialect="duckdb")
    schema = {"t": {"a": "INTEGER", "b": "BIGINT", "c": "DATE"}}
    plus, concat, dated = annotate(tree, schema).selects
    assert binder_type(plus) is None and plus.type is not None and plus.type.is_type("BIGINT")
    assert binder_type(concat) is None and binder_type(dated) is None
