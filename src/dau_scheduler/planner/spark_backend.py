"""The ``spark`` backend: a query's partial run on Spark executors, in DuckDB inside the Python
workers (``mapInArrow``).

- The **split table** is cut into row ranges placed over the executors' slots by the planner
  (``placement_for`` over ``Resources.from_spark``). Over Parquet, Spark holds only a small
  cached DataFrame of the ranges ``(start, stop)``: the Python worker that runs a range reads
  its rows from the files at its first query and keeps them in its DuckDB, so a query moves no
  rows through Spark. In-memory tables are handed to Spark once as a DataFrame whose rows carry
  their row number (``__dau_row``), cached on the executors.
- The **other tables** a query reads whole are read by the Python workers from Parquet (and kept
  resident in the worker's DuckDB while the worker lives), or shipped once as a broadcast of
  Arrow IPC when they are in memory.
- A query runs ``mapInArrow`` over the ranges (or the cached rows): each task runs DuckDB's
  partial over the rows its range shares with the query's, and returns Arrow with one row of
  task statistics; the driver refuses a result whose tasks do not cover the rows asked for,
  collects the partials, and the Session's final query folds them.

Spark retries a failed task (a Python worker killed mid-task, say) on its own, and the retry
reads its range from Parquet again in whichever worker runs it: a local master
``spark:local[N]`` is started as ``local[N,4]`` (four attempts per task). A query whose partial
has a column Spark cannot carry is refused by name and answered unsplit. pyspark is imported
here only, when a Spark cluster is asked for.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from dau_scheduler.arms.base import cast_partial
from dau_scheduler.errors import ArmError, ClusterError
from dau_scheduler.planner.encoded import ClusterEncodedData, register_encoded_data_backend
from dau_scheduler.planner.placement import placement_for
from dau_scheduler.planner.resources import Resources
from dau_scheduler.planner.spark_worker import (
    ERROR,
    META,
    MOST_TASK_BYTES,
    ROW,
    Task,
    partial_fn,
    range_partial_fn,
)
from dau_scheduler.planner.wire import (
    ClusterPartial,
    WorkerRun,
    to_ipc,
    whole_specs,
)
from dau_scheduler.tables import ArrowSource, ParquetSource, Source

if TYPE_CHECKING:
    from dau_scheduler.rewrite.planner import CompiledSplit

EXTRA = "pip install 'dau-scheduler[spark]' (pyspark with pandas)"
_MASTER = re.compile(r"^spark:(local(?:\[(\d+|\*)\])?)$")


def is_spark(cluster: Any) -> bool:
    """Whether ``cluster`` asks for Spark: a SparkSession or a ``"spark:..."`` string."""
    if isinstance(cluster, str):
        return cluster.startswith("spark:")
    return hasattr(cluster, "sparkContext") and callable(getattr(cluster, "createDataFrame", None))


def _java_ok() -> str | None:
    """Why Java cannot run Spark here, or None."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        return "Spark needs Java 17 or newer, and no java was found (PATH or JAVA_HOME)"
    try:
        shown = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=20, check=False
        ).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Spark needs Java 17 or newer; running {java} -version failed: {exc}"
    found = re.search(r'version "(\d+)', shown)
    if found and int(found.group(1)) < 17:
        return f"Spark needs Java 17 or newer; {java} is version {found.group(1)}"
    return None


@dataclass
class SparkConnection:
    """A SparkSession; ``owned``: started here (``spark:local[N]``), stopped with the Session."""

    spark: Any
    owned: bool = False

    def open(self, sources: dict[str, Source]) -> SparkTables:
        return SparkTables(self, sources)

    def close(self) -> None:
        if self.owned:
            self.owned = False
            # A JVM that died (out of memory, say) is stopped already: py4j's errors then vary.
            with contextlib.suppress(Exception):
                self.spark.stop()


def connect(cluster: Any) -> SparkConnection:
    """A SparkSession as given, or ``"spark:local"`` / ``"spark:local[N]"``: a local Spark on
    127.0.0.1 with N slots (default 2) and four attempts per task, started here. Anything
    else, or pyspark or Java missing, is a :class:`ClusterError` before anything runs."""
    if not isinstance(cluster, str):
        return SparkConnection(cluster)
    local = _MASTER.match(cluster.strip())
    if local is None:
        raise ClusterError(
            f"unknown Spark cluster {cluster!r}: expected 'spark:local' or 'spark:local[N]', "
            "or pass a SparkSession"
        )
    slots = local.group(2) or "2"
    if slots != "*" and int(slots) < 1:
        raise ClusterError(f"cluster {cluster!r}: a local Spark needs at least one slot")
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise ClusterError(f"cluster={cluster!r} needs pyspark: {EXTRA}") from exc
    active = SparkSession.getActiveSession()
    if active is not None:  # one Spark per process: use it, and leave it running
        return SparkConnection(active)
    try:
        import pandas  # noqa: F401 - mapInArrow needs it
    except ImportError as exc:
        raise ClusterError(f"cluster={cluster!r} needs pandas for mapInArrow: {EXTRA}") from exc
    missing = _java_ok()
    if missing:
        raise ClusterError(f"cluster={cluster!r}: {missing}")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers run this interpreter
    spark = (
        SparkSession.builder.master(f"local[{slots},4]")
        .appName("dau-scheduler")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.python.worker.reuse", "true")
        # Partials come back through the driver's heap: past it Spark's result thread died of
        # OutOfMemoryError and the query hung (count(DISTINCT key) over DuckDB's seqs_table).
        # Results past MAX_RESULT fail the job instead, a ClusterError naming the setting.
        .config("spark.driver.memory", DRIVER_MEMORY)
        .config("spark.driver.maxResultSize", MAX_RESULT)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return SparkConnection(spark, owned=True)


#: An owned local Spark's driver heap, and the most partial bytes it takes back from a query
#: (well under the heap, which holds them again as Arrow).
DRIVER_MEMORY = "2g"
MAX_RESULT = "512m"


def _jvm_rejects(kind: pa.DataType) -> str | None:
    """Why Spark's JVM cannot hold ``kind`` as it is, though pyspark converts its type (also
    inside lists, structs and maps), or None: a TIME fails Spark's analysis or its Arrow
    reader, and a nanosecond timestamp is cut to microseconds in a DataFrame and fails as a
    ``mapInArrow`` result."""
    if pa.types.is_time(kind):
        return "Spark has no TIME type"
    if pa.types.is_timestamp(kind) and kind.unit == "ns":
        return "Spark's timestamps hold microseconds"
    for index in range(kind.num_fields):
        found = _jvm_rejects(kind.field(index).type)
        if found is not None:
            return found
    return None


def _past_spark_decimals(column: pa.ChunkedArray) -> str | None:
    """Why Spark cannot hold ``column``'s values though it holds their type: DuckDB writes a
    HUGEINT as Arrow's decimal128(38, 0), whose 128 bits reach 39 digits, past Spark's
    DECIMAL(38) (its cache of the rows failed with NUMERIC_VALUE_OUT_OF_RANGE)."""
    kind = column.type
    if not (pa.types.is_decimal128(kind) and kind.precision == 38) or not len(column):
        return None
    bounds = pc.min_max(column)
    limit = Decimal(10) ** (38 - kind.scale)
    for bound in (bounds["min"].as_py(), bounds["max"].as_py()):
        if bound is not None and abs(bound) >= limit:
            return "holds values past 38 digits (a HUGEINT), which Spark's DECIMAL(38) cannot"
    return None


def _wire_type(kind: pa.DataType) -> pa.DataType:
    """The form a ``mapInArrow`` result carries ``kind`` in (Spark's Arrow reader takes
    microsecond timestamps and plain lists only); the driver casts it back, exactly."""
    if pa.types.is_timestamp(kind) and kind.unit != "us":
        return pa.timestamp("us", kind.tz)
    if pa.types.is_fixed_size_list(kind) or pa.types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_wire_type(kind.value_type)))
    if pa.types.is_struct(kind):
        return pa.struct([f.with_type(_wire_type(f.type)) for f in kind])
    return kind


def sparkable(table: pa.Table) -> pa.Table:
    """``table`` with view types (which Spark cannot carry) as their plain forms."""
    plain = {pa.types.is_string_view: pa.string(), pa.types.is_binary_view: pa.binary()}
    fields = []
    for field in table.schema:
        kind = next((t for test, t in plain.items() if test(field.type)), field.type)
        fields.append(field.with_type(kind))
    schema = pa.schema(fields)
    return table if schema.equals(table.schema) else table.cast(schema)


def _numbered(table: pa.Table, start: int) -> pa.Table:
    rows = pa.array(range(start, start + table.num_rows), pa.int64())
    return table.append_column(ROW, rows)


# -- on the driver ---------------------------------------------------------------------------


class SparkTables:
    """The tables of a Session on Spark, and the runs of a query's partial there."""

    def __init__(self, connection: SparkConnection, sources: dict[str, Source]) -> None:
        from pyspark.sql.pandas.types import from_arrow_schema

        self._from_arrow_schema = from_arrow_schema
        self.connection = connection
        self.spark = connection.spark
        self.handle = f"dau-{uuid.uuid4().hex[:12]}"
        self.resources = Resources.from_spark(self.spark.sparkContext)
        self.sources = sources
        self.specs: dict[str, tuple[Any, ...]] = {}
        for name, source in sources.items():
            if isinstance(source, ParquetSource):
                self.specs[name] = ("parquet", tuple(str(f) for f in source.files))
            elif isinstance(source, ArrowSource):
                data = self.spark.sparkContext.broadcast(to_ipc(sparkable(source.table)))
                self.specs[name] = ("broadcast", data)
            else:
                raise ClusterError(
                    f"table {name!r} is read from a DuckDB connection, which Spark's executors "
                    "cannot reach: give the tables as Parquet or Arrow"
                )
        self._frames: dict[str, Any] = {}
        self._unheld: dict[str, dict[str, str]] = {}
        self._reads: dict[str, dict[str, int]] = {}
        self._used: dict[str, list[str]] = {}
        #: Column names by table, for finding the columns a query reads (names suffice).
        self._names = {
            name: {
                c.lower(): "VARCHAR"
                for c in (
                    source.table.column_names
                    if isinstance(source, ArrowSource)
                    else source.arrow_schema_names()
                )
            }
            for name, source in sources.items()
        }
        #: Test hook: seconds each partition's task sleeps before it runs its partial.
        self.task_delay = 0.0
        #: The most bytes of partial one task hands back (``spark_worker.MOST_TASK_BYTES``).
        self.most_task_bytes = MOST_TASK_BYTES

    def _cannot_hold(self, field: pa.Field) -> str | None:
        """Why Spark cannot carry a column of ``field``'s type, or None."""
        try:
            self._from_arrow_schema(pa.schema([field]))
        except Exception as exc:  # noqa: BLE001 - pyspark's type errors vary by version
            return str(exc).splitlines()[0]
        return _jvm_rejects(field.type)

    def _columns_read(self, compiled: CompiledSplit, table: str) -> set[str]:
        """The lower-case names of ``table``'s columns the query reads."""
        from dau_scheduler.rewrite.columns import query_columns

        return query_columns(compiled.read_sql, self._names).get(table, set())

    def refusal(self, compiled: CompiledSplit) -> str | None:
        """Why Spark cannot carry this query's partial (a column type it has no form for), or
        the in-memory split table's columns it reads (left out of its DataFrame)."""
        schema = compiled.partial_schema
        if schema is None:
            return None
        for field in schema:
            why = self._cannot_hold(field)
            if why is not None:
                return f"spark cannot carry partial column {field.name} ({field.type}): {why}"
        table = compiled.plan.split_table or ""
        source = self.sources.get(table)
        if isinstance(source, ArrowSource):
            unheld = self.unheld(table)
            for name in sorted(self._columns_read(compiled, table)):
                if name in unheld:
                    return f"spark cannot hold column {table}.{unheld[name]}"
        return None

    def unheld(self, table: str) -> dict[str, str]:
        """The in-memory ``table``'s columns Spark cannot hold, by lower-case name, each as
        ``"name (type): why"``: a type it has no form for, or values past its decimals."""
        found = self._unheld.get(table)
        if found is None:
            source = self.sources[table]
            assert isinstance(source, ArrowSource)
            found = {}
            for field, column in zip(source.table.schema, source.table.columns, strict=True):
                why = self._cannot_hold(field) or _past_spark_decimals(column)
                if why is None and ("." in field.name or "`" in field.name):
                    # (DuckDB names an unaliased output so: `list_value(1, 10.5)`)
                    why = "a name holding a dot or backtick, which Spark's mapInArrow misreads"
                if why is not None:
                    found[field.name.lower()] = f"{field.name} ({field.type}): {why}"
            self._unheld[table] = found
        return found

    def frame(self, table: str) -> Any:
        """The split table on Spark, made at the first query that splits it: over Parquet, a
        small cached DataFrame of row ranges ``(start, stop)`` placed over the executors' slots,
        whose rows the Python workers read and keep at their first query; in memory, the rows
        themselves, numbered and cached on the executors."""
        found = self._frames.get(table)
        if found is not None:
            return found
        source = self.sources[table]
        if isinstance(source, ParquetSource):
            placed = placement_for(
                source.num_rows,
                self.resources,
                encoded_row_bytes=1.0,
                transient_row_bytes=1.0,
                model_bytes=0,
                statistic_bytes=0,
            )
            ranges = [(a, b) for _, a, b in placed.chunks() if b > a] or [(0, 0)]
            frame = self.spark.createDataFrame(
                pa.table(
                    {
                        "start": pa.array([a for a, _ in ranges], pa.int64()),
                        "stop": pa.array([b for _, b in ranges], pa.int64()),
                    }
                )
            ).repartition(len(ranges))
        else:
            assert isinstance(source, ArrowSource)
            # The columns Spark cannot hold are left out; a query reading one is refused.
            unheld = self.unheld(table)
            kept = [f.name for f in source.table.schema if f.name.lower() not in unheld]
            # createDataFrame cuts Arrow data into contiguous slices, one per partition.
            frame = self.spark.createDataFrame(_numbered(sparkable(source.table.select(kept)), 0))
        frame = frame.cache()
        frame.count()  # made now, once: the executors keep it
        self._frames[table] = frame
        return frame

    def run_partial(
        self, compiled: CompiledSplit, partial_sql: str, placeholder: str, start: int, stop: int
    ) -> ClusterPartial:
        """The partial over rows ``[start, stop)`` of the split table, one task per cached
        partition; raises ClusterError when Spark gives up on a task."""
        schema = compiled.partial_schema
        table = compiled.plan.split_table or ""
        if schema is None:  # pragma: no cover - refused queries never come here
            raise ClusterError("this query has no partial to run")
        if stop <= start:
            return ClusterPartial(schema.empty_table())
        whole = whole_specs(self.specs, compiled.read_sql, table, self._reads)
        wire = pa.schema([f.with_type(_wire_type(f.type)) for f in schema])
        out = pa.schema([*wire, *META])
        frame = self.frame(table)
        delay, most = self.task_delay, self.most_task_bytes
        task = Task(self.handle, whole, partial_sql, placeholder, wire, delay, most)
        source = self.sources[table]
        if isinstance(source, ParquetSource):
            # Only the ranges' descriptors cross to the Python workers, which hold the rows.
            files = tuple(str(f) for f in source.files)
            split = (table, files, int(start), int(stop))
            fn = range_partial_fn(task, split)
            rows = frame
        else:
            assert isinstance(source, ArrowSource)  # a connection is refused when opened
            fn = partial_fn(task, source.table.schema)
            used = self._used.get(compiled.read_sql)
            if used is None:
                wanted = self._columns_read(compiled, table)
                used = self._used[compiled.read_sql] = [
                    c for c in frame.columns if c.lower() in wanted or c == ROW
                ]
            # Only the columns the query reads, only the rows in range, cross to the worker.
            rows = frame.select(*used).where(f"{ROW} >= {int(start)} AND {ROW} < {int(stop)}")
        try:
            got = rows.mapInArrow(fn, self._from_arrow_schema(out)).toArrow()
        except Exception as exc:
            if "NUMERIC_VALUE_OUT_OF_RANGE" in str(exc):
                # A HUGEINT past 38 digits (Arrow's decimal128(38, 0), as a DECIMAL(38, 0) is):
                # Spark's DECIMAL(38) cannot hold it, in the rows or the partial. Answered
                # unsplit, as where the rows cannot be read.
                raise ArmError(
                    "reader", f"Spark cannot hold a value of this query's rows: {_cause(exc)}"
                ) from exc
            if "maxResultSize" in str(exc):
                raise ClusterError(
                    "the partials of this query are more than spark.driver.maxResultSize bytes "
                    f"(an owned local Spark takes {MAX_RESULT}): raise it on the Spark given, or "
                    "run the query without cluster="
                ) from exc
            raise ClusterError(f"Spark failed the partial of this query: {_cause(exc)}") from exc
        said = got.filter(got.column(ERROR).is_valid()).column(ERROR).to_pylist()
        if said:
            raise _worker_error(said[0])
        stats = got.filter(got.column("__dau_rows").is_valid())
        runs = tuple(
            WorkerRun(f"python worker {pid}", 0, int(rows), float(seconds))
            for pid, rows, seconds in zip(
                stats.column("__dau_worker").to_pylist(),
                stats.column("__dau_rows").to_pylist(),
                stats.column("__dau_seconds").to_pylist(),
                strict=True,
            )
        )
        if sum(r.stop - r.start for r in runs) != stop - start:
            raise ClusterError(
                f"Spark returned partials for {sum(r.stop - r.start for r in runs)} "
                f"of the {stop - start} rows asked for: refusing a short answer"
            )
        partial = got.filter(
            pc.and_(got.column("__dau_rows").is_null(), got.column(ERROR).is_null())
        ).select(schema.names)
        return ClusterPartial(cast_partial(partial, schema, "spark"), runs)

    def close(self) -> None:
        """Unpersist what this Session cached, and stop a Spark it started. A Spark whose JVM
        died meanwhile holds nothing more: closing it is no error."""
        try:
            for frame in self._frames.values():
                frame.unpersist()
            for spec in self.specs.values():
                if spec[0] == "broadcast":
                    spec[1].unpersist()
        except Exception:  # noqa: BLE001 - py4j's errors for a JVM that is gone vary
            pass
        finally:
            self._frames.clear()
            self.connection.close()


def _cause(exc: BaseException) -> str:
    """The Python worker's own error in a Spark exception's text (its last ``...Error:``
    line), else the text's first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    named = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Unreadable): ", line)]
    return named[-1] if named else (lines[0] if lines else type(exc).__name__)


def _worker_error(said: str) -> ArmError:
    """The error a Python worker returned in its :data:`ERROR` row (``RowsUnreadable: ...`` or
    ``duckdb.OutOfRangeException: ...``) as the arm error the query falls back on: the rows
    could not be read, or the worker's DuckDB raised computing the partial (an overflow in a
    filter the unsplit plan evaluates in another order). Either way the host answers unsplit,
    or raises the unsplit query's own error."""
    import duckdb

    if said.startswith("RowsUnreadable: "):
        return ArmError("reader", f"a worker cannot read the rows: {said}")
    if said.startswith("PartialTooLarge: "):
        # Too many bytes to hand back through Spark: the host answers unsplit here.
        return ArmError("transfer", f"a worker's partial is too large for Spark: {said}")
    found = re.match(r"^duckdb\.(\w+): (.*)$", said, re.S)
    kind = getattr(duckdb, found.group(1), None) if found else None
    if not (isinstance(kind, type) and issubclass(kind, duckdb.Error)):
        kind = duckdb.Error
    error = ArmError("host", f"a worker's DuckDB: {said}")
    error.__cause__ = kind(found.group(2) if found else said)
    return error


class SparkEncodedData(ClusterEncodedData):
    """Seed 000's Spark handle: ``data`` cached on Spark executors; ``fold(sql)`` the exact
    answer; ``close()`` unpersists what it cached (and stops a Spark it started)."""

    def __init__(self, data: Any, cluster: Any = "spark:local[2]") -> None:
        super().__init__(data, cluster)


def _spark(data: Any, cluster: Any = None, spark: Any = None, **_: Any) -> SparkEncodedData:
    return SparkEncodedData(data, cluster if cluster is not None else (spark or "spark:local[2]"))


register_encoded_data_backend("spark", _spark, aliases=("pyspark",))

__all__ = ["SparkConnection", "SparkEncodedData", "SparkTables", "connect", "is_spark"]
