"""Strings compared by a collation: where a split may keep one and where it may not.

Inside a WHERE or JOIN condition a ``COLLATE`` is evaluated by DuckDB on each arm's rows, before
anything is folded. Elsewhere (ORDER BY, GROUP BY, DISTINCT, MIN/MAX) its strings would be
compared again by the fold over Arrow partials, byte by byte, which is another answer.
"""

from __future__ import annotations

from sqlglot import exp

from dau_scheduler.rewrite.dialect import DIALECT


def collation_refusal(tree: exp.Expr) -> str | None:
    """Why the query's collations keep it from splitting, or None."""
    for node in tree.find_all(exp.Collate):
        child: exp.Expr = node
        parent = node.parent
        while parent is not None and not isinstance(parent, (exp.Where, exp.Query)):
            if isinstance(parent, exp.Join) and child is parent.args.get("on"):
                break
            child, parent = parent, parent.parent
        if not isinstance(parent, (exp.Where, exp.Join)):
            return (
                f"{node.sql(dialect=DIALECT)} orders, groups or compares strings by a collation, "
                "which the fold over Arrow partials does not keep"
            )
    return None
