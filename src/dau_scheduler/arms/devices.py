"""The device arms a Session can be asked for by name, and the one ``"auto"`` picks."""

from __future__ import annotations

from dau_scheduler.arms.base import Arm
from dau_scheduler.arms.polars import PolarsArm, gpu_available
from dau_scheduler.errors import SqlError

DEVICES: tuple[str, ...] = ("auto", "cudf", "polars", "duckdb")
#: What :func:`device_arm` returns for ``"duckdb"``: the Session builds that arm once its host
#: exists (it shares the host's database, or has its own beside a cluster).
DUCKDB = "duckdb-shared"


def device_arm(device: str | Arm | None) -> Arm | str | None:
    """The arm for ``device`` (an Arm is used as given), :data:`DUCKDB` for ``"duckdb"``, or
    None; an unknown name is a :class:`SqlError`."""
    if device is None:
        return None
    if not isinstance(device, str):
        if not isinstance(device, Arm):
            raise SqlError(f"device must be one of {DEVICES}, None, or an Arm; got {device!r}")
        return device
    if device not in DEVICES:
        raise SqlError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)} or None")
    if device == "auto":
        device = "cudf" if gpu_available() else "polars"
    if device == "cudf":
        from dau_scheduler.arms.cudf import CudfArm

        return CudfArm()
    if device == "polars":
        return PolarsArm()
    return DUCKDB


def checker_device(name: str | None) -> str | Arm | None:
    """What an exactness checker (``slt``, ``tpch``, ``tpcds``) gives a Session for ``name``:
    ``polars-separate`` is a new Polars arm declared as hardware of its own (postures treat it
    as the GPU), ``gpu-limited`` the cudf arm's CPU stand-in (``cudf.CudfStandIn``); any other
    name is the Session's to read."""
    if name == "polars-separate":
        return PolarsArm(own_cores=True)
    if name == "gpu-limited":
        from dau_scheduler.arms.cudf import CudfStandIn

        return CudfStandIn()
    return name


__all__ = ["DEVICES", "DUCKDB", "checker_device", "device_arm"]
