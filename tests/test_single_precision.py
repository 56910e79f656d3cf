"""A FLOAT beside number constants and DOUBLEs on the Polars arm (polars_functions
.single_precision_constants): the constant as the FLOAT DuckDB casts it to, checked against
DuckDB's own casts; tests/slt/single_precision.test runs the split answers."""

from __future__ import annotations

import random
from fractions import Fraction

import duckdb

from dau_scheduler.arms.polars_functions import _single

#: Decimals just above, at and below a midpoint between two FLOATs (1 + 2**-24), where a cast
#: through a DOUBLE rounds twice; the largest FLOAT and past it.
EDGES = [
    "1.000000059604644775390626",
    "1.000000059604644775390625",
    "1.000000059604644775390624",
    "-1.000000059604644775390626",
    "16777217",
    "340282346638528859811704183484516925440",
    "0",
    "0.1",
]


def test_a_constant_rounds_to_the_float_duckdb_casts_it_to() -> None:
    draw = random.Random(7)
    texts = list(EDGES)
    for _ in range(2000):
        digits = draw.randint(1, 30)
        scale = draw.randint(0, min(digits, 20))
        text = str(draw.randrange(10**digits)).rjust(scale + 1, "0")
        text = f"{text[:-scale]}.{text[-scale:]}" if scale else text
        texts.append(("-" if draw.random() < 0.3 else "") + text)
    con = duckdb.connect()
    columns = ", ".join(f"CAST({t} AS FLOAT)::DOUBLE" for t in texts)
    expected = con.execute(f"SELECT {columns}").fetchone()
    assert expected is not None
    got = [_single(Fraction(t)) for t in texts]
    wrong = [(t, g, e) for t, g, e in zip(texts, got, expected, strict=True) if g != e]
    assert wrong == []
    # Past the largest FLOAT DuckDB raises; the arm leaves such a constant refused.
    assert _single(Fraction(2**128)) is None
