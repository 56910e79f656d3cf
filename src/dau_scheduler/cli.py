"""The ``dau`` command: run and explain split SQL, generate TPC-H data, and the demo."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import duckdb
import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from dau_scheduler import tpch
from dau_scheduler.cli_output import out, print_table, split_report
from dau_scheduler.compare import compare_tables
from dau_scheduler.errors import DauError
from dau_scheduler.profile import ProfileCache
from dau_scheduler.session import Session

app = typer.Typer(
    help="Split analytic SQL between a GPU arm and a DuckDB host arm.",
    no_args_is_help=True,
    add_completion=False,
)
tpch_app = typer.Typer(help="TPC-H data and queries.", no_args_is_help=True)
app.add_typer(tpch_app, name="tpch")

err = Console(stderr=True, soft_wrap=True)

DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="folder of <table>.parquet files, or a DuckDB database file (read-only); without "
        "it, an empty DuckDB whose queries read Parquet files inline (FROM 'dir/*.parquet')",
    ),
]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto, cudf, polars, duckdb or none")]
SplitOpt = Annotated[str | None, typer.Option("--split-table", help="table to cut between arms")]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option(help="a value for the query's next ? or $n, as text (repeat for more)"),
]
BudgetOpt = Annotated[
    float | None, typer.Option("--mem-budget", help="memory budget in MB (chunked/streamed)")
]
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster", help="run the host's rows on a dask cluster: local, local:N or tcp://HOST:PORT"
    ),
]


def _device(name: str) -> str | None:
    return None if name.lower() == "none" else name


def _query_text(query: str) -> str:
    path = Path(query)
    if query.endswith(".sql"):
        if not path.is_file():
            raise DauError(f"query file {query} does not exist")
        return path.read_text()
    named = tpch.queries()
    number = re.fullmatch(r"q(\d+)", query.strip().lower())
    if number is None:
        return query
    name = f"q{int(number[1]):02d}"  # q1 is q01
    if name not in named:
        raise DauError(f"unknown query {query!r}: the TPC-H queries are q01 .. q{len(named):02d}")
    return named[name]


@contextmanager
def _session(data: Path | None, **options: Any) -> Iterator[Session]:
    """A Session over ``--data``: a folder of Parquet files, or a DuckDB database file, whose
    tables the Session reads where they are through a read-only connection (as it reads a
    connection a Python caller gives it), closed when the command ends; without ``--data``,
    an empty in-memory DuckDB (the query's files read inline are its tables: decision 028)."""
    if data is not None and not data.is_file():
        with Session(data, **options) as session:
            yield session
        return
    try:
        con = duckdb.connect() if data is None else duckdb.connect(str(data), read_only=True)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        raise DauError(
            f"--data {data} is a file but not a DuckDB database DuckDB can open ({first}); "
            "give a DuckDB database file or a folder of <table>.parquet files"
        ) from None
    try:
        with Session(con, **options) as session:
            yield session
    finally:
        con.close()


def _fail(exc: Exception) -> typer.Exit:
    err.print(f"[bold red]error:[/] {exc}")
    return typer.Exit(code=2)


@app.command()
def run(
    query: Annotated[str, typer.Argument(help="a .sql file, a TPC-H name (q01), or SQL text")],
    data: DataOpt = None,
    device: DeviceOpt = "auto",
    posture: Annotated[
        str, typer.Option(help="cpu, offload, collaborative, adaptive")
    ] = "adaptive",
    share: Annotated[float | None, typer.Option(help="device share in [0, 1]")] = None,
    split_table: SplitOpt = None,
    format: Annotated[str, typer.Option("--format", help="table, csv or json")] = "table",
    mem_budget: BudgetOpt = None,
    strategy: Annotated[
        str | None, typer.Option(help="force in_memory, chunked or streamed (with --mem-budget)")
    ] = None,
    chunk_rows: Annotated[
        int | None, typer.Option(help="at most this many rows a chunk (with --mem-budget)")
    ] = None,
    trace: Annotated[
        Path | None, typer.Option(help="write the split's timeline as Trace Event JSON")
    ] = None,
    timeline: Annotated[
        Path | None, typer.Option(help="draw the split's timeline (PNG; needs '.[plot]')")
    ] = None,
    cluster: ClusterOpt = None,
    param: ParamOpt = None,
) -> None:
    """Run a query split between the arms; print the answer and the split report."""
    if format not in {"table", "csv", "json"}:
        raise _fail(DauError(f"unknown format {format!r}; expected table, csv or json"))
    try:
        sql = _query_text(query)
        with _session(
            data,
            device=_device(device),
            mem_budget_mb=mem_budget,
            strategy=strategy,
            chunk_rows=chunk_rows,
            lazy=True,
            cluster=cluster,
        ) as session:
            result = session.sql(
                sql, posture=posture, device_share=share, split_table=split_table, params=param
            )
    except DauError as exc:
        raise _fail(exc) from None
    print_table(result.table, format)
    err.print(split_report(result))
    if (trace or timeline) and result.execution is None:
        err.print("no timeline: the query ran unsplit")
    elif result.execution is not None:
        try:
            if trace:
                err.print(f"trace: {result.execution.to_chrome_trace(trace)}")
            if timeline:
                err.print(f"timeline: {result.execution.timeline(timeline)}")
        except DauError as exc:
            raise _fail(exc) from None


@app.command()
def explain(
    query: Annotated[str, typer.Argument(help="a .sql file, a TPC-H name (q01), or SQL text")],
    data: DataOpt = None,
    split_table: SplitOpt = None,
    cluster: ClusterOpt = None,
    param: ParamOpt = None,
) -> None:
    """Print the split plan: split table, partial and final SQL, aggregates, refusal; with
    --cluster, where the split table's rows would go over the cluster's workers."""
    placed: list[tuple[str, int, int]] = []
    try:
        with _session(data, device=None, lazy=cluster is not None, cluster=cluster) as session:
            plan = session.explain(_query_text(query), split_table=split_table, params=param)
            if session.cluster is not None and plan.refusal is None and plan.split_table:
                rows = session.row_counts[plan.split_table]
                where = getattr(session.cluster.tables, "placement", None)
                placed = where(0, rows) if callable(where) else []
    except DauError as exc:
        raise _fail(exc) from None
    out.print(f"[bold]split table:[/] {plan.split_table}")
    out.print(f"[bold]aggregates:[/] {', '.join(f'{o} ({k})' for o, k in plan.aggregates) or '-'}")
    if plan.refusal:
        out.print(f"[bold]refusal:[/] {plan.refusal}")
    else:
        out.print("[bold]partial SQL (each arm, over its rows of the split table):[/]")
        out.print(plan.partial_sql, markup=False, highlight=False)
        if plan.complement_sql:
            out.print("[bold]unmatched rows (the host, once, over the whole split table):[/]")
            out.print(plan.complement_sql, markup=False, highlight=False)
        out.print("[bold]final SQL (DuckDB, over the partials in arm order):[/]")
        out.print(plan.final_sql, markup=False, highlight=False)
    for worker, start, stop in placed:
        out.print(f"[bold]worker {worker}:[/] rows [{start}, {stop}) of {plan.split_table}")


@tpch_app.command("generate")
def tpch_generate(
    scale: Annotated[float, typer.Option("--scale", help="scale factor, e.g. 0.1 or 1")],
    out_dir: Annotated[Path, typer.Option("--out", help="output folder")],
) -> None:
    """Generate TPC-H Parquet data with tpchgen-cli (one file per table)."""
    try:
        folder = tpch.generate(scale, out_dir)
    except DauError as exc:
        raise _fail(exc) from None
    out.print(f"wrote TPC-H SF {scale:g} to {folder}")


@app.command()
def demo(
    scale: Annotated[float, typer.Option(help="TPC-H scale factor")] = 0.1,
    device: DeviceOpt = "auto",
    share: Annotated[
        float, typer.Option(help="device share; 0.5 runs both arms on every query")
    ] = (0.5),
    posture: Annotated[
        str | None, typer.Option(help="let a posture choose the share instead of --share")
    ] = None,
    cluster: ClusterOpt = None,
) -> None:
    """Split all 22 TPC-H queries and check every answer against DuckDB's unsplit answer."""
    try:
        data = tpch.cached(scale)
        session = Session(data, device=_device(device), cluster=cluster)
    except DauError as exc:
        raise _fail(exc) from None
    arm = session.device.name if session.device is not None else "none"
    how = f"posture {posture}" if posture else f"device share {share:g}"
    view = Table(
        "query",
        "split table",
        "device rows",
        "host rows",
        "split s",
        "unsplit s",
        "matches",
        "note",
        title=f"TPC-H SF {scale:g}: device arm {arm}, host arm duckdb, {how}",
    )
    notes: list[str] = []
    mismatches = 0
    with session, Progress(console=err, transient=True) as progress:
        named = tpch.queries()
        task = progress.add_task("splitting TPC-H", total=len(named))
        for name, sql in named.items():
            row, note, ok = _demo_row(session, name, sql, share, posture)
            mismatches += not ok
            if note:
                short = note if len(note) <= 150 else note[:147] + "..."
                notes.append(f"[{len(notes) + 1}] {name}: {short}")
                row.append(f"[{len(notes)}]")
            else:
                row.append("")
            view.add_row(*row)
            progress.advance(task)
    out.print(view)
    for line in notes:
        out.print(line, markup=False, highlight=False)
    out.print(
        f"{len(named) - mismatches} of {len(named)} answers match DuckDB's unsplit answer "
        "(same columns, Arrow types and rows; doubles within 1e-9 relative)"
    )
    out.print("split s: second run (the plan is compiled and cached by the first)")
    if mismatches:
        raise typer.Exit(code=1)


def _demo_row(
    session: Session, name: str, sql: str, share: float, posture: str | None
) -> tuple[list[str], str, bool]:
    kwargs: dict[str, object] = {"posture": posture} if posture else {"device_share": share}
    expected = session.host.cursor().sql(sql).to_arrow_table()
    t0 = time.perf_counter()
    session.host.cursor().sql(sql).to_arrow_table()
    unsplit = time.perf_counter() - t0
    session.sql(sql, **kwargs)  # type: ignore[arg-type]  # compiles and caches the plan
    t0 = time.perf_counter()
    result = session.sql(sql, **kwargs)  # type: ignore[arg-type]
    split = time.perf_counter() - t0
    diff = compare_tables(result.table, expected)
    ex = result.execution
    note = diff or result.refusal or result.fallback or ""
    row = [
        name,
        str(result.plan.split_table),
        str(ex.device_rows) if ex else "unsplit",
        str(ex.host_rows) if ex else "unsplit",
        f"{split:.3f}",
        f"{unsplit:.3f}",
        "yes" if diff is None else "NO",
    ]
    return row, str(note), diff is None


@app.command()
def profile(
    query: Annotated[str, typer.Argument(help="a .sql file, a TPC-H name (q01), or SQL text")],
    data: DataOpt = None,
    arm: Annotated[str, typer.Option(help="host or device")] = "host",
    device: DeviceOpt = "auto",
    split_table: SplitOpt = None,
    param: ParamOpt = None,
) -> None:
    """Measure one arm's profile for a query (the split table's first rows for the device, its
    last for the host, the side of a cut each takes) and cache it."""
    try:
        with _session(data, device=_device(device)) as session:
            measured = session.profile(
                _query_text(query), arm=arm, split_table=split_table, params=param
            )
            where = session.cache.root
    except DauError as exc:
        raise _fail(exc) from None
    view = Table("", "", title=f"{arm} profile", show_header=False)
    for key, value in [
        ("plan key", measured.plan_key),
        ("host", measured.host),
        ("rows", str(measured.rows)),
        ("fixed s", f"{measured.fixed_seconds:.6f}"),
        ("per-row s", f"{measured.per_row_seconds:.3e}"),
        *((f"rows {a}-{b} s", f"{seconds:.6f}") for a, b, seconds in measured.ranges),
        ("engine", measured.engine_version),
        ("cache", str(where)),
    ]:
        view.add_row(key, value)
    out.print(view)


@app.command()
def profiles() -> None:
    """List the cached profiles: plan, host, rows, fixed (of it, whole-table reads), per-row,
    engine version, age, stale."""
    from dau_scheduler.paths import profile_cache_root
    from dau_scheduler.profile import QueryProfile
    from dau_scheduler.profiling import describe, device_version, host_version

    root = profile_cache_root()
    view = Table(
        "plan",
        "host",
        "rows",
        "fixed s",
        "table reads s",
        "per-row s",
        "engine",
        "age",
        "stale",
        title=f"profiles in {root}",
    )
    import json as _json

    for path in ProfileCache(root).entries():
        if not path.name.startswith("profile--"):
            continue
        try:
            measured = QueryProfile.model_validate(_json.loads(path.read_text()))
        except (ValueError, TypeError):
            view.add_row(path.name, "unreadable", "", "", "", "", "", "", "")
            continue
        arm = measured.host.rsplit("/", 1)[-1] if "/" in measured.host else "host"
        current = host_version() if arm == "host" else device_version(arm)
        row = describe(measured, path, engine_version=current)
        view.add_row(
            row["plan"],
            row["host"],
            str(row["rows"]),
            f"{row['fixed_s']:.6f}",
            f"{row['table_s']:.6f}",
            f"{row['per_row_s']:.3e}",
            row["engine_version"],
            f"{row['age_s'] / 3600:.1f} h",
            "yes" if row["stale"] else "no",
        )
    out.print(view)


@app.command()
def plan(
    query: Annotated[str, typer.Argument(help="a .sql file, a TPC-H name (q01), or SQL text")],
    data: DataOpt = None,
    posture: Annotated[str, typer.Option(help="cpu, offload, collaborative, adaptive")] = (
        "collaborative"
    ),
    device: DeviceOpt = "auto",
    auto: Annotated[bool, typer.Option("--auto", help="measure missing profiles now")] = False,
    split_table: SplitOpt = None,
    param: ParamOpt = None,
) -> None:
    """The work split a query would run with, its rationale and predicted speedup."""
    try:
        with _session(data, device=_device(device)) as session:
            split = session.plan(
                _query_text(query),
                posture=posture,
                profile="auto" if auto else "cached",
                split_table=split_table,
                params=param,
            )
    except DauError as exc:
        raise _fail(exc) from None
    out.print(f"posture: {split.posture}")
    out.print(f"device share: {split.device_share:.4f}")
    speedup = f"{split.predicted_speedup:.3f}" if split.predicted_speedup else "-"
    out.print(f"predicted speedup over the host alone: {speedup}")
    out.print(f"rationale: {split.rationale}")


@app.command()
def link(
    device: Annotated[str, typer.Option(help="device name to store rates under")] = "cudf",
) -> None:
    """Measure host-to-device transfer rates at several sizes on a GPU, and the knee."""
    from dau_scheduler.link import knee_bytes, measure_link
    from dau_scheduler.paths import profile_cache_root

    try:
        rates = measure_link(device)
    except DauError as exc:
        err.print(f"[bold]dau link:[/] {exc}")
        raise typer.Exit(code=1) from None
    cache = ProfileCache(profile_cache_root())
    view = Table("bytes", "GB/s (median)", "spread", title=f"link rates, {device}")
    for rate in rates:
        cache.put_link_rate(rate)
        spread = max(rate.samples) / min(rate.samples) if rate.samples else 1.0
        view.add_row(
            str(rate.transfer_bytes), f"{rate.bytes_per_second / 1e9:.2f}", f"{spread:.2f}x"
        )
    out.print(view)
    out.print(f"knee: {knee_bytes(rates)} bytes")


def _catalog_path() -> Path:
    from dau_scheduler.paths import profile_cache_root

    return profile_cache_root() / "calibration.json"


@app.command()
def size(
    query: Annotated[str, typer.Argument(help="a .sql file, a TPC-H name (q01), or SQL text")],
    data: DataOpt = None,
    mem_budget: Annotated[float, typer.Option("--mem-budget", help="memory budget in MB")] = 2048,
    device: DeviceOpt = "auto",
    resources: Annotated[
        Path | None, typer.Option(help="a Resources JSON file (default: this machine)")
    ] = None,
) -> None:
    """The memory plan (strategy, chunks) and the placement of a query's split table over the
    devices; throughputs from the latest `dau calibrate` of this query when there is one."""
    from dau_scheduler.planner import CalibrationCatalog, Resources, plan
    from dau_scheduler.strategies import memory_plan

    try:
        # Planning runs no more than a sample: the tables are read lazily, with no limit set.
        with _session(data, device=_device(device), lazy=True) as session:
            sql = _query_text(query)
            compiled = session.compile(sql)
            if compiled.plan.refusal is not None:
                raise DauError(f"refused for splitting, runs unsplit: {compiled.plan.refusal}")
            memory = memory_plan(session, compiled, mem_budget)
            found = Resources.load(resources) if resources else None
            calibrated = CalibrationCatalog.load(_catalog_path()).resources_for(
                session.plan_key(compiled)
            )
            chosen = found or calibrated or Resources.discover()
            placed = plan(session, sql, chosen)
    except DauError as exc:
        raise _fail(exc) from None
    view = Table("", "", title=f"memory plan, budget {mem_budget:g} MB", show_header=False)
    view.add_row("split table", f"{memory.split_table} ({memory.rows} rows)")
    view.add_row("row bytes (columns read)", f"{memory.row_bytes:.1f}")
    view.add_row("data bytes", f"{memory.plan['bytes_total']}")
    view.add_row("strategy", memory.strategy)
    view.add_row("chunks", f"{memory.chunks} of {memory.chunk_rows} rows")
    view.add_row("recommended workers", str(memory.plan["recommended_workers"]))
    out.print(view)
    where = "file" if found else ("calibration" if calibrated else "this machine, uncalibrated")
    shards = Table(
        "device",
        "engine",
        "throughput",
        "rows",
        "sub-chunks",
        "bytes",
        title=f"placement ({where}); every device also holds {placed.model_bytes} model bytes",
    )
    for shard in placed.shards:
        shards.add_row(
            shard.device.name,
            shard.device.engine,
            f"{shard.device.throughput:.4g}",
            f"[{shard.start}, {shard.stop})",
            str(shard.sub_chunks),
            str(shard.total_bytes),
        )
    out.print(shards)
    for name, why in placed.excluded:
        out.print(f"{name}: no rows: {why}")
    out.print(f"one partial result: about {placed.statistic_bytes} bytes")


@app.command()
def calibrate(
    query: Annotated[str, typer.Argument(help="a .sql file, a TPC-H name (q01), or SQL text")],
    data: DataOpt = None,
    device: DeviceOpt = "auto",
    sample_size: Annotated[int | None, typer.Option(help="rows (default 1% of the table)")] = None,
    repeats: Annotated[
        int, typer.Option(help="timed pairs of the two sizes (the median pair is kept)")
    ] = 31,
) -> None:
    """Time the query's partial on every device here and store the throughputs."""
    from dau_scheduler.planner import DeviceSpec, Resources, calibrate_resources

    try:
        with _session(data, device=_device(device)) as session:
            found = Resources.discover()
            specs = list(found.devices)
            arm = session.device
            if (
                arm is not None
                and arm.name != "duckdb"
                and not any(d.engine == arm.name for d in specs)
            ):
                kind = "gpu" if arm.name == "cudf" else "cpu"
                specs.append(DeviceSpec(arm.name, kind, engine=arm.name))
            path = _catalog_path()
            calibrated = calibrate_resources(
                session,
                _query_text(query),
                Resources(tuple(specs)),
                sample_size=sample_size,
                repeats=repeats,
                catalog_path=path,
            )
            from dau_scheduler.planner import CalibrationCatalog

            record = CalibrationCatalog.load(path).latest()
    except DauError as exc:
        raise _fail(exc) from None
    assert record is not None
    view = Table(
        "device",
        "engine",
        "rows/s",
        "fixed s",
        title=f"calibration of {record.model_type} on {record.sample_size} rows",
    )
    for spec in calibrated.devices:
        fixed = record.fixed_seconds.get(spec.name)
        view.add_row(
            spec.name,
            spec.engine,
            f"{spec.throughput:.4g}",
            "not measured here" if fixed is None else f"{fixed:.5f}",
        )
    out.print(view)
    out.print(f"stored in {path}")


def main() -> None:
    app()


__all__ = ["app", "main", "split_report"]
