"""LIKE on the Polars arm as the functions both Polars engines run: Polars' SQL writes every LIKE
as a regular expression with the ``(?s)`` flag, which the GPU engine's regex compiler rejects
(the GPU kit's first run, 2026-12-04)."""

from __future__ import annotations

import re

from sqlglot import exp

#: What a LIKE pattern's literal runs may hold to be written as a regular expression verbatim:
#: no character any regex dialect reads as other than itself.
_PLAIN_RUN = re.compile(r"[^\W_]+(?:[ ,:;'/=<>!@&~-]+[^\W_]*)*")


def like_as_functions(node: exp.Expr) -> exp.Expr:
    r"""``s LIKE 'lit%'`` as ``starts_with(s, 'lit')``, ``'%lit'`` as ``ends_with``, and other
    patterns of plain runs joined by ``%`` as a regular expression without flags (``%`` as
    ``[\s\S]*``, which matches a newline as ``%`` does; no ``$``: a pattern's last run is an
    ``ends_with`` beside it). Polars' SQL writes every LIKE as a regular expression with the
    ``(?s)`` flag, which the GPU engine does not run (TPC-H Q2, Q9, Q13, Q14 and Q16 were
    refused on the cudf arm: GPU kit, 2026-12-04). A pattern with ``_``,
    a backslash, an ESCAPE or any other character is left as it is."""
    if not isinstance(node, exp.Like) or not isinstance(node.expression, exp.Literal):
        return node
    if {key for key, value in node.args.items() if value} - {"this", "expression", "negate"}:
        return node  # (an ESCAPE, say)
    found = _like_as_function(node.this, node.expression)
    if found is None:
        return node
    return exp.Not(this=exp.Paren(this=found)) if node.args.get("negate") else found


def _like_as_function(value: exp.Expr, pattern: exp.Literal) -> exp.Expr | None:
    """:func:`like_as_functions` of ``value LIKE pattern``; None where none fits."""
    runs = pattern.this.split("%") if pattern.is_string else []
    inner = [run for run in runs if run]
    if not inner or not all(_PLAIN_RUN.fullmatch(run) for run in inner) or len(runs) < 2:
        return None
    if len(runs) == 2 and runs[0] and not runs[1]:
        return exp.StartsWith(this=value, expression=exp.Literal.string(runs[0]))
    if len(runs) == 2 and runs[1] and not runs[0]:
        return exp.EndsWith(this=value, expression=exp.Literal.string(runs[1]))
    regex = ("^" if runs[0] else "") + r"[\s\S]*".join(inner)
    found: exp.Expr = exp.RegexpLike(this=value, expression=exp.Literal.string(regex))
    if runs[-1]:  # the end as ends_with: libcudf's ``$`` is not documented to mean only the end
        ends = exp.EndsWith(this=value.copy(), expression=exp.Literal.string(runs[-1]))
        found = exp.and_(found, ends)
    return exp.Paren(this=found)


__all__ = ["like_as_functions"]
