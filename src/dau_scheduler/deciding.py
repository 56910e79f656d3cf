"""What a Session asks before it runs a split: the facts of its device arm, and the work split
the posture decides from them, the measured profiles and, for a device that is not resident,
the link rates (``decision.decide``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dau_scheduler import profiling
from dau_scheduler.decision import ArmFacts, Decision, decide, host_alone_unplanned
from dau_scheduler.link import cached_rates, knee_bytes
from dau_scheduler.posture import WorkSplit

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


def unplanned_host_split(
    session: Session, posture: str, device_share: float | None, *, auto: bool
) -> WorkSplit | None:
    """The host-alone split of a one-shot query (a lazy Session of its own files or tables:
    ``run_sql``, ``dau run``) where no plan could give the device rows
    (``decision.host_alone_unplanned``): it does not pay the planner for a split it will not
    run, and reports an empty plan and no refusal. None where the query is to be planned."""
    if (
        not session.lazy
        or session.connection is not None  # (a connection's Session is not one-shot)
        or session.cluster is not None
        or session.mem_budget_mb is not None
    ):
        return None
    facts = arm_facts(session)
    profiled = auto or (
        facts is not None and session.cache.holds_profiles_of(profiling.device_identity(facts.name))
    )
    return host_alone_unplanned(
        device=facts, posture=posture, device_share=device_share, device_profiled=profiled
    )


__all__ = ["arm_facts", "decide_for", "unplanned_host_split"]
