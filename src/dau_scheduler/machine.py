"""What this machine has: cores, memory, CUDA GPUs (through ``nvidia-smi``, nothing imported),
and JVM-style memory sizes. Read by the planner's resources and the pool's ``cloud_resources``."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from dau_scheduler.errors import SizingError


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def memory_total(root: Path = Path("/")) -> int | None:
    """The memory this process may hold in bytes: the machine's, or its control group's limit
    where that is lower (a container's; DuckDB's default memory_limit reads it too), or None
    where neither can be read. ``root`` is where ``/proc`` and ``/sys`` are read from."""
    physical = _meminfo(root).get("MemTotal")
    if physical is None:
        try:
            physical = int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
        except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
            physical = None
    limits = [limit for limit, _ in _cgroups(root)]
    found = [v for v in (physical, *limits) if v is not None]
    return min(found) if found else None


def memory_available(root: Path = Path("/")) -> int | None:
    """Bytes this process may still take now without the kernel killing it: the machine's
    available memory (``MemAvailable``, reclaimable cache included), less where a control group's
    limit leaves less room (its limit less what it holds beyond reclaimable file cache); None
    where neither can be read."""
    found: list[int] = []
    available = _meminfo(root).get("MemAvailable")
    if available is not None:
        found.append(available)
    found += [max(0, limit - used) for limit, used in _cgroups(root) if used is not None]
    return min(found) if found else None


def _meminfo(root: Path) -> dict[str, int]:
    """``/proc/meminfo``'s lines in bytes."""
    try:
        text = (root / "proc/meminfo").read_text()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            found[name.strip()] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return found


#: A cgroup v1 limit at or above this is "no limit" (the kernel writes a page-rounded 2**63).
_NO_LIMIT = 1 << 62


def _cgroups(root: Path) -> list[tuple[int, int | None]]:
    """``(limit, bytes held less inactive file cache)`` of each memory control group this
    process is in or under that sets a limit: cgroup v2 (``memory.max``) and v1
    (``memory.limit_in_bytes``), the group and its ancestors up to the mount."""
    try:
        lines = (root / "proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        _, controllers, path = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        if controllers == "":
            mount, files = root / "sys/fs/cgroup", ("memory.max", "memory.current", "inactive_file")
        elif "memory" in controllers.split(","):
            mount = root / "sys/fs/cgroup/memory"
            files = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
        else:
            continue
        group = mount / path.lstrip("/")
        while True:
            limit = _read_int(group / files[0])
            if limit is not None and limit < _NO_LIMIT:
                used = _read_int(group / files[1])
                if used is not None:
                    used -= _stat(group / "memory.stat").get(files[2], 0)
                found.append((limit, used))
            if group == mount or mount not in group.parents:
                break
            group = group.parent
    return found


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # cgroup v2 writes "max" for no limit


def _stat(path: Path) -> dict[str, int]:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    pairs = (line.split() for line in lines)
    return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}


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


__all__ = [
    "cpu_count",
    "gpu_devices",
    "machine_summary",
    "memory_available",
    "memory_total",
    "parse_bytes",
]
