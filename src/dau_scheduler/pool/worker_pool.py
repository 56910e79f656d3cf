"""WorkerPool: rows scattered into contiguous shards, a function mapped over them on the pool's
threads, and element-wise reductions of what comes back."""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from dau_scheduler.checks import count
from dau_scheduler.errors import SizingError
from dau_scheduler.machine import cpu_count

T = TypeVar("T")


class WorkerPool:
    """A pool of ``n_workers`` threads (0: one per core this process may use).

    ``scatter(n_rows)`` cuts rows into ``min(n_workers, n_rows)`` contiguous near-equal shards
    (one empty shard for no rows) and returns a handle; ``shards(handle)`` lists them as
    ``{"id", "start", "end"}``; ``map(handle, fn)`` runs ``fn(shard)`` for every shard on the
    pool's threads and returns the results in shard order; ``release(handle)`` forgets it.
    DuckDB and Polars release the GIL while they run, so shards of a query run in parallel.
    """

    def __init__(self, n_workers: int = 0) -> None:
        count("n_workers (0 = one per core)", n_workers)
        self._n = n_workers or cpu_count()
        self._handles: dict[int, list[dict[str, int]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    @property
    def n_workers(self) -> int:
        return self._n

    def scatter(self, n_rows: int) -> int:
        count("n_rows", n_rows)
        pieces = max(1, min(self._n, n_rows))
        bounds = [(n_rows * i) // pieces for i in range(pieces + 1)]
        shards = [{"id": i, "start": bounds[i], "end": bounds[i + 1]} for i in range(pieces)]
        with self._lock:
            handle = next(self._ids)
            self._handles[handle] = shards
        return handle

    def _get(self, handle: int) -> list[dict[str, int]]:
        with self._lock:
            shards = self._handles.get(handle)
        if shards is None:
            raise SizingError(f"unknown or released scatter handle {handle!r}")
        return shards

    def shards(self, handle: int) -> list[dict[str, int]]:
        return [dict(s) for s in self._get(handle)]

    def release(self, handle: int) -> None:
        with self._lock:
            if self._handles.pop(handle, None) is None:
                raise SizingError(f"unknown or released scatter handle {handle!r}")

    def map(self, handle: int, fn: Callable[[dict[str, int]], T]) -> list[T]:
        """``fn(shard)`` for every shard, in parallel on the pool's threads, in shard order.

        The first shard to raise re-raises here, after every shard has finished.
        """
        shards = self.shards(handle)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=self._n, thread_name_prefix="dau-pool")
        futures = [self._executor.submit(fn, shard) for shard in shards]
        errors = [f.exception() for f in futures]
        for error in errors:
            if error is not None:
                raise error
        return [f.result() for f in futures]

    @staticmethod
    def allreduce_sum(vecs: Sequence[Sequence[float]]) -> list[float]:
        """Element-wise sum of equal-length vectors."""
        rows = _check_vectors(vecs)
        return [math.fsum(column) for column in zip(*rows, strict=True)]

    @staticmethod
    def allreduce_mean(vecs: Sequence[Sequence[float]]) -> list[float]:
        """Element-wise mean of equal-length vectors."""
        rows = _check_vectors(vecs)
        return [math.fsum(column) / len(rows) for column in zip(*rows, strict=True)]

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_vectors(vecs: Any) -> list[list[float]]:
    rows = [list(v) for v in vecs] if vecs is not None else []
    if not rows:
        raise SizingError("allreduce needs at least one vector")
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise SizingError(
                f"allreduce needs vectors of one length: vector 0 has {width}, "
                f"vector {i} has {len(row)}"
            )
        for value in row:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SizingError(f"allreduce takes numbers; vector {i} holds {value!r}")
    return rows


__all__ = ["WorkerPool"]
