"""cudf-polars' own translator on this CPU machine, for the cudf arm's stand-in.

    python gpu/translator.py build   # what `make gpu-translator` runs
    python gpu/translator.py env     # the environment to run the stand-in with it

The GPU engine first translates the plan Polars gives it into its own; what it has no
translation for (a ``list.contains``, a cached ``strptime``, a date plus an interval) it
refuses there, before any GPU work. That step needs libcudf's libraries loaded but no GPU, so
``arms.cudf.CudfStandIn`` runs it on every plan where cudf-polars imports
(``arms.cudf.translating_engine``): the stand-in then refuses what the GPU engine would refuse
at translation. What fails only as it runs on the GPU (an unsupported cast, a kernel's own
error) still needs the device.

``build`` installs, under ``.gpu/translator``:

- ``site/``: the kit's RAPIDS wheels (``gpu/kit-cu13.txt``; ``make gpu-kit`` downloads them),
  and, built for this interpreter, ``nvtx`` (the kit's is a CPython 3.12 build), and
  ``cuda-bindings``, ``cuda-pathfinder`` and ``nvidia-ml-py``, which the lent machine has;
- ``lib/``: empty shared libraries under the sonames of the CUDA libraries libcudf links or
  kvikio loads that this machine lacks (NVRTC, nvJitLink, cuFile): the loader is satisfied,
  and translation calls none of them.

then imports the translator with that environment to check it. Standard library plus
``packaging``, and ``kit.py``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kit import KIT, KitError, _wheel_name, download, kit_wheels, read_pins

TRANSLATOR = KIT / "translator"
SITE = TRANSLATOR / "site"
LIB = TRANSLATOR / "lib"
#: The kit's wheels cudf-polars' translator imports (the engines themselves, Polars, DuckDB
#: and pyarrow, are the project's environment's own).
RAPIDS = frozenset(
    {
        "cudf-polars-cu13",
        "pylibcudf-cu13",
        "libcudf-cu13",
        "cudf-streaming-cu13",
        "libcudf-streaming-cu13",
        "rmm-cu13",
        "librmm-cu13",
        "kvikio-cu13",
        "libkvikio-cu13",
        "rapidsmpf-cu13",
        "librapidsmpf-cu13",
        "nvidia-libnvcomp-cu13",
        "ucxx-cu13",
        "libucxx-cu13",
        "libucx-cu13",
        "rapids-logger",
    }
)
#: Built for this interpreter: cudf-polars' requirements the lent machine has itself.
OWN = ("cuda-bindings>=13.0.1,<14", "cuda-pathfinder", "nvidia-ml-py")
#: The CUDA libraries' sonames that libcudf links (NVRTC, nvJitLink) and kvikio loads (cuFile).
STUBS = ("libnvrtc.so.13", "libnvJitLink.so.13", "libcufile.so.0", "libcufile_rdma.so.1")
CHECK = (
    "from cudf_polars.dsl.translate import Translator; import cudf_polars; "
    "print(cudf_polars.__version__)"
)


def environment() -> dict[str, str]:
    """The variables that make cudf-polars importable here (added to the current ones)."""
    src = str(KIT.parent / "src")
    path = os.pathsep.join(p for p in (str(SITE), src, os.environ.get("PYTHONPATH")) if p)
    libs = os.pathsep.join(p for p in (str(LIB), os.environ.get("LD_LIBRARY_PATH")) if p)
    return {"PYTHONPATH": path, "LD_LIBRARY_PATH": libs}


def build() -> None:
    pins = read_pins()
    download(pins)
    wheels = [w for w in kit_wheels(pins) if _wheel_name(w)[0] in RAPIDS]
    missing = RAPIDS - {_wheel_name(w)[0] for w in wheels}
    if missing:
        raise KitError(f"not pinned in the kit: {', '.join(sorted(missing))}")
    shutil.rmtree(TRANSLATOR, ignore_errors=True)
    LIB.mkdir(parents=True)
    own = TRANSLATOR / "wheels"
    pip = [sys.executable, "-m", "pip"]
    nvtx = f"nvtx=={pins['nvtx']}"
    subprocess.run(
        [*pip, "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(own), nvtx, *OWN],
        check=True,
    )
    subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-index", "--target", str(SITE)]
        + [str(w) for w in wheels]
        + [str(w) for w in sorted(own.glob("*.whl"))],
        check=True,
    )
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise KitError("no C compiler (cc) to build the empty CUDA library stand-ins")
    with tempfile.TemporaryDirectory() as scratch:
        empty = Path(scratch) / "empty.c"
        empty.write_text("/* an empty library under a CUDA library's soname */\n")
        for soname in STUBS:
            out = str(LIB / soname)
            flags = ["-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", out, str(empty)]
            subprocess.run([compiler, *flags], check=True)
    found = subprocess.run(
        [sys.executable, "-c", CHECK],
        env={**os.environ, **environment()},
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        raise KitError(f"cudf-polars does not import with it:\n{found.stderr[-2000:]}")
    print(f"translator: cudf-polars {found.stdout.strip()} imports here; run with")
    print_environment()


def print_environment() -> None:
    for name, value in environment().items():
        print(f"export {name}={value}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("build", "env"))
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            build()
        else:
            print_environment()
    except (KitError, subprocess.CalledProcessError) as exc:
        print(f"gpu translator: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
