"""The GPU kit's check sequence, run once the kit is installed (docs/gpu.md).

    PYTHONPATH=/tmp/site:src python3 gpu/check.py --out $OUT            # on the lent H200
    PYTHONPATH=$SITE:src python3.12 gpu/check.py --dry-run --out DIR     # rehearsal, no CUDA

Each step runs in its own process with its own time limit, inside an overall ``--budget``, so a
step that hangs or crashes costs only itself; ``--steps`` reruns chosen steps. Every step's
output goes to ``OUT/check.log`` and its outcome to ``OUT/check.json`` as it finishes, so what
ran comes back even when the call is cut short. ``--dry-run`` skips only what needs CUDA (the
cudf import, ``dau link``) and runs the cudf steps on the Polars CPU engine at a small scale.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Distributions whose versions decide whether the GPU stack works; printed first.
VERSIONS = (
    "pyarrow",
    "cudf-polars-cu13",
    "pylibcudf-cu13",
    "libcudf-cu13",
    "rmm-cu13",
    "polars",
    "duckdb",
    "nvidia-nvjitlink",
    "cuda-bindings",
    "cuda-toolkit",
    "cupy-cuda13x",
    "numpy",
)


def step_versions(args: argparse.Namespace) -> None:
    from importlib import metadata

    smi = shutil.which("nvidia-smi")
    if smi:
        query = "--query-gpu=name,driver_version,memory.total"
        out = subprocess.run([smi, query, "--format=csv,noheader"], capture_output=True, text=True)
        print(f"nvidia-smi: {out.stdout.strip() or out.stderr.strip()}")
    else:
        print("nvidia-smi: not found")
    try:
        import cupy

        runtime = cupy.cuda.runtime.runtimeGetVersion()
        driver = cupy.cuda.runtime.driverGetVersion()
        print(f"CUDA runtime {runtime}, driver API {driver} (cupy {cupy.__version__})")
    except Exception as exc:  # noqa: BLE001 - a report line, whatever went wrong
        print(f"CUDA runtime: unavailable ({type(exc).__name__}: {exc})")
    for name in VERSIONS:
        try:
            print(f"{name}: {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            print(f"{name}: not installed")
    print(f"python: {sys.version.split()[0]} at {sys.executable}")


def step_requirements(args: argparse.Namespace) -> None:
    """Every requirement of every kit wheel, against what this interpreter really has."""
    from importlib import metadata

    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    env = {**default_environment(), "extra": ""}
    listed = (ROOT / "gpu" / "h200-packages.txt").read_text().splitlines()
    lent = {canonicalize_name(line.split("==")[0]) for line in listed if line[:1].isalnum()}
    unmet = elsewhere = 0
    kit = list(metadata.distributions(path=[args.site]))
    for dist in kit:
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            try:
                have = metadata.version(canonicalize_name(req.name))
            except metadata.PackageNotFoundError:
                have = None
            if have is not None and req.specifier.contains(have, prereleases=True):
                continue
            if args.dry_run and have is None and canonicalize_name(req.name) in lent:
                elsewhere += 1
                continue
            unmet += 1
            print(f"UNMET {dist.metadata['Name']}: {req} (have {have})")
    print(f"{len(kit)} kit distributions in {args.site}; {unmet} unmet requirements")
    if elsewhere:
        print(f"dry run: {elsewhere} requirements left to the lent machine's own packages")
    if unmet:
        raise SystemExit(1)


def step_cudf(args: argparse.Namespace) -> None:
    import cudf_polars
    import polars as pl

    frame = pl.LazyFrame({"k": [1, 1, 2], "v": [1.5, 2.5, 4.0]})
    out = frame.group_by("k").agg(pl.col("v").sum()).sort("k")
    got = out.collect(engine=pl.GPUEngine(raise_on_fail=True))
    print(f"cudf_polars {cudf_polars.__version__}: {got.to_dicts()}")
    if got.to_dicts() != [{"k": 1, "v": 4.0}, {"k": 2, "v": 4.0}]:
        raise SystemExit("the GPU engine gave a wrong answer on a three-row group-by")


def step_gpu_tests(args: argparse.Namespace) -> None:
    cmd = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider"]
    cmd += ["-o", "addopts=-ra --strict-markers", "-n", "4", "tests"]
    raise SystemExit(subprocess.run(cmd, cwd=ROOT).returncode)


def step_link(args: argparse.Namespace) -> None:
    cmd = [sys.executable, "-m", "dau_scheduler", "link", "--device", "cudf"]
    raise SystemExit(subprocess.run(cmd, cwd=ROOT).returncode)


def step_tpch(args: argparse.Namespace) -> None:
    from dau_scheduler import tpch

    t0 = time.perf_counter()
    tpch.generate(args.scale, _data(args))
    print(f"TPC-H SF {args.scale:g} in {_data(args)}: {time.perf_counter() - t0:.1f} s")


def step_split22(args: argparse.Namespace) -> None:
    """The 22 queries at device share 0.5 on the device, each checked against DuckDB and, at a
    scale with reference answers, against those (``tpch.compare_reference``)."""
    from dau_scheduler import Session, tpch
    from dau_scheduler.compare import compare_tables

    referenced = args.scale in tpch.ANSWER_SCALES
    rows = []
    with Session(_data(args), device=args.device) as session:
        for name, sql in tpch.queries().items():
            expected = session.host.cursor().sql(sql).to_arrow_table()
            t0 = time.perf_counter()
            result = session.sql(sql, device_share=0.5)
            seconds = time.perf_counter() - t0
            diff = compare_tables(result.table, expected)
            if diff is None and referenced:
                off = tpch.compare_reference(result.table, name, args.scale)
                diff = None if off is None else f"off the reference answer: {off}"
            ex = result.execution
            rows.append(
                {
                    "query": name,
                    "equal": diff is None,
                    "diff": diff,
                    "device_rows": ex.device_rows if ex else None,
                    "host_rows": ex.host_rows if ex else None,
                    "seconds": seconds,
                    "refusal": result.refusal,
                    "fallback": result.fallback,
                }
            )
            how = "split" if ex else "unsplit"
            note = result.refusal or result.fallback or ""
            print(f"{name}: {'equal' if diff is None else 'WRONG'} {how} {seconds:.3f}s {note}")
    (args.out / "split22.json").write_text(json.dumps(rows, indent=1))
    wrong = [r["query"] for r in rows if not r["equal"]]
    split = sum(r["device_rows"] is not None and r["device_rows"] > 0 for r in rows)
    print(
        f"{22 - len(wrong)} of 22 equal to DuckDB{' and the reference' if referenced else ''}; "
        f"{split} split with device rows; wrong: {wrong}"
    )
    if wrong:
        raise SystemExit(1)


#: Float expressions the Polars arm lets through (a row's value, a group's key), over a table
#: of 100,000 rows made by DuckDB (``_FLOAT_TABLE``).
FLOAT_EXPRESSIONS = (
    "ln(x + 1)",
    "exp(x / 100)",
    "sqrt(x)",
    "pow(x, 1.5)",
    "pow(y, 3)",
    "x / 7",
    "y / (x + 1)",
    "x * 0.1",
    "x * y",
    "f * 0.3",
    "f / 3",
    "sqrt(f)",
    "ln(f + 1)",
    "CAST(d AS DOUBLE)",
    "d * d",
    "d / 7",
    "n / 3",
    "CAST(n AS DOUBLE) * 1e-3",
    "round(y / 7)",
)
_FLOAT_TABLE = (
    "CREATE TABLE t AS SELECT i, (i * 7919 % 100003) / 101.0 + (i % 7) * 1e-3 AS x, "
    "(i * 104729 % 999983 - 499991) / 3.0 AS y, (i * 31 % 20011 / 17.0)::FLOAT AS f, "
    "(i * 13 % 1000003 / 1000.0)::DECIMAL(7, 3) AS d, i * 2654435761 % 1000003 - 500000 AS n "
    "FROM range(100000) r(i)"
)


def step_slt(args: argparse.Namespace) -> None:
    """The project's sqllogictest corpus (``tests/slt``: a file per class of wrong answer found
    against DuckDB, per aggregate kind and type family) on the device at share 0.5, DuckDB the
    oracle, in eight processes as ``probes`` (143 files took 211 s in one process on the
    Polars CPU engine in the fifty-fifth session); ``slt.json`` holds each file's outcomes and
    every defect's query and difference, ``slt.K.log`` each process's output. Fails on a wrong
    answer, a crash or an answer where DuckDB raises."""
    files = sorted(str(p) for p in (ROOT / "tests" / "slt").glob("*.test"))
    _slt_in_processes(args, files, "slt", 8)


#: The seed and the queries a probe draws for the ``probes`` step.
PROBE_SEED, PROBE_QUERIES = 3611, 40


def step_probes(args: argparse.Namespace) -> None:
    """Every random probe (``probes/*.py``: each draws queries of one kind over tables of odd
    values, a file per probe) at seed :data:`PROBE_SEED`, :data:`PROBE_QUERIES` queries each,
    on the device at share 0.5 against DuckDB, in eight processes (``probes.json``). What the
    GPU engine computes otherwise than the CPU one (a case mapping, a regex, a rounding) no
    stand-in here can show. Fails as ``slt`` does."""
    folder = (args.out / "probes").resolve()  # (each probe runs in its own folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for script in sorted((ROOT / "probes").glob("[!_]*.py")):
        target = folder / f"{script.stem}.test"
        drawn = [str(PROBE_SEED), str(target), str(PROBE_QUERIES)]
        if script.stem == "typed_expressions":  # (its arguments: SEED COUNT FILE)
            drawn = [drawn[0], drawn[2], drawn[1]]
        subprocess.run([sys.executable, str(script), *drawn], cwd=script.parent, check=True)
        files.append(str(target))
    _slt_in_processes(args, files, "probes", 8)


def _slt_in_processes(args: argparse.Namespace, files: list[str], name: str, count: int) -> None:
    """``files`` through the sqllogictest runner on the device at share 0.5 in ``count``
    processes: ``NAME.json`` (each file's outcomes, every defect), ``NAME.K.log``."""
    groups = [g for g in (files[k::count] for k in range(count)) if g]
    runs, logs = [], []
    for k, group in enumerate(groups):
        cmd = [sys.executable, "-m", "dau_scheduler.slt", *group, "--device", args.device]
        cmd += ["--share", "0.5", "--json", str(args.out / f"{name}.{k}.json")]
        logs.append((args.out / f"{name}.{k}.log").open("w"))  # (a pipe unread could fill)
        runs.append(subprocess.Popen(cmd, cwd=ROOT, stdout=logs[-1], stderr=subprocess.STDOUT))
    codes = [run.wait() for run in runs]
    for log in logs:
        log.close()
    totals: dict[str, int] = {}
    report: dict[str, Any] = {"device": args.device, "share": 0.5, "files": []}
    for k in range(len(groups)):
        part = json.loads((args.out / f"{name}.{k}.json").read_text())
        for outcome, number in part["totals"].items():
            totals[outcome] = totals.get(outcome, 0) + number
        report["files"] += part["files"]
    report["totals"] = totals
    (args.out / f"{name}.json").write_text(json.dumps(report, indent=1))
    print(f"{len(files)} files on {args.device}: {totals}")
    for entry in report["files"]:
        for detail in entry["details"]:
            print(f"{entry['path']}: {str(detail)[:600]}")
    if any(codes):
        raise SystemExit(1)


def step_floats(args: argparse.Namespace) -> None:
    """Each of :data:`FLOAT_EXPRESSIONS` on the device arm (share 1.0) against DuckDB: how many
    values differ in any bit, and whether a GROUP BY over it gives DuckDB's groups (a value an
    ulp off on the GPU is another group: a wrong answer). The CPU engine computes them all as
    DuckDB does (glibc's functions, IEEE arithmetic); CUDA's math functions may not."""
    import duckdb

    from dau_scheduler import Session
    from dau_scheduler.compare import compare_tables

    con = duckdb.connect()
    con.execute(_FLOAT_TABLE)
    rows, wrong = [], []
    with Session(con, device=args.device) as session:
        for expression in FLOAT_EXPRESSIONS:
            values = f"SELECT i, {expression} AS v FROM t ORDER BY i"
            result = session.sql(values, device_share=1.0)
            want = con.sql(values).to_arrow_table().column("v").to_pylist()
            got = result.table.column("v").to_pylist()
            if len(got) != len(want):
                raise SystemExit(f"{expression}: {len(got)} rows for DuckDB's {len(want)}")
            same = zip(got, want, strict=True)
            differ = sum(a != b and not (a != a and b != b) for a, b in same)
            keys = f"SELECT {expression} AS v, count(*) AS c FROM t GROUP BY v"
            grouped = session.sql(keys, device_share=0.5)
            diff = compare_tables(grouped.table, con.sql(keys).to_arrow_table(), ordered=False)
            refused = result.refusal or grouped.refusal
            row = {"expression": expression, "values_differ": differ, "group_by": diff}
            rows.append(row | {"refusal": refused})
            grouping = "equal" if diff is None else f"WRONG: {diff}"
            print(
                f"{expression}: {differ} of {len(want)} values differ in some bit; group by "
                f"{grouping}{'; refused: ' + refused if refused else ''}"
            )
            if diff is not None:
                wrong.append(expression)
    rows.append(_text_conversion(args.device))
    (args.out / "floats.json").write_text(json.dumps(rows, indent=1))
    if wrong:
        raise SystemExit(f"a GROUP BY over these gave other groups than DuckDB's: {wrong}")


#: Queries whose answers turn on how an engine compares NaN: DuckDB (and Polars' CPU engine)
#: find NaN equal to itself and above every number; cudf-polars 26.10 maps a comparison to
#: libcudf's, which reads as IEEE's (NaN equal to nothing). The Polars arm writes ``isnan(x)``
#: as ``x = NaN`` and lets float comparisons through on both engines; the CPU engine's MIN and
#: MAX of a float rank NaN from such a count (``arms/polars_floats.py``), refused on the GPU.
NAN_QUERIES = (
    "SELECT count(*) AS n FROM t WHERE x > 1.0",
    "SELECT count(*) AS n FROM t WHERE x = CAST('nan' AS DOUBLE)",
    "SELECT count(*) AS n FROM t WHERE x <> x",
    "SELECT count(*) AS n FROM t WHERE x >= CAST('inf' AS DOUBLE)",
    "SELECT k, max(x) AS hi, min(x) AS lo FROM t GROUP BY k ORDER BY k",
    "SELECT max(x) AS hi, min(x) AS lo FROM t",
    "SELECT x AS v, count(*) AS n FROM t GROUP BY x ORDER BY v",
    "SELECT i, x FROM t ORDER BY x, i",
)
#: ``isfinite``, ``isinf`` and ``isnan`` as the Polars arm writes them for both engines
#: (``polars_sql._float_class``), and a float sum's magnitude partial (``rewrite/overflow.py``):
#: comparisons with the infinities, which answer alike under DuckDB's order and IEEE's.
#: The arm lets them through on the GPU engine: one that differs fails the step.
NAN_SAFE_QUERIES = (
    "SELECT count(*) AS n FROM t WHERE x > CAST('-inf' AS DOUBLE) AND x < CAST('inf' AS DOUBLE)",
    "SELECT count(*) AS n FROM t WHERE x = CAST('inf' AS DOUBLE) OR x = CAST('-inf' AS DOUBLE)",
    "SELECT count(*) AS n FROM t "
    "WHERE NOT (x >= CAST('-inf' AS DOUBLE) AND x <= CAST('inf' AS DOUBLE))",
    "SELECT k, max(CASE WHEN x > CAST('-inf' AS DOUBLE) AND x < CAST('inf' AS DOUBLE) "
    "THEN abs(x) END) AS m, count(x) AS c FROM t GROUP BY k ORDER BY k",
)


def step_nan(args: argparse.Namespace) -> None:
    """Each of :data:`NAN_QUERIES` over a column of numbers, NaN, infinities, -0.0 and NULL,
    in Polars' SQL on the device's engine (cudf: the GPU engine; else the CPU engine) against
    DuckDB (``nan.json``): where they differ, the cudf arm must refuse what the query does to a
    float that may hold NaN. Informs; fails where an engine fails to run a query, or answers one
    of :data:`NAN_SAFE_QUERIES` otherwise."""
    import duckdb
    import polars as pl

    values = [1.5, float("nan"), None, float("inf"), -0.0, 0.0, float("-inf"), 2.0, float("nan")]
    rows = {"i": list(range(36)), "k": [i % 4 for i in range(36)]}
    rows["x"] = [values[i % len(values)] for i in range(36)]
    frame = pl.DataFrame(rows, schema={"i": pl.Int64, "k": pl.Int64, "x": pl.Float64})
    con = duckdb.connect()
    con.register("t", frame.to_arrow())
    engine: Any = pl.GPUEngine(raise_on_fail=True) if args.device == "cudf" else "streaming"
    context = pl.SQLContext(t=frame.lazy())
    report, differ, unsafe = [], 0, []
    for sql in (*NAN_QUERIES, *NAN_SAFE_QUERIES):
        want = [tuple(map(repr, r)) for r in con.sql(sql).fetchall()]
        got = [tuple(map(repr, r)) for r in context.execute(sql).collect(engine=engine).rows()]
        same = got == want if "ORDER BY" in sql else sorted(got) == sorted(want)
        differ += not same
        if not same and sql in NAN_SAFE_QUERIES:
            unsafe.append(sql)
        report.append({"query": sql, "same": same, "duckdb": want[:12], "engine": got[:12]})
        print(
            f"{'same' if same else 'DIFFERS'}: {sql}"
            + ("" if same else f"\n  duckdb {want[:6]}\n  engine {got[:6]}")
        )
    (args.out / "nan.json").write_text(
        json.dumps({"engine": str(engine), "queries": report}, indent=1)
    )
    total = len(NAN_QUERIES) + len(NAN_SAFE_QUERIES)
    print(f"{differ} of {total} queries answered otherwise than DuckDB on {args.device}")
    if unsafe:
        raise SystemExit(f"comparisons the arm lets through as NaN-safe differ: {unsafe}")


def _text_conversion(device: str) -> dict[str, Any]:
    """How many of 100,000 DECIMAL(18, 4) values the device's engine reads back from their text
    as another DOUBLE than DuckDB's conversion: the CPU engine converts a decimal to a float
    through its text, correctly rounded (``arms/polars_doubles.py``); on the GPU engine the arm
    refuses such conversions until this counts 0 there."""
    import duckdb
    import polars as pl

    from dau_scheduler.arms.polars_gpu import gpu_engine

    sql = (
        "SELECT ((i * 7919 % 100003 - 50000) * 1234567.0123 + i * 0.0001)::DECIMAL(18, 4) AS c "
        "FROM range(100000) r(i)"
    )
    con = duckdb.connect()
    table = con.sql(sql).to_arrow_table()
    want = con.sql(f"SELECT c::DOUBLE AS v FROM ({sql})").to_arrow_table().column("v").to_pylist()
    held = pl.col("c").cast(pl.Decimal(38, 12))  # (as the arm holds decimals)
    query = pl.from_arrow(table).lazy().select(held.cast(pl.String).cast(pl.Float64).alias("v"))
    try:
        frame = query.collect(engine=gpu_engine() if device == "cudf" else "cpu")
    except pl.exceptions.PolarsError as exc:  # (26.10: "Can't cast DECIMAL128 to STRING")
        print(f"decimal through text ({device}): the engine cannot: {str(exc)[-200:]}")
        return {"expression": "CAST(CAST(c AS VARCHAR) AS DOUBLE)", "unsupported": str(exc)}
    got = frame.get_column("v").to_list()
    differ = sum(a != b for a, b in zip(got, want, strict=True))
    print(f"decimal through text ({device}): {differ} of {len(want)} values differ in some bit")
    return {"expression": "CAST(CAST(c AS VARCHAR) AS DOUBLE)", "values_differ": differ}


def step_coprocessing(args: argparse.Namespace) -> None:
    cmd = [sys.executable, str(ROOT / "bench-queries" / "coprocessing.py"), "--data"]
    cmd += [str(_data(args)), "--device", args.device, "--runs", str(args.runs)]
    cmd += ["--json", str(args.out / "coprocessing.json")]
    cmd += ["--queries", args.queries] if args.queries else []
    raise SystemExit(subprocess.run(cmd, cwd=ROOT).returncode)


def step_executors(args: argparse.Namespace) -> None:
    """cudf-polars' in-memory and streaming executors on the cudf arm, beside DuckDB."""
    cmd = [sys.executable, str(ROOT / "bench-queries" / "gpu_executors.py"), "--data"]
    cmd += [str(_data(args)), "--queries", "q01,q06,q03", "--runs", "3"]
    cmd += ["--json", str(args.out / "executors.json")]
    raise SystemExit(subprocess.run(cmd, cwd=ROOT).returncode)


def step_calibration(args: argparse.Namespace) -> None:
    """Issue 12's calibration bar on the real device arm: does a 1% sample predict cuDF's time
    over the whole split table (the Polars CPU stand-in misses it; docs/benchmarks.md)?"""
    cmd = [sys.executable, str(ROOT / "bench-queries" / "calibration.py"), "--data"]
    cmd += [str(_data(args)), "--device", args.device, "--runs", "3", "--repeats", "9"]
    cmd += ["--json", str(args.out / "calibration.json")]
    raise SystemExit(subprocess.run(cmd, cwd=ROOT).returncode)


#: name -> (function, seconds allowed, needs CUDA), in the order that pays on a second run: what
#: the first H200 run (2026-12-04) measured and no code of ours changes (``floats``: the engine's
#: math; ``link``: the bus) runs last, after the steps that check this project's fixes
#: (``gpu-tests``, ``split22``, ``slt``) and those it could not run or finish (``executors``,
#: ``coprocessing``, ``calibration``); ``probes`` (new random queries) before those two.
STEPS: dict[str, tuple[Any, int, bool]] = {
    "versions": (step_versions, 30, False),
    "requirements": (step_requirements, 30, False),
    "cudf": (step_cudf, 120, True),
    "gpu-tests": (step_gpu_tests, 150, False),
    "tpch": (step_tpch, 90, False),
    "executors": (step_executors, 90, True),
    "split22": (step_split22, 150, False),
    "slt": (step_slt, 150, False),
    "coprocessing": (step_coprocessing, 240, False),
    "calibration": (step_calibration, 90, False),
    "nan": (step_nan, 30, False),
    "probes": (step_probes, 120, False),
    "floats": (step_floats, 45, False),
    "link": (step_link, 60, True),
}


#: A ``--dry-run``'s limits are this many times the device's: the rehearsal runs on two cores
#: the eight processes of ``slt`` and ``probes`` that the lent machine's sixteen run side by side
#: (fifty-fifth session, an idle 2-core machine: ``slt`` past 120 s, ``probes`` 99.6 s).
DRY_RUN_SLOWER = 2


def _data(args: argparse.Namespace) -> Path:
    return Path(args.data_root) / f"tpch-sf{args.scale:g}"


def run_steps(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    log = (args.out / "check.log").open("a")
    report_path = args.out / "check.json"
    report: dict[str, Any] = {"dry_run": args.dry_run, "device": args.device, "steps": {}}
    env = dict(os.environ)
    env["PATH"] = f"{Path(args.site) / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("DAU_CACHE_DIR", str(Path(args.data_root) / "dau-cache"))
    deadline = time.monotonic() + args.budget
    failed = 0
    for name in args.steps.split(","):
        _, allowed, needs_cuda = STEPS[name]
        left = deadline - time.monotonic()
        if args.dry_run and needs_cuda:
            outcome: dict[str, Any] = {"status": "skipped (needs CUDA; --dry-run)"}
        elif left < 5:
            outcome = {"status": "skipped (budget spent)"}
        else:
            limit = min(allowed * (DRY_RUN_SLOWER if args.dry_run else 1), left)
            cmd = [sys.executable, __file__, "--step", name, *_passthrough(args)]
            print(f"== {name} (limit {limit:.0f} s)", flush=True)
            log.write(f"== {name}\n")
            log.flush()
            t0 = time.perf_counter()
            code, text = _run_step(cmd, env, limit)
            seconds = time.perf_counter() - t0
            log.write(text)
            log.flush()
            print(text[-3000:], flush=True)
            status = "ok" if code == 0 else ("timed out" if code == 124 else f"failed ({code})")
            failed += code != 0
            outcome = {"status": status, "seconds": round(seconds, 2), "tail": text[-1500:]}
        report["steps"][name] = outcome
        report_path.write_text(json.dumps(report, indent=1))
        print(f"-- {name}: {outcome['status']}", flush=True)
    return 1 if failed else 0


def _run_step(cmd: list[str], env: dict[str, str], limit: float) -> tuple[int, str]:
    """``cmd``'s exit status (124: past ``limit`` seconds) and output. The step runs in a
    process group of its own, killed whole at the limit: the ``slt`` and ``probes`` steps'
    runner processes must not go on holding the GPU while the next step runs."""
    step = subprocess.Popen(
        cmd,
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = step.communicate(timeout=limit)
        return step.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(step.pid, signal.SIGKILL)
        out, _ = step.communicate()
        return 124, _text(out)


def _text(captured: bytes | str | None) -> str:
    """What a timed-out step printed (``TimeoutExpired`` holds bytes even with ``text=True``)."""
    if isinstance(captured, bytes):
        return captured.decode(errors="replace")
    return captured or ""


def _passthrough(args: argparse.Namespace) -> list[str]:
    out = ["--out", str(args.out), "--site", str(args.site), "--device", args.device]
    out += ["--scale", str(args.scale), "--data-root", str(args.data_root)]
    out += ["--runs", str(args.runs)] + (["--queries", args.queries] if args.queries else [])
    return out + (["--dry-run"] if args.dry_run else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "gpu-check-out")))
    parser.add_argument("--site", default=os.environ.get("SITE", "/tmp/site"))
    parser.add_argument("--dry-run", action="store_true", help="skip what needs CUDA")
    parser.add_argument("--device", default=None, help="default: cudf (polars with --dry-run)")
    parser.add_argument("--scale", type=float, default=None, help="default 1 (0.1 dry run)")
    parser.add_argument("--data-root", default="/tmp/dau-gpu-data")
    parser.add_argument("--runs", type=int, default=3, help="coprocessing runs per variant")
    parser.add_argument("--queries", default=None, help="coprocessing's (default: all its own)")
    parser.add_argument("--steps", default=",".join(STEPS), help="comma-separated subset")
    parser.add_argument("--budget", type=float, default=480.0, help="seconds for all steps")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.device = args.device or ("polars" if args.dry_run else "cudf")
    args.scale = args.scale or (0.1 if args.dry_run else 1.0)
    unknown = [s for s in args.steps.split(",") if s not in STEPS]
    if unknown:
        parser.error(f"unknown step(s) {unknown}; steps: {', '.join(STEPS)}")
    if args.step:
        STEPS[args.step][0](args)
        return 0
    return run_steps(args)


if __name__ == "__main__":
    sys.exit(main())
