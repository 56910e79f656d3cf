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
are not wall time: they are kept as per-operator :class:`NodeCost` entries, and their *shares* say
how execution divides between the split read and whole reads of other tables (:func:`table_work`).
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


def _table_name(node: dict[str, Any]) -> str | None:
    info = node.get("extra_info")
    table = info.get("Table") if isinstance(info, dict) else None
    return str(table).rsplit(".", 1)[-1].strip('"').lower() if table else None


def _filters(node: dict[str, Any]) -> str:
    info = node.get("extra_info")
    return str(info.get("Filters", "")) if isinstance(info, dict) else ""


def _rows_out(node: dict[str, Any]) -> float:
    value = node.get("intermediate_rows", node.get("operator_cardinality", 0))
    try:
        return max(0.0, float(value or 0))
    except (TypeError, ValueError):
        return 0.0


def table_work(
    profile: dict[str, Any] | str | Path, *, split_table: str, table_rows: dict[str, int]
) -> dict[str, float]:
    """How a run's operator time divides between the split read and whole reads of other tables.

    Returns fractions of the summed operator time keyed by table name, plus ``""`` for the work
    that follows the split read (its rows grow with the share) and for anything unattributable.
    The split read is the scan of ``split_table`` carrying the arm's ``rowid`` range; other scans,
    of ``split_table`` too (a subquery over the whole table), are whole reads. Each operator's time
    goes to the stream it consumes: a scan to its table, a one-input operator to its input's
    stream, a join or union to its inputs in proportion to the rows each delivered (a hash join
    builds from one and probes with the other). A stream holding the split read is ``""``; any
    other stream is named after its largest table by ``table_rows``. Needs DuckDB 2.x JSON; other
    shapes give ``{"": 1.0}``.
    """
    doc = _load(profile)
    roots = doc.get("operator")
    if not (isinstance(roots, list) and "query" in doc):
        return {"": 1.0}
    split = split_table.lower()
    rows = {name.lower(): count for name, count in table_rows.items()}
    spelled = {name.lower(): name for name in table_rows}

    def scans(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if _table_name(node) is not None:
            yield node
        for child in node.get("children") or []:
            if isinstance(child, dict):
                yield from scans(child)

    every_scan = [scan for root in roots if isinstance(root, dict) for scan in scans(root)]
    ranged = [s for s in every_scan if _table_name(s) == split and "rowid" in _filters(s)]
    split_reads = {id(s) for s in (ranged or [s for s in every_scan if _table_name(s) == split])}
    work: dict[str, float] = {}

    def walk(node: dict[str, Any]) -> str:
        """Book ``node``'s time and return the name of the stream it delivers."""
        children = [c for c in node.get("children") or [] if isinstance(c, dict)]
        streams = [walk(child) for child in children]
        seconds = _seconds(node.get("timing", node.get("operator_timing", 0.0)), "timing")
        table = _table_name(node)
        if table is not None:  # a table whose rows are unknown cannot be scaled: unattributable
            stream = "" if id(node) in split_reads or table not in rows else table
            streams, children = [stream], [node]
        elif not streams:
            stream = ""  # a leaf that is no table scan (delim or CTE scan): unattributable
            streams, children = [stream], [node]
        elif "" in streams:
            stream = ""
        else:
            stream = max(streams, key=lambda name: (rows.get(name, 0), name))
        delivered = [_rows_out(child) for child in children]
        total = sum(delivered)
        for child_stream, count in zip(streams, delivered, strict=True):
            share = count / total if total else 1.0 / len(streams)
            work[child_stream] = work.get(child_stream, 0.0) + seconds * share
        return stream

    for root in roots:
        if isinstance(root, dict):
            walk(root)
    total = sum(work.values())
    if total <= 0:
        return {"": 1.0}
    return {spelled.get(name, name): seconds / total for name, seconds in work.items()}


def profile_from_duckdb(
    profile: dict[str, Any] | str | Path,
    *,
    rows: int,
    plan_key: str,
    host: str | None = None,
    engine_version: str | None = None,
    split_table: str | None = None,
    table_rows: dict[str, int] | None = None,
) -> QueryProfile:
    """A :class:`QueryProfile` from DuckDB's JSON profile (a dict, JSON text, or a file path).

    ``rows`` is the number of rows of the split table the profiled run read. ``engine_version``
    defaults to the DuckDB installed here, which is the one that measured a profile taken now.
    With ``split_table`` and ``table_rows`` (every table's rows), the execution time that
    :func:`table_work` books to whole reads of other tables is fixed, not per-row, and kept per
    table in ``table_seconds`` (so :meth:`QueryProfile.rescaled` can grow it with those tables).
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
    update: dict[str, Any] = {"nodes": measured.nodes + operators}
    if split_table is not None and table_rows is not None and rows > 0:
        execution = measured.per_row_seconds * rows
        shares = table_work(doc, split_table=split_table, table_rows=table_rows)
        seconds = {t: execution * share for t, share in shares.items() if t}
        update |= {
            "fixed_seconds": measured.fixed_seconds + sum(seconds.values()),
            "per_row_seconds": execution * shares.get("", 0.0) / rows,
            "table_seconds": seconds,
            "table_rows": {t: n for t, n in table_rows.items() if t in seconds or t == split_table},
        }
    return measured.model_copy(update=update).check()


__all__ = ["PHASES", "profile_from_duckdb", "table_work"]
