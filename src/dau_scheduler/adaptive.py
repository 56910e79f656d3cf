"""The adaptive posture: the arms take morsels from opposite ends of the rows until they meet.

The device arm takes morsels from the front, the host from the back, so the faster arm simply
does more and no estimate is needed; the realized share is measured. Partials are merged in row
order, which keeps arm order (every device morsel precedes every host morsel).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from dau_scheduler.errors import SplitError
from dau_scheduler.merge import MergeRule, check_split
from dau_scheduler.rows import RowSource, as_row_source
from dau_scheduler.split import SplitArm, SplitExecution, _granularity, overlap, raise_for_arm


class _Meeting:
    """The shared cursors: ``front`` rises as the device takes rows, ``back`` falls for the host."""

    def __init__(self, n: int) -> None:
        self.front, self.back = 0, n
        self.lock = threading.Lock()
        self.failed = threading.Event()
        #: Arms that stopped taking morsels (finished, or quit as the slower of two on shared
        #: cores); the other arm then takes everything left in one morsel.
        self.stopped: set[str] = set()
        self.rows = {"device": 0, "host": 0}
        self.busy = {"device": 0.0, "host": 0.0}

    def record(self, name: str, rows: int, seconds: float) -> None:
        with self.lock:
            self.rows[name] += rows
            self.busy[name] += seconds

    def quit_if_slower(self, name: str) -> bool:
        """Stop ``name`` if it measured a lower rate than the other arm, which must still be
        running (so the rows left always have an arm to take them)."""
        other = "host" if name == "device" else "device"
        with self.lock:
            if other in self.stopped or not (self.busy[name] > 0 and self.busy[other] > 0):
                return False
            mine = self.rows[name] / self.busy[name]
            theirs = self.rows[other] / self.busy[other]
            if mine < theirs:
                self.stopped.add(name)
                return True
            return False

    def alone(self, name: str) -> bool:
        other = "host" if name == "device" else "device"
        with self.lock:
            return other in self.stopped

    def stop(self, name: str) -> None:
        with self.lock:
            self.stopped.add(name)

    def take_front(self, size: int, grain: int) -> tuple[int, int] | None:
        with self.lock:
            if self.failed.is_set() or self.front >= self.back:
                return None
            stop = min(self.front + size, self.back)
            if (stop - self.front) % grain:
                stop = self.front + ((stop - self.front) // grain) * grain
                if stop == self.front:
                    return None
            start, self.front = self.front, stop
            return start, stop

    def take_back(self, size: int) -> tuple[int, int] | None:
        with self.lock:
            if self.failed.is_set() or self.front >= self.back:
                return None
            start = max(self.back - size, self.front)
            stop, self.back = self.back, start
            return start, stop


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SplitError(f"{name} must be a positive int, got {value!r}")
    return value


def execute_adaptive(
    query: Any,
    rows: RowSource | Iterable[Any],
    merge: MergeRule,
    *,
    device: SplitArm,
    host: SplitArm,
    device_morsel: int,
    host_morsel: int,
    growth: float = 1.0,
    max_morsel: int | None = None,
    exclusive: bool = False,
    aggregates: Iterable[tuple[str, str]] = (),
) -> SplitExecution:
    """Run ``query`` by meet-in-the-middle morsels and merge the partials in row order.

    Each morsel is one arm call over a :class:`RowSource` slice. ``device_morsel`` and
    ``host_morsel`` are each arm's first morsel; every next morsel is ``growth`` times larger, up
    to ``max_morsel`` rows. Starting small bounds what a slow arm's first morsel can cost the
    wall time; growing keeps the per-morsel fixed cost small on the arm that keeps up.

    ``exclusive`` says the arms compute on the same cores, so running both adds no compute: once
    each has finished a morsel, the one with the lower measured rate stops. Whenever one arm has
    stopped, the other takes everything left in one morsel (no more per-morsel fixed costs).

    If either arm raises, the other stops taking morsels, both are waited for, and
    :class:`ArmError` names the failed arm: a failure never yields a short answer.
    """
    began = time.perf_counter()
    check_split(merge, aggregates)
    _positive("device_morsel", device_morsel)
    _positive("host_morsel", host_morsel)
    if not growth >= 1.0 or growth == float("inf"):
        raise SplitError(f"growth must be a finite number >= 1, got {growth!r}")
    if max_morsel is not None:
        _positive("max_morsel", max_morsel)
    grain = _granularity(device)
    materialize = 0.0
    if not isinstance(rows, RowSource):
        t0 = time.perf_counter()
        rows = as_row_source(rows)
        materialize = time.perf_counter() - t0
    source = rows
    meeting = _Meeting(len(source))
    cap = max_morsel if max_morsel is not None else len(source) or 1
    outputs: dict[str, list[tuple[int, int, Any]]] = {"device": [], "host": []}
    spans: dict[str, list[float]] = {"device": [], "host": []}
    morsels: list[tuple[str, float, float, int]] = []
    errors: dict[str, BaseException] = {}

    def loop(name: str, arm: SplitArm) -> None:
        size = float(device_morsel if name == "device" else host_morsel)
        while True:
            rows_now = max(1, min(int(size), cap))
            if meeting.alone(name):
                rows_now = len(source)
            taken = (
                meeting.take_front(max(grain, (rows_now // grain) * grain), grain)
                if name == "device"
                else meeting.take_back(rows_now)
            )
            size *= growth
            if taken is None:
                meeting.stop(name)
                return
            t0 = time.perf_counter()
            try:
                partial = arm(query, source.slice(*taken))
            except BaseException as exc:  # noqa: BLE001 -- re-raised below, arm named
                errors[name] = exc
                meeting.failed.set()
                return
            finally:
                t1 = time.perf_counter()
                spans[name] += [t0, t1]
                morsels.append((name, t0 - began, t1 - began, taken[1] - taken[0]))
            outputs[name].append((taken[0], taken[1], partial))
            meeting.record(name, taken[1] - taken[0], t1 - t0)
            if exclusive and meeting.quit_if_slower(name):
                return

    worker = threading.Thread(target=loop, args=("host", host), name="dau-host")
    worker.start()
    loop("device", device)
    worker.join()
    for name in ("device", "host"):
        if name in errors:
            raise_for_arm(name, errors[name])

    ordered = sorted(outputs["device"] + outputs["host"], key=lambda item: item[0])
    covered = sum(stop - start for start, stop, _ in ordered)
    if covered != len(source):  # the invariant that makes a short answer impossible
        raise SplitError(f"internal: the arms covered {covered} of {len(source)} rows")
    t0 = time.perf_counter()
    result = merge.merge([partial for _, _, partial in ordered])
    merge_seconds = time.perf_counter() - t0
    device_rows = sum(stop - start for start, stop, _ in outputs["device"])
    n = len(source)

    def interval(name: str) -> tuple[float, float]:
        marks = spans[name]
        return (min(marks), max(marks)) if marks else (0.0, 0.0)

    def busy(name: str) -> float:
        marks = spans[name]
        return sum(marks[i + 1] - marks[i] for i in range(0, len(marks), 2))

    return SplitExecution(
        posture="adaptive",
        device_share=device_rows / n if n else 0.0,
        terminal=merge.terminal,
        device_rows=device_rows,
        host_rows=n - device_rows,
        device_seconds=busy("device"),
        host_seconds=busy("host"),
        wall_seconds=time.perf_counter() - began,
        overlap_seconds=(
            overlap(interval("device"), interval("host"))
            if spans["device"] and spans["host"]
            else 0.0
        ),
        materialize_seconds=materialize,
        merge_seconds=merge_seconds,
        device_granularity=grain,
        result=result,
        spans=(
            *sorted(morsels, key=lambda m: m[1]),
            ("fold", t0 - began, t0 - began + merge_seconds, 0),
        ),
    )


__all__ = ["execute_adaptive"]
