"""DuckDB's JSON profiling output as a :class:`~dau_scheduler.profile.QueryProfile`.

Two JSON shapes are read:

- 2.x, the range this project depends on (tested on profiles DuckDB writes in the test run):
  sections ``query`` (``total_time`` is the latency), ``planner``, ``optimizer`` and
  ``physical_planner`` (each with ``total_time``), and ``operator``, a list holding the plan tree
  (``name``, ``type``, ``timing``, ``children``);
- 1.x, for profiles kept from older installs (tested on a fixture): one flat root with
  ``latency``, the phase timings ``planner``, ``physical_planner`` and ``all_optimizers`` (or
  ``optimizer_*`` entries), and ``children``, the plan tree (``operator_name``,
  ``operator_type``, ``operator_timing``).

Plan-time phases become fixed spans laid end to end from time zero; execution is the span from
their end to the measured latency. Operator timings are summed across threads by DuckDB, so they
are not wall time: they are kept as per-operator :class:`NodeCost` entries for inspection only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dau_scheduler.errors import ProfileError
from dau_scheduler.profile import NodeCost, QueryProfile, profile_from_spans

#: The plan-time phases, in the order DuckDB runs them; they do not scale with rows.
PHASES: tuple[str, ...] = ("planner", "optimizer", "physical_planner")


def _load(profile: dict[str, Any] | str | Path) -> dict[str, Any]:
    if isinstance(profile, dict):
        return profile
    if isinstance(profile, Path) or (
        isinstance(profile, str) and not profile.lstrip().startswith(("{", "["))
    ):
        try:
            text = Path(profile).read_text()
        except OSError as exc:
            raise ProfileError(f"cannot read DuckDB profile {profile}: {exc}") from exc
    else:
        text = profile
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfileError(f"DuckDB profile is not valid JSON: {exc}") from exc
    if isinstance(loaded, list) and len(loaded) == 1:
        loaded = loaded[0]
    if not isinstance(loaded, dict):
        raise ProfileError("DuckDB profile must be a JSON object")
    return loaded


def _seconds(value: Any, what: str) -> float:
    if isinstance(value, dict):
        value = value.get("total_time", 0.0)
    try:
        seconds = float(value or 0.0)
    except (TypeError, ValueError) as exc:
        raise ProfileError(f"DuckDB profile field {what} is not a number: {value!r}") from exc
    if seconds < 0:
        raise ProfileError(f"DuckDB profile field {what} is negative: {seconds}")
    return seconds


def _phases(doc: dict[str, Any]) -> dict[str, float]:
    if "query" in doc and isinstance(doc["query"], dict):  # 2.x
        return {phase: _seconds(doc.get(phase, 0.0), phase) for phase in PHASES}
    optimizer = doc.get("all_optimizers")
    if optimizer is None:
        optimizer = sum(_seconds(v, k) for k, v in doc.items() if k.startswith("optimizer_"))
    return {
        "planner": _seconds(doc.get("planner", 0.0), "planner"),
        "optimizer": _seconds(optimizer, "all_optimizers"),
        "physical_planner": _seconds(doc.get("physical_planner", 0.0), "physical_planner"),
    }


def _latency(doc: dict[str, Any]) -> float:
    if "query" in doc and isinstance(doc["query"], dict):
        if "total_time" not in doc["query"]:
            raise ProfileError("DuckDB profile has no query.total_time (latency)")
        return _seconds(doc["query"]["total_time"], "query.total_time")
    if "latency" in doc:
        return _seconds(doc["latency"], "latency")
    if "timing" in doc:
        return _seconds(doc["timing"], "timing")
    raise ProfileError("DuckDB profile has no latency: is this a JSON profile from DuckDB?")


def _operators(doc: dict[str, Any]) -> Iterator[tuple[str, float]]:
    roots = doc.get("operator") if isinstance(doc.get("operator"), list) else doc.get("children")
    stack = list(reversed(roots or []))
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        name = node.get("name") or node.get("operator_name") or node.get("operator_type") or "?"
        timing = node.get("timing", node.get("operator_timing", 0.0))
        yield str(name).strip(), _seconds(timing, f"timing of {name}")
        stack.extend(reversed(node.get("children") or []))


def profile_from_duckdb(
    profile: dict[str, Any] | str | Path,
    *,
    rows: int,
    plan_key: str,
    host: str | None = None,
    engine_version: str | None = None,
) -> QueryProfile:
    """A :class:`QueryProfile` from DuckDB's JSON profile (a dict, JSON text, or a file path).

    ``rows`` is the number of rows of the split table the profiled run read. ``engine_version``
    defaults to the DuckDB installed here, which is the one that measured a profile taken now.
    """
    doc = _load(profile)
    phases = _phases(doc)
    latency = _latency(doc)
    spans: list[tuple[int, int, str]] = []
    clock = 0
    for phase in PHASES:
        width = round(phases[phase] * 1e6)
        if width:
            spans.append((clock, clock + width, phase))
            clock += width
    end = max(clock, round(latency * 1e6))
    spans.append((clock, end, "execution"))
    if engine_version is None:
        import duckdb

        engine_version = f"duckdb {duckdb.__version__}"
    measured = profile_from_spans(
        spans,
        rows=rows,
        plan_key=plan_key,
        host=host,
        is_fixed=lambda n: n in PHASES,
        engine_version=engine_version,
    )
    operators = tuple(
        NodeCost(node=f"{i}:{name}", seconds=seconds, scales_with_rows=True)
        for i, (name, seconds) in enumerate(_operators(doc))
    )
    return measured.model_copy(update={"nodes": measured.nodes + operators}).check()


__all__ = ["PHASES", "profile_from_duckdb"]
