"""Build the GPU kit: the CUDA 13 wheels for the lent H200, checked, and cut into call-sized parts.

    python gpu/kit.py build        # download + check + cut (what `make gpu-kit` runs)
    python gpu/kit.py rehearse     # join the parts as the device does, install, dry-run the check

The lent machine has Python 3.12 and CUDA 13 but no cuDF, DuckDB or Polars, reaches no package
index, and takes at most 64 MiB of files per call. So the kit is:

- download: exactly the pins in ``gpu/kit-cu13.txt`` (``pip download --no-deps``, CPython 3.12,
  manylinux x86_64) into ``.gpu/wheels``;
- check: every ``Requires-Dist`` of every wheel (markers evaluated for that interpreter) is met by
  the set itself or by the machine's own packages (``gpu/h200-packages.txt``); what is met only
  by a package whose version there is not recorded is listed, and ``gpu/check.py`` verifies it on
  the machine before anything runs;
- cut: the wheels packed into ``.gpu/part1`` ... of at most ``PART_BYTES`` each, a wheel larger
  than a part split by bytes into ``NAME.whl.001`` ...; each part carries ``SHA256SUMS.partK``
  for the whole wheels it holds pieces of, so ``gpu/install.sh`` verifies every joined wheel.

Standard library plus ``packaging`` (in the project's dev environment); no project imports.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PINS = HERE / "kit-cu13.txt"
MACHINE = HERE / "h200-packages.txt"
KIT = ROOT / ".gpu"
WHEELS = KIT / "wheels"
MIB = 1 << 20
#: A call carries at most 64 MiB: the repository (~0.4 MiB) and one part, with room to spare.
PART_BYTES = 58 * MIB
#: Kept free in every part for its SHA256SUMS file.
PART_SLACK = 64 * 1024
#: The interpreter the kit is for: the lent machine's /opt/torch/.venv python3.
TARGET_ENV = {
    "python_version": "3.12",
    "python_full_version": "3.12.3",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
    "extra": "",
}
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_24_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
)


class KitError(RuntimeError):
    """The kit cannot be built as pinned; the message names the wheel or requirement."""


# -- pins and the machine's packages ---------------------------------------------------------


def read_pins(path: Path = PINS) -> dict[str, Version]:
    """``name -> version`` from a pin file (``NAME==VERSION`` lines, ``#`` comments)."""
    pins: dict[str, Version] = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep or not version.strip():
            raise KitError(f"{path.name}:{number}: expected NAME==VERSION, got {line!r}")
        key = canonicalize_name(name.strip())
        if key in pins:
            raise KitError(f"{path.name}:{number}: {name.strip()} is pinned twice")
        pins[key] = Version(version.strip())
    return pins


def read_machine(path: Path = MACHINE) -> dict[str, Version | None]:
    """``name -> version`` (None when not recorded) of the packages already on the machine."""
    found: dict[str, Version | None] = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            found[canonicalize_name(name)] = Version(version) if version else None
    return found


# -- download --------------------------------------------------------------------------------


def download(pins: dict[str, Version], dest: Path = WHEELS) -> None:
    """``pip download --no-deps`` of exactly the pins, for CPython 3.12 manylinux x86_64."""
    dest.mkdir(parents=True, exist_ok=True)
    missing = [name for name, version in pins.items() if _wheel_for(dest, name, version) is None]
    if not missing:
        print(f"download: all {len(pins)} wheels already in {dest}")
        return
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    cmd += ["--python-version", "3.12", "--implementation", "cp", "-d", str(dest)]
    cmd += ["--abi", "cp312", "--abi", "abi3", "--abi", "none"]
    for platform in (*PLATFORMS, "any"):
        cmd += ["--platform", platform]
    cmd += [f"{name}=={pins[name]}" for name in missing]
    print(f"download: {len(missing)} wheels into {dest}")
    subprocess.run(cmd, check=True)
    for name in missing:
        if _wheel_for(dest, name, pins[name]) is None:
            raise KitError(f"pip download did not produce a wheel for {name}=={pins[name]}")


def _wheel_for(folder: Path, name: str, version: Version) -> Path | None:
    for path in folder.glob("*.whl"):
        dist, ver = _wheel_name(path)
        if dist == name and ver == version:
            return path
    return None


def _wheel_name(path: Path) -> tuple[str, Version]:
    parts = path.name.split("-")
    return canonicalize_name(parts[0]), Version(parts[1])


def kit_wheels(pins: dict[str, Version], folder: Path = WHEELS) -> list[Path]:
    """The pinned wheels in ``folder``; a missing or an extra wheel is an error."""
    wheels = sorted(folder.glob("*.whl"))
    by_name: dict[str, Path] = {}
    for path in wheels:
        name, version = _wheel_name(path)
        if name not in pins or pins[name] != version:
            raise KitError(
                f"{path.name} is not pinned in {PINS.name} (remove it or pin it): two versions "
                "of a package stop the whole install on the device"
            )
        by_name[name] = path
    absent = sorted(set(pins) - set(by_name))
    if absent:
        raise KitError(f"pinned but not downloaded: {', '.join(absent)} (run: gpu/kit.py build)")
    return [by_name[name] for name in pins]


# -- closure check ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One requirement of one wheel, and how it is met."""

    wheel: str
    requirement: str
    status: str  # "kit", "machine", "machine-unrecorded", "missing", "conflict"
    detail: str


def requirements(wheel: Path) -> list[Requirement]:
    """The wheel's ``Requires-Dist`` that apply to the target interpreter with no extra."""
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        message = Parser().parsestr(archive.read(meta).decode())
    env = {**default_environment(), **TARGET_ENV}
    out = []
    for line in message.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(env):
            out.append(req)
    return out


def closure(
    wheels: list[Path], pins: dict[str, Version], machine: dict[str, Version | None]
) -> list[Finding]:
    """How every requirement of every wheel is met (see ``Finding.status``)."""
    findings = []
    for wheel in wheels:
        for req in requirements(wheel):
            name = canonicalize_name(req.name)
            extras = f" (extras {sorted(req.extras)}: their packages are checked on the machine)"
            extra_note = extras if req.extras else ""
            if name in pins:
                ok = req.specifier.contains(pins[name], prereleases=True)
                status = "kit" if ok else "conflict"
                detail = f"kit has {pins[name]}; needs {req.specifier or 'any'}{extra_note}"
            elif name in machine:
                have = machine[name]
                if have is None:
                    status = "machine-unrecorded"
                    detail = f"on the machine, version not recorded; needs {req.specifier or 'any'}"
                else:
                    ok = req.specifier.contains(have, prereleases=True)
                    status = "machine" if ok else "conflict"
                    detail = f"machine has {have}; needs {req.specifier or 'any'}"
                detail += extra_note
            else:
                status = "missing"
                detail = f"neither in the kit nor on the machine; needs {req.specifier or 'any'}"
            findings.append(Finding(wheel.name.split("-")[0], str(req), status, detail))
    return findings


def check(findings: list[Finding]) -> list[Finding]:
    """Print the closure report; return the findings that stop the kit (missing, conflict)."""
    bad = [f for f in findings if f.status in ("missing", "conflict")]
    unrecorded = sorted({f.requirement for f in findings if f.status == "machine-unrecorded"})
    counts = {s: sum(f.status == s for f in findings) for s in ("kit", "machine")}
    print(
        f"check: {len(findings)} requirements: {counts['kit']} met by the kit, "
        f"{counts['machine']} by a recorded version on the machine, {len(unrecorded)} distinct "
        f"by a package whose version there is not recorded, {len(bad)} unmet"
    )
    for requirement in unrecorded:
        print(f"  on the machine, version checked there by gpu/check.py: {requirement}")
    for f in bad:
        print(f"  UNMET ({f.status}) {f.wheel}: {f.requirement}: {f.detail}")
    return bad


# -- cut -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """A whole wheel, or bytes ``[offset, offset + size)`` of one as ``NAME.whl.NNN``."""

    wheel: Path
    name: str
    offset: int
    size: int


def pieces(wheels: list[Path], capacity: int) -> list[Piece]:
    out = []
    for wheel in wheels:
        size = wheel.stat().st_size
        if size <= capacity:
            out.append(Piece(wheel, wheel.name, 0, size))
            continue
        for index, offset in enumerate(range(0, size, capacity), 1):
            out.append(
                Piece(wheel, f"{wheel.name}.{index:03d}", offset, min(capacity, size - offset))
            )
    return out


def pack(items: list[Piece], capacity: int) -> list[list[Piece]]:
    """First-fit decreasing: few parts, none over ``capacity``."""
    parts: list[list[Piece]] = []
    room: list[int] = []
    for piece in sorted(items, key=lambda p: (-p.size, p.name)):
        for index, free in enumerate(room):
            if piece.size <= free:
                parts[index].append(piece)
                room[index] -= piece.size
                break
        else:
            parts.append([piece])
            room.append(capacity - piece.size)
    return parts


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def cut(wheels: list[Path], out: Path = KIT, part_bytes: int = PART_BYTES) -> list[Path]:
    """Write ``out/part1`` ... (old parts removed); return them. Prints sizes and the count."""
    for old in out.glob("part*"):
        shutil.rmtree(old)
    capacity = part_bytes - PART_SLACK
    parts = pack(pieces(wheels, capacity), capacity)
    sums = {wheel.name: sha256(wheel) for wheel in wheels}
    written = []
    for number, part in enumerate(parts, 1):
        folder = out / f"part{number}"
        folder.mkdir(parents=True)
        for piece in part:
            with piece.wheel.open("rb") as src, (folder / piece.name).open("wb") as dst:
                src.seek(piece.offset)
                dst.write(src.read(piece.size))
        names = sorted({piece.wheel.name for piece in part})
        (folder / f"SHA256SUMS.part{number}").write_text(
            "".join(f"{sums[name]}  {name}\n" for name in names)
        )
        size = sum(f.stat().st_size for f in folder.iterdir())
        if size > part_bytes:
            raise KitError(f"part{number} is {size} bytes, over {part_bytes}")
        written.append(folder)
        print(f"  part{number}: {size / MIB:6.2f} MiB, {len(part)} pieces")
    total = sum(w.stat().st_size for w in wheels)
    print(
        f"cut: {len(wheels)} wheels, {total / MIB:.1f} MiB, into {len(written)} parts of at most "
        f"{part_bytes / MIB:.0f} MiB under {out}"
    )
    return written


# -- rehearse --------------------------------------------------------------------------------


#: What the lent machine's Python already has that the check needs (see gpu/h200-packages.txt).
REHEARSAL_PACKAGES = ("pytest", "pytest-xdist", "hypothesis", "typer", "rich", "numpy", "packaging")
REHEARSAL_VENV = KIT / "h200-venv"


def python312() -> str:
    """A Python 3.12 here: on PATH, or one pyenv holds (its shim may refuse when not selected)."""
    candidates = [shutil.which("python3.12") or ""]
    candidates += sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.12*/bin/python3.12"))
    for candidate in filter(None, candidates):
        done = subprocess.run([candidate, "--version"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.startswith("Python 3.12"):
            return candidate
    raise KitError("no Python 3.12 found here (the rehearsal installs the kit for 3.12)")


def rehearsal_python() -> str:
    """A Python 3.12 venv holding what the lent machine's Python holds that the check uses."""
    python = REHEARSAL_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([python312(), "-m", "venv", str(REHEARSAL_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *REHEARSAL_PACKAGES], check=True)
    return str(python)


def rehearse(python: str, skip_check: bool) -> None:
    """What the device calls do, here: receive every part into a kit folder, join, verify, and
    install with ``--no-index --no-deps --target``; then ``gpu/check.py --dry-run``."""
    parts = sorted(KIT.glob("part*"), key=lambda p: int(p.name[4:]))
    if not parts:
        raise KitError("no parts under .gpu; run: python gpu/kit.py build")
    scratch = Path(tempfile.mkdtemp(prefix="dau-gpu-rehearsal-"))
    env = {**os.environ, "KIT": str(scratch / "kit"), "SITE": str(scratch / "site")}
    env["PYTHON"] = (
        str(Path(python).absolute()) if os.sep in python else (shutil.which(python) or python)
    )
    # receive.sh moves what a call carried: give it copies (hard links), as a call's tree is one.
    carried = scratch / "tree"
    try:
        for part in parts:
            number = part.name[4:]
            shutil.copytree(part, carried / ".gpu" / part.name, copy_function=os.link)
            subprocess.run(
                ["bash", str(HERE / "receive.sh"), number], check=True, env=env, cwd=carried
            )
        subprocess.run(["bash", str(HERE / "install.sh")], check=True, env=env, cwd=ROOT)
        if not skip_check:
            env["PYTHONPATH"] = f"{env['SITE']}{os.pathsep}{ROOT / 'src'}"
            out = KIT / "rehearsal-out"
            shutil.rmtree(out, ignore_errors=True)
            cmd = [env["PYTHON"], str(HERE / "check.py"), "--dry-run", "--out", str(out)]
            subprocess.run(cmd, check=True, env=env, cwd=ROOT)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="download, check the closure, cut into parts")
    sub.add_parser("check", help="the closure check alone, over downloaded wheels")
    rehearsal = sub.add_parser("rehearse", help="join, install and dry-run the check here")
    rehearsal.add_argument("--python", help="a Python 3.12 (default: a venv in .gpu)")
    rehearsal.add_argument("--skip-check", action="store_true", help="install only")
    args = parser.parse_args(argv)
    try:
        if args.command == "rehearse":
            rehearse(args.python or rehearsal_python(), args.skip_check)
            return 0
        pins = read_pins()
        if args.command == "build":
            download(pins)
        wheels = kit_wheels(pins)
        if check(closure(wheels, pins, read_machine())):
            return 1
        if args.command == "build":
            cut(wheels)
    except KitError as exc:
        print(f"gpu kit: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
