"""Measured costs: query profiles, link rates, and the on-disk cache that keeps them.

A :class:`QueryProfile` prices a row count on one host as ``fixed + per_row * rows``, from a
measurement, never a model. It goes stale when the row count drifts too far from what was measured
or the engine version differs (an unknown version is stale). A :class:`LinkRate` is a measured
host-to-device transfer rate at one transfer size. :class:`ProfileCache` keeps both as plain JSON.
"""

from __future__ import annotations

import json
import math
import os
import platform
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from dau_scheduler.errors import ProfileError
from dau_scheduler.paths import write_atomic

_M = TypeVar("_M", bound=BaseModel)


def _finite_non_negative(name: str, value: float) -> None:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and non-negative, got {value!r}")


def _check_rows(rows: object, what: str = "rows") -> None:
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise ProfileError(f"{what} must be a non-negative int, got {rows!r}")


def _revalidate(model: BaseModel) -> None:
    try:
        type(model).model_validate(model.model_dump())
    except ValidationError as exc:
        raise ProfileError(f"invalid {type(model).__name__}: {exc}") from exc


class NodeCost(BaseModel):
    """One plan node's measured cost, and whether it scales with rows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    node: str
    seconds: float
    scales_with_rows: bool

    @model_validator(mode="after")
    def _seconds_is_finite(self) -> NodeCost:
        _finite_non_negative("seconds", self.seconds)
        return self

    def check(self) -> NodeCost:
        """Re-run the invariants and return ``self``."""
        _revalidate(self)
        return self


class QueryProfile(BaseModel):
    """A measured host cost for one plan on one host.

    ``selectivity`` (the fraction of rows surviving the filters) stays ``None`` unless measured.
    ``engine_version`` defaults to ``""``, unknown, never to whatever happens to be installed.
    ``table_seconds`` is the part of ``fixed_seconds`` spent reading whole tables outside the split
    read, by table, measured when the tables had ``table_rows`` rows; empty when not measured.
    ``fold_seconds`` is what folding the whole partial into the answer costs (host profiles).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan_key: str
    host: str
    rows: int
    fixed_seconds: float
    per_row_seconds: float
    nodes: tuple[NodeCost, ...] = ()
    selectivity: float | None = None
    engine_version: str = ""
    table_rows: dict[str, int] = Field(default_factory=dict)
    table_seconds: dict[str, float] = Field(default_factory=dict)
    #: Seconds to fold the partial of all ``rows`` into the answer (the final query), measured
    #: with the host profile; 0 when not measured. A ROLLUP's final query can cost as much as
    #: the whole unsplit query (TPC-DS Q67: 480 of 505 ms), which a split pays on top.
    fold_seconds: float = 0.0
    #: The runs the line was fitted through, as ``(start, stop, seconds)``: the median seconds
    #: of the arm's partial over rows ``[start, stop)`` of the ``rows`` measured. A device is
    #: measured on leading ranges (``start`` 0), the host on trailing ones (``stop`` = ``rows``),
    #: the side of the cut each takes in a split, so a table whose rows cost unevenly (files
    #: sorted or partitioned by what a filter reads) is priced where the cut falls
    #: (``sides.balance``). Empty where not measured (profiles cached before it was kept).
    ranges: tuple[tuple[int, int, float], ...] = ()

    @model_validator(mode="after")
    def _costs_are_sane(self) -> QueryProfile:
        if self.rows < 0:
            raise ValueError(f"rows must be non-negative, got {self.rows}")
        _finite_non_negative("fixed_seconds", self.fixed_seconds)
        _finite_non_negative("per_row_seconds", self.per_row_seconds)
        _finite_non_negative("fold_seconds", self.fold_seconds)
        if self.selectivity is not None and not (
            math.isfinite(self.selectivity) and 0.0 <= self.selectivity <= 1.0
        ):
            raise ValueError(f"selectivity must be in [0, 1], got {self.selectivity!r}")
        if not self.plan_key:
            raise ValueError("plan_key must not be empty")
        if not self.host:
            raise ValueError("host must not be empty")
        for table, count in self.table_rows.items():
            if count < 0:
                raise ValueError(f"table_rows[{table!r}] must be non-negative, got {count}")
        for table, seconds in self.table_seconds.items():
            _finite_non_negative(f"table_seconds[{table!r}]", seconds)
            if table not in self.table_rows:
                raise ValueError(f"table_seconds names {table!r}, which table_rows lacks")
        if sum(self.table_seconds.values()) > self.fixed_seconds * (1 + 1e-9) + 1e-12:
            raise ValueError("table_seconds are part of fixed_seconds and cannot exceed it")
        for start, stop, seconds in self.ranges:
            if not 0 <= start < stop <= self.rows:
                raise ValueError(
                    f"a measured range must lie in [0, rows={self.rows}], got [{start}, {stop})"
                )
            _finite_non_negative("a measured range's seconds", seconds)
        return self

    def check(self) -> QueryProfile:
        """Re-run the invariants (``model_copy(update=...)`` skips them) and return ``self``."""
        _revalidate(self)
        for node in self.nodes:
            node.check()
        return self

    def _check_figures(self) -> None:
        """The two figures an estimate reads, checked again (a ``model_copy(update=...)`` skips
        validation); cheaper than :meth:`check`, which the decision path would pay per query."""
        try:
            _finite_non_negative("fixed_seconds", self.fixed_seconds)
            _finite_non_negative("per_row_seconds", self.per_row_seconds)
        except ValueError as exc:
            raise ProfileError(f"invalid QueryProfile: {exc}") from exc

    def estimate(self, rows: int) -> float:
        """Host seconds for ``rows``: ``fixed_seconds + per_row_seconds * rows``."""
        self._check_figures()
        _check_rows(rows)
        return self.fixed_seconds + self.per_row_seconds * rows

    def rescaled(self, table_rows: Mapping[str, int]) -> QueryProfile:
        """This plan's profile on the same tables grown or shrunk to ``table_rows``.

        ``table_seconds`` is the part of ``fixed_seconds`` spent on whole reads of tables (join
        build sides, subqueries), measured at ``self.table_rows``; each part is scaled by its
        table's growth. Fixed seconds outside it (planning, setup) and ``per_row_seconds`` stay;
        each measured range moves by what the fixed seconds moved.
        A profile without ``table_seconds`` comes back unchanged. ``rows`` still names the split
        table's rows that were measured, so staleness is judged against the measurement.
        """
        self.check()
        missing = sorted(set(self.table_seconds) - set(table_rows))
        if missing:
            raise ProfileError(f"table_rows lacks {', '.join(missing)}, read by this plan")
        for table in self.table_seconds:
            _check_rows(table_rows[table], f"rows of {table!r}")
        grown = {
            table: seconds * table_rows[table] / max(self.table_rows[table], 1)
            for table, seconds in self.table_seconds.items()
        }
        fixed = self.fixed_seconds - sum(self.table_seconds.values()) + sum(grown.values())
        moved = max(0.0, fixed) - self.fixed_seconds  # every measured range paid the same reads
        return self.model_copy(
            update={
                "fixed_seconds": max(0.0, fixed),
                "ranges": tuple((a, b, max(0.0, s + moved)) for a, b, s in self.ranges),
                "table_seconds": grown,
                "table_rows": {t: table_rows.get(t, n) for t, n in self.table_rows.items()},
            }
        ).check()

    def is_stale_for(self, rows: int, *, engine_version: str, factor: float = 10.0) -> bool:
        """Whether this measurement can no longer price ``rows`` on the engine installed now.

        One predicate answers both ways a measurement goes stale, so no caller can ask one and
        forget the other: the row count has moved more than ``factor`` times away from what was
        measured, or the engine version differs. An unrecorded version is unknown, hence stale.
        """
        self._check_figures()
        _check_rows(self.rows, "the profile's rows")
        if not math.isfinite(factor) or factor < 1.0:
            raise ProfileError(f"factor must be a finite number >= 1, got {factor!r}")
        _check_rows(rows)
        if not self.engine_version or self.engine_version != engine_version:
            return True
        lo, hi = sorted((max(rows, 1), max(self.rows, 1)))
        return hi / lo > factor


class LinkRate(BaseModel):
    """The measured host-to-device transfer rate of one link at one transfer size.

    Keyed by host, device and ``transfer_bytes``: small transfers lose rate to per-transfer setup,
    so
    a rate at one size says little about another. ``samples`` keeps the individual rates so their
    spread stays visible; ``measured_at`` (seconds since the epoch) is what staleness is judged by.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str
    device: str
    bytes_per_second: float
    transfer_bytes: int
    samples: tuple[float, ...] = ()
    measured_at: float = 0.0

    @model_validator(mode="after")
    def _rate_is_usable(self) -> LinkRate:
        if not math.isfinite(self.bytes_per_second) or self.bytes_per_second <= 0:
            raise ValueError(
                f"bytes_per_second must be finite and positive: {self.bytes_per_second}"
            )
        if self.transfer_bytes <= 0:
            raise ValueError(f"transfer_bytes must be positive, got {self.transfer_bytes}")
        for sample in self.samples:
            if not math.isfinite(sample) or sample <= 0:
                raise ValueError(f"every sample must be finite and positive, got {sample!r}")
        _finite_non_negative("measured_at", self.measured_at)
        if not self.host or not self.device:
            raise ValueError("host and device must not be empty")
        return self

    def check(self) -> LinkRate:
        """Re-run the invariants and return ``self``."""
        _revalidate(self)
        return self

    def is_stale(self, *, now: float, max_age_seconds: float) -> bool:
        """Older than ``max_age_seconds`` at ``now``, or never dated."""
        self.check()
        if self.measured_at <= 0.0:
            return True
        return now - self.measured_at > max_age_seconds


def host_identity() -> str:
    """A name for the machine a profile is measured on (``DAU_HOST`` overrides it)."""
    return os.environ.get("DAU_HOST") or platform.node() or "unknown-host"


def _union_length(intervals: Iterable[tuple[float, float]]) -> float:
    total, current_start, current_end = 0.0, None, None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None and current_start is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None and current_start is not None:
        total += current_end - current_start
    return total


def profile_from_spans(
    spans: Iterable[tuple[int, int, str]],
    *,
    rows: int,
    plan_key: str,
    host: str | None = None,
    is_fixed: Callable[[str], bool] = lambda _node: False,
    selectivity: float | None = None,
    engine_version: str = "",
) -> QueryProfile:
    """A profile from an engine's per-node ``(start, end, node)`` timings in microseconds.

    Nodes overlap and leave gaps, so summing their durations is not elapsed time. Elapsed time is
    the span from the first start to the last end; the fixed nodes (``is_fixed``) cost the union of
    their intervals; everything else, gaps included, is work that scales with ``rows``. With
    ``rows == 0`` nothing can be divided by the row count, so all elapsed time is fixed.
    Each :class:`NodeCost` is the union of that node's own intervals.
    """
    items = list(spans)
    if not items:
        raise ProfileError("profile_from_spans needs at least one span")
    _check_rows(rows)
    by_node: dict[str, list[tuple[float, float]]] = {}
    for item in items:
        start, end, node = item
        if not (math.isfinite(start) and math.isfinite(end)) or end < start:
            raise ProfileError(f"span {item!r} does not run forward in time")
        by_node.setdefault(node, []).append((float(start), float(end)))
    elapsed = max(end for _, end, _ in items) - min(start for start, _, _ in items)
    fixed = _union_length(iv for node, ivs in by_node.items() if is_fixed(node) for iv in ivs)
    scaling = max(0.0, elapsed - fixed)
    if rows == 0:
        fixed, scaling = float(elapsed), 0.0
    nodes = tuple(
        NodeCost(node=node, seconds=_union_length(ivs) / 1e6, scales_with_rows=not is_fixed(node))
        for node, ivs in by_node.items()
    )
    return QueryProfile(
        plan_key=plan_key,
        host=host if host is not None else host_identity(),
        rows=rows,
        fixed_seconds=fixed / 1e6,
        per_row_seconds=(scaling / 1e6 / rows) if rows else 0.0,
        nodes=nodes,
        selectivity=selectivity,
        engine_version=engine_version,
    )


class ProfileCache:
    """Profiles keyed by plan and host, and link rates by device, host and size, as JSON files.

    A plain directory on purpose: entries are small, readable, and can be deleted by hand. Every
    key component is percent-encoded (only ASCII letters and digits pass through), so any key maps
    to one flat, reversible file name directly under ``root``. Writes go to a temporary file that is
    renamed into place, so readers never see a torn file. A corrupt entry is a miss with a warning.
    The engine version is not part of the key: a version change is staleness, re-measured in place.
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        #: Entries read, by path, with the text they were read from: a query's decision reads
        #: its two profiles each time, and parsing and validating them cost ~0.5 ms; reading
        #: the file again to compare costs ~20 us, and a changed file is always seen.
        self._read_at: dict[Path, tuple[str, BaseModel]] = {}

    @staticmethod
    def _component(text: str) -> str:
        return "".join(
            ch if ch.isascii() and ch.isalnum() else "".join(f"%{b:02X}" for b in ch.encode())
            for ch in text
        )

    def _under_root(self, name: str) -> Path:
        path = self.root / name
        # One plain name (no separator, not "." or ".."): the entry lies directly under root.
        if path.name != name or name in (".", "..") or "/" in name or "\\" in name:
            raise ProfileError(f"cache entry {name!r} would fall outside {self.root}")
        return path

    def _path(self, plan_key: str, host: str) -> Path:
        return self._under_root(
            f"profile--{self._component(plan_key)}--{self._component(host)}.json"
        )

    def _link_path(self, device: str, host: str, transfer_bytes: int) -> Path:
        name = (
            f"link--{self._component(device)}--{self._component(host)}--{int(transfer_bytes)}.json"
        )
        return self._under_root(name)

    def _write(self, path: Path, text: str) -> Path:
        return write_atomic(path, text)

    def _read(self, path: Path, model: type[_M]) -> _M | None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._read_at.pop(path, None)
            return None
        seen = self._read_at.get(path)
        if seen is not None and seen[0] == text and isinstance(seen[1], model):
            return seen[1]  # frozen, and read from the same text
        try:
            entry = model.model_validate(json.loads(text))
        except (ValueError, TypeError) as exc:
            warnings.warn(
                f"ignoring unreadable cache entry {path}: {exc}", RuntimeWarning, stacklevel=3
            )
            return None
        self._read_at[path] = (text, entry)
        return entry

    def get(self, plan_key: str, host: str | None = None) -> QueryProfile | None:
        return self._read(self._path(plan_key, host or host_identity()), QueryProfile)

    def put(self, profile: QueryProfile) -> Path:
        profile.check()
        return self._write(self._path(profile.plan_key, profile.host), profile.model_dump_json())

    def entries(self) -> Iterable[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.glob("*.json") if not p.name.startswith(".tmp-"))

    def holds(self, plan_key: str, host: str) -> bool:
        """Whether a profile of ``plan_key`` measured on ``host`` is here (read or not)."""
        return self._path(plan_key, host).is_file()

    def get_link_rate(
        self, device: str, transfer_bytes: int, host: str | None = None
    ) -> LinkRate | None:
        path = self._link_path(device, host or host_identity(), transfer_bytes)
        return self._read(path, LinkRate)

    def put_link_rate(self, rate: LinkRate) -> Path:
        rate.check()
        path = self._link_path(rate.device, rate.host, rate.transfer_bytes)
        return self._write(path, rate.model_dump_json())


__all__ = [
    "LinkRate",
    "NodeCost",
    "ProfileCache",
    "QueryProfile",
    "host_identity",
    "profile_from_spans",
]
