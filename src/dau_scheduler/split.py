"""Run a split: one share of the rows on the device arm, the rest on the host arm, at once.

The device arm takes the leading rows ``[0, cut)`` and the host the rest. That order is part of
the contract: partials reach ``MergeRule.merge`` in arm order, which is what keeps first/last and
earliest-arrival tie-breaks true of the whole table.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, model_validator

from dau_scheduler.errors import ArmError, SplitError
from dau_scheduler.merge import MergeRule, check_split
from dau_scheduler.posture import WorkSplit
from dau_scheduler.rows import RowSource, as_row_source

#: An arm: ``arm(query, rows) -> partial``. It may carry ``row_granularity`` (an int): the row
#: counts it can take are multiples of it. With ``build_rows`` given, arms are also passed
#: ``build=`` (the whole build-side source).
SplitArm = Callable[..., Any]


class SplitExecution(BaseModel):
    """One executed split: what each arm ran, for how long, and the merged answer.

    ``result`` is what an unsplit run returns. ``overlap_seconds`` is the intersection of the two
    arms' wall-clock intervals: evidence the arms were in flight together, not a claim about
    parallel progress inside one interpreter.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")

    posture: str
    device_share: float
    terminal: str
    device_rows: int
    host_rows: int
    device_seconds: float
    host_seconds: float
    wall_seconds: float
    overlap_seconds: float
    materialize_seconds: float
    merge_seconds: float
    device_granularity: int = 1
    result: Any = None
    #: What ran when: ``(track, start, end, rows)`` with times in seconds from the split's start;
    #: tracks ``device``, ``host`` (one span per call or morsel) and ``fold``.
    spans: tuple[tuple[str, float, float, int], ...] = ()
    #: With a cluster as the host: ``(worker, rows, seconds)`` of each worker's shard tasks.
    workers: tuple[tuple[str, int, float], ...] = ()
    #: With a dask cluster as the host: seconds the workers' tree fold of the shards' partials
    #: ran after the last shard ended (in the host's seconds; Spark folds on the driver: 0).
    worker_fold_seconds: float = 0.0
    #: The query ran as DuckDB's own unsplit plan on the host (the posture gave the device no
    #: rows): no partial, no fold, so the answer is DuckDB's, row order and ties included.
    unsplit: bool = False

    def to_chrome_trace(self, path: str | Path) -> Path:
        """Write the spans as Trace Event Format JSON (Perfetto, chrome://tracing): one track
        per arm and one for the fold, each span named by its rows."""
        tracks = {"device": 1, "host": 2, "fold": 3}
        events: list[dict[str, Any]] = [
            {"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}}
            for name, tid in tracks.items()
        ]
        for track, start, end, rows in self.spans:
            events.append(
                {
                    "name": f"{track} {rows} rows" if track != "fold" else "fold",
                    "cat": track,
                    "ph": "X",
                    "pid": 1,
                    "tid": tracks.get(track, 4),
                    "ts": round(start * 1e6, 3),
                    "dur": round(max(0.0, end - start) * 1e6, 3),
                    "args": {"rows": rows},
                }
            )
        target = Path(path)
        target.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}))
        return target

    def timeline(self, path: str | Path) -> Path:
        """Draw the arms' spans and the fold over time as a picture (needs matplotlib:
        ``pip install -e '.[plot]'``)."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise SplitError(
                "a timeline picture needs matplotlib: pip install -e '.[plot]'"
            ) from exc
        rows_of = {"device": 2, "host": 1, "fold": 0}
        colors = {"device": "tab:green", "host": "tab:blue", "fold": "tab:orange"}
        figure, axes = plt.subplots(figsize=(9, 2.6))
        for track, start, end, rows in self.spans:
            y = rows_of.get(track, 0)
            axes.barh(
                y,
                (end - start) * 1e3,
                left=start * 1e3,
                color=colors.get(track, "grey"),
                edgecolor="black",
                height=0.6,
            )
            if track != "fold" and end - start > 0.04 * max(self.wall_seconds, 1e-9):
                axes.text(
                    (start + end) / 2 * 1e3,
                    y,
                    f"{rows}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white",
                )
        axes.set_yticks(list(rows_of.values()), list(rows_of))
        axes.set_xlabel("ms from the split's start")
        axes.set_title(
            f"{self.posture}: device {self.device_rows} rows, host {self.host_rows} rows, "
            f"wall {self.wall_seconds * 1e3:.1f} ms"
        )
        figure.tight_layout()
        target = Path(path)
        figure.savefig(target, dpi=120)
        plt.close(figure)
        return target

    @model_validator(mode="after")
    def _figures_are_sane(self) -> SplitExecution:
        if not math.isfinite(self.device_share) or not 0.0 <= self.device_share <= 1.0:
            raise ValueError(f"device_share must be in [0, 1], got {self.device_share!r}")
        if self.device_rows < 0 or self.host_rows < 0:
            raise ValueError("row counts must be non-negative")
        if self.device_granularity < 1:
            raise ValueError("device_granularity must be at least 1")
        for name in (
            "device_seconds",
            "host_seconds",
            "wall_seconds",
            "overlap_seconds",
            "materialize_seconds",
            "merge_seconds",
        ):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be finite and non-negative, got {value!r}")
        return self


def _granularity(device: SplitArm) -> int:
    grain = getattr(device, "row_granularity", None)
    if grain is None:
        return 1
    if isinstance(grain, bool) or not isinstance(grain, int) or grain < 1:
        raise SplitError(f"device arm's row_granularity must be a positive int, got {grain!r}")
    return grain


def device_cut(share: float, rows: int, granularity: int = 1) -> int:
    """The device arm's row count for ``share`` of ``rows``, snapped to ``granularity``.

    Rounded, not floored: ``(1 / n) * n`` can land just under 1.0 in binary floating point.
    """
    cut = min(rows, max(0, round(share * rows)))
    if granularity > 1:
        cut = min(round(cut / granularity) * granularity, (rows // granularity) * granularity)
    return cut


class _Timed:
    """Runs one arm, recording its interval and outcome."""

    def __init__(self, name: str, arm: SplitArm, args: tuple[Any, ...], kwargs: dict[str, Any]):
        self.name, self.arm, self.args, self.kwargs = name, arm, args, kwargs
        self.start = self.end = 0.0
        self.result: Any = None
        self.error: BaseException | None = None

    def __call__(self) -> None:
        self.start = time.perf_counter()
        try:
            self.result = self.arm(*self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 -- re-raised by run_arms, arm named
            self.error = exc
        finally:
            self.end = time.perf_counter()

    @property
    def seconds(self) -> float:
        return self.end - self.start


def run_arms(jobs: Sequence[_Timed]) -> None:
    """Run jobs concurrently (one thread each beyond the first); raise the first failure by arm."""
    threads = [threading.Thread(target=job, name=f"dau-{job.name}") for job in jobs[1:]]
    for thread in threads:
        thread.start()
    if jobs:
        jobs[0]()
    for thread in threads:
        thread.join()
    for job in jobs:
        if job.error is not None:
            raise_for_arm(job.name, job.error)


def raise_for_arm(name: str, error: BaseException) -> NoReturn:
    """Re-raise an arm's failure as an :class:`ArmError` naming the arm (kept if it is one)."""
    if isinstance(error, ArmError):
        raise error
    raise ArmError(name, f"{type(error).__name__}: {error}") from error


def overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Length of the intersection of two intervals."""
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def execute_split(
    query: Any,
    rows: RowSource | Iterable[Any],
    split: WorkSplit,
    merge: MergeRule,
    *,
    device: SplitArm,
    host: SplitArm,
    build_rows: RowSource | Iterable[Any] | None = None,
    aggregates: Iterable[tuple[str, str]] = (),
) -> SplitExecution:
    """Run ``split``'s share of the rows on the device arm and the rest on the host, concurrently.

    ``query`` goes to both arms untouched. The device arm takes ``[0, cut)``, the host ``[cut, n)``;
    an arm with no rows is not launched, so shares 0 and 1 run exactly the unsplit path. A device
    arm's ``row_granularity`` snaps the cut to its nearest multiple; ``device_rows`` reports it.
    ``aggregates`` are checked against ``merge`` before anything runs. An iterable that is not a
    :class:`RowSource` is materialized once and charged to ``materialize_seconds``.

    Raises:
        SplitError: the aggregates cannot be merged, or the split is invalid.
        ArmError: an arm raised; the other arm is waited for, and nothing is merged.
    """
    began = time.perf_counter()
    split.check()
    check_split(merge, aggregates)
    grain = _granularity(device)

    materialize = 0.0
    if not isinstance(rows, RowSource):
        t0 = time.perf_counter()
        rows = as_row_source(rows)
        materialize += time.perf_counter() - t0
    extra: dict[str, Any] = {}
    if build_rows is not None:
        t0 = time.perf_counter()
        extra["build"] = as_row_source(build_rows)
        materialize += time.perf_counter() - t0

    n = len(rows)
    cut = device_cut(split.device_share, n, grain)
    jobs: list[_Timed] = []
    if cut > 0:
        jobs.append(_Timed("device", device, (query, rows.slice(0, cut)), extra))
    if cut < n:
        jobs.append(_Timed("host", host, (query, rows.slice(cut, n)), extra))
    run_arms(jobs)

    t0 = time.perf_counter()
    result = merge.merge([job.result for job in jobs])
    merge_seconds = time.perf_counter() - t0

    by_name = {job.name: job for job in jobs}
    dev, hst = by_name.get("device"), by_name.get("host")
    spans = [
        (job.name, job.start - began, job.end - began, cut if job.name == "device" else n - cut)
        for job in jobs
    ]
    spans.append(("fold", t0 - began, t0 - began + merge_seconds, 0))
    return SplitExecution(
        posture=split.posture,
        device_share=split.device_share,
        terminal=merge.terminal,
        device_rows=cut,
        host_rows=n - cut,
        device_seconds=dev.seconds if dev else 0.0,
        host_seconds=hst.seconds if hst else 0.0,
        wall_seconds=time.perf_counter() - began,
        overlap_seconds=(
            overlap((dev.start, dev.end), (hst.start, hst.end)) if dev and hst else 0.0
        ),
        materialize_seconds=materialize,
        merge_seconds=merge_seconds,
        device_granularity=grain,
        result=result,
        spans=tuple(spans),
    )


__all__ = ["SplitArm", "SplitExecution", "device_cut", "execute_split"]
