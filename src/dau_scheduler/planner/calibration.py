"""Calibration: each device's throughput measured on the query itself, and a catalog of them.

``calibrate_resources`` times the query's partial on every device this machine can run it on
(DuckDB, Polars on the CPU, cuDF where a GPU is present), over a sample of the split table and
over four times that sample, so a device's fixed cost per statement (a statement's start, join
builds over the other tables) is told apart from its cost per row: ``throughput`` is the
marginal rows per second, ``fixed_seconds`` in the record is the rest. A device that cannot run
the query keeps its throughput. Each calibration appends a :class:`CalibrationRecord` whose
``model_type`` is the query's plan key (``profiling.plan_key``).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from dau_scheduler.checks import count
from dau_scheduler.errors import DauError, SizingError
from dau_scheduler.planner.jsonfile import JsonFile
from dau_scheduler.planner.placement import _compiled, _model_bytes, _statistic_bytes, session_for
from dau_scheduler.planner.resources import DeviceSpec, Resources
from dau_scheduler.tables import ConnectionSource

#: What can be calibrated: the partial query over a row range of the split table.
WORKLOADS: tuple[str, ...] = ("partial",)
#: The larger of the two measured sizes, as a multiple of the sample.
SPAN = 4


@dataclass(frozen=True)
class CalibrationRecord:
    """One calibration: the query (``model_type`` = plan key), the calibrated resources, how it
    was measured, and each device's fixed seconds per statement (``fixed_seconds``)."""

    model_type: str
    workload: str
    resources: Resources
    sample_size: int
    repeats: int
    precision: str | None = None
    estimator_type: str | None = None
    row_count: int | None = None
    model_bytes: int | None = None
    statistic_bytes: int | None = None
    timestamp: float = 0.0
    fixed_seconds: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.model_type, str) or not self.model_type:
            raise SizingError(f"a calibration record needs a model_type, got {self.model_type!r}")
        if not isinstance(self.resources, Resources):
            raise SizingError("a calibration record's resources must be a Resources")
        for what in ("sample_size", "repeats"):
            count(f"calibration record {what}", getattr(self, what), 1)

    def predict(self, device: str, rows: int) -> float:
        """Seconds the calibrated device takes for ``rows`` rows: fixed + rows / throughput."""
        spec = self.resources.device(device)
        return self.fixed_seconds.get(device, 0.0) + rows / spec.throughput

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["resources"] = self.resources.to_dict()
        out["fixed_seconds"] = dict(self.fixed_seconds)
        return out

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> CalibrationRecord:
        if not isinstance(payload, Mapping):
            raise SizingError(f"a calibration record is a mapping, got {type(payload).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(payload) - known
        if unknown:
            raise SizingError(f"unknown calibration record field(s): {', '.join(sorted(unknown))}")
        values = dict(payload)
        values["resources"] = Resources.from_dict(values.get("resources") or {})
        try:
            return cls(**values)
        except TypeError as exc:
            raise SizingError(f"calibration record: {exc}") from exc


class CalibrationCatalog(JsonFile):
    """Append-only calibration records, newest last; JSON on disk."""

    what: ClassVar[str] = "calibration catalog"

    def __init__(self, records: tuple[CalibrationRecord, ...] = ()) -> None:
        self.records: tuple[CalibrationRecord, ...] = tuple(records)

    def add(self, record: CalibrationRecord) -> CalibrationRecord:
        if not isinstance(record, CalibrationRecord):
            raise SizingError(f"a catalog holds CalibrationRecords, got {type(record).__name__}")
        self.records = (*self.records, record)
        return record

    def latest(
        self,
        model_type: str | None = None,
        workload: str | None = None,
        precision: str | None = None,
    ) -> CalibrationRecord | None:
        for record in reversed(self.records):
            if (
                (model_type is None or record.model_type == model_type)
                and (workload is None or record.workload == workload)
                and (precision is None or record.precision == precision)
            ):
                return record
        return None

    def resources_for(
        self,
        model_type: str | None = None,
        workload: str | None = None,
        precision: str | None = None,
    ) -> Resources | None:
        record = self.latest(model_type, workload, precision)
        return None if record is None else record.resources

    def to_dict(self) -> dict[str, Any]:
        return {"records": [r.to_dict() for r in self.records]}

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> CalibrationCatalog:
        if not isinstance(payload, Mapping) or not isinstance(payload.get("records"), list):
            raise SizingError("a calibration catalog is a mapping with a 'records' list")
        return cls(tuple(CalibrationRecord.from_dict(r) for r in payload["records"]))

    @classmethod
    def load(cls, path: str | Path) -> CalibrationCatalog:
        """The catalog in ``path``; a missing file is an empty catalog, a corrupt one an error."""
        if not Path(path).exists():
            return cls()
        return super().load(path)


def arm_for(session: Any, device: DeviceSpec) -> Any | None:
    """The arm that runs ``device``'s engine over ``session``'s tables, or None where this
    machine cannot (cuDF without a GPU): the session's own arms when they match, else a new
    Polars arm over the same tables."""
    from dau_scheduler.arms.polars import PolarsArm, gpu_available

    if device.engine == "duckdb":
        return session.host
    if session.device is not None and session.device.name == device.engine:
        return session.device
    if device.engine == "cudf" and not gpu_available():
        return None
    arm = PolarsArm(engine="gpu" if device.engine == "cudf" else "cpu")
    arm.use_host(session.host.cursor)
    sources = {name: session.source(name) for name in session.row_counts}
    if session.lazy or any(isinstance(s, ConnectionSource) for s in sources.values()):
        arm.attach(sources)  # a user's connection's rows are read as each partial runs
    else:
        for name, source in sources.items():
            arm.load({name: source.arrow()})
    return arm


def _seconds(run: Any, arm: Any) -> float:
    t0 = time.perf_counter()
    run(arm)
    return time.perf_counter() - t0


def _paired(run_small: Any, run_large: Any, arm: Any, repeats: int) -> tuple[float, float]:
    """The sample's time (fastest of ``repeats``) and the median of ``repeats`` paired
    differences between the larger size and the sample, each pair timed back to back in
    alternating order.

    The difference is the per-row work alone, under a millisecond on DuckDB at 1% of TPC-H SF 1
    beside a fixed cost (the joins' builds over the other tables) of 5-25 ms; a pair run back to
    back shares the machine's state, so the median of the pairs' differences holds still where
    the difference of two separately taken minima does not (decision 009, issue 12)."""
    smalls, diffs = [], []
    for i in range(repeats):
        if i % 2 == 0:
            small = _seconds(run_small, arm)
            large = _seconds(run_large, arm)
        else:  # the other order every other pair: the second run finds the first's rows cached
            large = _seconds(run_large, arm)
            small = _seconds(run_small, arm)
        smalls.append(small)
        diffs.append(large - small)
    return min(smalls), statistics.median(diffs)


def calibrate_resources(
    data: Any,
    sql: str,
    resources: Resources | None = None,
    *,
    sample_size: int | None = None,
    repeats: int = 3,
    workload: str = "partial",
    precision: Any = None,
    catalog: CalibrationCatalog | None = None,
    catalog_path: str | Path | None = None,
) -> Resources:
    """Measure each device's throughput on ``sql``'s partial; return the updated resources.

    ``sample_size`` defaults to 1% of the split table. Each device runs the partial over the
    first ``sample_size`` and ``SPAN * sample_size`` rows back to back, ``repeats`` times after
    a warm-up (31 gave a steady median on a shared 2-core machine; 3 is quick but noisy).
    Throughput is the marginal rate between them (the median of the pairs' differences), the
    fixed seconds what the fastest sample run leaves. A device whose engine cannot run here
    (cuDF without a GPU) or that refuses or fails the query keeps its throughput.
    """
    from dau_scheduler.strategies import prefix_runner

    if workload not in WORKLOADS:
        raise SizingError(f"unknown workload {workload!r}; expected one of {', '.join(WORKLOADS)}")
    count("repeats", repeats, 1)
    if sample_size is not None:
        count("sample_size", sample_size, 1)
    resources = resources if resources is not None else Resources.discover()
    stored = CalibrationCatalog.load(catalog_path) if catalog_path is not None else None
    with session_for(data) as session:
        compiled = _compiled(session, sql)
        n = session.row_counts[compiled.plan.split_table or ""]
        small = max(1, min(sample_size or math.ceil(n / 100), n))
        large = max(small, min(SPAN * small, n))
        updated, fixed = [], {}
        run_small = prefix_runner(session, compiled, small)
        run_large = prefix_runner(session, compiled, large)
        for device in resources.devices:
            arm = arm_for(session, device)
            if arm is None or (arm is not session.host and arm.refusal(compiled) is not None):
                updated.append(device)
                continue
            try:
                run_small(arm)  # warm-up
                run_large(arm)
                t_small, difference = _paired(run_small, run_large, arm, repeats)
            except (DauError, RuntimeError, ValueError):
                updated.append(device)
                continue
            per_row = difference / (large - small) if large > small else 0.0
            if per_row <= 0:  # noise swamped the difference: the whole time is per-row work
                per_row = (t_small + max(difference, 0.0)) / large
            fixed[device.name] = max(0.0, t_small - small * per_row)
            updated.append(device.with_throughput(1.0 / per_row))
        result = Resources(tuple(updated))
        record = CalibrationRecord(
            model_type=session.plan_key(compiled),
            workload=workload,
            resources=result,
            sample_size=small,
            repeats=repeats,
            precision=None if precision is None else str(precision),
            estimator_type=compiled.plan.split_table,
            row_count=n,
            model_bytes=_model_bytes(session, compiled),
            statistic_bytes=_statistic_bytes(session, compiled, 256),
            timestamp=time.time(),
            fixed_seconds=fixed,
        )
    if catalog is not None:
        catalog.add(record)
    if stored is not None and catalog_path is not None:
        stored.add(record)
        stored.save(catalog_path)
    return result


__all__ = [
    "SPAN",
    "WORKLOADS",
    "CalibrationCatalog",
    "CalibrationRecord",
    "arm_for",
    "calibrate_resources",
]
