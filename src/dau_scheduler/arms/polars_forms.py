"""Query forms the Polars arm runs only within limits: common table expressions and set
operations. Each limit was found by running the form on both engines (tests/slt/polars_forms.test).

- **CTEs** (``WITH``). Polars' SQL resolves a name to a frame it holds before a CTE of that name:
  ``WITH a AS (SELECT x FROM b) SELECT count(*) FROM a`` counted table ``a``. A CTE named like a
  table the arm holds (or the split's placeholder), a name defined twice, ``RECURSIVE`` and
  ``MATERIALIZED`` (its parser has no such word) are refused. A CTE inside a derived table or an
  ``EXISTS`` fails to plan in Polars, which the arm's plan check turns into a refusal.
- **Derived tables' names.** Polars takes a derived table's alias for a frame's name in the
  rest of the query: ``FROM f JOIN (SELECT k, count(*) AS c FROM dk GROUP BY k) AS dk ...
  WHERE f.k IN (SELECT k FROM dk WHERE c > 50)`` read the subquery's ``dk`` as the derived
  table (221 rows for 442; found by ``probes/joined_aggregates.py``, thirtieth session). A
  derived table named like a table read outside it is refused. So is a source read under the
  name of another table the query reads (``FROM t, u AS v WHERE v.s = 'z' AND v.n >= (SELECT
  min(w.n) FROM v AS w ...)``): Polars also looks ``v.s`` up in the table ``v``, whose frame
  holds only the columns the query reads of it, and failed as it ran (no column ``s`` in
  ``v``; ``probes/rereads.py``, sixty-third session). So is one alias over two tables (``v AS
  u`` beside ``u``'s rows read as ``u`` in a derived table: Polars read ``u.j`` in ``v``'s frame).
- **Set operations** (``UNION``, ``INTERSECT``, ``EXCEPT``, with or without ``ALL``). Both
  engines keep one row per distinct row and match NULLs. They coerce branches of different types
  differently (``x UNION 2.5``: a double in Polars, a decimal in DuckDB), and keep a different
  one of ``0.0`` and ``-0.0``; so the branches' columns must have the same known type, not a
  floating-point one. ``BY NAME`` is refused.
- **Constant group keys** (``SELECT count(*), 7 FROM t WHERE ... GROUP BY 2``). Over no rows
  Polars gives one group, DuckDB none (a row where DuckDB gives none: refused until the
  thirty-ninth session). Such a GROUP BY gets ``HAVING count(*) > 0``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection

from sqlglot import exp

from dau_scheduler.arms.polars_checks import reads_outer_columns
from dau_scheduler.errors import SqlError
from dau_scheduler.rewrite.planner import PLACEHOLDER


def refuse_unsafe_ctes(tree: exp.Expr, held: Collection[str] | None) -> None:
    """Raise ``SqlError`` for a CTE Polars may read otherwise than DuckDB (module docstring).
    ``held``: the names of the frames the partial runs beside (None: not known, so any CTE)."""
    names = []
    for with_ in tree.find_all(exp.With):
        if with_.args.get("recursive"):
            raise SqlError("WITH RECURSIVE: the Polars arm runs no recursive CTE")
        for cte in with_.expressions:
            if cte.args.get("materialized") is not None:
                raise SqlError(f"CTE {cte.alias_or_name}: Polars' SQL has no MATERIALIZED")
            names.append(cte.alias_or_name.lower())
    if not names:
        return
    if held is None:
        raise SqlError("a CTE, where the tables the Polars arm holds are not known")
    twice = sorted(name for name, n in Counter(names).items() if n > 1)
    if twice:
        raise SqlError(f"CTE {twice[0]} is defined twice, which Polars may resolve otherwise")
    clash = sorted(set(names) & {name.lower() for name in held})
    if clash:
        raise SqlError(
            f"CTE {clash[0]} is named like a table the Polars arm holds, which Polars reads "
            "instead of the CTE"
        )


def refuse_shadowing_aliases(tree: exp.Expr, split_table: str) -> None:
    """Raise ``SqlError`` for a derived table named like a table read outside it, or a source
    read under another table's name (module docstring)."""
    refuse_aliases_of_other_tables(tree, split_table)
    for subquery in tree.find_all(exp.Subquery):
        alias = subquery.alias_or_name.lower()
        if not alias or not isinstance(subquery.parent, (exp.From, exp.Join)):
            continue
        inside = {id(table) for table in subquery.find_all(exp.Table)}
        for table in tree.find_all(exp.Table):
            if id(table) not in inside and table.name.lower() == alias:
                raise SqlError(
                    f"the derived table {alias} is named like the table {table.name} read "
                    "outside it, which Polars would read as the derived table"
                )


def refuse_aliases_of_other_tables(tree: exp.Expr, split_table: str) -> None:
    """Raise ``SqlError`` for a name under which the query reads two tables: a source read under
    the name of another table or CTE the query reads, or one alias over two tables (module
    docstring); the split's placeholder is the split table's rows."""
    tables: dict[str, set[str]] = {}
    for table in tree.find_all(exp.Table):
        name = (split_table if table.name == PLACEHOLDER else table.name).lower()
        tables.setdefault(table.alias_or_name.lower(), set()).add(name)
    read = set().union(*tables.values())
    for alias, names in sorted(tables.items()):
        named = names | ({alias} & read)
        if len(named) > 1:
            raise SqlError(
                f"the query reads {' and '.join(sorted(named))} under one name, {alias}: "
                "Polars may look a column read under it up in the other table's frame"
            )


def refuse_set_operations(tree: exp.Expr, typed: bool) -> None:
    """Raise ``SqlError`` for a set operation Polars may answer otherwise than DuckDB (module
    docstring). ``typed``: the tree carries the arm's type annotation (else any is refused)."""
    for node in tree.find_all(exp.SetOperation):
        kind = type(node).__name__.upper()
        if node.args.get("by_name"):
            raise SqlError(f"{kind} BY NAME: not checked on the Polars arm")
        if not typed:
            raise SqlError(f"{kind}: its branches' types are not known to the Polars arm")
        left, right = node.left.selects, node.right.selects
        if len(left) != len(right):
            raise SqlError(f"{kind}: its branches have {len(left)} and {len(right)} columns")
        for a, b in zip(left, right, strict=True):
            ta, tb = a.type, b.type
            if ta is None or tb is None or ta.is_type(exp.DType.UNKNOWN, exp.DType.NULL):
                raise SqlError(f"{kind}: the type of {a.sql()} or {b.sql()} is not known")
            if ta.sql(dialect="duckdb") != tb.sql(dialect="duckdb"):
                raise SqlError(
                    f"{kind} of {ta.sql(dialect='duckdb')} and {tb.sql(dialect='duckdb')} "
                    "(Polars and DuckDB coerce branches differently)"
                )
            if ta.is_type(*exp.DataType.FLOAT_TYPES):
                raise SqlError(
                    f"{kind} over floating-point {a.sql()} (the engines keep a different one of "
                    "0.0 and -0.0)"
                )


def _group_keys(select: exp.Select) -> list[exp.Expr]:
    """The GROUP BY keys of ``select``, each read through the output name it groups by."""
    group = select.args.get("group")
    if group is None:
        return []
    named = {item.alias: item.this for item in select.expressions if isinstance(item, exp.Alias)}
    return [
        named.get(key.name, key) if isinstance(key, exp.Column) and not key.table else key
        for key in group.expressions
    ]


def refuse_grouped_subqueries(tree: exp.Expr) -> None:
    """Raise ``SqlError`` for a GROUP BY key that holds a subquery: Polars' SQL refuses one
    written there, and one grouped by through its output's name it decorrelates into a join
    whose rows it then fails on ("aggregation 'item' expected no or a single value")."""
    for select in tree.find_all(exp.Select):
        for key in _group_keys(select):
            if key.find(exp.Subquery, exp.Exists) is not None:
                raise SqlError(
                    f"GROUP BY {key.sql(dialect='duckdb')}: Polars does not group by a "
                    "subquery's value"
                )


def constant_groups_need_rows(tree: exp.Expr) -> None:
    """Give each GROUP BY of ``tree`` whose every key is a constant (read through the outputs'
    names it groups by) ``HAVING count(*) > 0``, in place: over no rows Polars gives such a
    GROUP BY one group, DuckDB none. In a correlated subquery, or where a key is an IN list or
    a list (which Polars groups wrongly), it raises ``SqlError``."""
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        keys = _group_keys(select)
        if group is None or not keys:
            continue
        if any(key.find(exp.Column, exp.Subquery, exp.Select) for key in keys):
            continue
        unfolded = next((k for k in keys if k.find(exp.In, exp.Array)), None)
        if unfolded is not None:
            raise SqlError(
                f"GROUP BY {unfolded.sql(dialect='duckdb')}: every key is a constant, and one "
                "is an IN list or a list Polars does not fold: it groups a frame of no columns "
                "and counts one row (1 for 1,000 measured; its streaming engine panics)"
            )
        if reads_outer_columns(select):  # (a HAVING there is left untried: refused as before)
            raise SqlError(
                f"{group.sql(dialect='duckdb')}: every key of a correlated subquery is a "
                "constant, and Polars gives one group over no rows"
            )
        rows = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
        having = select.args.get("having")
        condition = rows if having is None else exp.and_(exp.Paren(this=having.this), rows)
        select.set("having", exp.Having(this=condition))


def _aggregated(key: exp.Expr) -> bool:
    """Whether ``key`` holds an aggregate of its own block (not one in a window or a
    subquery inside it)."""
    for call in key.find_all(exp.AggFunc):
        node: exp.Expr = call
        while node is not key:
            node = node.parent  # type: ignore[assignment]
            if isinstance(node, (exp.Window, exp.Select, exp.Subquery)):
                break
        else:
            return True
    return False


def order_aggregates_by_position(tree: exp.Expr) -> None:
    """Write each ORDER BY key of a grouped block that holds an aggregate as the position of
    the output it is, in place. Polars 1.44 sorts such a key after the GROUP BY over the
    groups' frame: its streaming engine takes ``count(*)`` for the number of groups, one
    value for all (``SELECT v FROM t GROUP BY v ORDER BY count(*), v LIMIT 5``: the five least
    v, not the five rarest; with ``count(*)`` an output too), its in-memory engine fails, and
    any other aggregate is a column it cannot find. By the output's position it sorts right.
    An aggregate that is no output raises ``SqlError``."""
    for select in tree.find_all(exp.Select):
        order = select.args.get("order")
        if order is None:
            continue
        outputs = [output.unalias() for output in select.expressions]
        for ordered in order.expressions:
            key = ordered.this
            if not _aggregated(key):
                continue
            index = next((i for i, output in enumerate(outputs) if output == key), None)
            if index is None:
                raise SqlError(
                    f"ORDER BY {key.sql(dialect='duckdb')}: an aggregate that is no output, "
                    "which Polars sorts by wrongly (count(*) as the number of groups)"
                )
            ordered.set("this", exp.Literal.number(index + 1))


__all__ = [
    "constant_groups_need_rows",
    "order_aggregates_by_position",
    "refuse_grouped_subqueries",
    "refuse_set_operations",
    "refuse_shadowing_aliases",
    "refuse_unsafe_ctes",
]
