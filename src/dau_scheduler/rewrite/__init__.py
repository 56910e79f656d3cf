"""SQL rewrite: a query into the partial query each arm runs and the final query that folds them."""

from __future__ import annotations

from dau_scheduler.rewrite.aggregates import MERGE_STEPS, aggregate_kind
from dau_scheduler.rewrite.planner import CompiledSplit, SplitPlan, compile_split

__all__ = ["MERGE_STEPS", "CompiledSplit", "SplitPlan", "aggregate_kind", "compile_split"]
