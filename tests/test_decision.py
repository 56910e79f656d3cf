"""Posture decisions without a Session: facts in, a work split out."""

from __future__ import annotations

import pytest

from dau_scheduler.decision import SPLIT_OVERHEAD_SECONDS, ArmFacts, Profiles, decide
from dau_scheduler.errors import PostureError
from dau_scheduler.profile import QueryProfile


def _profile(fixed: float, per_row: float) -> QueryProfile:
    return QueryProfile(
        plan_key="q", host="h", rows=1000, fixed_seconds=fixed, per_row_seconds=per_row
    )


def _missing() -> tuple[QueryProfile, QueryProfile, tuple[str, ...]]:
    raise PostureError("no profiles; measure them with dau profile")


NONE = Profiles(required=_missing, optional=lambda: None)
BOTH = Profiles(
    required=lambda: (_profile(0.001, 1e-6), _profile(0.002, 5e-7), ()),
    optional=lambda: (_profile(0.001, 1e-6), _profile(0.002, 5e-7), ()),
)
SHARED = ArmFacts("polars", shares_host_cores=True)
SEPARATE = ArmFacts("cudf", shares_host_cores=False, resident=False)


def test_given_share_and_definitional_postures() -> None:
    got = decide(rows=100, device=SHARED, posture="adaptive", device_share=0.3, profiles=NONE)
    assert got.split.device_share == 0.3 and not got.adaptive
    assert (
        decide(
            rows=100, device=SHARED, posture="offload", device_share=None, profiles=NONE
        ).split.device_share
        == 1.0
    )
    assert (
        decide(
            rows=100, device=None, posture="adaptive", device_share=None, profiles=NONE
        ).split.device_share
        == 0.0
    )


def test_shared_cores_without_profiles_runs_the_host_alone() -> None:
    got = decide(rows=10_000, device=SHARED, posture="adaptive", device_share=None, profiles=NONE)
    assert got.split.device_share == 0.0 and not got.adaptive


def test_shared_cores_with_profiles_picks_the_faster_arm() -> None:
    got = decide(rows=10_000, device=SHARED, posture="adaptive", device_share=None, profiles=BOTH)
    assert got.split.device_share == 1.0  # the device's per-row cost is half the host's


def test_separate_hardware_meets_in_the_middle_with_morsels() -> None:
    got = decide(
        rows=64_000,
        device=SEPARATE,
        posture="adaptive",
        device_share=None,
        profiles=NONE,
        knee_rows=5_000,
    )
    assert got.adaptive and got.device_morsel == 5_000 and got.host_morsel == 4_000
    collaborative = decide(
        rows=64_000, device=SEPARATE, posture="collaborative", device_share=None, profiles=BOTH
    )
    assert 0.5 < collaborative.split.device_share < 1.0


def test_collaborative_without_profiles_is_refused_not_guessed() -> None:
    with pytest.raises(PostureError, match="dau profile"):
        decide(rows=10, device=SEPARATE, posture="collaborative", device_share=None, profiles=NONE)


def test_a_split_that_promises_little_runs_the_better_arm_alone() -> None:
    # The device is 8x slower per row: the balance gives it ~11% of the rows for a predicted
    # ~1.1x, under MIN_PREDICTED_SPEEDUP; measured splits like that realized nothing.
    slow = Profiles(
        required=lambda: (_profile(0.0, 1e-6), _profile(0.0, 8e-6), ()),
        optional=lambda: (_profile(0.0, 1e-6), _profile(0.0, 8e-6), ()),
    )
    for posture in ("collaborative", "adaptive"):
        got = decide(
            rows=100_000, device=SEPARATE, posture=posture, device_share=None, profiles=slow
        )
        assert got.split.device_share == 0.0, posture
        assert "must promise" in got.split.rationale
    # Arms of equal speed promise ~2x: they split.
    even = Profiles(
        required=lambda: (_profile(0.0, 1e-6), _profile(0.0, 1e-6), ()),
        optional=lambda: (_profile(0.0, 1e-6), _profile(0.0, 1e-6), ()),
    )
    got = decide(
        rows=100_000, device=SEPARATE, posture="collaborative", device_share=None, profiles=even
    )
    assert 0.4 < got.split.device_share < 0.6


def _both(host: QueryProfile, device: QueryProfile) -> Profiles:
    return Profiles(required=lambda: (host, device, ()), optional=lambda: (host, device, ()))


def test_each_arm_keeps_its_fixed_cost_whatever_its_share() -> None:
    # The host pays 10 ms of join builds at any share; only its 30 ms of rows shrink with it.
    host, device = _profile(0.010, 3e-8), _profile(0.002, 3e-8)
    got = decide(
        rows=1_000_000,
        device=SEPARATE,
        posture="collaborative",
        device_share=None,
        profiles=_both(host, device),
    )
    s = got.split.device_share
    host_part = 0.010 + (1 - s) * 0.030
    device_part = 0.002 + s * 0.030
    assert host_part == pytest.approx(device_part)
    assert s == pytest.approx(38 / 60)  # not 0.54, where the old balance cut
    # The promised speedup counts the split's own steps.
    want = 0.040 / (host_part + SPLIT_OVERHEAD_SECONDS)
    assert got.split.predicted_speedup == pytest.approx(want)


def test_a_query_of_a_few_milliseconds_runs_on_one_arm() -> None:
    # Arms of equal speed would promise 2x on the arms alone; 2 ms of the split's own steps
    # over a 3 ms query leave under 1.25x.
    tiny = _both(_profile(0.0, 3e-9), _profile(0.0, 3e-9))
    got = decide(
        rows=1_000_000, device=SEPARATE, posture="collaborative", device_share=None, profiles=tiny
    )
    assert got.split.device_share in (0.0, 1.0)
    assert "must promise" in got.split.rationale


def test_a_costly_fold_keeps_the_host_alone() -> None:
    """Decision 018: the arms' profiles promise 2x, but folding the partial (a ROLLUP's final
    query) costs as much as the query: the host runs alone."""
    from dau_scheduler.decision import balance

    host, device = _profile(0.0, 1e-6), _profile(0.0, 1e-6)
    assert balance(host, device, 100_000, shared=False, posture="adaptive").device_share > 0
    folded = host.model_copy(update={"fold_seconds": 0.1})
    chosen = balance(folded, device, 100_000, shared=False, posture="adaptive")
    assert chosen.device_share == 0.0 and "host alone" in chosen.rationale


def test_rows_passed_through_run_on_the_host_unless_a_share_is_given() -> None:
    """Decision 018: a partial that reads the rows back unchanged only ships them."""
    device = SEPARATE
    for posture in ("adaptive", "collaborative"):
        got = decide(
            rows=1000,
            device=device,
            posture=posture,
            device_share=None,
            profiles=BOTH,
            passes_rows_through=True,
        )
        assert got.split.device_share == 0.0 and "passes the rows through" in got.split.rationale
    given = decide(
        rows=1000,
        device=device,
        posture="adaptive",
        device_share=0.4,
        profiles=BOTH,
        passes_rows_through=True,
    )
    assert given.split.device_share == 0.4


def test_a_table_too_small_to_measure_runs_the_host_alone_without_asking_for_profiles() -> None:
    for posture in ("collaborative", "adaptive"):
        for rows in (0, 1):
            got = decide(
                rows=rows, device=SEPARATE, posture=posture, device_share=None, profiles=NONE
            )
            assert got.split.device_share == 0.0 and "too few to measure" in got.split.rationale
