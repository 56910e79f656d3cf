"""dau_scheduler: split one query's rows between a device arm and a host arm, and fold the partials
back into exactly the unsplit answer."""

from __future__ import annotations

import os as _os
import sys as _sys

# Partitioning the cores (docs/cores.md): Polars sizes its thread pool once, when it is first
# imported, so the device arm's threads are set here, before anything imports it.
if _os.environ.get("DAU_DEVICE_THREADS") and "polars" not in _sys.modules:
    _os.environ["POLARS_MAX_THREADS"] = _os.environ["DAU_DEVICE_THREADS"]

from dau_scheduler.adaptive import execute_adaptive
from dau_scheduler.errors import (
    ArmError,
    DauError,
    PostureError,
    ProfileError,
    SplitError,
    SqlError,
)
from dau_scheduler.merge import (
    ADDITIVE,
    AGGREGATE_REFUSALS,
    BOUNDARY_STATS,
    DEFERRED_MEAN,
    MergeRule,
    check_split,
    merge_keyed_groups,
    merge_ordered_groups,
    merge_sorted_runs,
    merge_top_k,
    merge_totals,
)
from dau_scheduler.posture import POSTURES, HostCost, Posture, WorkSplit, batch_count, plan_split
from dau_scheduler.profile import (
    LinkRate,
    NodeCost,
    ProfileCache,
    QueryProfile,
    host_identity,
    profile_from_spans,
)
from dau_scheduler.rows import RowBatch, RowRange, RowSource, as_row_source
from dau_scheduler.split import SplitArm, SplitExecution, execute_split

__version__ = "0.1.0"

__all__ = [
    "ADDITIVE",
    "AGGREGATE_REFUSALS",
    "BOUNDARY_STATS",
    "DEFERRED_MEAN",
    "POSTURES",
    "ArmError",
    "DauError",
    "HostCost",
    "LinkRate",
    "MergeRule",
    "NodeCost",
    "Posture",
    "PostureError",
    "ProfileCache",
    "ProfileError",
    "QueryProfile",
    "RowBatch",
    "RowRange",
    "RowSource",
    "SplitArm",
    "SplitError",
    "SplitExecution",
    "SqlError",
    "WorkSplit",
    "__version__",
    "as_row_source",
    "batch_count",
    "check_split",
    "execute_adaptive",
    "execute_split",
    "host_identity",
    "merge_keyed_groups",
    "merge_ordered_groups",
    "merge_sorted_runs",
    "merge_top_k",
    "merge_totals",
    "plan_split",
    "profile_from_spans",
]

from dau_scheduler.rewrite.planner import SplitPlan
from dau_scheduler.session import Session, SqlResult, run_sql

__all__ += ["Session", "SplitPlan", "SqlResult", "run_sql"]
