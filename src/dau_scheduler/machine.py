"""What this machine has: cores, memory, CUDA GPUs (through ``nvidia-smi``, nothing imported),
and JVM-style memory sizes. Read by the planner's resources and the pool's ``cloud_resources``."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from typing import Any

from dau_scheduler.errors import SizingError


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def memory_total() -> int | None:
    """This machine's memory in bytes, or None where it cannot be read."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def gpu_devices() -> list[tuple[str, int]]:
    """``(name, memory bytes)`` of each CUDA GPU ``nvidia-smi`` lists; empty without one."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        done = subprocess.run(
            [smi, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    found = []
    for line in done.stdout.splitlines() if done.returncode == 0 else []:
        name, _, mib = line.rpartition(",")
        if name and mib.strip().isdigit():
            found.append((name.strip(), int(mib.strip()) * (1 << 20)))
    return found


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_bytes(text: str) -> int:
    """``"4g"``, ``"512m"``, ``"1024"`` (JVM-style sizes) in bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*", str(text).lower())
    if match is None:
        raise SizingError(f"cannot read a memory size from {text!r} (expected e.g. 4g, 512m)")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def machine_summary() -> dict[str, Any]:
    """Cores, memory, OS, architecture and GPUs of this machine (for ``cloud_resources``)."""
    return {
        "cpu_threads": cpu_count(),
        "memory_bytes": memory_total(),
        "os": platform.system().lower(),
        "arch": platform.machine(),
        "gpus": [{"name": n, "memory_bytes": m} for n, m in gpu_devices()],
    }


__all__ = ["cpu_count", "gpu_devices", "machine_summary", "memory_total", "parse_bytes"]
