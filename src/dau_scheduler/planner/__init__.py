"""The sizing layer's planner (seed 000 on queries): devices and resources, placements of a
query's split table, calibration on the query itself, and resident-data handles that execute
a placement exactly. See docs/sizing.md."""

from __future__ import annotations

from dau_scheduler.planner.calibration import (
    CalibrationCatalog,
    CalibrationRecord,
    calibrate_resources,
)
from dau_scheduler.planner.dask_backend import DaskEncodedData
from dau_scheduler.planner.encoded import (
    EncodedDataHandle,
    EncodedFold,
    LocalEncodedData,
    available_encoded_data_backends,
    encoded_data,
    is_encoded_data_handle,
    register_encoded_data_backend,
)
from dau_scheduler.planner.placement import (
    ModelShard,
    Placement,
    PlacementShard,
    estimate_estimator_stat_nbytes,
    estimate_model_nbytes,
    model_sharding_plan,
    plan,
)
from dau_scheduler.planner.resources import DeviceSpec, Resources

__all__ = [
    "CalibrationCatalog",
    "CalibrationRecord",
    "DaskEncodedData",
    "DeviceSpec",
    "EncodedDataHandle",
    "EncodedFold",
    "LocalEncodedData",
    "ModelShard",
    "Placement",
    "PlacementShard",
    "Resources",
    "available_encoded_data_backends",
    "calibrate_resources",
    "encoded_data",
    "estimate_estimator_stat_nbytes",
    "estimate_model_nbytes",
    "is_encoded_data_handle",
    "model_sharding_plan",
    "plan",
    "register_encoded_data_backend",
]
