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
    refused on the cudf arm: GPU kit, 2026-12-04). A ``_`` is ``[\s\S]``, one character (a
    code point, as DuckDB's ``_``: ``'e\u0301' LIKE '__'``); a pattern without ``%`` is also
    as long as it is (``length``, in code points), and one whose last run holds a ``_`` is
    left as it is, as is one with a backslash, an ESCAPE or any other character."""
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
    if not inner or not all(_plain(run) for run in inner):
        return None
    if len(runs) == 1:  # no %: as long as the pattern (``_`` one character, as DuckDB's)
        if "_" not in runs[0]:
            return None  # (an equality: Polars writes no regex for it)
        anchored = exp.Literal.string("^" + _regex(runs[0]))
        matches = exp.RegexpLike(this=value, expression=anchored)
        size = exp.Literal.number(len(runs[0]))
        length = exp.EQ(this=exp.Length(this=value.copy()), expression=size)
        return exp.Paren(this=exp.and_(length, matches))
    last_as_end = bool(runs[-1]) and "_" not in runs[-1]
    if runs[-1] and not last_as_end:
        return None  # (a last run with ``_`` would need ``$``)
    if len(runs) == 2 and "_" not in pattern.this:
        if runs[0] and not runs[1]:
            return exp.StartsWith(this=value, expression=exp.Literal.string(runs[0]))
        if runs[1] and not runs[0]:
            return exp.EndsWith(this=value, expression=exp.Literal.string(runs[1]))
    regex = ("^" if runs[0] else "") + r"[\s\S]*".join(_regex(run) for run in inner)
    found: exp.Expr = exp.RegexpLike(this=value, expression=exp.Literal.string(regex))
    if last_as_end:  # the end as ends_with: libcudf's ``$`` is not documented to mean only the end
        ends = exp.EndsWith(this=value.copy(), expression=exp.Literal.string(runs[-1]))
        found = exp.and_(found, ends)
    return exp.Paren(this=found)


def _plain(run: str) -> bool:
    """A run of a pattern between ``%`` whose pieces between ``_`` are plain (or empty)."""
    return all(not piece or _PLAIN_RUN.fullmatch(piece) for piece in run.split("_"))


def _regex(run: str) -> str:
    """A run as a regular expression: ``_`` as any one character, a newline too."""
    return r"[\s\S]".join(run.split("_"))


__all__ = ["like_as_functions"]
