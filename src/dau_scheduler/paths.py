"""Where the project keeps what it generates and measures: an environment override, else the
user's cache folder (XDG on Linux)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import platformdirs


def user_cache(override: str, folder: str) -> Path:
    """``$override`` when set, else ``folder`` under the user's dau-scheduler cache folder."""
    value = os.environ.get(override)
    if value:
        return Path(value)
    return Path(platformdirs.user_cache_dir("dau-scheduler")) / folder


def profile_cache_root() -> Path:
    """Measured profiles and link rates: ``$DAU_CACHE_DIR`` or ``.../dau-scheduler/profiles``."""
    return user_cache("DAU_CACHE_DIR", "profiles")


def data_root() -> Path:
    """Generated data: ``$DAU_DATA_DIR`` or ``.../dau-scheduler/data``."""
    return user_cache("DAU_DATA_DIR", "data")


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all: a reader never sees a torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


__all__ = ["data_root", "profile_cache_root", "user_cache", "write_atomic"]
