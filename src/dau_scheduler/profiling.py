"""Measured profiles for a Session's queries: plan keys, host and device measurements, the fit,
and the cached, stale or missing lookup postures go through.

- The **plan key** names a query's shape and the data it runs on: a hash of the sqlglot-normalized
  SQL, the split table, and the tables' names and column types. Row counts are deliberately not in
  it: data that grew is the same plan with a stale profile, re-measured in place.
- A **host profile** runs the host arm's partial over 25/50/75/100% of the split table's rows,
  its *last* rows (the side of a cut the host takes in a split), with DuckDB's JSON profiling on;
  each run becomes a :class:`QueryProfile` through ``profile_from_duckdb`` (elapsed time is
  DuckDB's measured latency), and fixed and per-row seconds are fitted over the row counts
  (Theil-Sen, see :func:`fit`), so ``estimate`` extrapolates.
- A **device profile** times the device arm's partial over the table's *first* rows, the same
  counts (wall seconds); its host is the device's identity, its fixed cost is the
  ``device_fixed_seconds`` of ``plan_split``.

Both keep the medians they were fitted through (``QueryProfile.ranges``): ``sides.price`` reads
each arm's seconds at a cut off them, where rows cost unevenly along the table.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import sqlglot

from dau_scheduler import strategies
from dau_scheduler.decision import Profiles
from dau_scheduler.duckdb_profile import profile_from_duckdb
from dau_scheduler.errors import FoldError, PostureError, ProfileError
from dau_scheduler.profile import QueryProfile, host_identity
from dau_scheduler.rewrite.planner import CompiledSplit
from dau_scheduler.split import raise_for_arm

if TYPE_CHECKING:
    from dau_scheduler.session import Session

#: Row counts measured, as fractions of the split table, and runs per count (median kept).
FRACTIONS: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
REPEATS = 5


def plan_key(compiled: CompiledSplit, schema: dict[str, dict[str, str]]) -> str:
    """A stable key of the query's shape and the data it runs on (module docstring)."""
    return plan_keys(compiled.read_sql, [compiled.plan.split_table], schema)[0]


def plan_keys(
    read_sql: str, split_tables: Sequence[str | None], schema: dict[str, dict[str, str]]
) -> list[str]:
    """The plan key of ``read_sql`` split on each of ``split_tables`` (one normalization):
    ``plan_key`` before compiling, for every table the planner might pick."""
    try:
        normalized = sqlglot.parse_one(read_sql, read="duckdb").sql(
            dialect="duckdb", normalize=True, comments=False
        )
    except sqlglot.errors.SqlglotError:
        normalized = " ".join(read_sql.split())
    fingerprint = sorted((t, sorted(cols.items())) for t, cols in schema.items())
    payloads = (json.dumps([normalized, table, fingerprint]) for table in split_tables)
    return ["q-" + hashlib.sha256(p.encode()).hexdigest()[:20] for p in payloads]


def device_identity(arm_name: str) -> str:
    """The host field of a device profile: this machine and the device arm."""
    return f"{host_identity()}/{arm_name}"


def device_version(arm_name: str) -> str:
    """The engine version a device profile is measured under."""
    if arm_name == "duckdb":
        import duckdb

        return f"duckdb {duckdb.__version__}"
    version = f"polars {_polars_version()}"
    if arm_name == "cudf":
        try:
            import cudf_polars

            version += f" cudf-polars {cudf_polars.__version__}"
        except ImportError:
            version += " cudf-polars missing"
    return version


def _polars_version() -> str:
    """Polars' version without importing it (~0.1 s, which a one-shot query whose profile is
    cached would pay only to check it): from the imported module where it is, else from the
    installed package's metadata."""
    module = sys.modules.get("polars")
    if module is not None:
        return str(module.__version__)
    try:
        return importlib.metadata.version("polars")
    except importlib.metadata.PackageNotFoundError:
        import polars as pl  # (a copy without metadata: ask the module)

        return str(pl.__version__)


def host_version() -> str:
    import duckdb

    return f"duckdb {duckdb.__version__}"


def fit(points: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """``seconds = fixed + per_row * rows`` through the points, both terms >= 0.

    Theil-Sen: the slope is the median of the pairwise slopes and the intercept the median
    residual, so one noisy run (timings here vary by 10-20%) cannot tilt the line.
    """
    distinct = sorted({rows for rows, _ in points})
    if len(distinct) < 2:
        raise ProfileError("a profile needs measurements at two or more row counts")
    slopes = [
        (t2 - t1) / (r2 - r1)
        for i, (r1, t1) in enumerate(points)
        for r2, t2 in points[i + 1 :]
        if r2 != r1
    ]
    per_row = max(0.0, statistics.median(slopes))
    fixed = max(0.0, statistics.median(t - per_row * r for r, t in points))
    return fixed, per_row


def _prefixes(n: int, fractions: Sequence[float]) -> list[int]:
    sizes = sorted({max(1, round(f * n)) for f in fractions})
    if len(sizes) < 2:
        raise ProfileError(f"the split table has {n} rows: too few to measure two row counts")
    return sizes


def _host_run(
    session: Session, compiled: CompiledSplit, rows: int, key: str, *, trailing: bool = False
) -> QueryProfile:
    """One profiled run of the host partial over the first ``rows`` rows of the split table
    (``trailing``: the last ``rows``, the side of a cut the host takes in a split)."""
    start = session.row_counts[compiled.plan.split_table or ""] - rows if trailing else 0
    cursor = session.host.cursor()
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "profile.json"
        cursor.execute("SET enable_profiling = 'json'")
        cursor.execute(f"SET profiling_output = '{output}'")
        cursor.execute("SET profiling_mode = 'detailed'")
        try:
            session.host.run_partial_on(cursor, compiled, start, start + rows)
        finally:
            cursor.execute("SET enable_profiling = 'no_output'")
        return profile_from_duckdb(
            output,
            rows=rows,
            plan_key=key,
            engine_version=host_version(),
            split_table=compiled.plan.split_table,
            table_rows=session.row_counts,
        )


def fit_host(runs: Sequence[QueryProfile], *, trailing: bool = False) -> QueryProfile:
    """One host profile from profiled runs at two or more row counts (``_host_run``).

    The line is fitted through the median elapsed time at each row count (:func:`fit`). Each
    table's whole-read seconds are the median over every run (they do not depend on the range),
    shrunk together if noise would push their sum past the fitted fixed cost. With
    ``trailing``, the runs read the table's last rows (the largest run all of them) and the
    medians are kept as the profile's ``ranges``.
    """
    by_rows: dict[int, list[float]] = {}
    for run in runs:
        by_rows.setdefault(run.rows, []).append(run.estimate(run.rows))
    medians = [(rows, statistics.median(t)) for rows, t in sorted(by_rows.items())]
    fixed, per_row = fit(medians)
    total = medians[-1][0]
    ranges = tuple((total - rows, total, t) for rows, t in medians) if trailing else ()
    tables = sorted({t for run in runs for t in run.table_seconds})
    seconds = {t: statistics.median(run.table_seconds.get(t, 0.0) for run in runs) for t in tables}
    if sum(seconds.values()) > fixed:
        shrink = fixed / sum(seconds.values())
        seconds = {t: s * shrink for t, s in seconds.items()}
    last = max(runs, key=lambda run: run.rows)
    return QueryProfile(
        plan_key=last.plan_key,
        host=last.host,
        rows=last.rows,
        fixed_seconds=fixed,
        per_row_seconds=per_row,
        nodes=last.nodes,
        engine_version=last.engine_version,
        table_rows=last.table_rows if seconds else {},
        table_seconds=seconds,
        ranges=ranges,
    )


def measure(
    session: Session,
    compiled: CompiledSplit,
    *,
    arm: str,
    fractions: Sequence[float] = FRACTIONS,
    repeats: int = REPEATS,
) -> QueryProfile:
    """Measure the ``arm`` ("host" or "device") on ranges of the split table (the device's first
    rows, the host's last) and fit its profile."""
    if compiled.plan.refusal is not None or compiled.plan.split_table is None:
        raise ProfileError(
            f"this query is not split, so it has no arm to profile: {compiled.plan.refusal}"
        )
    key = session.plan_key(compiled)
    n = session.row_counts[compiled.plan.split_table]
    sizes = _prefixes(n, fractions)
    if arm == "host":
        # The host takes the rows after the cut, so it is measured on the table's last rows.
        try:
            runs = [
                _host_run(session, compiled, rows, key, trailing=True)
                for rows in sizes
                for _ in range(repeats)
            ]
            fold_seconds = _fold_seconds(session, compiled, n)
        except duckdb.Error as exc:  # (an overflow in a SUM the query above the block prunes)
            raise_for_arm("host", exc)
        profile = fit_host(runs, trailing=True)
        return profile.model_copy(update={"fold_seconds": fold_seconds})
    if arm != "device":
        raise ProfileError(f"unknown arm {arm!r}; expected 'host' or 'device'")
    device = session.device
    if device is None:
        raise ProfileError("this session has no device arm to profile")
    # Only the columns the query reads are read where rows are read per run (a connection's).
    strategies.columns_read(session, compiled, compiled.plan.split_table)
    points: list[tuple[int, float]] = []
    try:
        device.run_partial(compiled, 0, sizes[0])  # warm-up: first-call costs are not per query
        for rows in sizes:
            seconds = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                device.run_partial(compiled, 0, rows)
                seconds.append(time.perf_counter() - t0)
            points.append((rows, statistics.median(seconds)))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - the rows the arm read failed it: named, as a split's
        # (a column the Polars arm cannot load is found as its rows are read, not at planning;
        # Polars' PanicException is a BaseException, as a split's arm threads catch it)
        raise_for_arm("device", exc)
    fixed, per_row = fit(points)
    return QueryProfile(
        plan_key=key,
        host=device_identity(device.name),
        rows=sizes[-1],
        fixed_seconds=fixed,
        per_row_seconds=per_row,
        engine_version=device_version(device.name),
        ranges=tuple((0, rows, seconds) for rows, seconds in points),
    )


def _fold_seconds(session: Session, compiled: CompiledSplit, n: int) -> float:
    """The median of three folds of the host's partial over all ``n`` rows into the answer,
    as a split folds it (``execution.merge_rule``); 0 where the fold refuses those rows."""
    from dau_scheduler.execution import merge_rule

    partial = session.host.run_partial(compiled, 0, n)
    combine = merge_rule(session, compiled).combine
    seconds = []
    for _ in range(3):
        t0 = time.perf_counter()
        try:
            combine([partial])
        except FoldError:
            # The fold refuses these rows (a mode() whose largest counts tie): so would a
            # split's, which then answers the query unsplit. The arm's cost is still measured.
            return 0.0
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds)


def missing_message(arm: str, why: str) -> str:
    return (
        f"collaborative needs a {arm} profile for this query on this machine ({why}): run "
        f"`dau profile QUERY --data DIR --arm {arm}`, or Session.profile(sql, arm='{arm}'), or "
        "pass profile='auto' to measure it now"
    )


def profiles_for(
    session: Session, compiled: CompiledSplit, *, auto: bool, remeasure: bool = True
) -> tuple[QueryProfile, QueryProfile, list[str]]:
    """The cached host and device profiles, re-measured when stale; measured when missing only
    with ``auto``. Returns them and the arms measured now. With ``remeasure=False`` a stale
    profile counts as missing (nothing is measured)."""
    device = session.device
    if device is None:
        raise PostureError("collaborative needs a device arm; this session has none")
    assert compiled.plan.split_table is not None
    key = session.plan_key(compiled)
    n = session.row_counts[compiled.plan.split_table]
    measured: list[str] = []
    found: dict[str, QueryProfile] = {}
    for arm, who, version in _arms(device.name):
        profile = session.cache.get(key, who)
        if profile is not None and not profile.is_stale_for(n, engine_version=version()):
            found[arm] = profile
            continue
        if profile is None and not auto:
            raise PostureError(missing_message(arm, "none is cached"))
        if not remeasure:
            raise PostureError(missing_message(arm, "the cached one is stale"))
        found[arm] = measure(session, compiled, arm=arm)
        session.cache.put(found[arm])
        measured.append(arm if profile is None else f"{arm} (stale, re-measured)")
    return found["host"], found["device"], measured


def _arms(device: str) -> tuple[tuple[str, str, Callable[[], str]], ...]:
    """(arm, the identity its profiles are measured under, its engine version) of both arms.
    The versions are read only for a cached profile: Polars' is read without importing it."""
    return (
        ("host", host_identity(), host_version),
        ("device", device_identity(device), lambda: device_version(device)),
    )


def cached_fresh(
    session: Session, key: str, split_table: str
) -> tuple[QueryProfile, QueryProfile] | None:
    """The host and device profiles of ``key`` cached and fresh for ``split_table``'s rows, or
    None (``profiles_for`` without measuring: what ``optional`` finds)."""
    device = session.device
    if device is None:
        return None
    n = session.row_counts[split_table]
    found = []
    for _, who, version in _arms(device.name):
        profile = session.cache.get(key, who)
        if profile is None or profile.is_stale_for(n, engine_version=version()):
            return None
        found.append(profile)
    return found[0], found[1]


def describe(profile: QueryProfile, path: Path, *, engine_version: str) -> dict[str, Any]:
    """One cached profile as a row for ``dau profiles``: its figures, its file's age, and whether
    it is stale under ``engine_version`` (the row count it will price is not known here)."""
    return {
        "plan": profile.plan_key,
        "host": profile.host,
        "rows": profile.rows,
        "fixed_s": profile.fixed_seconds,
        "table_s": sum(profile.table_seconds.values()),
        "per_row_s": profile.per_row_seconds,
        "engine_version": profile.engine_version,
        "age_s": time.time() - path.stat().st_mtime,
        "stale": profile.is_stale_for(profile.rows, engine_version=engine_version),
    }


def decision_profiles(session: Session, compiled: CompiledSplit, *, auto: bool) -> Profiles:
    """The measured profiles a decision may ask for, and how to get them: ``required`` measures
    what is missing where ``auto``; ``optional`` gives what is cached, or None."""

    def required() -> tuple[QueryProfile, QueryProfile, tuple[str, ...]]:
        host, device, now = profiles_for(session, compiled, auto=auto)
        return host, device, tuple(now)

    def optional() -> tuple[QueryProfile, QueryProfile, tuple[str, ...]] | None:
        if auto:
            return required()
        try:
            host, device, _ = profiles_for(session, compiled, auto=False, remeasure=False)
        except PostureError:
            return None
        return host, device, ()

    return Profiles(required=required, optional=optional)


__all__ = [
    "FRACTIONS",
    "decision_profiles",
    "describe",
    "device_identity",
    "fit",
    "measure",
    "plan_key",
    "profiles_for",
]
