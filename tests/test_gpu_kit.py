"""The GPU kit's packing and closure check (gpu/kit.py), on small wheels made here."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _kit():
    spec = importlib.util.spec_from_file_location("gpu_kit", ROOT / "gpu" / "kit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_kit"] = module
    spec.loader.exec_module(module)
    return module


kit = _kit()


def _wheel(folder: Path, name: str, version: str, requires: list[str], size: int = 100) -> Path:
    path = folder / f"{name}-{version}-py3-none-any.whl"
    meta = "Metadata-Version: 2.1\nName: {}\nVersion: {}\n{}".format(
        name, version, "".join(f"Requires-Dist: {r}\n" for r in requires)
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}-{version}.dist-info/METADATA", meta)
        archive.writestr("payload.bin", bytes(range(256)) * (size // 256 + 1))
    return path


def test_pins_and_machine_list_parse() -> None:
    pins = kit.read_pins()
    assert pins["cudf-polars-cu13"] == Version("26.10.2")
    machine = kit.read_machine()
    assert machine["cupy-cuda13x"] == Version("14.2.0")
    assert machine["cuda-bindings"] is None  # listed, version not recorded


def test_cut_covers_every_byte_and_joins_back(tmp_path: Path) -> None:
    wheels = [
        _wheel(tmp_path, "big", "1.0", [], size=50_000),
        _wheel(tmp_path, "small", "1.0", [], size=3_000),
        _wheel(tmp_path, "mid", "1.0", [], size=9_000),
    ]
    capacity = 12_000 + kit.PART_SLACK
    parts = kit.cut(wheels, out=tmp_path / "out", part_bytes=capacity)
    assert all(sum(f.stat().st_size for f in p.iterdir()) <= capacity for p in parts)
    joined = tmp_path / "joined"
    joined.mkdir()
    for part in parts:
        for piece in part.iterdir():
            (joined / piece.name).write_bytes(piece.read_bytes())
    script = ROOT / "gpu" / "install.sh"
    env = {"KIT": str(joined), "SITE": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"}
    # install.sh joins and verifies before pip; stop it at pip with a Python that only exits 0.
    fake = tmp_path / "py"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    env["PYTHON"] = str(fake)
    subprocess.run(["bash", str(script)], check=True, env=env, capture_output=True)
    for wheel in wheels:
        assert (joined / wheel.name).read_bytes() == wheel.read_bytes()
    assert not list(joined.glob("*.whl.0*"))


def test_install_refuses_a_corrupt_piece(tmp_path: Path) -> None:
    wheels = [_wheel(tmp_path, "big", "1.0", [], size=40_000)]
    parts = kit.cut(wheels, out=tmp_path / "out", part_bytes=15_000 + kit.PART_SLACK)
    joined = tmp_path / "joined"
    joined.mkdir()
    for part in parts:
        for piece in part.iterdir():
            (joined / piece.name).write_bytes(piece.read_bytes())
    victim = sorted(joined.glob("*.whl.002"))[0]
    victim.write_bytes(b"x" + victim.read_bytes()[1:])
    env = {"KIT": str(joined), "SITE": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", str(ROOT / "gpu" / "install.sh")], env=env, capture_output=True)
    assert done.returncode != 0


def test_closure_names_conflicts_and_missing(tmp_path: Path) -> None:
    a = _wheel(tmp_path, "alpha", "1.0", ["beta<2", "gamma>=3", "numpy<2", "nowhere"])
    b = _wheel(tmp_path, "beta", "2.0", ['windows-only; sys_platform == "win32"'])
    pins = {"alpha": Version("1.0"), "beta": Version("2.0")}
    machine = {"gamma": None, "numpy": Version("2.5.2")}
    found = {f.requirement: f.status for f in kit.closure([a, b], pins, machine)}
    assert found == {
        "beta<2": "conflict",
        "gamma>=3": "machine-unrecorded",
        "numpy<2": "conflict",
        "nowhere": "missing",
    }
    assert len(kit.check(kit.closure([a, b], pins, machine))) == 3


def test_a_wheel_not_pinned_is_refused(tmp_path: Path) -> None:
    _wheel(tmp_path, "alpha", "1.0", [])
    _wheel(tmp_path, "alpha", "2.0", [])
    with pytest.raises(kit.KitError, match="not pinned"):
        kit.kit_wheels({"alpha": Version("1.0")}, tmp_path)
