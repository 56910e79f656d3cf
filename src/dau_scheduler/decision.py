"""How a query will run: the work split a posture chooses from what is measured.

Below the Session, and taking only facts as inputs (the split table's rows, what the device arm
is, measured profiles through :class:`Profiles`, the link's transfer knee), so data flows one
way and the postures can be tested without a Session:

- a given ``device_share`` wins; ``cpu`` and ``offload`` are definitional;
- ``collaborative`` needs both arms' profiles (missing ones raise :class:`PostureError`);
- ``adaptive``: with profiles, one morsel per arm at the predicted meeting point (on shared
  cores, the faster arm alone); without, on shared cores the host alone (decision 004), on
  separate hardware the arms take doubling morsels from opposite ends (a device morsel never
  below the link's transfer knee). Decision 011 has the measurements.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from dau_scheduler import sides
from dau_scheduler.posture import WorkSplit, plan_split
from dau_scheduler.profile import QueryProfile

#: Adaptive morsels without profiles: the device's first morsel is 1/ADAPTIVE_FIRST of the rows,
#: the host's 1/ADAPTIVE_HOST_FIRST, every next one twice the last, none over 1/ADAPTIVE_LARGEST.
#: A small first device morsel bounds what a slow device can cost the wall; larger host morsels
#: and doubling keep per-morsel fixed costs (a statement, join builds) few.
ADAPTIVE_FIRST = 64
ADAPTIVE_HOST_FIRST = 16
ADAPTIVE_LARGEST = 4

MeasuredProfiles = tuple[QueryProfile, QueryProfile, tuple[str, ...]]


@dataclass(frozen=True)
class ArmFacts:
    """What a decision needs to know of the device arm."""

    name: str
    shares_host_cores: bool
    resident: bool = True


@dataclass(frozen=True)
class Profiles:
    """Host and device profiles on demand: ``required`` raises PostureError when they cannot be
    had; ``optional`` returns None instead. Both also name the arms measured just now."""

    required: Callable[[], MeasuredProfiles]
    optional: Callable[[], MeasuredProfiles | None]


@dataclass(frozen=True)
class Decision:
    """How a query will run: its work split, and for adaptive the morsel schedule."""

    split: WorkSplit
    adaptive: bool = False
    device_morsel: int = 1
    host_morsel: int = 1
    measured: tuple[str, ...] = ()


def host_alone_unplanned(
    *, device: ArmFacts | None, posture: str, device_share: float | None, device_profiled: bool
) -> WorkSplit | None:
    """The split when the host must run alone whatever the query's plan says, else None.

    That is: no device arm; the ``cpu`` posture; or ``adaptive`` with a device on
    the host's own cores and no device profile of this arm for this query on this machine
    (``decide`` would find none either). Such a query needs no compiled split: the Session
    runs it unsplit, and a one-shot query skips the planner's cost (issue 12).
    """
    why = None
    if device is None:
        why = "cpu: this session has no device arm"
    elif device_share is None and posture == "cpu":
        why = "cpu: the host runs alone"
    elif (
        device_share is None
        and posture == "adaptive"
        and device.shares_host_cores
        and not device_profiled
    ):
        why = (
            f"adaptive: the {device.name} arm runs on the host's cores and no profile of it for "
            "this query is cached on this machine, so the host runs the query alone, unsplit"
        )
    if why is None:
        return None
    return WorkSplit(posture="cpu" if device is None else posture, device_share=0.0, rationale=why)


#: Fewer rows than this cannot be measured at two row counts (``profiling.measure``), and no
#: cut of them gains: ``collaborative`` and ``adaptive`` run the host alone.
MEASURABLE_ROWS = 2
#: A split must promise at least this speedup over the host alone, else the better arm runs
#: alone. Measured on TPC-H SF 1 with each arm on its own core (issue 11): predictions of
#: 1.07-1.21x (Q1, Q3, Q5, Q8) realized none (0.91-1.00x: the arms slow each other, which profiles
#: measured one arm at a time cannot see); predictions of 1.37-2.14x realized 1.14-1.40x.
MIN_PREDICTED_SPEEDUP = 1.25
#: What cutting the rows adds to a split's wall besides the arms' own work: starting the arms'
#: threads, casting and concatenating the partials, and the fold's statement. Measured on TPC-H
#: SF 0.1-1 here: 1-3 ms (a DuckDB fold statement alone ~1.1 ms). Counted in the predicted
#: speedup, it keeps queries of a few milliseconds (TPC-H SF 0.01) on one arm (decision 016).
SPLIT_OVERHEAD_SECONDS = 0.002


def _faster_alone(posture: str, cpu: float, alone: float, why: str) -> WorkSplit:
    """The faster arm alone (``cpu``: the host's seconds, ``alone``: the device's), and why."""
    share = 1.0 if alone < cpu else 0.0
    return WorkSplit(
        posture=posture,
        device_share=share,
        rationale=f"{posture}: {why}: {'the device' if share else 'the host'} alone",
        predicted_speedup=cpu / min(cpu, alone) if min(cpu, alone) > 0 else None,
    )


def _short_of_promise(posture: str, cpu: float, alone: float, said: str, gain: float) -> WorkSplit:
    """The faster arm alone, where what ``said`` predicts (``gain`` over the host alone, the
    split's own steps counted) is under ``MIN_PREDICTED_SPEEDUP``."""
    return _faster_alone(
        posture,
        cpu,
        alone,
        f"{said} a split {gain:.2f}x faster than the host alone, under the "
        f"{MIN_PREDICTED_SPEEDUP:g}x a split must promise (the profiles leave out how the arms "
        "slow each other)",
    )


def balance(
    host: QueryProfile, device: QueryProfile, n: int, shared: bool, posture: str
) -> WorkSplit:
    """The split measured profiles imply for ``n`` rows.

    Arms on the same cores add no compute, so the faster arm alone is best; otherwise the cut
    where the arms' seconds measured on their own sides meet (``sides.price``), or, for profiles
    without those measurements, the collaborative balance of their lines
    ``host_fixed + (1 - s) * host_rows = device_fixed + s * device_rows``; either kept only when
    it promises ``MIN_PREDICTED_SPEEDUP`` with the split's own steps counted.
    """
    cpu, alone = host.estimate(n), device.estimate(n)
    # The device's rows are folded into the answer; the host alone runs the unsplit query.
    fold = max(SPLIT_OVERHEAD_SECONDS, host.fold_seconds)
    alone += fold
    if shared:
        return _faster_alone(
            posture,
            cpu,
            alone,
            "the device arm runs on the host's cores, so the arms' rates do not add; measured "
            f"host {cpu:.4g}s vs device {alone:.4g}s for {n} rows",
        )
    priced = sides.price(host, device, n)
    if priced is not None:
        return _priced_split(priced, fold, posture)
    split = plan_split(
        "collaborative",
        profile=host,
        rows=n,
        device_seconds=device.per_row_seconds * n,
        device_fixed_seconds=device.fixed_seconds,
        host_fixed_seconds=host.fixed_seconds,
    )
    gain = split.predicted_speedup
    if 0 < split.device_share < 1 and gain is not None and gain > 0:
        # The split's own steps (starting the arms, the fold) are paid once the rows are cut;
        # the fold as measured where it costs more (a ROLLUP's final query: decision 018).
        gain = cpu / (cpu / gain + fold)
        if gain < MIN_PREDICTED_SPEEDUP:
            return _short_of_promise(posture, cpu, alone, "the measured profiles predict", gain)
        split = split.model_copy(update={"predicted_speedup": gain})
    if posture == "adaptive":
        return split.model_copy(update={"posture": "adaptive"}).check()
    return split


def _priced_split(priced: sides.Priced, fold: float, posture: str) -> WorkSplit:
    """The split of a cut priced on each arm's side (``sides.price``), kept only when it
    promises ``MIN_PREDICTED_SPEEDUP`` over the host alone with the split's own steps counted."""
    cpu, alone = priced.host_alone, priced.device_alone + fold
    gain = cpu / (priced.wall + fold)
    measured = (
        f"host {cpu:.4g}s and device {priced.device_alone:.4g}s for every row, each measured on "
        "the side of the cut it takes"
    )
    if not 0 < priced.share < 1:
        return _faster_alone(posture, cpu, alone, f"{measured}, no cut beats one arm alone")
    if gain < MIN_PREDICTED_SPEEDUP:
        return _short_of_promise(posture, cpu, alone, f"{measured}, the best cut predicts", gain)
    return WorkSplit(
        posture=posture,
        device_share=priced.share,
        rationale=(
            f"{posture}: {measured}, meet at a device share of {priced.share:.4f} "
            f"({priced.wall:.4g}s)"
        ),
        predicted_speedup=gain,
    ).check()


def decide(
    *,
    rows: int,
    device: ArmFacts | None,
    posture: str,
    device_share: float | None,
    profiles: Profiles,
    knee_rows: int | None = None,
    passes_rows_through: bool = False,
) -> Decision:
    """The decision for a query over ``rows`` rows of its split table (see the module doc).
    ``passes_rows_through``: the partial reads the rows back unchanged (decision 018)."""
    n = rows
    if device is None:
        split = WorkSplit(
            posture="cpu", device_share=0.0, rationale="cpu: this session has no device arm"
        )
        return Decision(split)
    if device_share is not None:
        return Decision(
            WorkSplit(
                posture="collaborative",
                device_share=float(device_share),
                rationale=f"device_share={device_share} given; posture ignored",
            )
        )
    if posture in ("cpu", "offload"):
        return Decision(plan_split(posture))  # type: ignore[arg-type]
    if passes_rows_through:
        return Decision(
            WorkSplit(
                posture=posture,
                device_share=0.0,
                rationale=(
                    f"{posture}: the split block passes the rows through (no filter, join, "
                    "aggregate or limit), so the arms would only ship rows: the host alone"
                ),
            )
        )
    if n < MEASURABLE_ROWS:
        return Decision(
            WorkSplit(
                posture=posture,
                device_share=0.0,
                rationale=(
                    f"{posture}: the split table has {n} row{'s' * (n != 1)}, too few to measure "
                    "the arms on or to gain from cutting: the host alone"
                ),
            )
        )
    shared = device.shares_host_cores
    if posture == "collaborative":
        host, dev, now = profiles.required()
        return Decision(balance(host, dev, n, shared, "collaborative"), measured=now)
    # adaptive: measured profiles size the morsels (or pick one arm on shared cores)
    found = profiles.optional()
    measured = found[2] if found is not None else ()
    if found is not None:
        # With profiles the arms take one morsel each, at the predicted meeting point (on shared
        # cores: the faster arm alone). Measured (issue 11): a morsel's fixed cost (a statement,
        # the joins' hash builds over the other tables) is paid again by every morsel, and on
        # TPC-H SF 1 with each arm on its own core every morsel race tried lost to this cut.
        return Decision(balance(found[0], found[1], n, shared, "adaptive"), measured=measured)
    if shared:
        # Without measurements, probing a device on the host's own cores can only cost: its
        # first morsel runs the device's whole fixed cost (TPC-H Q17 on Polars: 17x DuckDB)
        # and adds no compute. The host alone is never slower than the host.
        return Decision(
            WorkSplit(
                posture="adaptive",
                device_share=0.0,
                rationale=(
                    f"adaptive: the {device.name} arm runs on the host's cores and no "
                    "profiles are cached, so the host runs alone; measure both arms "
                    "(dau profile --arm host/device, or profile='auto') to let the "
                    "measurements choose"
                ),
            )
        )
    first_device = max(1, math.ceil(n / ADAPTIVE_FIRST))
    first_host = max(1, math.ceil(n / ADAPTIVE_HOST_FIRST))
    why = "no profiles: default morsels"
    if not device.resident and knee_rows is not None:
        # Data crosses the link each morsel: no device morsel below the transfer knee.
        first_device = max(first_device, knee_rows)
        why += "; device morsels at least the link's transfer knee"
    split = WorkSplit(
        posture="adaptive",
        device_share=0.5,
        rationale=f"adaptive: the arms take morsels from opposite ends until they meet; {why}",
    )
    return Decision(
        split,
        adaptive=True,
        device_morsel=min(first_device, n or 1),
        host_morsel=min(first_host, n or 1),
        measured=measured,
    )


__all__ = [
    "ADAPTIVE_FIRST",
    "ADAPTIVE_HOST_FIRST",
    "ADAPTIVE_LARGEST",
    "MIN_PREDICTED_SPEEDUP",
    "SPLIT_OVERHEAD_SECONDS",
    "ArmFacts",
    "Decision",
    "Profiles",
    "balance",
    "decide",
]
