"""What the split table's occurrence in a query may carry for the split to cut it.

The planner puts a placeholder in the occurrence's place, under the occurrence's name, and each
arm puts its own rows there: the columns the query reads, in the table's order or not. So the
occurrence may carry a name and an alias, and nothing that depends on what else stands there.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.dialect import DIALECT

#: The parts of a table reference the split understands (its rows as stored, under a name; a
#: sample anywhere refuses the whole query first).
TABLE_ARGS = frozenset({"this", "alias", "db", "catalog"})


def occurrence_refusal(table: str, node: exp.Table) -> str | None:
    """Why ``table`` cannot be cut at ``node``, or None."""
    unknown = sorted(k for k, v in node.args.items() if v and k not in TABLE_ARGS)
    if unknown:  # PIVOT / UNPIVOT on the table, time travel, ...: default deny
        return f"{table} is read with {', '.join(unknown)} ({node.sql(dialect=DIALECT)})"
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.columns:
        # FROM t AS q(c) renames t's columns by position (DuckDB calls t's own c c_1), and the
        # arms' rows hold the columns read: the placeholder without the list read t's own c.
        return (
            f"{table} is read with a column alias list ({node.sql(dialect=DIALECT)}), which "
            "renames its columns by position"
        )
    return None


__all__ = ["TABLE_ARGS", "occurrence_refusal"]
