"""Resident-data handles: tables placed once, then ``fold(sql)`` many times, exactly.

A handle answers a query over its resident data the way a split does: the query's partial runs
on every chunk of its placement (each on its device's engine), and the final query folds the
partials into DuckDB's unsplit answer. Backends (``local`` here; ``dask`` and ``spark`` register
themselves when built) are found through a registry, so a new one plugs in without edits here.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa

from dau_scheduler.arms.base import cast_partial
from dau_scheduler.checks import count
from dau_scheduler.errors import SizingError
from dau_scheduler.planner.placement import Placement, plan
from dau_scheduler.planner.resources import DeviceSpec, Resources


@runtime_checkable
class EncodedFold(Protocol):
    """What a resident-data handle offers: the exact answer to a query over its data."""

    @property
    def num_chunks(self) -> int: ...

    def fold(self, sql: str) -> pa.Table: ...

    def close(self) -> None: ...


class EncodedDataHandle:
    """Base of the handles this package builds; documents the :class:`EncodedFold` contract."""

    @property
    def num_chunks(self) -> int:
        raise NotImplementedError

    def fold(self, sql: str) -> pa.Table:
        """The unsplit answer to ``sql`` over the handle's data, with DuckDB's names and types."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the handle owns (sessions, workers); safe to call twice."""

    def __enter__(self) -> EncodedDataHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalEncodedData(EncodedDataHandle):
    """Tables resident in this process; each query's placement run chunk by chunk here.

    ``placement`` is used for the queries whose split table it was planned for; any other query
    is placed with ``plan`` over ``resources`` (default: this machine). Each chunk runs on its
    device's engine (DuckDB, Polars, cuDF where present); a device whose engine cannot run here,
    or that refuses the query, has its chunks run by the host DuckDB (``last_engines`` says which
    ran). ``parallel_chunks`` runs chunks on ``chunk_workers`` threads.
    """

    def __init__(
        self,
        data: Any,
        placement: Placement | None = None,
        resources: Resources | None = None,
        num_chunks: int | None = None,
        sub_chunks: int = 1,
        parallel_chunks: bool = False,
        chunk_workers: int | None = None,
    ) -> None:
        from dau_scheduler.session import Session

        if placement is not None and not isinstance(placement, Placement):
            raise SizingError(f"placement must be a Placement, got {type(placement).__name__}")
        if chunk_workers is not None:
            count("chunk_workers", chunk_workers, 1)
        if isinstance(data, Session) and data.lazy:
            raise SizingError(
                "a resident-data handle needs resident tables: pass a Session opened without "
                "mem_budget_mb or lazy, or the tables themselves"
            )
        self._owned = not isinstance(data, Session)
        self.session: Session = data if isinstance(data, Session) else Session(data, device=None)
        self.placement = placement
        self.resources = resources
        self.num_chunks_wanted = num_chunks
        self.sub_chunks = sub_chunks
        self.parallel_chunks = parallel_chunks
        self.chunk_workers = chunk_workers
        self._arms: dict[str, Any] = {}
        self.last_placement: Placement | None = placement
        self.last_engines: tuple[str, ...] = ()

    @property
    def num_chunks(self) -> int:
        return len(self.last_placement.chunks()) if self.last_placement is not None else 0

    def placement_for(self, sql: str) -> Placement:
        compiled = self.session.compile(sql)
        split = compiled.plan.split_table
        given = self.placement
        if (
            given is not None
            and given.split_table == split
            and given.total_rows == self.session.row_counts.get(split or "", -1)
        ):
            return given
        return plan(
            self.session,
            sql,
            self.resources,
            num_chunks=self.num_chunks_wanted,
            sub_chunks=self.sub_chunks,
        )

    def _arm(self, device: DeviceSpec, compiled: Any) -> Any:
        from dau_scheduler.planner.calibration import arm_for

        if device.engine not in self._arms:
            self._arms[device.engine] = arm_for(self.session, device)
        arm = self._arms[device.engine]
        if arm is None or (arm is not self.session.host and arm.refusal(compiled) is not None):
            return self.session.host
        return arm

    def fold(self, sql: str) -> pa.Table:
        from dau_scheduler import live

        compiled = self.session.compile(sql)
        # Rows a user's connection appended or deleted since are counted (decision 023).
        gone = live.refresh(self.session, compiled.plan.split_table)
        if gone is not None or compiled.plan.refusal is not None or compiled.partial_schema is None:
            self.last_engines = ("duckdb",)
            return self.session.host.cursor().sql(compiled.sql).to_arrow_table()
        placement = self.placement_for(sql)
        self.last_placement = placement
        work = [(self._arm(d, compiled), a, b) for d, a, b in placement.chunks()]
        self.last_engines = tuple(arm.name for arm, _, _ in work)
        schema = compiled.partial_schema

        def run(item: tuple[Any, int, int]) -> pa.Table:
            arm, start, stop = item
            return cast_partial(arm.run_partial(compiled, start, stop), schema, arm.name)

        if self.parallel_chunks and len(work) > 1:
            with ThreadPoolExecutor(max_workers=self.chunk_workers or len(work)) as pool:
                partials = list(pool.map(run, work))
        else:
            partials = [run(item) for item in work]
        return self.session.merge_rule(compiled).combine(partials)

    def close(self) -> None:
        if self._owned:
            self.session.close()


class ClusterEncodedData(EncodedDataHandle):
    """A handle over data resident on a cluster (the ``dask`` and ``spark`` backends): a
    ``Session(data, device=None, cluster=...)`` underneath, whose host's share is the cluster;
    ``fold(sql)`` the exact answer, placed over every worker."""

    def __init__(self, data: Any, cluster: Any) -> None:
        from dau_scheduler.session import Session

        self.session = Session(data, device=None, cluster=cluster)
        #: ``(worker, rows, seconds)`` of the last fold.
        self.last_workers: tuple[tuple[str, int, float], ...] = ()

    @property
    def num_chunks(self) -> int:
        return len(self.last_workers)

    def fold(self, sql: str) -> pa.Table:
        result = self.session.sql(sql)
        self.last_workers = result.execution.workers if result.execution is not None else ()
        return result.table

    def close(self) -> None:
        self.session.close()


# -- the backend registry --------------------------------------------------------------------

Factory = Callable[..., EncodedDataHandle]
_BACKENDS: dict[str, Factory] = {}
_ALIASES: dict[str, str] = {}


def register_encoded_data_backend(
    name: str, factory: Factory, aliases: tuple[str, ...] = ()
) -> None:
    """Register ``factory(data, **options) -> handle`` under ``name`` and ``aliases``."""
    if not isinstance(name, str) or not name:
        raise SizingError(f"a backend needs a non-empty name, got {name!r}")
    if not callable(factory):
        raise SizingError(f"backend {name!r}: factory must be callable")
    _BACKENDS[name] = factory
    for alias in aliases:
        _ALIASES[alias] = name


def available_encoded_data_backends() -> list[str]:
    return sorted(_BACKENDS)


def is_encoded_data_handle(obj: Any) -> bool:
    return isinstance(obj, EncodedFold)


def encoded_data(data: Any, backend: str = "local", **options: Any) -> EncodedFold:
    """A resident-data handle over ``data`` from the named backend; a handle is returned as is."""
    if is_encoded_data_handle(data):
        return data  # type: ignore[no-any-return]
    name = _ALIASES.get(backend, backend)
    factory = _BACKENDS.get(name)
    if factory is None:
        raise SizingError(
            f"unknown encoded-data backend {backend!r}; available: "
            f"{', '.join(available_encoded_data_backends())}"
        )
    return factory(data, **options)


def _local(
    data: Any,
    placement: Placement | None = None,
    resources: Resources | None = None,
    num_chunks: int | None = None,
    sub_chunks: int = 1,
    parallel_chunks: bool = False,
    chunk_workers: int | None = None,
    **_: Any,
) -> LocalEncodedData:
    return LocalEncodedData(
        data, placement, resources, num_chunks, sub_chunks, parallel_chunks, chunk_workers
    )


register_encoded_data_backend("local", _local, aliases=("threads", "inprocess"))

__all__ = [
    "ClusterEncodedData",
    "EncodedDataHandle",
    "EncodedFold",
    "LocalEncodedData",
    "available_encoded_data_backends",
    "encoded_data",
    "is_encoded_data_handle",
    "register_encoded_data_backend",
]
