"""Host-to-device link rates: measured on a GPU with CuPy, cached as LinkRate per transfer size.

The knee is the smallest measured transfer size that reaches ``KNEE_FRACTION`` of the best rate:
below it per-transfer setup costs rate, so streamed batches should not be smaller
(``batch_count(knee_bytes=...)``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from dau_scheduler.errors import ProfileError
from dau_scheduler.profile import LinkRate, ProfileCache, host_identity

SIZES: tuple[int, ...] = tuple(1 << p for p in (16, 18, 20, 22, 24, 26, 28))
KNEE_FRACTION = 0.8
SAMPLES = 5


def _cupy() -> Any:
    try:
        import cupy

        if int(cupy.cuda.runtime.getDeviceCount()) < 1:
            raise ProfileError("no CUDA GPU here: there is no host-to-device link to measure")
        return cupy
    except ImportError as exc:
        raise ProfileError(
            "no CUDA GPU here (CuPy is not installed): there is no host-to-device link to measure"
        ) from exc
    except RuntimeError as exc:  # CUDA driver missing or no device
        raise ProfileError(f"no usable CUDA GPU here: {exc}") from exc


def measure_link(
    device: str = "cudf", sizes: Sequence[int] = SIZES, samples: int = SAMPLES
) -> list[LinkRate]:
    """Time pinned host-to-device copies at each size; one LinkRate per size."""
    cupy = _cupy()
    import numpy as np

    rates = []
    for size in sizes:
        pinned = cupy.cuda.alloc_pinned_memory(size)
        host = np.frombuffer(pinned, dtype=np.uint8, count=size)
        host[:] = 1
        target = cupy.empty(size, dtype=cupy.uint8)
        target.set(host)  # warm-up
        cupy.cuda.runtime.deviceSynchronize()
        observed = []
        for _ in range(samples):
            t0 = time.perf_counter()
            target.set(host)
            cupy.cuda.runtime.deviceSynchronize()
            observed.append(size / (time.perf_counter() - t0))
        rates.append(
            LinkRate(
                host=host_identity(),
                device=device,
                bytes_per_second=statistics.median(observed),
                transfer_bytes=size,
                samples=tuple(observed),
                measured_at=time.time(),
            )
        )
    return rates


def knee_bytes(rates: Sequence[LinkRate]) -> int:
    """The smallest size reaching ``KNEE_FRACTION`` of the best measured rate."""
    if not rates:
        raise ProfileError("no link rates measured: run `dau link` on the GPU machine")
    best = max(r.bytes_per_second for r in rates)
    return min(r.transfer_bytes for r in rates if r.bytes_per_second >= KNEE_FRACTION * best)


def cached_rates(cache: ProfileCache, device: str, sizes: Sequence[int] = SIZES) -> list[LinkRate]:
    """The link rates of ``device`` on this host that the cache holds."""
    found = [cache.get_link_rate(device, size) for size in sizes]
    return [rate for rate in found if rate is not None]


__all__ = ["KNEE_FRACTION", "SIZES", "cached_rates", "knee_bytes", "measure_link"]
