"""Which backend a ``cluster=`` argument asks for: Spark (a SparkSession, ``"spark:..."``) or
dask.distributed (a Client, a scheduler address, ``"local:N"``). Each backend's ``connect``
names a bad argument, or what is missing, before anything is loaded; its connection's
``open(sources)`` puts the tables on the cluster."""

from __future__ import annotations

from typing import Any


def connect(cluster: Any) -> Any:
    from dau_scheduler.planner import spark_backend

    if spark_backend.is_spark(cluster):
        return spark_backend.connect(cluster)
    from dau_scheduler.planner import dask_backend

    return dask_backend.connect(cluster)


__all__ = ["connect"]
