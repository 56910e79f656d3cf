"""What a Session asks before it runs a split: the facts of its device arm, and the work split
the posture decides from them, the measured profiles and, for a device that is not resident,
the link rates (``decision.decide``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dau_scheduler import profiling
from dau_scheduler.decision import ArmFacts, Decision, balance, decide, host_alone_unplanned
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
    session: Session, sql: str, posture: str, device_share: float | None, *, auto: bool
) -> WorkSplit | None:
    """The host-alone split of a one-shot query (a lazy Session of its own files or tables:
    ``run_sql``, ``dau run``) where no plan could give the device rows
    (``decision.host_alone_unplanned``), or where this query's cached profiles choose the host
    on whichever table the planner splits (:func:`_measured_host_alone`): it does not pay the
    planner (~0.1 s) for a split it will not run, and reports an empty plan and no refusal.
    None where the query is to be planned."""
    if (
        not session.lazy
        or session.connection is not None  # (a connection's Session is not one-shot)
        or session.cluster is not None
        or session.mem_budget_mb is not None
    ):
        return None
    facts = arm_facts(session)
    if auto or facts is None:
        return host_alone_unplanned(
            device=facts, posture=posture, device_share=device_share, device_profiled=auto
        )
    # The query's plan key on each table the planner could split. (The key is of the query
    # over the user's views' definitions; a one-shot Session has no connection of the user's,
    # so no such views, and the query is read as written.)
    tables = sorted(session.row_counts)
    who = profiling.device_identity(facts.name)
    keyed = {
        table: key
        for table, key in zip(tables, profiling.plan_keys(sql, tables, session.schema), strict=True)
        if session.cache.holds(key, who)
    }
    alone = host_alone_unplanned(
        device=facts, posture=posture, device_share=device_share, device_profiled=bool(keyed)
    )
    if alone is not None or posture != "adaptive" or device_share is not None:
        return alone
    if facts.shares_host_cores:
        return _measured_host_alone(session, keyed)
    return None


def _measured_host_alone(session: Session, keyed: dict[str, str]) -> WorkSplit | None:
    """The host-alone split ``decide`` would reach under ``adaptive`` with the device on the
    host's cores, whichever of ``keyed``'s tables the planner splits: every table whose
    profiles are cached and fresh balances to the host (the faster arm alone); any other
    table has none, and the host runs alone without them. None where some table's profiles
    give the device rows (then the query is planned)."""
    why = []
    for table, key in keyed.items():
        pair = profiling.cached_fresh(session, key, table)
        if pair is None:
            continue
        split = balance(pair[0], pair[1], session.row_counts[table], True, "adaptive")
        if split.device_share > 0:
            return None
        why.append(split.rationale)
    if not why:
        why.append(
            "adaptive: the device arm runs on the host's cores and no fresh profiles of both "
            "arms are cached for this query, so the host runs alone"
        )
    return WorkSplit(posture="adaptive", device_share=0.0, rationale=why[0])


__all__ = ["arm_facts", "decide_for", "unplanned_host_split"]
