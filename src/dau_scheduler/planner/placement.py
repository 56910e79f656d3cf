"""Placement: which contiguous rows of a query's split table each device runs, sized by the
devices' throughputs and held within their memory.

A query's bytes (DESIGN.md section 6): ``encoded_row_bytes`` is the Arrow width of the split
table's columns the query reads, per row; ``transient_row_bytes`` the per-row intermediate bytes
while it runs (estimated as one more copy of the read columns); ``model_bytes`` what every device
must hold whole whatever its share (the other tables' read columns, and the split table's when a
subquery reads it whole); ``statistic_bytes`` one partial result. A device that cannot hold the
model bytes gets no rows, and the placement says why.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from dau_scheduler.checks import count, positive
from dau_scheduler.errors import SizingError
from dau_scheduler.planner.resources import DeviceSpec, Resources
from dau_scheduler.rewrite.columns import query_columns

if TYPE_CHECKING:
    from dau_scheduler.rewrite.planner import CompiledSplit
    from dau_scheduler.session import Session

#: Bytes per numeric value of a partial (DOUBLE, BIGINT), reported as ``dtype_bytes``.
DTYPE_BYTES = 8
#: The group-key hash space ``model_sharding_plan`` divides.
HASH_BUCKETS = 4096


@dataclass(frozen=True)
class PlacementShard:
    """Rows ``[start, stop)`` of the split table on one device, run as ``sub_chunks`` pieces."""

    device: DeviceSpec
    start: int
    stop: int
    sub_chunks: int = 1
    encoded_bytes: int = 0
    transient_bytes: int = 0

    @property
    def size(self) -> int:
        return self.stop - self.start

    @property
    def total_bytes(self) -> int:
        return self.encoded_bytes + self.transient_bytes

    def chunks(self) -> list[tuple[int, int]]:
        """The shard's row ranges, ``sub_chunks`` near-equal contiguous pieces (none empty)."""
        pieces = max(1, min(self.sub_chunks, self.size))
        bounds = [self.start + (self.size * i) // pieces for i in range(pieces + 1)]
        return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


@dataclass(frozen=True)
class Placement:
    """The shards of one query's split table over a set of devices, and the bytes behind them.

    ``excluded`` names each device that got no rows and why; ``split_table`` the table cut.
    """

    shards: tuple[PlacementShard, ...]
    total_rows: int
    encoded_row_bytes: float
    transient_row_bytes: float
    model_bytes: int
    statistic_bytes: int
    dtype_bytes: int
    split_table: str | None = None
    excluded: tuple[tuple[str, str], ...] = field(default=())

    def for_device(self, name: str) -> tuple[PlacementShard, ...]:
        return tuple(s for s in self.shards if s.device.name == name)

    def chunks(self) -> list[tuple[DeviceSpec, int, int]]:
        """Every row range the placement runs, in row order: ``(device, start, stop)``."""
        return [(s.device, a, b) for s in self.shards for a, b in s.chunks()]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["shards"] = [
            {
                **asdict(s),
                "device": s.device.to_dict(),
                "size": s.size,
                "total_bytes": s.total_bytes,
            }
            for s in self.shards
        ]
        out["excluded"] = [{"device": d, "why": why} for d, why in self.excluded]
        return out


@dataclass(frozen=True)
class ModelShard:
    """A range ``[component_start, component_stop)`` of the group-key hash space on one device."""

    device: DeviceSpec
    component_start: int
    component_stop: int
    parameter_bytes: int = 0
    statistic_bytes: int = 0

    @property
    def num_components(self) -> int:
        return self.component_stop - self.component_start

    @property
    def total_bytes(self) -> int:
        return self.parameter_bytes + self.statistic_bytes


# -- the query's bytes -----------------------------------------------------------------------


@contextmanager
def session_for(data: Any) -> Iterator[Session]:
    """``data`` as a Session: itself when it is one, else a host-only Session closed after use."""
    from dau_scheduler.session import Session

    if isinstance(data, Session):
        yield data
        return
    if data is None:
        raise SizingError("no data to plan over: pass a Session or anything Session accepts")
    with Session(data, device=None) as session:
        yield session


def _reads(sql: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in sqlglot.parse_one(sql, read="duckdb").find_all(exp.Table):
        counts[table.name.lower()] = counts.get(table.name.lower(), 0) + 1
    return counts


def _compiled(session: Session, sql: str) -> CompiledSplit:
    if not isinstance(sql, str) or not sql.strip():
        raise SizingError("plan needs the query (sql=...) whose rows it places")
    compiled = session.compile(sql)
    if compiled.plan.split_table is None or compiled.partial is None:
        raise SizingError(f"this query cannot be placed: {compiled.plan.refusal}")
    return compiled


def _bytes(session: Session, table: str, columns: set[str]) -> int:
    widths = session.column_nbytes[table]
    return int(sum(widths.get(c, 0) for c in columns))


def estimate_model_nbytes(data: Any, sql: str) -> int:
    """Bytes every device holds whole whatever its share: the other tables' read columns, plus
    the split table's when the query also reads it whole (a subquery over it)."""
    with session_for(data) as session:
        return _model_bytes(session, _compiled(session, sql))


def _model_bytes(session: Session, compiled: CompiledSplit) -> int:
    split = compiled.plan.split_table or ""
    used = query_columns(compiled.read_sql, session.schema)
    total = sum(_bytes(session, t, cols) for t, cols in used.items() if t != split)
    if _reads(compiled.read_sql).get(split, 0) > 1:
        total += _bytes(session, split, used.get(split, set()))
    return total


def estimate_estimator_stat_nbytes(data: Any, sql: str, sample_size: int = 256) -> int:
    """Bytes of one partial result over the whole split table, from the partial over a sample:
    as measured when it is a handful of groups, grown with the rows when every row is its own."""
    with session_for(data) as session:
        return _statistic_bytes(session, _compiled(session, sql), sample_size)


def _statistic_bytes(session: Session, compiled: CompiledSplit, sample_size: int) -> int:
    n: int = session.row_counts[compiled.plan.split_table or ""]
    sample = max(1, min(int(sample_size), n))
    if not n:
        return 0
    from dau_scheduler.strategies import prefix_runner

    partial = prefix_runner(session, compiled, sample)(session.host)
    nbytes = int(partial.nbytes)
    if partial.num_rows >= sample and sample < n:
        return math.ceil(nbytes * n / sample)
    return nbytes


# -- plan ------------------------------------------------------------------------------------


def _proportional(total: int, weights: list[float]) -> list[int]:
    """Integer sizes summing to ``total`` in proportion to ``weights`` (largest remainder)."""
    whole = sum(weights)
    exact = [total * w / whole for w in weights]
    sizes = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (sizes[i] - exact[i], i))
    for i in order[: total - sum(sizes)]:
        sizes[i] += 1
    return sizes


def _sub_chunks(
    device: DeviceSpec, rows: int, row_bytes: float, model_bytes: int, safety: float, least: int
) -> int:
    if device.memory_bytes is None or rows == 0 or row_bytes <= 0:
        return max(1, least)
    room = device.memory_bytes / safety - model_bytes
    if rows * row_bytes <= room:
        return max(1, least)
    per_chunk = max(1, math.floor(room / row_bytes))
    return max(least, math.ceil(rows / per_chunk))


def placement_for(
    total_rows: int,
    resources: Resources,
    *,
    encoded_row_bytes: float,
    transient_row_bytes: float,
    model_bytes: int,
    statistic_bytes: int,
    split_table: str | None = None,
    num_chunks: int | None = None,
    sub_chunks: int = 1,
    safety_factor: float = 1.25,
) -> Placement:
    """The placement arithmetic alone, over given sizes (``plan`` measures them from a query)."""
    count("total_rows", total_rows)
    if positive("safety_factor", safety_factor) < 1:
        raise SizingError(f"safety_factor must be a finite number >= 1, got {safety_factor!r}")
    count("sub_chunks", sub_chunks, 1)
    if num_chunks is not None:
        count("num_chunks", num_chunks, 1)
    row_bytes = encoded_row_bytes + transient_row_bytes
    usable, excluded = [], []
    for device in resources.devices:
        need = model_bytes * safety_factor
        if device.memory_bytes is not None and need > device.memory_bytes:
            excluded.append(
                (
                    device.name,
                    f"holds {device.memory_bytes} bytes; the tables every device needs whole take "
                    f"{model_bytes} x safety {safety_factor:g} = {need:.0f}",
                )
            )
        else:
            usable.append(device)
    if not usable:
        raise SizingError(
            "no device can hold what every device needs whole: "
            + "; ".join(f"{name}: {why}" for name, why in excluded)
        )
    sizes = _proportional(total_rows, [d.throughput for d in usable])
    shards, start = [], 0
    for device, size in zip(usable, sizes, strict=True):
        least = sub_chunks
        if num_chunks is not None and total_rows:
            least = max(least, math.ceil(num_chunks * size / total_rows))
        shards.append(
            PlacementShard(
                device,
                start,
                start + size,
                _sub_chunks(device, size, row_bytes, model_bytes, safety_factor, least),
                round(size * encoded_row_bytes),
                round(size * transient_row_bytes),
            )
        )
        start += size
    return Placement(
        tuple(shards),
        total_rows,
        float(encoded_row_bytes),
        float(transient_row_bytes),
        int(model_bytes),
        int(statistic_bytes),
        DTYPE_BYTES,
        split_table,
        tuple(excluded),
    )


def plan(
    data: Any = None,
    sql: str | None = None,
    resources: Resources | None = None,
    *,
    num_chunks: int | None = None,
    sub_chunks: int = 1,
    sample_size: int = 256,
    safety_factor: float = 1.25,
) -> Placement:
    """Place ``sql``'s split table over ``resources`` (default: ``Resources.discover()``).

    Shards are contiguous, cover ``[0, rows)`` exactly, and are sized in proportion to the
    devices' throughputs; a shard whose bytes (its rows' encoded and transient bytes plus the
    model bytes, times ``safety_factor``) exceed its device's memory is cut into sub-chunks that
    fit. ``data`` is a Session or anything a Session accepts.

    Raises:
        SizingError: no query, a query that cannot be split, bad sizes, or no device that can
            hold the model bytes.
    """
    resources = resources if resources is not None else Resources.discover()
    if not isinstance(resources, Resources):
        raise SizingError(f"resources must be a Resources, got {type(resources).__name__}")
    with session_for(data) as session:
        compiled = _compiled(session, sql or "")
        split = compiled.plan.split_table or ""
        n = session.row_counts[split]
        encoded = _bytes(
            session, split, query_columns(compiled.read_sql, session.schema).get(split, set())
        )
        encoded_row = encoded / n if n else 0.0
        return placement_for(
            n,
            resources,
            encoded_row_bytes=encoded_row,
            transient_row_bytes=encoded_row,
            model_bytes=_model_bytes(session, compiled),
            statistic_bytes=_statistic_bytes(session, compiled, sample_size),
            split_table=split,
            num_chunks=num_chunks,
            sub_chunks=sub_chunks,
            safety_factor=safety_factor,
        )


def model_sharding_plan(
    data: Any, sql: str, resources: Resources, min_components_per_shard: int = 1
) -> tuple[ModelShard, ...]:
    """Ranges of the group-key hash space (``HASH_BUCKETS`` buckets) per device, in proportion
    to throughput, for aggregation state too large for one device: each device would keep the
    groups whose key hashes fall in its range. Advisory: the SQL path does not execute it yet."""
    count("min_components_per_shard", min_components_per_shard, 1)
    with session_for(data) as session:
        compiled = _compiled(session, sql)
        state = _statistic_bytes(session, compiled, 256)
    devices = sorted(resources.devices, key=lambda d: -d.throughput)
    devices = devices[: max(1, HASH_BUCKETS // min_components_per_shard)]
    sizes = _proportional(HASH_BUCKETS, [d.throughput for d in devices])
    # Every shard gets at least the minimum: take from the largest shards.
    for i, size in enumerate(sizes):
        while size < min_components_per_shard:
            donor = max(range(len(sizes)), key=lambda j: sizes[j])
            sizes[donor] -= 1
            size += 1
        sizes[i] = size
    shards, start = [], 0
    for device, size in zip(devices, sizes, strict=True):
        if size:
            share = round(state * size / HASH_BUCKETS)
            shards.append(ModelShard(device, start, start + size, 0, share))
        start += size
    return tuple(shards)


__all__ = [
    "DTYPE_BYTES",
    "HASH_BUCKETS",
    "ModelShard",
    "Placement",
    "PlacementShard",
    "estimate_estimator_stat_nbytes",
    "estimate_model_nbytes",
    "model_sharding_plan",
    "placement_for",
    "plan",
    "session_for",
]
