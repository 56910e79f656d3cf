"""Postures and work splits: turning an intent, or measured costs, into a device share.

``cpu`` and ``offload`` are definitional (share 0 and 1) and need no figures. ``collaborative``
balances measured host and device seconds, including the device's fixed per-job cost, and refuses
to guess when a figure is missing. ``adaptive`` is decided while the query runs (the arms take
morsels from opposite ends until they meet); its planned share is only the expected meeting point.
"""

from __future__ import annotations

import math
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, model_validator

from dau_scheduler.errors import PostureError

POSTURES: tuple[str, ...] = ("cpu", "offload", "collaborative", "adaptive")

Posture = Literal["cpu", "offload", "collaborative", "adaptive"]


@runtime_checkable
class HostCost(Protocol):
    """Anything that prices a row count on the host: a measured profile, or a caller's own model."""

    def estimate(self, rows: int) -> float: ...


class WorkSplit(BaseModel):
    """How one query's rows divide between the device arm (leading rows) and the host arm."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    posture: str
    device_share: float
    rationale: str
    predicted_speedup: float | None = None

    @model_validator(mode="after")
    def _share_is_a_fraction(self) -> WorkSplit:
        if self.posture not in POSTURES:
            raise ValueError(f"unknown posture {self.posture!r}; expected one of {POSTURES}")
        share = self.device_share
        if not math.isfinite(share) or not 0.0 <= share <= 1.0:
            raise ValueError(f"device_share must be a finite fraction in [0, 1], got {share!r}")
        speedup = self.predicted_speedup
        if speedup is not None and (not math.isfinite(speedup) or speedup <= 0.0):
            raise ValueError(f"predicted_speedup must be finite and positive, got {speedup!r}")
        return self

    def check(self) -> WorkSplit:
        """Re-run the invariants (``model_copy(update=...)`` skips them) and return ``self``."""
        try:
            type(self).model_validate(self.model_dump())
        except ValueError as exc:
            raise PostureError(f"invalid work split: {exc}") from exc
        return self


def _figure(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise PostureError(f"{name} must be a finite number of seconds, got {value!r}")
    if value < 0:
        raise PostureError(f"{name} must not be negative, got {value!r}")
    return float(value)


def _collaborative_share(
    cpu: float, device: float, fixed: float, host_fixed: float = 0.0
) -> WorkSplit:
    """Solve ``host_fixed + (1 - s) * (cpu - host_fixed) = fixed + s * device`` for the share
    ``s``: each arm pays its fixed cost (a statement, the joins' builds over the other tables)
    whatever its share, and only its per-row part shrinks with it."""
    if cpu <= fixed or cpu + device <= 0.0:
        return WorkSplit(
            posture="cpu",
            device_share=0.0,
            rationale=(
                f"collaborative: the device's fixed cost {fixed:.6g}s is at least the host's "
                f"{cpu:.6g}s for the whole query, so no share can beat the host alone"
            ),
            predicted_speedup=1.0,
        )
    host_fixed = min(max(host_fixed, 0.0), cpu)
    per_rows = cpu - host_fixed
    share = min(1.0, (cpu - fixed) / (per_rows + device)) if per_rows + device > 0 else 1.0
    host_part = host_fixed + (1.0 - share) * per_rows if share < 1.0 else 0.0
    wall = max(host_part, fixed + share * device)
    speedup = cpu / wall if wall > 0 else None
    of_which = f" ({host_fixed:.6g}s fixed)" if host_fixed else ""
    return WorkSplit(
        posture="collaborative",
        device_share=share,
        rationale=(
            f"collaborative: host {cpu:.6g}s{of_which} and device {device:.6g}s "
            f"(+{fixed:.6g}s fixed) for the whole query balance at a device share of {share:.4f}"
        ),
        predicted_speedup=speedup,
    )


def plan_split(
    posture: Posture = "collaborative",
    *,
    cpu_seconds: float | None = None,
    device_seconds: float | None = None,
    profile: HostCost | None = None,
    rows: int | None = None,
    device_fixed_seconds: float = 0.0,
    host_fixed_seconds: float = 0.0,
) -> WorkSplit:
    """Resolve a posture into a row split.

    ``cpu_seconds`` and ``device_seconds`` are whole-query seconds on each engine alone. The host
    figure may instead come from ``profile.estimate(rows)``; an explicit ``cpu_seconds`` wins.
    ``collaborative`` without a host or a device figure raises :class:`PostureError` rather than
    inventing one. ``predicted_speedup`` is the host-alone time over the predicted split wall time.
    ``host_fixed_seconds`` is the part of the host's time that does not shrink with its rows
    (``device_fixed_seconds`` the device's): both arms pay theirs whatever the share.

    Raises:
        PostureError: unknown posture, a non-finite or negative figure, or a missing figure.
    """
    if posture not in POSTURES:
        raise PostureError(f"unknown posture {posture!r}; expected one of {', '.join(POSTURES)}")
    fixed = _figure("device_fixed_seconds", device_fixed_seconds) or 0.0
    host_fixed = _figure("host_fixed_seconds", host_fixed_seconds) or 0.0
    cpu = _figure("cpu_seconds", cpu_seconds)
    device = _figure("device_seconds", device_seconds)
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 0):
        raise PostureError(f"rows must be a non-negative int, got {rows!r}")
    if cpu is None and profile is not None and rows is not None:
        cpu = _figure("the profile's host estimate", profile.estimate(rows))

    if posture == "cpu":
        return WorkSplit(posture="cpu", device_share=0.0, rationale="cpu: every row on the host")
    if posture == "offload":
        return WorkSplit(
            posture="offload", device_share=1.0, rationale="offload: every row on the device"
        )
    if posture == "adaptive":
        if cpu is not None and device is not None:
            expected = _collaborative_share(cpu, device, fixed, host_fixed).device_share
            why = f"expected meeting point {expected:.4f} from the figures given"
        else:
            expected, why = 0.5, "no figures; 0.5 is only the nominal midpoint"
        return WorkSplit(
            posture="adaptive",
            device_share=expected,
            rationale=(
                "adaptive: the arms take morsels from opposite ends until they meet, so the "
                f"realized share is measured, not planned ({why})"
            ),
        )
    if cpu is None:
        raise PostureError(
            "collaborative needs a host figure: pass cpu_seconds, or a profile (HostCost) with "
            "rows; it will not guess one"
        )
    if device is None:
        raise PostureError(
            "collaborative needs a device figure: pass device_seconds; it will not guess one"
        )
    return _collaborative_share(cpu, device, fixed, host_fixed)


def batch_count(payload_bytes: int, *, resident: bool, knee_bytes: int) -> int:
    """How many batches one arm's share should be delivered in.

    Batches exist to hide a transfer behind compute. Data already resident on the engine has no
    transfer to hide, so every extra batch is pure per-call overhead: one batch. Streamed data is
    cut
    at the link's measured transfer knee (``knee_bytes``, below which transfers lose rate to setup),
    rounded to the nearest count and never below one.
    """
    if isinstance(payload_bytes, bool) or not isinstance(payload_bytes, int) or payload_bytes < 0:
        raise PostureError(f"payload_bytes must be a non-negative int, got {payload_bytes!r}")
    if isinstance(knee_bytes, bool) or not isinstance(knee_bytes, int) or knee_bytes <= 0:
        raise PostureError(f"knee_bytes must be a positive int, got {knee_bytes!r}")
    if resident:
        return 1
    return max(1, math.floor(payload_bytes / knee_bytes + 0.5))


__all__ = ["POSTURES", "HostCost", "Posture", "WorkSplit", "batch_count", "plan_split"]
