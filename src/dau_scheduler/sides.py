"""Pricing a cut from what each arm measured on its own side of it.

A split gives the device the leading rows ``[0, cut)`` and the host the rest (``split.py``). A
profile's line, ``fixed + per_row * rows``, prices a share as if every row cost the same. Where
rows cost unevenly along the table (files sorted by a date a filter reads, hive partitions whose
row groups DuckDB skips by their statistics), the line puts the cut where it would be if they did
not: a query whose work lies in a quarter of the table is priced as a quarter of the rows' worth,
and a cut that leaves one arm nearly all of it looks balanced.

So each profile keeps the runs its line was fitted through (``QueryProfile.ranges``), measured on
the side of the cut its arm takes: the device over the first rows, the host over the last.
:func:`price` reads each arm's seconds at a cut off those points, interpolating between measured
cuts, and finds the cut where the slower arm is fastest. Where a table's rows cost evenly it finds
the line's cut, within the measurements' noise; where they do not, it finds the cut the line
misses (docs/decisions/031).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from dau_scheduler.profile import QueryProfile

#: Cuts whose slower arm is predicted within this fraction of the best cut's are taken as equal:
#: profiles' medians move 5-10% from one measurement to the next here.
NEAR = 0.05


#: The ranges place a query's work by where its rows lie; rows added or removed move where
#: they lie (appended rows all come last), so past this growth or shrinkage of the table the
#: line prices the split until the profile is measured again (it is stale only past 10x).
DRIFT = 1.25


@dataclass(frozen=True)
class Priced:
    """The best cut two measured arms give: the device's share, the slower arm's seconds there,
    and each arm's seconds alone over every row."""

    share: float
    wall: float
    host_alone: float
    device_alone: float


def side_curve(profile: QueryProfile, side: str, rows: int) -> list[tuple[float, float]]:
    """``(cut, seconds)`` of the arm that takes one side of the cut over ``rows`` rows: the
    ``leading`` side (rows before the cut, the device's) or the ``trailing`` one (rows from it,
    the host's), from the ranges measured on that side; empty where fewer than two were, or
    where the table's rows moved more than ``DRIFT`` times from those measured.

    Seconds never fall as an arm's side grows (a measured point below a smaller range's is noise,
    lifted to it); at the cut where the side is empty stands the profile's fixed cost, no more
    than its smallest measured range. Over a row count a little off the one measured, the part
    above the fixed cost scales with the rows, as the line's per-row part does.
    """
    measured = profile.rows
    if side == "leading":
        points = sorted((stop / measured, s) for start, stop, s in profile.ranges if start == 0)
    elif side == "trailing":
        points = sorted(
            (start / measured, s) for start, stop, s in profile.ranges if stop == measured
        )
    else:
        raise ValueError(f"side must be 'leading' or 'trailing', got {side!r}")
    if len(points) < 2 or measured <= 0 or not 1 / DRIFT <= rows / measured <= DRIFT:
        return []
    fixed = min(profile.fixed_seconds, min(s for _, s in points))
    # Walk from the empty end of the side outwards, keeping the largest seconds met.
    ordered = points if side == "leading" else points[::-1]
    curve = [(0.0 if side == "leading" else 1.0, fixed)]
    for cut, seconds in ordered:
        curve.append((cut, max(seconds, curve[-1][1])))
    if side == "trailing":
        curve.reverse()
    scale = rows / measured
    return [(cut, fixed + (seconds - fixed) * scale) for cut, seconds in curve]


def at(curve: list[tuple[float, float]], cut: float) -> float:
    """The curve's seconds at ``cut``: linear between the measured cuts on either side, the
    nearest end's beyond them."""
    if cut <= curve[0][0]:
        return curve[0][1]
    for (c1, s1), (c2, s2) in pairwise(curve):
        if cut <= c2:
            return s1 if c2 == c1 else s1 + (s2 - s1) * (cut - c1) / (c2 - c1)
    return curve[-1][1]


def _reach(curve: list[tuple[float, float]], level: float, *, rising: bool) -> float:
    """Where a side's seconds stay within ``level``: the last cut at or under it on a rising
    curve (the device's), the first on a falling one (the host's)."""
    if rising:
        for (c1, s1), (c2, s2) in pairwise(curve):
            if s2 > level:
                return c1 if s1 >= level else c1 + (c2 - c1) * (level - s1) / (s2 - s1)
        return curve[-1][0]
    for (c1, s1), (c2, s2) in pairwise(curve):
        if s2 <= level:
            return c1 if s1 <= level else c1 + (c2 - c1) * (s1 - level) / (s1 - s2)
    return curve[-1][0]


def price(host: QueryProfile, device: QueryProfile, rows: int) -> Priced | None:
    """The cut of ``rows`` rows where the slower arm is fastest, each arm priced on its own side;
    None where either profile lacks the ranges of its side (then the line prices the split).

    The device's seconds never fall as the cut moves up and the host's never rise, so the slower
    arm is fastest where they cross: found between the two curves' measured cuts, where both are
    straight lines. Of the cuts within ``NEAR`` of that, the middle one is taken.
    """
    lead = side_curve(device, "leading", rows)
    trail = side_curve(host, "trailing", rows)
    if not lead or not trail:
        return None
    cuts = sorted({cut for cut, _ in lead} | {cut for cut, _ in trail})
    share = 1.0
    for a, b in pairwise(cuts):
        before, after = at(lead, a) - at(trail, a), at(lead, b) - at(trail, b)
        if after >= 0:
            share = a if before >= 0 else a + (b - a) * -before / (after - before)
            break
    if 0.0 < share < 1.0:
        # Every cut whose slower arm is within NEAR of the best is as good as the measurements
        # can tell; the middle of them keeps the cut off the edge of a stretch of rows that
        # cost nothing (where the crossing falls wherever the noise puts it).
        level = max(at(lead, share), at(trail, share)) * (1.0 + NEAR)
        share = (_reach(trail, level, rising=False) + _reach(lead, level, rising=True)) / 2
    return Priced(
        share=share,
        wall=max(at(lead, share), at(trail, share)),
        host_alone=at(trail, 0.0),
        device_alone=at(lead, 1.0),
    )


__all__ = ["DRIFT", "NEAR", "Priced", "at", "price", "side_curve"]
