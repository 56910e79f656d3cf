"""The ``dask`` backend: a query's partial run over a dask.distributed cluster's workers.

dask places, runs and retries the tasks; this module brings the plan. The tables live on the
cluster (:class:`DaskTables`):

- **Parquet** (a data folder, or paths): nothing is sent but file names. Each worker reads what a
  task needs itself, row group by row group: its shard of the split table (rows ``[start,
  stop)``) and the other tables the query reads whole. Both stay resident in the worker's own
  DuckDB between queries (a shard is read again only when the placement changes it). A worker
  lost mid-query costs nothing but time: dask runs its task on another worker, which reads the
  same rows from the files.
- **In memory** (Arrow tables): scattered once, each table cut into one piece per worker, each
  piece to one worker; a task gets the pieces it needs moved to it by dask, worker to worker.
  When the only copy of a piece dies with its worker, the query fails with
  :class:`~dau_scheduler.errors.ClusterError` naming the lost piece: never an answer without
  its rows.

A query's rows ``[start, stop)`` of the split table are placed over the worker threads by the
planner (``placement_for`` with ``Resources.from_dask``); each shard's task runs the partial in
the worker's DuckDB (with as many threads as the worker has) and returns the partial, cast to
the partial schema, as Arrow IPC. From ``TREE_FROM`` partials on they fold in a tree on the
workers, ``FAN_IN`` at a time, by the same re-aggregation a streamed fold uses
(``refold_sql``); the client folds what is left with the final query. One gather per query. dask
is imported here only, when a cluster is asked for.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from dau_scheduler.arms.base import cast_partial
from dau_scheduler.arms.duckdb import quote
from dau_scheduler.errors import ArmError, ClusterError, SizingError
from dau_scheduler.planner.encoded import ClusterEncodedData, register_encoded_data_backend
from dau_scheduler.planner.placement import placement_for
from dau_scheduler.planner.resources import Resources
from dau_scheduler.planner.wire import (
    ClusterPartial,
    RowsUnreadable,
    WorkerRun,
    from_ipc,
    hold_rows,
    hold_whole,
    read_or_say,
    to_ipc,
    whole_specs,
)
from dau_scheduler.tables import ArrowSource, ParquetSource, Source

if TYPE_CHECKING:
    from dau_scheduler.rewrite.planner import CompiledSplit

#: What the extra installs.
EXTRA = "pip install 'dau-scheduler[dask]' (dask[distributed])"
#: Seconds to wait for a scheduler address to answer.
CONNECT_TIMEOUT = 10
#: Shards of split tables a worker keeps resident per handle (older ones are dropped, and so is
#: any shard a newly read one overlaps).
RESIDENT_SHARDS = 512
#: From this many partials on, they fold in a tree on the workers; fewer go to the client.
TREE_FROM = 4
#: Partials one fold task takes (the tree's fan-in). Pairs (2) made 127 tasks of 128 partials,
#: a third of Q1's wall at SF 1 on two workers; 8 makes 19 (docs/benchmarks.md).
FAN_IN = 8
#: Test hook: seconds each shard task sleeps before it runs (so a test can kill a worker while a
#: query runs). Read on the worker.
DELAY_ENV = "DAU_DASK_TASK_DELAY"
_LOCAL = re.compile(r"^local(?::(\d+))?$")


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ClusterError(f"cluster= needs dask.distributed: {EXTRA}") from exc
    return distributed


@dataclass
class Connection:
    """A client, and the LocalCluster it started, if any; ``owned``: this project opened the
    client (from an address or for a local cluster) and closes it, with the cluster."""

    client: Any
    cluster: Any = None
    owned: bool = False

    def open(self, sources: dict[str, Source]) -> DaskTables:
        return DaskTables(self, sources)

    def close(self) -> None:
        if self.owned:
            self.client.close()
            self.owned = False
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None


def local_cluster(workers: int, **options: Any) -> Any:
    """A dask LocalCluster on this machine: ``workers`` processes of one thread each, listening
    on 127.0.0.1 only, dashboards on free ports or none; ``options`` go to LocalCluster."""
    return _distributed().LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",
        worker_dashboard_address=None,
        **options,
    )


def connect(cluster: Any) -> Connection:
    """A dask ``Client`` as given; ``"local"`` or ``"local:N"``: a LocalCluster of N worker
    processes (default 2) with one thread each, on 127.0.0.1 only, owned by the connection;
    ``"tcp://HOST:PORT"``: a client of that scheduler. Anything else, or a scheduler that does
    not answer, is a :class:`ClusterError` before anything runs."""
    if callable(getattr(cluster, "submit", None)) and callable(
        getattr(cluster, "scheduler_info", None)
    ):
        return Connection(cluster)
    if not isinstance(cluster, str):
        raise ClusterError(
            "cluster must be a dask.distributed Client, a scheduler address "
            f"('tcp://host:port'), or 'local' / 'local:N'; got {type(cluster).__name__}"
        )
    local = _LOCAL.match(cluster.strip())
    if local is None and not cluster.startswith(("tcp://", "tls://", "inproc://")):
        raise ClusterError(
            f"unknown cluster {cluster!r}: expected 'local', 'local:N' or a scheduler address "
            "such as 'tcp://10.0.0.5:8786'"
        )
    distributed = _distributed()
    if local is not None:
        workers = int(local.group(1) or 2)
        if workers < 1:
            raise ClusterError(f"cluster {cluster!r}: a local cluster needs at least one worker")
        import dask

        # Short tasks: no statistical profiler sampling the workers' stacks, no stealing.
        quiet = {
            "distributed.worker.profile.enabled": False,
            "distributed.scheduler.work-stealing": False,
        }
        try:
            with dask.config.set(quiet):
                started = local_cluster(workers)
        except RuntimeError as exc:
            raise ClusterError(
                f"the local cluster {cluster!r} did not start ({exc}); its worker processes "
                "import the script that starts it, so a script must start one under "
                "`if __name__ == '__main__':`"
            ) from exc
        return Connection(distributed.Client(started), started, owned=True)
    try:
        client = distributed.Client(cluster, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot reach the dask scheduler at {cluster}: {exc}") from exc
    return Connection(client, None, owned=True)


# -- on the workers --------------------------------------------------------------------------


@dataclass
class _WorkerData:
    """What one handle keeps resident in one worker process."""

    con: Any
    whole: set[str] = field(default_factory=set)
    shards: OrderedDict[tuple[str, int, int], str] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_RESIDENT: dict[str, _WorkerData] = {}
_RESIDENT_LOCK = threading.Lock()
_NAMES = itertools.count()


def _resident(handle: str) -> _WorkerData:
    import duckdb

    with _RESIDENT_LOCK:
        found = _RESIDENT.get(handle)
        if found is None:
            found = _RESIDENT[handle] = _WorkerData(duckdb.connect())
            found.con.execute("SET preserve_insertion_order = true")
            # A worker's loads and queries print no progress bars into the cluster's logs.
            found.con.execute("SET enable_progress_bar = false")
            # As many DuckDB threads as the worker has task threads: the cluster, not DuckDB,
            # decides how the machine's cores are shared out.
            found.con.execute(f"SET threads = {_worker_threads()}")
        return found


def _pieces(spec: tuple[Any, ...], start: int, stop: int) -> pa.Table:
    """Rows ``[start, stop)`` of an in-memory table given as ``("arrow", offsets, pieces)``."""
    _, offsets, pieces = spec
    out = []
    for offset, piece in zip(offsets, pieces, strict=True):
        lo, hi = max(start, offset), min(stop, offset + piece.num_rows)
        if lo < hi:
            out.append(piece.slice(lo - offset, hi - lo))
    return pa.concat_tables(out) if out else pieces[0].schema.empty_table()


def _is_parquet(spec: tuple[Any, ...]) -> bool:
    return bool(spec[0] == "parquet")


def run_shard(
    handle: str,
    whole: dict[str, tuple[Any, ...]],
    split: tuple[Any, ...],
    split_table: str,
    start: int,
    stop: int,
    partial_sql: str,
    placeholder: str,
    schema: pa.Schema,
) -> tuple[bytes, float, str, float]:
    """On a worker: the partial over rows ``[start, stop)`` of ``split_table`` (``split``), the
    tables in ``whole`` read whole; returns the partial cast to ``schema`` (Arrow IPC), the seconds
    and the worker's address. Parquet is read here and kept resident for the next query."""
    delay = float(os.environ.get(DELAY_ENV) or 0)
    if delay > 0:
        time.sleep(delay)
    began = time.perf_counter()
    data = _resident(handle)
    with data.lock:
        read_or_say(hold_whole, data.con, whole, data.whole)
        shard = read_or_say(_shard, data, split, split_table, start, stop)
    cursor = data.con.cursor()
    try:
        for name, spec in whole.items():
            if not _is_parquet(spec):
                cursor.register(name, _pieces(spec, 0, spec[1][-1] + spec[2][-1].num_rows))
        if isinstance(shard, pa.Table):
            cursor.register("__dau_shard", shard)
            shard = "__dau_shard"
        sql = re.sub(rf"\b{placeholder}\b", quote(shard), partial_sql)
        result = cast_partial(cursor.sql(sql).to_arrow_table(), schema, "worker")
    finally:
        cursor.close()
    return to_ipc(result), time.perf_counter() - began, _worker_address(), time.time()


def _shard(
    data: _WorkerData, spec: tuple[Any, ...], table: str, start: int, stop: int
) -> str | pa.Table:
    """The split table's rows ``[start, stop)``: a resident DuckDB table read from Parquet
    (kept for the next query), or Arrow sliced from in-memory pieces."""
    if not _is_parquet(spec):
        return _pieces(spec, start, stop)
    key = (table, start, stop)
    name = data.shards.get(key)
    if name is not None:
        data.shards.move_to_end(key)
        return name
    name = f"__dau_shard_{next(_NAMES)}"
    hold_rows(data.con, name, ParquetSource(tuple(Path(f) for f in spec[1])), start, stop)
    # A new placement replaces the shards of the last one it overlaps: at most about one copy
    # of each split table stays resident per worker.
    for (other, a, b), old in list(data.shards.items()):
        if other == table and a < stop and start < b:
            del data.shards[(other, a, b)]
            data.con.execute(f"DROP TABLE IF EXISTS {quote(old)}")
    data.shards[key] = name
    while len(data.shards) > RESIDENT_SHARDS:
        _, old = data.shards.popitem(last=False)
        data.con.execute(f"DROP TABLE IF EXISTS {quote(old)}")
    return name


def refold_parts(refold_sql: str, schema: pa.Schema, *parts: Any) -> tuple[bytes, float]:
    """On a worker: partials (shards' results or folds') folded into one partial of the same
    schema, as Arrow IPC, with the time it was done (``time.time()``)."""
    import duckdb

    from dau_scheduler.arms.duckdb import _over_partials

    global _FOLDER
    if _FOLDER is None:
        _FOLDER = duckdb.connect()
        _FOLDER.execute("SET enable_progress_bar = false")
        _FOLDER.execute(f"SET threads = {_worker_threads()}")
    cursor = _FOLDER.cursor()
    try:
        together = pa.concat_tables([from_ipc(part[0]) for part in parts])
        folded = _over_partials(cursor, refold_sql, together)
    finally:
        cursor.close()
    return to_ipc(cast_partial(folded, schema, "refold")), time.time()


#: The DuckDB a worker folds partials in (one per worker process).
_FOLDER: Any = None


def _worker_threads() -> int:
    try:
        from distributed import get_worker

        return max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):
        return os.cpu_count() or 1


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return "client"


def forget(handle: str) -> None:
    """On a worker: drop what ``handle`` keeps resident."""
    with _RESIDENT_LOCK:
        data = _RESIDENT.pop(handle, None)
    if data is not None:
        data.con.close()


# -- on the client ---------------------------------------------------------------------------


#: How long a Session opening on a cluster waits for a worker to (re)join: a worker restarting
#: after a crash is briefly absent from ``scheduler_info()``.
WORKER_WAIT_S = 10.0


def _workers_and_resources(client: Any) -> tuple[list[tuple[str, Any]], Resources]:
    """The cluster's workers and the slots they give, read from one consistent view; waits up
    to ``WORKER_WAIT_S`` for a worker where none is reported, then names the empty cluster."""
    deadline = time.monotonic() + WORKER_WAIT_S
    while True:
        info = client.scheduler_info() or {}
        workers = sorted((info.get("workers") or {}).items())
        resources = None
        if workers:
            with contextlib.suppress(SizingError):  # the workers left between the two reads
                resources = Resources.from_dask(client)
        if resources is not None:
            names = {d.name.rsplit("/", 1)[0] for d in resources.devices}
            if {str(i.get("name", a)) for a, i in workers} <= names:
                return workers, resources
        if time.monotonic() > deadline:
            raise ClusterError("the dask cluster reports no workers")
        with contextlib.suppress(Exception):  # a timeout here is the loop's own to report
            client.wait_for_workers(1, timeout=max(0.1, deadline - time.monotonic()))
        time.sleep(0.2)


class DaskTables:
    """The tables of a Session on a dask cluster, and the runs of a query's partial over them."""

    def __init__(self, connection: Connection, sources: dict[str, Source]) -> None:
        self.connection = connection
        self.client = connection.client
        self.handle = f"dau-{uuid.uuid4().hex[:12]}"
        self.workers, self.resources = _workers_and_resources(self.client)
        names = {str(i.get("name", a)): a for a, i in self.workers}
        self._slot_worker = {
            d.name: names[d.name.rsplit("/", 1)[0]] for d in self.resources.devices
        }
        self.specs: dict[str, Any] = {}
        self._scattered: dict[str, list[Any]] = {}
        self._piece_rows: dict[str, list[int]] = {}
        for name, source in sources.items():
            if isinstance(source, ParquetSource):
                self.specs[name] = ("parquet", tuple(str(f) for f in source.files))
            elif isinstance(source, ArrowSource):
                self.specs[name] = ("arrow", *self._scatter(name, source.table))
            else:
                raise ClusterError(
                    f"table {name!r} is read from a DuckDB connection, which the cluster's "
                    "workers cannot reach: give the tables as Parquet or Arrow"
                )
        #: Shards per query over all workers (None: one per worker thread, as placed).
        self.num_shards: int | None = None
        self._reads: dict[str, dict[str, int]] = {}

    def _scatter(self, name: str, table: pa.Table) -> tuple[list[int], list[Any]]:
        """``table`` cut into one piece per worker, each piece scattered to its worker."""
        addresses = [a for a, _ in self.workers]
        size = math.ceil(table.num_rows / len(addresses)) or 1
        offsets, futures = [], []
        for i, address in enumerate(addresses):
            piece = table.slice(i * size, size)
            if i and not piece.num_rows:
                break
            offsets.append(i * size)
            futures.append(self.client.scatter(piece, workers=[address], hash=False))
        self._scattered[name] = futures
        self._piece_rows[name] = [min(size, table.num_rows - o) for o in offsets]
        return offsets, futures

    def placement(
        self, start: int, stop: int, row_bytes: float = 1.0
    ) -> list[tuple[str, int, int]]:
        """Rows ``[start, stop)`` over the worker threads by the planner: ``(worker, a, b)``."""
        placed = placement_for(
            stop - start,
            self.resources,
            encoded_row_bytes=row_bytes,
            transient_row_bytes=row_bytes,
            model_bytes=0,
            statistic_bytes=0,
            num_chunks=self.num_shards,
        )
        return [
            (self._slot_worker[device.name], start + a, start + b)
            for device, a, b in placed.chunks()
            if b > a
        ]

    def _spec_for_split(self, name: str, start: int, stop: int) -> tuple[Any, ...]:
        """The split table's spec for rows ``[start, stop)``: in memory, only the pieces that
        hold them (dask moves just those to the task)."""
        spec = self.specs[name]
        if _is_parquet(spec):
            return spec  # type: ignore[no-any-return]
        _, offsets, futures = spec
        kept = [
            (o, f)
            for o, f, nxt in zip(offsets, futures, [*offsets[1:], math.inf], strict=True)
            if o < stop and nxt > start
        ]
        return ("arrow", [o for o, _ in kept], [f for _, f in kept])

    def run_partial(
        self, compiled: CompiledSplit, partial_sql: str, placeholder: str, start: int, stop: int
    ) -> ClusterPartial:
        """The partial over rows ``[start, stop)``, placed over the workers and folded in a
        tree on them. Raises ClusterError when a scattered piece was lost or a task failed."""
        schema = compiled.partial_schema
        table = compiled.plan.split_table or ""
        if schema is None:  # pragma: no cover - refused queries never come here
            raise ClusterError("this query has no partial to run")
        if stop <= start:
            return ClusterPartial(schema.empty_table())
        whole = whole_specs(self.specs, compiled.read_sql, table, self._reads)
        work = self.placement(start, stop)
        futures = [
            self.client.submit(
                run_shard,
                self.handle,
                whole,
                self._spec_for_split(table, a, b),
                table,
                a,
                b,
                partial_sql,
                placeholder,
                schema,
                workers=[worker],
                allow_other_workers=True,
                pure=False,
            )
            for worker, a, b in work
        ]
        try:
            folded = self._fold(futures, work, compiled.refold_sql, schema)
        except ClusterError:
            raise
        except RowsUnreadable as exc:  # the reader failed, not the cluster: answered unsplit
            raise ArmError("reader", f"a worker cannot read the rows of {table}: {exc}") from exc
        except duckdb.Error as exc:
            # A worker's DuckDB raised computing the partial (an overflow in a filter the
            # unsplit plan evaluates in another order): the host's computed error, as where the
            # host runs here, so the unsplit query answers or raises its own error.
            raise ArmError("host", f"a worker's DuckDB: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            raise self._explain(exc) from exc
        return folded

    def _fold(
        self,
        futures: list[Any],
        work: list[tuple[str, int, int]],
        refold_sql: str | None,
        schema: pa.Schema,
    ) -> ClusterPartial:
        """The shards' partials, folded on the workers in groups of ``FAN_IN`` when there are at
        least ``TREE_FROM`` of them (fewer come to the client, whose final query folds them anyway):
        one round trip either way. With each task's worker and seconds, and the tree's."""
        if refold_sql is None or len(futures) < TREE_FROM:
            results = self.client.gather(futures, direct=True)
            partials = [from_ipc(r[0]) for r in results]
            stats = [(r[2], r[1], r[3]) for r in results]
            fold_end = None
        else:
            # Neighbours first: a worker's shards are adjacent in row order, so most groups
            # fold where their partials already are.
            level = list(futures)
            while len(level) > 1:
                level = [
                    self.client.submit(refold_parts, refold_sql, schema, *group, pure=False)
                    if len(group) > 1
                    else group[0]
                    for group in (level[i : i + FAN_IN] for i in range(0, len(level), FAN_IN))
                ]
            root, *stats = self.client.gather(
                [level[0], *(self.client.submit(_stats, f) for f in futures)]
            )
            partials = [from_ipc(root[0])]
            fold_end = root[1]
        runs = tuple(
            WorkerRun(w, a, b, s) for (w, s, _), (_, a, b) in zip(stats, work, strict=True)
        )
        # From the last shard's end to the folded partial.
        fold = 0.0 if fold_end is None else max(0.0, fold_end - max(end for _, _, end in stats))
        table = pa.concat_tables(partials) if len(partials) > 1 else partials[0]
        return ClusterPartial(table, runs, fold)

    def _explain(self, exc: BaseException) -> ClusterError:
        lost = [
            f"table {name} rows {offset} to {offset + rows}"
            for name, (_, offsets, futures) in ((n, self.specs[n]) for n in self._scattered)
            for offset, future, rows in zip(offsets, futures, self._piece_rows[name], strict=True)
            if getattr(future, "status", "finished") != "finished"
        ]
        if lost:
            return ClusterError(
                "a worker holding in-memory rows was lost, and with it the only copy of "
                f"{', '.join(lost)}: scattered data cannot be read again; give the tables as "
                "Parquet for a cluster to recover from a lost worker"
            )
        return ClusterError(f"a shard's task failed on the cluster: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        for futures in self._scattered.values():
            for future in futures:
                future.release()
        self._scattered.clear()
        with contextlib.suppress(Exception):  # a cluster going away has nothing left to drop
            self.client.run(forget, self.handle)
        self.connection.close()


def _stats(result: tuple[bytes, float, str, float]) -> tuple[str, float, float]:
    """A shard's worker, seconds and end time, without its partial."""
    return result[2], result[1], result[3]


class DaskEncodedData(ClusterEncodedData):
    """Seed 000's dask handle: ``data`` resident on a dask cluster's workers; ``fold(sql)`` the
    exact answer, the split table's rows placed over every worker thread."""

    def __init__(self, data: Any, cluster: Any = "local") -> None:
        super().__init__(data, cluster)

    @property
    def client(self) -> Any:
        assert self.session.cluster is not None
        return self.session.cluster.tables.client


def _dask(data: Any, cluster: Any = None, client: Any = None, **_: Any) -> DaskEncodedData:
    return DaskEncodedData(data, cluster if cluster is not None else (client or "local"))


register_encoded_data_backend("dask", _dask, aliases=("distributed",))

__all__ = ["DaskEncodedData", "DaskTables", "connect"]
