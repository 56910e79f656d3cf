"""The forms whose values DuckDB's binder gives one type, and those values.

COALESCE, GREATEST, LEAST, NULLIF, IF and CASE bind their values to one common type, and the
value they give is one of them (NULLIF's first, or NULL). Where those values are of two types
DuckDB casts one to the other, and an arm that does not (Polars reads text as text, a time
zone's timestamp in UTC, a decimal beside a FLOAT through its text) answers otherwise. What
reads them: the UUID rewrite (``rewrite.uuids``), DuckDB's types for the Polars arm
(``arms.duckdb_types``) and its checks (``arms.polars_functions``, ``arms.polars_temporal``).
"""

from __future__ import annotations

from sqlglot import exp

#: The forms, with the arguments that hold their values (a CASE: each branch's result and the
#: default; its operand and WHEN values are compared, not given the type).
_ARGUMENTS: dict[type[exp.Expr], tuple[str, ...]] = {
    exp.Coalesce: ("this", "expressions"),
    exp.Greatest: ("this", "expressions"),
    exp.Least: ("this", "expressions"),
    exp.Nullif: ("this", "expression"),
    exp.If: ("true", "false"),
}
ONE_TYPE: tuple[type[exp.Expr], ...] = (*_ARGUMENTS, exp.Case)


def given_one_type(node: exp.Expr) -> list[exp.Expr]:
    """The values ``node`` (one of :data:`ONE_TYPE`; any other has none) gives one type, in
    order."""
    if isinstance(node, exp.Case):
        found = [branch.args.get("true") for branch in node.args.get("ifs") or []]
        found.append(node.args.get("default"))
    else:
        found = []
        for key in _ARGUMENTS.get(type(node), ()):
            value = node.args.get(key)
            found += value if isinstance(value, list) else [value]
    return [v for v in found if isinstance(v, exp.Expr)]
