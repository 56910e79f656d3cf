"""The sizing layer's pool (seed 004 on queries): a WorkerPool over row shards, and the
memory-budget planner whose strategies the SQL front end executes. See docs/sizing.md."""

from __future__ import annotations

from dau_scheduler.pool.cloud import cloud_count_rows, cloud_plan, cloud_resources
from dau_scheduler.pool.worker_pool import WorkerPool

__all__ = ["WorkerPool", "cloud_count_rows", "cloud_plan", "cloud_resources"]
