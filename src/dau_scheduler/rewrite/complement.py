"""Outer joins whose unmatched rows the split table decides: the arms run the matched rows, the
host adds the unmatched ones once (the *complement*).

``p LEFT JOIN t ON c`` is the pairs of ``p`` and ``t`` rows that meet ``c``, and each ``p`` row
no ``t`` row meets, with ``t``'s columns NULL. Split on ``t``, an arm holding some of ``t``'s
rows cannot tell which ``p`` rows no row of ``t`` meets, so such a join was refused. The pairs
are row by row in ``t``; only the unmatched rows need all of it. So:

- each arm runs the block with the join made inner (``p JOIN t``; of ``t FULL JOIN u``, the LEFT
  join ``t LEFT JOIN u``, which keeps ``t``'s rows row by row);
- the host runs the block once more, the *complement*, with ``t`` empty (so the outer join
  makes every row of the other side unmatched) and the other side's rows kept only where no
  row of the whole ``t`` meets ``c``: ``AND NOT EXISTS (SELECT 1 FROM t WHERE c)`` in its WHERE
  (``c`` reads the other side's columns from the query around it). The rest of the block
  (later joins, WHERE, GROUP BY, aggregates) runs over those rows as over the arms', and their
  partial rows are folded with the arms' by the final query (``execution.merge_rule``), once
  whatever ran the arms (resident, chunked, a cluster).

Handled: one such join in the split block, joined with ON (no USING or NATURAL), no comma in
the block, no subquery in the ON, the split table itself (not a derived table of it) as the
LEFT or FULL join's joined table or among the tables before a RIGHT or FULL join (then the NOT
EXISTS reads the joins before it, over the whole split table). Anything else stays refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp

from dau_scheduler.errors import SplitError
from dau_scheduler.rewrite.block_parts import Refuse, conjuncts
from dau_scheduler.rewrite.comma_scopes import is_comma
from dau_scheduler.rewrite.dialect import DIALECT


def _side(join: exp.Join) -> str:
    return (join.side or "").upper()


def decided_joins(select: exp.Select, position: int) -> list[int]:
    """The indexes of ``select``'s joins whose unmatched rows the split table decides, where it
    sits at ``position`` (-1: the FROM table; else the index of the join that reads it): a LEFT
    join of it, a RIGHT join after it, a FULL join of it or after it."""
    found: list[int] = []
    if position < -1:
        return found
    for index, join in enumerate(select.args.get("joins") or []):
        side = _side(join)
        if (
            (side == "LEFT" and index == position)
            or (side == "RIGHT" and position < index)
            or (side == "FULL" and position <= index)
        ):
            found.append(index)
    return found


def unsupported(select: exp.Select, position: int) -> str | None:
    """Why the joins :func:`decided_joins` finds cannot be split with a complement, or None
    (none found, or one this module handles)."""
    joins = list(select.args.get("joins") or [])
    decided = decided_joins(select, position)
    if not decided:
        return None
    if len(decided) > 1:
        return "two outer joins whose unmatched rows the split table decides"
    index = decided[0]
    join = joins[index]
    if any(is_comma(j) for j in joins):
        return "a comma in FROM beside an outer join whose unmatched rows the split table decides"
    if join.args.get("on") is None or (join.kind or "").upper() not in {"", "OUTER"}:
        return f"a {_side(join)} join without ON whose unmatched rows the split table decides"
    if join.args["on"].find(exp.Subquery, exp.Select):
        return f"a {_side(join)} join with a subquery in its ON"
    return None


def refusal(select: exp.Select, position: int, table: str, direct: bool) -> str | None:
    """Why ``table`` (at ``position`` in ``select``) cannot be split for an outer join whose
    unmatched rows it decides, or None. ``direct``: the split table itself sits there, not a
    derived table reading it (which this module does not handle)."""
    decided = decided_joins(select, position)
    if not decided:
        return None
    why = unsupported(select, position) if direct else "a derived table of it joined there"
    if why is None:
        return None
    side = _side((select.args.get("joins") or [])[decided[0]])
    if side == "LEFT":
        return f"{table} is on the nullable side of a LEFT JOIN ({why})"
    return f"{table} is in a block with a {side} OUTER JOIN, which adds unmatched rows ({why})"


def position(select: exp.Select, source: exp.Expr) -> int:
    """Where ``source`` sits in ``select``'s FROM: -1 for the FROM item, else the index of the
    join that reads it (-2 where it is in neither)."""
    from_ = select.args.get("from_")
    if from_ is not None and from_.this is source:
        return -1
    joins = list(select.args.get("joins") or [])
    return next((i for i, join in enumerate(joins) if join.this is source), -2)


def split_with_complement(
    partial: exp.Select, placeholder: str, occurrence: exp.Table
) -> tuple[exp.Select, exp.Select] | None:
    """``partial`` as the arms run it and the complement the host runs once (module text), or
    None where ``partial`` has no join whose unmatched rows the split table decides.
    ``placeholder`` is the split table's name in ``partial``; ``occurrence`` the split table as
    the query reads it, which the complement reads whole."""
    split = next((t for t in partial.find_all(exp.Table) if t.name == placeholder), None)
    if split is None:
        return None
    owner = split.find_ancestor(exp.Select)
    if owner is not partial:
        # Not the partial's own FROM: such a join there would go unsplit-able, so never run.
        if isinstance(owner, exp.Select) and decided_joins(owner, position(owner, split)):
            raise Refuse("an outer join whose unmatched rows the split table decides, nested")
        return None
    at = position(partial, split)
    decided = decided_joins(partial, at)
    if not decided:
        return None
    index = decided[0]
    join = partial.args["joins"][index]
    side = _side(join)
    # The arms: the split table's unmatched partners dropped (it stays preserved where it was).
    arms = partial.copy()
    arm_join = arms.args["joins"][index]
    kept = {(True, False): "LEFT", (False, True): "RIGHT"}.get(
        (side == "FULL" and at < index, side == "FULL" and at == index)
    )
    arm_join.set("side", kept)
    arm_join.set("kind", None)
    # The complement: the split table empty, the other side's rows no row of it meets.
    complement = partial.copy()
    empty_split = next(t for t in complement.find_all(exp.Table) if t.name == placeholder)
    alias = exp.to_identifier(split.alias_or_name, quoted=True)
    table = occurrence.copy()
    table.set("alias", None)
    empty = exp.select("*").from_(table.copy()).limit(0)
    empty_split.replace(empty.subquery(alias=alias.copy()))
    whole = table.copy()
    whole.set("alias", exp.TableAlias(this=alias.copy()))
    condition = exp.and_(*[c.copy() for c in conjuncts(join.args["on"])])
    matched = exp.select("1").from_(whole)
    if at < index:
        # The split table before the join, maybe joined to other tables: no row of those joins
        # over the whole table meets the condition. With the split table empty they are empty
        # (any other join that could keep rows without it would be a second such join).
        before = partial.copy()
        at_split = next(t for t in before.find_all(exp.Table) if t.name == placeholder)
        at_split.replace(whole.copy())
        matched = exp.select("1").from_(before.args["from_"].this.copy())
        matched.set("joins", [j.copy() for j in before.args["joins"][:index]])
    unmatched = exp.Not(this=exp.Exists(this=matched.where(condition)))
    where = complement.args.get("where")
    complement.set("where", exp.Where(this=exp.and_(where.this, unmatched) if where else unmatched))
    return arms, complement


def check_binds(
    complement: exp.Select | None,
    binder: Callable[[str], tuple[Sequence[str], Sequence[str], object]],
    columns: Sequence[str],
    types: Sequence[str],
) -> None:
    """Raise ``Refuse`` unless ``complement`` (where there is one) binds to the partial's
    ``columns`` and ``types``: its rows are folded with the arms' as theirs."""
    if complement is None:
        return
    probe = complement.copy()
    probe.set("limit", exp.Limit(expression=exp.Literal.number(0)))
    try:
        names, kinds, _ = binder(probe.sql(dialect=DIALECT))
    except (SplitError, ValueError, RuntimeError) as exc:
        raise Refuse(f"the unmatched rows' partial query does not bind: {exc}") from exc
    if list(names[: len(columns)]) != list(columns) or list(kinds[: len(types)]) != list(types):
        raise Refuse("the unmatched rows' partial query binds to other columns than the arms'")


__all__ = [
    "check_binds",
    "decided_joins",
    "position",
    "refusal",
    "split_with_complement",
    "unsupported",
]
