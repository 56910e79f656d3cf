from __future__ import annotations

import math

import pytest

from dau_scheduler import (
    POSTURES,
    PostureError,
    QueryProfile,
    WorkSplit,
    batch_count,
    plan_split,
)


def test_definitional_postures_need_no_figures() -> None:
    assert plan_split("cpu").device_share == 0.0
    assert plan_split("offload").device_share == 1.0
    adaptive = plan_split("adaptive")
    assert adaptive.posture == "adaptive" and "realized" in adaptive.rationale
    assert POSTURES == ("cpu", "offload", "collaborative", "adaptive")


def test_collaborative_balances_with_the_fixed_cost() -> None:
    split = plan_split(
        "collaborative", cpu_seconds=10.0, device_seconds=5.0, device_fixed_seconds=1.0
    )
    s = split.device_share
    assert math.isclose((1 - s) * 10.0, 1.0 + s * 5.0)
    assert split.predicted_speedup is not None
    assert math.isclose(split.predicted_speedup, 10.0 / ((1 - s) * 10.0))


def test_collaborative_takes_the_host_figure_from_a_profile_and_explicit_wins() -> None:
    profile = QueryProfile(
        plan_key="q", host="h", rows=1000, fixed_seconds=0.5, per_row_seconds=0.01
    )
    from_profile = plan_split("collaborative", profile=profile, rows=1000, device_seconds=10.5)
    assert math.isclose(from_profile.device_share, 0.5)
    explicit = plan_split(
        "collaborative", cpu_seconds=1.0, profile=profile, rows=1000, device_seconds=1.0
    )
    assert math.isclose(explicit.device_share, 0.5)


@pytest.mark.parametrize(
    ("kwargs", "missing"),
    [({"device_seconds": 1.0}, "host figure"), ({"cpu_seconds": 1.0}, "device figure")],
)
def test_collaborative_refuses_to_guess(kwargs: dict[str, float], missing: str) -> None:
    with pytest.raises(PostureError, match=missing):
        plan_split("collaborative", **kwargs)  # type: ignore[arg-type]


def test_fixed_cost_that_eats_the_gain_is_a_cpu_split_that_says_why() -> None:
    split = plan_split(
        "collaborative", cpu_seconds=0.0123, device_seconds=0.001, device_fixed_seconds=0.02
    )
    assert split.posture == "cpu" and split.device_share == 0.0
    assert "fixed cost" in split.rationale


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0])
def test_bad_figures_are_named(bad: float) -> None:
    with pytest.raises(PostureError, match="cpu_seconds"):
        plan_split("collaborative", cpu_seconds=bad, device_seconds=1.0)


def test_unknown_posture_is_named() -> None:
    with pytest.raises(PostureError, match="'turbo'"):
        plan_split("turbo")  # type: ignore[arg-type]


@pytest.mark.parametrize("share", [-0.1, 1.5, float("nan"), float("inf")])
def test_work_split_share_must_be_a_fraction(share: float) -> None:
    with pytest.raises(ValueError, match="device_share"):
        WorkSplit(posture="cpu", device_share=share, rationale="x")


def test_check_revalidates_after_model_copy() -> None:
    split = WorkSplit(posture="cpu", device_share=0.0, rationale="x")
    assert split.check() is split
    broken = split.model_copy(update={"device_share": 2.0})
    with pytest.raises(PostureError, match="device_share"):
        broken.check()


def test_batch_count() -> None:
    mib = 1 << 20
    assert batch_count(int(45.8 * mib), resident=False, knee_bytes=15 * mib) == 3
    assert batch_count(int(45.8 * mib), resident=True, knee_bytes=15 * mib) == 1
    assert batch_count(0, resident=False, knee_bytes=15 * mib) == 1
    assert batch_count(100 * mib, resident=False, knee_bytes=10 * mib) == 10
    with pytest.raises(PostureError, match="knee_bytes"):
        batch_count(10, resident=False, knee_bytes=0)
