"""What a Session asks before it runs a split: the facts of its device arm, and the work split
the posture decides from them, the measured profiles and, for a device that is not resident,
the link rates (``decision.decide``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dau_scheduler import profiling
from dau_scheduler.decision import ArmFacts, Decision, decide
from dau_scheduler.link import cached_rates, knee_bytes

if TYPE_CHECKING:
    from dau_scheduler.rewrite.planner import CompiledSplit
    from dau_scheduler.session import Session


def arm_facts(session: Session) -> ArmFacts | None:
    """The device arm as the postures see it (None without one)."""
    device = session.device
    if device is None:
        return None
    return ArmFacts(
        device.name,
        bool(getattr(device, "shares_host_cores", False)),
        bool(getattr(device, "resident", True)),
    )


def decide_for(
    session: Session,
    compiled: CompiledSplit,
    posture: str,
    device_share: float | None,
    *,
    auto: bool,
) -> Decision:
    """The split ``compiled`` runs with under ``posture`` (``auto``: measure missing profiles)."""
    table = compiled.plan.split_table or ""
    n = session.row_counts[table]
    facts = arm_facts(session)
    knee_rows = None
    if facts is not None and not facts.resident:
        rates = cached_rates(session.cache, facts.name)
        if rates:
            width = sum(session.column_nbytes[table].values())
            row_bytes = max(1, width // max(1, n))
            knee_rows = math.ceil(knee_bytes(rates) / row_bytes)
    return decide(
        rows=n,
        device=facts,
        posture=posture,
        device_share=device_share,
        profiles=profiling.decision_profiles(session, compiled, auto=auto),
        knee_rows=knee_rows,
        passes_rows_through=compiled.passes_rows_through,
    )


__all__ = ["arm_facts", "decide_for"]
