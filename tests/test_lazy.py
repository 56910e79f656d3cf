"""The Arrow builders that make no Python-to-Arrow conversion (so pyarrow does not import pandas)
build exactly what ``pa.array`` builds."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dau_scheduler.lazy import empty_table, int64_scalar, int_array, numeric_array

ints = st.lists(st.none() | st.integers(-(2**63), 2**63 - 1), max_size=40)
doubles = st.lists(st.none() | st.floats(allow_nan=False), max_size=40)


@settings(deadline=None)  # the first pa.array imports pandas
@given(ints)
def test_int_arrays_are_pa_arrays(values: list[int | None]) -> None:
    assert int_array(values).equals(pa.array(values, pa.int64()))
    assert numeric_array(values, pa.int64()).equals(pa.array(values, pa.int64()))


@settings(deadline=None)  # the first pa.array imports pandas
@given(doubles)
def test_double_arrays_are_pa_arrays(values: list[float | None]) -> None:
    assert numeric_array(values, pa.float64()).equals(pa.array(values, pa.float64()))


@settings(deadline=None)  # the first pa.array imports pandas
@given(
    st.integers(0, 10),
    st.lists(st.none() | st.integers(-(10**37) + 1, 10**37 - 1), max_size=30),
)
def test_decimal_arrays_are_pa_arrays(scale: int, unscaled: list[int | None]) -> None:
    type_ = pa.decimal128(38, scale)
    values = [None if u is None else Decimal(u).scaleb(-scale) for u in unscaled]
    assert numeric_array(values, type_).equals(pa.array(values, type_))


def test_decimals_past_28_digits_and_their_limits() -> None:
    type_ = pa.decimal128(38, 2)
    wide = Decimal("371111111111111111111111277990.50")  # 30 digits: Python's context keeps 28
    assert numeric_array([wide, None], type_).to_pylist() == [wide, None]
    assert numeric_array([Decimal("1E+5")], type_).to_pylist() == [Decimal("100000.00")]
    with pytest.raises(pa.ArrowInvalid):  # more digits than the scale: Arrow's own error
        numeric_array([Decimal("0.125")], type_)
    with pytest.raises(pa.ArrowInvalid):  # more digits than the precision
        numeric_array([Decimal("1E+40")], type_)


def test_other_types_go_through_pa_array_and_empty_tables_keep_the_schema() -> None:
    assert numeric_array([1, None], pa.int32()).equals(pa.array([1, None], pa.int32()))
    assert int64_scalar(-7).as_py() == -7 and int64_scalar(0).type == pa.int64()
    schema = pa.schema(
        [
            ("d", pa.decimal128(38, 2)),
            ("s", pa.struct([("x", pa.string())])),
            ("l", pa.list_(pa.int64())),
            ("e", pa.dictionary(pa.int32(), pa.string())),
        ]
    )
    table = empty_table(schema)
    assert table.schema == schema and table.num_rows == 0
