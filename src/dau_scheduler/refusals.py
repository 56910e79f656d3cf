"""Why a compiled query is not split, asked once per query: the plan's own refusal, a column
type Arrow cannot carry, a collation the fold would lose, a regex match read otherwise by the
connection, a call whose value the split would change (a volatile macro, the query's own text,
the connection's own state), rowid gaps the device cannot number, what a cluster cannot carry,
what the device arm cannot run, or an ordering the device arm does not share with the
connection. None means the split may run."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from dau_scheduler.arms.duckdb import DuckDBArm
from dau_scheduler.function_catalog import called_names, read_as_own_function, shadowing_refusal
from dau_scheduler.guards import collated_tables, type_refusal
from dau_scheduler.rewrite.block_parts import function_name
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.overflow import MAGNITUDE
from dau_scheduler.strategies import columns_read, device_excluded
from dau_scheduler.tables import ParquetSource, ParquetViewSource

if TYPE_CHECKING:
    from dau_scheduler.rewrite.planner import CompiledSplit
    from dau_scheduler.session import Session


#: Functions whose value is the query's own text.
TEXT_DEPENDENT = frozenset({"alias", "current_query"})
#: Functions whose value describes the plan (``stats``: the statistics of what it scans, which
#: an arm's row range changes; DuckDB's test/sql/types/struct/struct_stats.test).
PLAN_DEPENDENT = frozenset({"stats"})
#: Functions that read the user's connection's own state (``SET VARIABLE``, settings that
#: ``duckdb_settings()`` does not list), which the arms' cursors do not share.
CONNECTION_STATE = frozenset({"getvariable", "current_setting"})


@dataclass(frozen=True)
class _Read:
    tables: frozenset[str]
    calls: frozenset[str]
    regex: bool
    #: A subquery read as a value (not a FROM or JOIN source, nor IN's or ANY's list).
    scalar_subquery: bool


def connection_state(
    host: DuckDBArm, place: str | None, tables: Collection[str] = ()
) -> str | None:
    """Why a query must be answered on the user's connection itself, before anything is
    planned, or None: the connection logs every statement (the split's own would be logged
    with the query's), stands elsewhere than at ``place`` where the Session listed its tables
    (``USE``), holds a temporary table or view named like one of ``tables`` (DuckDB reads that
    one for the name), has a transaction open (only it sees its changes), or forbids cross
    products. Asked after
    ``host.sync_settings()``; never on a database the host owns."""
    logged = host.logging()
    if logged:
        return (
            f"the given connection logs every statement ({logged}), so the split's own would "
            "be logged with the query's"
        )
    now = host.place()
    if now is not None and now != place:
        return (
            f"the given connection now stands in {now} (USE), not in {place} where this "
            "Session found its tables"
        )
    hidden = sorted(host.temporary() & {name.lower() for name in tables})
    if hidden:
        return (
            f"the given connection has a temporary table or view {hidden[0]}, which DuckDB "
            f"reads for that name (main.{hidden[0]} too) instead of this Session's table"
        )
    if host.in_transaction():
        return "the given connection has a transaction open; only it sees its changes"
    if host.forbids_cross_products():
        return (
            "the given connection forbids cross products (debug_force_no_cross_product), "
            "which the split's own queries may need where the query does not"
        )
    return None


class Refusals:
    """The refusals of one Session's queries, the costly answers kept per query."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._types: dict[tuple[str, str | None], str | None] = {}
        self._device: dict[tuple[str, str | None, str | None], str | None] = {}
        self._collated: dict[str, str | None] = {}
        self._reads: dict[str, _Read] = {}

    def types(self, compiled: CompiledSplit) -> str | None:
        key = (compiled.read_sql, compiled.plan.split_table)
        if key not in self._types:
            s = self.session
            in_place = (
                s.on_user_connection
                and not s.lazy
                and s.cluster is None
                and isinstance(s.device, (DuckDBArm, type(None)))
            )
            self._types[key] = type_refusal(
                compiled.read_sql, s.schema, compiled.partial_types, in_place=in_place
            )
        return self._types[key]

    def _read(self, compiled: CompiledSplit) -> _Read:
        """What the query's text reads and calls, parsed once."""
        found = self._reads.get(compiled.read_sql)
        if found is None:
            tree = sqlglot.parse_one(compiled.read_sql, read=DIALECT)
            found = _Read(
                tables=frozenset(t.name for t in tree.find_all(exp.Table)),
                calls=frozenset(function_name(f) for f in tree.find_all(exp.Func)),
                regex=any(True for _ in tree.find_all(exp.RegexpLike, exp.RegexpILike)),
                scalar_subquery=any(
                    not isinstance(sub.parent, (exp.From, exp.Join, exp.In, exp.Any, exp.All))
                    for sub in tree.find_all(exp.Subquery)
                ),
            )
            self._reads[compiled.read_sql] = found
        return found

    def collation(self, compiled: CompiledSplit) -> str | None:
        """A collation the fold would lose: the connection's default (asked every time on a
        user's connection), or a table or view the query reads declared with one (once per
        query)."""
        setting = self.session.host.collation()
        if setting:
            return (
                f"the connection sets default_collation = '{setting}', which the fold over "
                "Arrow partials does not keep"
            )
        if compiled.read_sql not in self._collated:
            tables = self._read(compiled).tables
            self._collated[compiled.read_sql] = collated_tables(self.session.host.cursor(), tables)
        return self._collated[compiled.read_sql]

    def regex(self, compiled: CompiledSplit) -> str | None:
        """A regular-expression match under ``regex_match_operator_semantics`` other than
        'partial': sqlglot reads ``a ~ b`` as ``regexp_matches`` (a partial match) and the
        rewrite writes it so, where the connection reads ``~`` as a full match."""
        semantics = self.session.host.regex_semantics()
        if semantics == "partial" or not self._read(compiled).regex:
            return None
        return (
            f"the connection sets regex_match_operator_semantics = '{semantics}', and the "
            "query matches a regular expression, which the rewrite writes as a partial match"
        )

    def calls(self, compiled: CompiledSplit) -> str | None:
        """A macro whose body is non-deterministic (it would run once per arm and again in the
        final query) or whose name sqlglot reads as its own function, or a function whose value
        is the query's own text (``alias``: the rewrite renames every output)."""
        calls = self._read(compiled).calls
        kinds = self.session.functions.kinds(compiled.read_sql)
        volatile = sorted(calls & kinds.volatile)
        if volatile:
            if volatile[0] in kinds.registered:
                return (
                    f"{kinds.what(volatile[0])} has side effects: it would run once per arm "
                    "and again in the final query"
                )
            return f"the macro {volatile[0]}() calls a non-deterministic function"
        # DuckDB's test style ``CREATE MACRO count_star() AS 42``: DuckDB calls it for count(*),
        # and each arm's partial counted 42 (84 folded for DuckDB's 42). Session.sql refuses it
        # before planning (answering.shadowed); explain and plan see it here.
        shadowing = shadowing_refusal(kinds)
        if shadowing is not None:
            return shadowing
        mine = {name for name, _ in kinds.user_macros} | kinds.registered
        shadowed = sorted(
            name for name in mine & called_names(compiled.read_sql) if read_as_own_function(name)
        )
        if shadowed:
            # sqlglot read DuckDB's test_alias_map_in_subquery.test's macro strip_null_value
            # as Snowflake's STRIP_NULL_VALUE and wrote a CASE: the input came back unchanged;
            # a registered space(BIGINT) was written as repeat(' ', k).
            return (
                f"{kinds.what(shadowed[0])} has the name of a function sqlglot knows, which "
                "the rewrite would write instead of the user's"
            )
        named = sorted(calls & TEXT_DEPENDENT)
        if named:
            return f"{named[0]}() returns the query's own text, which the rewrite changes"
        planned = sorted(calls & PLAN_DEPENDENT)
        if planned:
            return f"{planned[0]}() describes the plan's statistics, which a split changes"
        state = sorted(calls & CONNECTION_STATE)
        if state:
            return f"{state[0]}() reads the connection's own state, which the arms do not share"
        return None

    def _parquet_floats(self, compiled: CompiledSplit) -> set[str]:
        """Names of the floating-point columns of the tables ``compiled`` reads from Parquet
        files (a folder's, or a connection's views over them)."""
        s = self.session
        if compiled.partial is None:
            return set()
        read = {t.name.lower() for t in compiled.partial.find_all(exp.Table)}
        read.add((compiled.plan.split_table or "").lower())
        return {
            column.lower()
            for name in read
            if isinstance(s.source_of(name), (ParquetSource, ParquetViewSource))
            for column, kind in s.schema.get(name, {}).items()
            if kind.upper() in _FLOATS
        }

    def _parquet_tables(self, compiled: CompiledSplit) -> Iterator[tuple[str, ParquetSource]]:
        """The tables ``compiled`` reads (the split table too) that are Parquet files, by name."""
        tables = {*self._read(compiled).tables, (compiled.plan.split_table or "").lower()}
        for name in sorted(tables):
            source = self.session.source_of(name)
            if isinstance(source, ParquetSource):
                yield name, source

    def files_read_otherwise(self, compiled: CompiledSplit) -> str | None:
        """Where DuckDB reads a table's Parquet files otherwise than the arms: the connection
        lets DuckDB read them from its cache unvalidated (``DuckDBArm.file_cache_changed``),
        or the files' columns' types differ (``ParquetSource.mixed_types``: DuckDB casts every
        file to the first one's types, the arms read each as its own; ``typeof(x)`` grouped
        over a folder's parts of INT32 and INT64 gave two rows for DuckDB's one)."""
        cached = self.session.host.file_cache_changed()
        for name, source in self._parquet_tables(compiled):
            if cached:
                return (
                    f"the connection sets {cached[0]}: DuckDB may read table {name}'s Parquet "
                    "files from its cache as they were, the arms read them as they are"
                )
            if len(source.files) > 1:
                why = source.mixed_types()
                if why is not None:
                    return (
                        f"table {name}'s Parquet files differ ({why}): DuckDB reads every file "
                        "as the first one's types, the arms each file as its own"
                    )
        return None

    def device(self, compiled: CompiledSplit) -> str | None:
        """The device arm's answer to "can you run this partial?", asked once per query and
        partial (the planner asks of each candidate it compiles: ``compiling._device_vet``)."""
        key = (compiled.read_sql, compiled.plan.split_table, compiled.plan.partial_sql)
        if key not in self._device:
            assert self.session.device is not None
            self._device[key] = self.session.device.refusal(compiled)
        return self._device[key]

    def query(self, compiled: CompiledSplit) -> str | None:
        """The first reason ``compiled`` is not split whichever arms run it, or None."""
        s = self.session
        refusal = compiled.plan.refusal or self.types(compiled)
        if refusal is None:
            refusal = self.collation(compiled) or self.regex(compiled) or self.calls(compiled)
        cut = compiled.plan.split_table
        if (
            refusal is None
            and cut in s.gapped
            and not isinstance(s.device, DuckDBArm)
            and not (s.lazy and s.cluster is None)  # (read by rowid range, both arms alike)
        ):
            refusal = (
                f"table {cut} has deleted rows (its rowids have gaps), so the device arm's "
                "copy cannot be numbered as the host numbers it"
            )
        if refusal is None and cut is not None and "rowid" in map(str.lower, s.schema.get(cut, ())):
            # DuckDB's test_row_id.test: a table's own column named rowid stands where DuckDB's
            # row numbers would, so the arms' row ranges were ranges of its values.
            refusal = (
                f"table {cut} has a column named rowid, which hides the row numbers a split "
                "cuts it by"
            )
        if refusal is None:
            refusal = reserved_names(s.shape)
        if refusal is None and s.host.first_row_changed() and self._read(compiled).scalar_subquery:
            refusal = (
                f"the connection sets {s.host.first_row_changed()[0]}: a scalar subquery of many "
                "rows is then whichever row DuckDB's scan meets first, which a split changes"
            )
        if refusal is None and s.host.arrow_changed():
            refusal = (
                f"the connection sets {s.host.arrow_changed()[0]}, which changes the Arrow the "
                "partials cross in"
            )
        if refusal is None and s.lazy:  # (resident, DuckDB loaded the files: one set of types)
            refusal = self.files_read_otherwise(compiled)
        if refusal is None and s.lazy and isinstance(s.source_of(cut), ParquetSource):
            refusal = parquet_float_extremum(compiled, s.schema.get(cut or "", {}))
        if refusal is None and s.lazy:
            refusal = parquet_float_comparison(compiled, self._parquet_floats(compiled))
        source = s.source_of(cut)
        if (
            refusal is None
            and isinstance(source, ParquetSource)
            and (
                s.mem_budget_mb is not None
                or (s.cluster is not None and source.range_sql(0, 0) is None)
            )
        ):
            # Chunks under a budget are read by pyarrow, and so are a cluster's ranges where
            # DuckDB cannot number the files' rows (a column named file_row_number).
            refusal = source.reader_forms().read_otherwise(columns_read(s, compiled, cut or ""))
        if refusal is None and s.cluster is not None:
            refusal = self.held_files_changed(compiled) or s.cluster.refusal(compiled)
        return refusal

    def held_files_changed(self, compiled: CompiledSplit) -> str | None:
        """A cluster's workers hold the rows they read at opening, while DuckDB reads a
        table's files as they are when the query runs: where one changed since
        (``ParquetSource.changed``), the query is answered unsplit (1,000 rows for DuckDB's
        100,000 after a COPY over the file, split). So too a view over files under
        `key=value` folders (DuckDB's hive columns, ``hive.py``; the workers read none)."""
        for name, source in self._parquet_tables(compiled):
            if (file := source.changed()) is not None:
                return (
                    f"table {name}'s file {file.name} changed since the cluster's workers read "
                    "it: DuckDB reads it as it is now (open the Session again to split it)"
                )
            if isinstance(source, ParquetViewSource) and source.hive is not None:
                return (
                    f"table {name} holds hive columns DuckDB reads from its files' folders "
                    f"({', '.join(source.hive.types)}); the cluster's workers read the files' "
                    "own columns"
                )
        return None

    def device_arm(self, compiled: CompiledSplit) -> str | None:
        """Why the device arm cannot run ``compiled``'s partial (it is then answered unsplit),
        or None: asked only where the device may get rows."""
        s = self.session
        refusal = None
        if s.device is not None and not device_excluded(s, compiled):
            changed = () if isinstance(s.device, DuckDBArm) else s.host.semantics_changed()
            if changed:
                refusal = (
                    f"the connection sets {changed[0]}, which the {s.device.name} arm does not "
                    "follow (it computes as DuckDB's defaults do)"
                )
        if refusal is None and s.device is not None and not device_excluded(s, compiled):
            refusal = self.device(compiled)
            if (
                refusal is None
                and not isinstance(s.device, DuckDBArm)
                and compiled.partial is not None
                and compiled.partial.args.get("order") is not None
                and not s.host.orders_by_default()
            ):
                refusal = (
                    f"the {s.device.name} arm orders by its own defaults, and this connection "
                    "sets another NULL or sort order (default_null_order / default_order)"
                )
        return refusal


def reserved_names(shape: frozenset[tuple[Any, ...]]) -> str | None:
    """Why a split cannot run where the user's connection holds a table or view named like the
    split's own (``__dau_``, in the catalog ``shape`` of ``live.shape``): the final query reads
    the partials as ``__dau_partials``, and a catalog table of that name comes before them (a
    table ``__dau_partials`` holding a column ``__dau_p0`` made ``count(*) + 1`` 1001 for 11)."""
    names = sorted({str(row[0]) for row in shape if str(row[0]).lower().startswith("__dau_")})
    if not names:
        return None
    return (
        f"the connection holds {names[0]}, a name starting with __dau_, which is reserved for "
        "the split's own tables"
    )


_FLOATS = ("FLOAT", "DOUBLE", "REAL", "FLOAT4", "FLOAT8")


def parquet_float_extremum(compiled: CompiledSplit, columns: dict[str, str]) -> str | None:
    """MIN or MAX of a floating-point column of a split table the host scans as Parquet: DuckDB
    answers ``max(f)`` over a Parquet scan from the files' statistics, which skip NaN (3.0 for
    1.0, NaN, 3.0, a filter or not), where every arm's partial over a row range computes it
    (NaN): the unsplit answer is DuckDB's, so such a query is answered unsplit."""
    if compiled.partial is None:
        return None
    floats = {name.lower() for name, kind in columns.items() if kind.upper() in _FLOATS}
    for node in compiled.partial.find_all(exp.Min, exp.Max):
        if node.meta.get(MAGNITUDE):
            continue  # a float sum's bound (rewrite/overflow.py), sound either way
        for column in node.this.find_all(exp.Column) if node.this is not None else ():
            if column.name.lower() in floats:
                return (
                    f"{node.sql(dialect=DIALECT)} over a Parquet file's floating-point column: "
                    "DuckDB answers it from the file's statistics, which skip NaN"
                )
    return None


def parquet_float_comparison(compiled: CompiledSplit, floats: Collection[str]) -> str | None:
    """A filter (WHERE, a join's ON), or a comparison anywhere (a GROUP BY key, an output, a
    CASE), reading a floating-point column of a table read from Parquet files: DuckDB folds it
    by the files' statistics, which skip NaN, which DuckDB takes as the largest value. Over the
    files DuckDB skips a row group whose statistics rule a filter out (``x > 5``, ``x = 'nan'``,
    even ``isnan(x)``, count no NaN row), and folds ``x > 0`` to false outside a filter too
    where the largest number is 0 (``GROUP BY x > 0``: 2 groups for the 3 an arm reading the
    rows otherwise makes: a chunk read by pyarrow, the Polars arm's own scan). The unsplit
    answer is DuckDB's, so such a query is answered unsplit."""
    if compiled.partial is None or not floats:
        return None
    tree = compiled.partial
    decided = [w.this for w in tree.find_all(exp.Where)]  # a filter, whatever its form
    decided += [on for j in tree.find_all(exp.Join) if (on := j.args.get("on"))]
    for predicate in [*decided, *tree.find_all(exp.Predicate)]:
        for column in predicate.find_all(exp.Column):
            if column.name.lower() in floats:
                return (
                    f"a comparison of {column.sql(dialect=DIALECT)}, a Parquet file's "
                    "floating-point column: DuckDB folds it by the file's statistics, which "
                    "skip NaN"
                )
    return None


__all__ = [
    "Refusals",
    "connection_state",
    "parquet_float_extremum",
    "parquet_float_comparison",
    "reserved_names",
]
