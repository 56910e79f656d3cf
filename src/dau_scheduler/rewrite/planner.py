"""Compile one SQL query into a split: the partial query each arm runs, and the final query.

The steps, in order (DESIGN.md section 4):

1. parse and qualify the query (sqlglot, DuckDB dialect), then run the rewrite steps in ``STEPS``;
2. pick the split table (the caller's, else the largest base table with a splittable occurrence);
3. find the *split block*: the query block reading that occurrence in its FROM on a row-linear
   path, lifted through row-level derived tables;
4. build the partial block (the split block over the arm's rows, aggregates decomposed) and the
   final query (the original with the split block replaced by a re-aggregation of the partials,
   every output cast back to the unsplit type).

Anything not proven safe is refused by name; a refused query runs unsplit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

import pyarrow as pa
import sqlglot
from pydantic import BaseModel, ConfigDict
from sqlglot import exp
from sqlglot.errors import SqlglotError

from dau_scheduler.errors import SplitError
from dau_scheduler.rewrite import complement, decisions, overflow
from dau_scheduler.rewrite import partial_types as partial_types_
from dau_scheduler.rewrite.aggregates import aggregate_kind
from dau_scheduler.rewrite.arrival import arrival_dependence, per_arm_limit, unordered_limit
from dau_scheduler.rewrite.block_parts import (
    Refuse,
    aggregate_calls,
    output_name,
)
from dau_scheduler.rewrite.blocks import BuiltBlock
from dau_scheduler.rewrite.collation import collation_refusal
from dau_scheduler.rewrite.columns import unanalysable
from dau_scheduler.rewrite.columns_expansion import expand_columns
from dau_scheduler.rewrite.ctes import attach_ctes
from dau_scheduler.rewrite.dialect import DIALECT
from dau_scheduler.rewrite.final_aggregates import build_grouped, mark_inexact
from dau_scheduler.rewrite.fold import PARTIALS, FastFold, FastRows, fast_for_types
from dau_scheduler.rewrite.outputs import cast_outputs, partials_typed
from dau_scheduler.rewrite.pivots import pivots_as_filters
from dau_scheduler.rewrite.pushdown import push_filters
from dau_scheduler.rewrite.reading import (
    UNANALYSABLE,
    Binder,
    all_misread,
    ambiguous_order,
    read_back,
    written_otherwise,
)
from dau_scheduler.rewrite.row_block import build_rows
from dau_scheduler.rewrite.split_block import Candidate, candidates
from dau_scheduler.rewrite.views import View, ViewLookup, inline_views, namesake_elsewhere
from dau_scheduler.rewrite.volatility import NONDETERMINISTIC

#: Runs an ``overflow.stats_probe`` query: for each value, whether the data's statistics bound
#: it below ``overflow.NEAR_MAGNITUDE`` (all False where they cannot be read).
Magnitudes = Callable[[str], tuple[bool, ...]]

#: The table name an arm binds to its own row range of the split table.
PLACEHOLDER = "__dau_split__"
_RESERVED = "__dau_"


class SplitPlan(BaseModel):
    """What a split will run: the table cut between the arms, the partial and final SQL, the
    aggregates as ``(output, kind)``, or the refusal that sends the query unsplit to the host."""

    model_config = ConfigDict(frozen=True)

    split_table: str | None = None
    partial_sql: str | None = None
    final_sql: str | None = None
    aggregates: tuple[tuple[str, str], ...] = ()
    refusal: str | None = None
    complement_sql: str | None = None


@dataclass(frozen=True)
class CompiledSplit:
    """A plan plus what the arms and the merge need to run it; built once per query text."""

    sql: str
    plan: SplitPlan
    columns: tuple[str, ...]
    types: tuple[str, ...]
    partial: exp.Select | None = None
    final: exp.Expr | None = None
    partial_columns: tuple[str, ...] = ()
    partial_types: tuple[str, ...] = ()
    partial_schema: pa.Schema | None = None
    schema: pa.Schema | None = None
    fast: FastFold | FastRows | None = None
    ordered: bool = False
    #: Folds partials into one partial (``rewrite.blocks.refold_sql_for``); None: concatenate.
    refold_sql: str | None = None
    #: Over the partials, a row where DuckDB's finalize raises for a group the final query's
    #: filters may drop (``MergeStep.raises``): the split then answers unsplit.
    raise_check_sql: str | None = None
    #: The partial reads the split table's rows back unchanged (no filter, join, aggregate,
    #: DISTINCT or LIMIT): the postures run the host alone (decision 018).
    passes_rows_through: bool = False
    #: Each arm's SQL for this query, by the arm's key (a Polars arm's is its own).
    arm_sql: dict[str, str] = field(default_factory=dict, compare=False)
    #: What each arm's SQL assumed of a user's connection's rows, by the same key: (frame,
    #: column or None for its row count, the bound or None for "holds no NaN").
    arm_bounds: dict[str, list[tuple[str, str | None, Decimal | None]]] = field(
        default_factory=dict, compare=False
    )
    #: The columns of each base table the query reads (``rewrite.columns.query_columns`` over
    #: ``read_sql``), worked out once: ``strategies.columns_read``.
    columns_read: dict[str, set[str]] = field(default_factory=dict, compare=False)
    #: The views the query reads, and the query over their definitions (``rewrite.views``);
    #: with ``inlined_sql`` None, the views are read whole by name on every arm.
    views: tuple[View, ...] = ()
    inlined_sql: str | None = None
    #: The query with its ``COLUMNS(...)`` outputs written out (``rewrite.columns_expansion``),
    #: or None where it has none.
    expanded_sql: str | None = None
    #: The rows an outer join adds that the split table decides, as partial rows the host
    #: computes once (``rewrite.complement``); None where the block has no such join.
    complement: exp.Select | None = None
    #: DuckDB's statistics of the block's float sums' values (``overflow.stats_probe``), and
    #: which of them they bounded below the limit when compiled (those sums carry no magnitude
    #: partial): the plan holds while the data's statistics say the same
    #: (``compiling.plan_holds``). None where no float sum was typed unbounded.
    magnitude_sql: str | None = None
    magnitudes_below: tuple[bool, ...] = ()

    @property
    def splittable(self) -> bool:
        return self.plan.refusal is None

    @property
    def read_sql(self) -> str:
        """The query as the split reads it: ``sql`` over its views' definitions. ``sql`` is
        what an unsplit answer runs."""
        return self.inlined_sql or self.expanded_sql or self.sql


def _mark(tree: exp.Expr, occurrence: exp.Table, block: exp.Select) -> None:
    for node in tree.walk():
        node.meta.pop("dau", None)
    occurrence.meta["dau"] = "occurrence"
    block.meta["dau"] = "block"


def _marked(tree: exp.Expr, mark: str) -> exp.Expr:
    for node in tree.walk():
        if node.meta.get("dau") == mark:
            return node
    raise SplitError(f"internal: lost the {mark} while rewriting")


def _placeholder(occurrence: exp.Table) -> exp.Table:
    alias = occurrence.alias or occurrence.name
    return exp.Table(
        this=exp.to_identifier(PLACEHOLDER),
        alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)),
    )


def compile_split(
    sql: str,
    *,
    row_counts: dict[str, int],
    schema: dict[str, dict[str, str]],
    aggregate_names: frozenset[str],
    binder: Binder,
    columns: Sequence[str],
    types: Sequence[str],
    output_schema: pa.Schema | None = None,
    split_table: str | None = None,
    place: tuple[str, str] = ("memory", "main"),
    views: ViewLookup | None = None,
    vet: Callable[[CompiledSplit], str | None] | None = None,
    magnitudes: Magnitudes | None = None,
) -> CompiledSplit:
    """Compile ``sql`` into a :class:`CompiledSplit`, or one that carries its refusal.

    ``row_counts`` and ``schema`` describe the tables both arms hold, which live in ``place``
    (database, schema); ``aggregate_names`` are the engine's aggregate functions (so an aggregate
    sqlglot does not know is still seen as one); ``binder`` types SQL without running it;
    ``columns``/``types`` are the unsplit output; ``vet`` says why a compiled candidate should
    give way to the next one (its device arm cannot run it), or None: where every candidate
    gives way, the first is returned, to be refused where it is answered. ``magnitudes`` runs
    a statistics probe of float sums' values (``overflow.stats_probe``) and says which it
    bounds below the limit; None: every float sum the types leave unbounded is guarded.
    """

    views_read: tuple[View, ...] = ()
    inlined_sql: str | None = None
    expanded_sql: str | None = None

    def refused(
        reason: str, table: str | None = None, aggregates: Sequence[tuple[str, str]] = ()
    ) -> CompiledSplit:
        return CompiledSplit(
            sql,
            SplitPlan(split_table=table, refusal=reason, aggregates=tuple(aggregates)),
            tuple(columns),
            tuple(types),
            views=views_read,
            inlined_sql=inlined_sql,
            expanded_sql=expanded_sql,
        )

    if _RESERVED in sql.lower():
        return refused(f"names starting with {_RESERVED} are reserved for the split's own tables")
    try:  # (writing raises too on a JSON path sqlglot reads but cannot write: $..b)
        original: exp.Expr = sqlglot.parse_one(sql, read=DIALECT)
        rewritten = written_otherwise(sql, original.sql(dialect=DIALECT))
    except UNANALYSABLE as exc:
        return refused(unanalysable(exc))
    if rewritten is not None:
        return refused(rewritten)
    expanded = expand_columns(original, binder, columns, types)
    expanded = pivots_as_filters(expanded, binder, columns, types, aggregate_names)
    if expanded is not original:
        original, expanded_sql = expanded, expanded.sql(dialect=DIALECT)
    over = inline_views(original, schema, place, views) if views is not None else None
    read: exp.Expr | str = ""
    if over is not None and over.views:
        text = over.tree.sql(dialect=DIALECT)  # before the analysis rewrites the tree
        read = read_back(over.tree, schema, binder, types)
        if isinstance(read, exp.Expr):
            inlined_sql = text
    if over is not None:
        views_read = over.seen  # inlined or not: the plan is stale once one of them changes
    if inlined_sql is None:
        # Over its definitions a view may read what the split cannot place (its rowid, a
        # USING star sqlglot expands otherwise): the query as written reads the view whole on
        # every arm, as before views were inlined.
        read = read_back(original, schema, binder, types)
    if isinstance(read, str):
        return refused(over.refusal if over is not None and over.refusal else read)
    tree = read
    misread = all_misread([sql, *(view.sql for view in views_read)], tree)
    written = over.tree if over is not None and inlined_sql is not None else original
    misread = misread or ambiguous_order(written)
    if misread is not None:
        return refused(misread)

    sample = next(tree.find_all(exp.TableSample), None)
    if sample is not None:
        return refused(
            f"the query samples rows ({sample.sql(dialect=DIALECT)}): which rows a sample "
            "keeps depends on the rows and order each engine sees"
        )
    arrival = arrival_dependence(tree, aggregate_names)
    if arrival is not None:
        return refused(arrival)
    collated = collation_refusal(tree)
    if collated is not None:
        return refused(collated)
    namesake = namesake_elsewhere(tree, schema, place)
    if namesake is not None:
        return refused(
            f"{namesake.sql(dialect=DIALECT)} is another table than this Session's "
            f"{namesake.name} (in {'.'.join(place)}), which the split would read instead"
        )
    held = sorted(
        {t.name.lower() for t in tree.find_all(exp.Table) if t.name.lower() in schema},
        key=lambda name: (-row_counts.get(name, 0), name),
    )
    tables = [split_table.lower()] if split_table else held
    reasons: list[str] = []
    first_refusal: tuple[str, str, list[tuple[str, str]]] | None = None
    first_vetoed: CompiledSplit | None = None
    for table in tables:
        for found in candidates(tree, table, aggregate_names):
            if isinstance(found, str):
                reasons.append(found)
                continue
            try:
                compiled = _compile_candidate(
                    sql,
                    tree,
                    found,
                    aggregate_names,
                    binder,
                    columns,
                    types,
                    output_schema,
                    magnitudes,
                )
                # views inlined (``inlined_sql``) or read whole by name
                compiled = replace(compiled, views=views_read, inlined_sql=inlined_sql)
                compiled = replace(compiled, expanded_sql=expanded_sql)
                vetoed = vet(compiled) if vet is not None else None
                if vetoed is None:
                    return compiled
                first_vetoed = first_vetoed or compiled
                raise Refuse(vetoed)
            except Refuse as refusal:
                aggregates = _aggregates_of(found.block, aggregate_names)
                if first_refusal is None:
                    first_refusal = (str(refusal), table, aggregates)
                reasons.append(str(refusal))
    if first_vetoed is not None:  # (its arm says why at the query's answer, as without ``vet``)
        return first_vetoed
    if first_refusal is not None:
        return refused(*first_refusal)
    reason = reasons[0] if reasons else "the query reads no table both arms hold"
    return refused(reason, tables[0] if tables else None)


def _aggregates_of(block: exp.Select, names: frozenset[str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for call in aggregate_calls(block, names):
        pair = (output_name(call, block), aggregate_kind(call))
        if pair not in pairs:
            pairs.append(pair)
    return pairs


def _compile_candidate(
    sql: str,
    tree: exp.Expr,
    found: Candidate,
    names: frozenset[str],
    binder: Binder,
    columns: Sequence[str],
    types: Sequence[str],
    output_schema: pa.Schema | None,
    magnitudes: Magnitudes | None = None,
) -> CompiledSplit:
    _mark(tree, found.occurrence, found.block)
    block = push_filters(found.block, names, lambda text: binder(text)[1])
    aggregated = bool(aggregate_calls(block, names) or block.args.get("group"))
    limited = unordered_limit(tree, found.block, aggregated, names) or per_arm_limit(block, names)
    if limited is not None:
        raise Refuse(limited)
    nested = found.block.parent is not None  # a query around it may drop groups
    built = build_grouped(block, names, nested=nested) if aggregated else build_rows(block, names)
    bound = _bind(built, tree, found, block, binder)
    bound_types = dict(zip(*bound[2:4], strict=True))
    summed = overflow.read_columns(built.sums, bound_types)
    typed = _column_types(summed, bound[0], found, binder) if summed else {}
    magnitude_sql: str | None = None
    below: tuple[bool, ...] = ()
    if adding := overflow.float_calls(built.sums, bound_types, typed):
        if magnitudes is not None:  # the data's statistics may bound what the types do not
            stats = _stats_bounded(built, adding, bound[0], found, magnitudes)
            magnitude_sql, below, adding = stats
        if adding:
            built = build_grouped(block, names, nested=nested, floats=adding)  # (overflow.py)
            bound = _bind(built, tree, found, block, binder)
    partial, unmatched, names_out, types_out, schema_out = bound
    # TPC-DS Q5's UNION branch SELECT ... FROM store_sales: each arm reads its rows back and the
    # final query does all the work. Exact, but never faster: the postures run the host alone.
    passes_through = not aggregated and not any(
        built.partial.args.get(k) for k in ("where", "joins", "limit", "distinct", "laterals")
    )
    width = len(partial.expressions)
    partial_columns, partial_types = names_out[:width], types_out[:width]
    complement.check_binds(unmatched, binder, partial_columns, partial_types)
    by_name = dict(zip(partial_columns, partial_types, strict=True))
    if (numeric := partial_types_.numbers_only(built.calls, by_name)) is not None:
        raise Refuse(numeric)
    for node in built.replacement.walk():
        if "dau_cast" in node.meta:
            index = node.meta.pop("dau_cast")
            try:
                to = exp.DataType.build(types_out[width + index], dialect=DIALECT)
            except SqlglotError as exc:  # TIMESTAMPTZ_NS, "NULL" (DuckDB's parquet-testing)
                raise Refuse(
                    f"the partial's type {types_out[width + index]} is one the rewrite cannot "
                    "write back"
                ) from exc
            node.set("to", to)
            if isinstance(node, exp.Cast):
                read = [by_name.get(c.name, "") for c in node.find_all(exp.Column)]
                integers = bool(read) and all(partial_types_.INTEGER.match(t) for t in read)
                decisions.mark(node, node.meta.pop("dau_kind", ""), integers)
    mark_inexact(built.replacement, types_out[width:])  # sums over a median's rows

    final_tree = tree.copy()
    target = _marked(final_tree, "block")
    fast = (
        fast_for_types(built.fast, output_schema, schema_out)
        if target is final_tree and output_schema is not None
        else None
    )
    replacement = built.replacement
    if not aggregated:
        replacement.meta[decisions.ROWS] = True
    if target is final_tree:
        if final_tree.args.get("with_") is not None:
            replacement.set("with_", final_tree.args["with_"].copy())
        final_tree = replacement
    else:
        target.replace(replacement)
    final_tree = cast_outputs(final_tree, columns, types)
    final_tree = partials_typed(final_tree, partial_columns, partial_types)
    spelled = partial_types_.spelled_apart(partial_columns, partial_types, aggregated, final_tree)
    if spelled is not None:
        raise Refuse(spelled)
    floats = [t in ("DOUBLE", "FLOAT") for t in partial_types[: len(replacement.expressions)]]
    decides = decisions.decision(final_tree) or decisions.row_decision(final_tree, floats)
    if decides is not None:
        raise Refuse(decides)
    for node in final_tree.walk():
        node.meta.pop("dau", None)

    plan = SplitPlan(
        split_table=found.table,
        partial_sql=partial.sql(dialect=DIALECT, pretty=True),
        final_sql=final_tree.sql(dialect=DIALECT, pretty=True),
        aggregates=tuple(built.aggregates),
        complement_sql=unmatched.sql(dialect=DIALECT, pretty=True) if unmatched else None,
    )
    return CompiledSplit(
        sql,
        plan,
        tuple(columns),
        tuple(types),
        partial=partial,
        final=final_tree,
        partial_columns=tuple(partial_columns),
        partial_types=tuple(partial_types),
        partial_schema=pa.schema(list(schema_out)[:width]),
        ordered=built.ordered,
        schema=output_schema,
        fast=fast,
        refold_sql=built.refold_sql,
        raise_check_sql=(
            partials_typed(built.raise_check, partial_columns, partial_types).sql(dialect=DIALECT)
            if built.raise_check is not None
            else None
        ),
        passes_rows_through=passes_through,
        complement=unmatched,
        magnitude_sql=magnitude_sql,
        magnitudes_below=below,
    )


def _stats_bounded(
    built: BuiltBlock,
    adding: frozenset[str],
    partial: exp.Select,
    found: Candidate,
    magnitudes: Magnitudes,
) -> tuple[str | None, tuple[bool, ...], frozenset[str]]:
    """The statistics probe of the float sums ``adding`` names (``overflow.stats_probe``),
    which of them it bounds below the limit (``magnitudes`` runs it), and the sums still to
    carry a magnitude partial. A DISTINCT sum keeps its final query's guard."""
    calls = [s for s in built.sums if s.text in adding and s.value is not None]
    probe = partial.copy()
    split = found.occurrence.copy()
    _marked_table(probe).replace(split)
    sql = overflow.stats_probe(probe, split, [call.value for call in calls if call.value])
    if sql is None:
        return None, (), adding
    below = magnitudes(sql)
    if len(below) != len(calls):  # (the probe failed: nothing is bounded)
        below = (False,) * len(calls)
    bounded = {call.text for call, under in zip(calls, below, strict=True) if under}
    return sql, below, adding - bounded


def _bind(
    built: BuiltBlock, tree: exp.Expr, found: Candidate, block: exp.Select, binder: Binder
) -> tuple[exp.Select, exp.Select | None, list[str], list[str], pa.Schema]:
    """The block's partial over the placeholder (and the complement's, where an outer join
    needs one), and the names, DuckDB types and Arrow schema of its probe: the partial's
    columns, then ``built.probe_extra``'s."""
    partial = built.partial
    _marked(partial, "occurrence").replace(_placeholder(found.occurrence))
    attach_ctes(partial, tree, block)
    both = complement.split_with_complement(partial, PLACEHOLDER, found.occurrence)
    partial, unmatched = both if both is not None else (partial, None)
    probe = partial.copy()
    _marked_table(probe).replace(found.occurrence.copy())
    probe.set("expressions", [*probe.expressions, *[p.copy() for p in built.probe_extra]])
    probe.set("limit", exp.Limit(expression=exp.Literal.number(0)))
    try:
        names_out, types_out, bound = binder(probe.sql(dialect=DIALECT))
    except (SplitError, ValueError, RuntimeError) as exc:
        raise Refuse(f"the partial query does not bind: {exc}") from exc
    if bound is None:
        raise Refuse("the partial query's Arrow types cannot be read without running it")
    width = len(partial.expressions)
    if len(names_out) != width + len(built.probe_extra):
        # ``ORDER BY *``, UNNEST of a struct, COLUMNS(...): one expression, several columns.
        raise Refuse(
            f"the partial query has {len(names_out)} columns for "
            f"{width + len(built.probe_extra)} expressions (an expression there expands to "
            "several columns)"
        )
    return partial, unmatched, list(names_out), list(types_out), bound


def _column_types(
    read: Sequence[exp.Column], partial: exp.Select, found: Candidate, binder: Binder
) -> dict[str, str]:
    """DuckDB's types of the columns ``read`` in the partial's scope (column SQL -> type);
    none where they do not bind (every float sum is then guarded)."""
    probe = partial.copy()
    _marked_table(probe).replace(found.occurrence.copy())
    probe.set("expressions", [exp.func("any_value", column.copy()) for column in read])
    for key in ("group", "having", "qualify", "order"):
        probe.set(key, None)
    probe.set("limit", exp.Limit(expression=exp.Literal.number(0)))
    try:
        _, types_out, _ = binder(probe.sql(dialect=DIALECT))
    except (SplitError, ValueError, RuntimeError):
        return {}
    return {column.sql(dialect=DIALECT): kind for column, kind in zip(read, types_out, strict=True)}


def _marked_table(tree: exp.Expr) -> exp.Table:
    for node in tree.find_all(exp.Table):
        if node.name == PLACEHOLDER:
            return node
    raise SplitError("internal: the partial lost its split table")


__all__ = [
    "NONDETERMINISTIC",
    "PARTIALS",
    "PLACEHOLDER",
    "CompiledSplit",
    "SplitPlan",
    "compile_split",
]
