"""What there is to place rows on: devices (an engine, memory, a measured throughput) and where
they come from (this machine, an MPI world, a dask cluster, a Spark context, torchrun).

Throughput is rows of the split table per second for the workload it was calibrated on; before
calibration it is a relative weight (1.0 each). Every constructor validates, so a bad value is a
:class:`~dau_scheduler.errors.SizingError` naming it, never a placement built on nonsense.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar

from dau_scheduler.checks import count, positive
from dau_scheduler.errors import SizingError
from dau_scheduler.machine import cpu_count, gpu_devices, memory_total, parse_bytes
from dau_scheduler.planner.jsonfile import JsonFile

#: The engines a device can run: the arm names.
ENGINES: tuple[str, ...] = ("duckdb", "polars", "cudf")
_GPU_KINDS = ("gpu", "cuda", "mps")
#: Environment variables MPI launchers set to the world size, in the order they are trusted.
MPI_SIZE_VARIABLES = (
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMIX_SIZE",
    "MPI_WORLD_SIZE",
    "SLURM_NTASKS",
)


def _check_memory(name: str, memory_bytes: Any) -> int | None:
    return None if memory_bytes is None else count(f"device {name!r}: memory_bytes", memory_bytes)


@dataclass(frozen=True)
class DeviceSpec:
    """One place rows can run: a name, a kind (``cpu`` or a GPU kind), memory, an engine, and a
    throughput (rows per second of the calibrated workload, or a relative weight)."""

    name: str
    kind: str = "cpu"
    memory_bytes: int | None = None
    engine: str = "duckdb"
    throughput: float = 1.0
    precision: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise SizingError(f"a device needs a non-empty name, got {self.name!r}")
        if not isinstance(self.kind, str) or not self.kind:
            raise SizingError(f"device {self.name!r}: kind must be a string, got {self.kind!r}")
        _check_memory(self.name, self.memory_bytes)
        if self.engine not in ENGINES:
            raise SizingError(
                f"device {self.name!r}: unknown engine {self.engine!r}; expected one of "
                f"{', '.join(ENGINES)}"
            )
        positive(f"device {self.name!r}: throughput", self.throughput)

    @property
    def is_gpu(self) -> bool:
        """True for CUDA, MPS and other GPU kinds."""
        kind = self.kind.lower()
        return kind in _GPU_KINDS or kind.startswith("cuda")

    def with_throughput(self, throughput: float) -> DeviceSpec:
        return replace(self, throughput=float(throughput))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> DeviceSpec:
        if not isinstance(payload, Mapping):
            raise SizingError(f"a device is a mapping, got {type(payload).__name__}")
        unknown = set(payload) - {f for f in cls.__dataclass_fields__}
        if unknown:
            raise SizingError(f"unknown device field(s): {', '.join(sorted(unknown))}")
        if "name" not in payload:
            raise SizingError("a device mapping needs a 'name'")
        return cls(**dict(payload))


@dataclass(frozen=True)
class Resources(JsonFile):
    """A non-empty collection of devices with distinct names."""

    what: ClassVar[str] = "resources"
    devices: tuple[DeviceSpec, ...]

    def __post_init__(self) -> None:
        devices = tuple(self.devices)
        object.__setattr__(self, "devices", devices)
        if not devices:
            raise SizingError("resources need at least one device")
        for device in devices:
            if not isinstance(device, DeviceSpec):
                raise SizingError(f"resources hold DeviceSpecs, got {type(device).__name__}")
        names = [d.name for d in devices]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise SizingError(f"duplicate device name(s): {', '.join(duplicates)}")

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def single_cpu(
        cls, memory_bytes: int | None = None, throughput: float = 1.0, precision: Any = None
    ) -> Resources:
        return cls((DeviceSpec("cpu", "cpu", memory_bytes, "duckdb", throughput, _p(precision)),))

    @classmethod
    def local(
        cls, num_cpus: int | None = None, memory_bytes: int | None = None, precision: Any = None
    ) -> Resources:
        """``num_cpus`` CPU slots (default: this process's cores), sharing ``memory_bytes``
        (default: this machine's memory) evenly."""
        slots = count("num_cpus", num_cpus, 1) if num_cpus is not None else cpu_count()
        total = _check_memory("local", memory_bytes)
        if total is None:
            total = memory_total()
        each = None if total is None else total // slots
        return cls(
            tuple(
                DeviceSpec(f"cpu{i}", "cpu", each, "duckdb", 1.0, _p(precision))
                for i in range(slots)
            )
        )

    @classmethod
    def discover(
        cls, include_gpu: bool = True, cpu_workers: int | None = None, precision: Any = None
    ) -> Resources:
        """This machine: ``cpu_workers`` DuckDB slots (default one: DuckDB threads itself) over
        its memory, and each CUDA GPU ``nvidia-smi`` reports, with its memory, as a ``cudf``
        device. Nothing is imported; a machine without CUDA simply has no GPU devices."""
        workers = count("cpu_workers", cpu_workers, 1) if cpu_workers is not None else 1
        cpus = cls.local(workers, precision=precision).devices
        gpus = tuple(
            DeviceSpec(f"cuda:{i}", "gpu", memory, "cudf", 1.0, _p(precision))
            for i, (_, memory) in enumerate(gpu_devices() if include_gpu else [])
        )
        return cls(cpus + gpus)

    @classmethod
    def from_specs(cls, specs: Iterable[DeviceSpec]) -> Resources:
        return cls(tuple(specs))

    @classmethod
    def from_mpi(
        cls,
        comm: Any = None,
        memory_bytes: int | None = None,
        throughput: float = 1.0,
        precision: Any = None,
    ) -> Resources:
        """One CPU slot per rank: ``comm.Get_size()`` when a communicator is given, else the
        launcher's environment (``MPI_SIZE_VARIABLES``), else one. mpi4py is never imported."""
        if comm is not None:
            if not callable(getattr(comm, "Get_size", None)):
                raise SizingError(f"comm must have Get_size(), got {type(comm).__name__}")
            size = count("comm.Get_size()", comm.Get_size(), 1)
        else:
            size = _env_int(MPI_SIZE_VARIABLES) or 1
        return cls(
            tuple(
                DeviceSpec(f"rank{i}", "cpu", memory_bytes, "duckdb", throughput, _p(precision))
                for i in range(size)
            )
        )

    @classmethod
    def from_dask(cls, client: Any, precision: Any = None) -> Resources:
        """One slot per worker thread, from ``client.scheduler_info()``, each with its share of
        the worker's memory limit. dask is not imported."""
        if not callable(getattr(client, "scheduler_info", None)):
            raise SizingError(f"client must have scheduler_info(), got {type(client).__name__}")
        workers = (client.scheduler_info() or {}).get("workers") or {}
        if not workers:
            raise SizingError("the dask cluster reports no workers")
        devices = []
        for address, info in sorted(workers.items()):
            threads = count(f"worker {address} nthreads", int(info.get("nthreads", 1)), 1)
            limit = info.get("memory_limit")
            each = int(limit) // threads if limit else None
            name = str(info.get("name", address))
            for t in range(threads):
                devices.append(DeviceSpec(f"{name}/{t}", "cpu", each, "duckdb", 1.0, _p(precision)))
        return cls(tuple(devices))

    @classmethod
    def from_spark(
        cls, spark_context: Any, memory_bytes: int | None = None, precision: Any = None
    ) -> Resources:
        """``defaultParallelism`` CPU slots, each with the executor memory (``spark.executor.
        memory``, or ``memory_bytes`` when given). Duck-typed: pyspark is not imported."""
        parallelism = getattr(spark_context, "defaultParallelism", None)
        if parallelism is None:
            raise SizingError(
                f"spark_context must have defaultParallelism, got {type(spark_context).__name__}"
            )
        slots = count("defaultParallelism", int(parallelism), 1)
        memory = _check_memory("spark", memory_bytes)
        if memory is None:
            conf = (
                spark_context.getConf()
                if callable(getattr(spark_context, "getConf", None))
                else None
            )
            text = conf.get("spark.executor.memory") if conf is not None else None
            memory = parse_bytes(text) if text else None
        return cls(
            tuple(
                DeviceSpec(f"spark{i}", "cpu", memory, "duckdb", 1.0, _p(precision))
                for i in range(slots)
            )
        )

    @classmethod
    def from_torchrun(cls, memory_bytes: int | None = None, precision: Any = None) -> Resources:
        """One slot per rank of ``WORLD_SIZE`` (torchrun's variables; one when unset)."""
        size = _env_int(("WORLD_SIZE",)) or 1
        return cls(
            tuple(
                DeviceSpec(f"rank{i}", "cpu", memory_bytes, "duckdb", 1.0, _p(precision))
                for i in range(size)
            )
        )

    # -- queries and persistence -------------------------------------------------------------

    def fastest(self) -> DeviceSpec:
        """The device with the largest throughput (the first of equals)."""
        return max(self.devices, key=lambda d: d.throughput)

    def device(self, name: str) -> DeviceSpec:
        for device in self.devices:
            if device.name == name:
                return device
        raise SizingError(
            f"no device named {name!r}; devices: {', '.join(d.name for d in self.devices)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"devices": [d.to_dict() for d in self.devices]}

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> Resources:
        if not isinstance(payload, Mapping) or not isinstance(payload.get("devices"), list):
            raise SizingError("resources must be a mapping with a 'devices' list")
        return cls(tuple(DeviceSpec.from_dict(d) for d in payload["devices"]))


def _env_int(names: Iterable[str]) -> int | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return None


def _p(precision: Any) -> str | None:
    return None if precision is None else str(precision)


__all__ = ["ENGINES", "DeviceSpec", "Resources"]
