"""LIKE on the Polars arm as the functions both Polars engines run: Polars' SQL writes every LIKE
as a regular expression with the ``(?s)`` flag, which the GPU engine's regex compiler rejects
(the GPU kit's first run, 2026-12-04)."""

from __future__ import annotations

import re

from sqlglot import exp

from dau_scheduler.arms.polars_marks import ASCII_ONLY

#: The characters Rust's regex (Polars) and libcudf's (the GPU engine) read as syntax outside a
#: class; each is written escaped (``\.``), which both read as the character itself. Every other
#: printable character stands for itself in both (no flag is written: ``#`` is literal).
_REGEX_SYNTAX = frozenset("\\.+*?()|[]{}^$")
#: Characters a pattern's run is left to Polars for: control characters, which neither dialect is
#: known here to read alike (a run for ``starts_with`` or ``ends_with`` may hold any).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def like_as_functions(node: exp.Expr) -> exp.Expr:
    r"""``s LIKE 'lit%'`` as ``starts_with(s, 'lit')``, ``'%lit'`` as ``ends_with``, and other
    patterns of runs joined by ``%`` as a regular expression without flags (``%`` as
    ``[\s\S]*``, which matches a newline as ``%`` does; no ``$``: a pattern's last run is an
    ``ends_with`` beside it). Polars' SQL writes every LIKE as a regular expression with the
    ``(?s)`` flag, which the GPU engine does not run (TPC-H Q2, Q9, Q13, Q14 and Q16 were
    refused on the cudf arm: GPU kit, 2026-12-04). A ``_`` is ``[\s\S]``, one character (a
    code point, as DuckDB's ``_``: ``'e\u0301' LIKE '__'``); a pattern without ``%`` is also
    as long as it is (``length``, in code points), and one whose last run holds a ``_`` is
    left as it is, as is one with an ESCAPE. Without an ESCAPE every other character of a
    pattern is itself in DuckDB (a backslash too): in a regular expression a character of
    regex syntax is escaped (:data:`_REGEX_SYNTAX`); a run with a control character is left to
    Polars unless it is a prefix's or suffix's whole text."""
    if not isinstance(node, exp.Like) or not isinstance(node.expression, exp.Literal):
        return node
    if {key for key, value in node.args.items() if value} - {"this", "expression", "negate"}:
        return node  # (an ESCAPE, say)
    found = _like_as_function(node.this, node.expression)
    if found is None:
        return node
    return exp.Not(this=exp.Paren(this=found)) if node.args.get("negate") else found


def ilike_as_like(node: exp.Expr) -> exp.Expr:
    """``c ILIKE 'p'`` of an all-ASCII column and pattern (marked :data:`ASCII_ONLY` by
    ``mark_ascii_cases``) as ``lower(c) LIKE 'p'`` with the pattern lower-cased: DuckDB's ILIKE
    lowers both sides, and over ASCII both engines lower alike (Polars' own ILIKE is a regex with
    flags the GPU engine does not run, and folds non-ASCII case otherwise: ``İ``)."""
    if not isinstance(node, exp.ILike) or not node.meta.get(ASCII_ONLY):
        return node
    lowered = exp.Lower(this=node.this.copy())
    lowered.meta[ASCII_ONLY] = True
    pattern = exp.Literal.string(node.expression.this.lower())
    return exp.Like(this=lowered, expression=pattern, negate=node.args.get("negate"))


def _like_as_function(value: exp.Expr, pattern: exp.Literal) -> exp.Expr | None:
    """:func:`like_as_functions` of ``value LIKE pattern``; None where none fits."""
    runs = pattern.this.split("%") if pattern.is_string else []
    inner = [run for run in runs if run]
    if not inner:  # '%' (any text, NULL where the value is) or '' (an equality, as Polars has it)
        return exp.StartsWith(this=value, expression=exp.Literal.string("")) if runs[1:] else None
    if len(runs) == 2 and "_" not in pattern.this:
        if runs[0] and not runs[1]:
            return exp.StartsWith(this=value, expression=exp.Literal.string(runs[0]))
        if runs[1] and not runs[0]:
            return exp.EndsWith(this=value, expression=exp.Literal.string(runs[1]))
    if any(_CONTROL.search(run) for run in inner):
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
    regex = ("^" if runs[0] else "") + r"[\s\S]*".join(_regex(run) for run in inner)
    found: exp.Expr = exp.RegexpLike(this=value, expression=exp.Literal.string(regex))
    if last_as_end:  # the end as ends_with: libcudf's ``$`` is not documented to mean only the end
        ends = exp.EndsWith(this=value.copy(), expression=exp.Literal.string(runs[-1]))
        found = exp.and_(found, ends)
    return exp.Paren(this=found)


def _regex(run: str) -> str:
    """A run as a regular expression: ``_`` as any one character, a newline too, and every
    other character itself."""
    return r"[\s\S]".join(_escaped(piece) for piece in run.split("_"))


def _escaped(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_SYNTAX else c for c in text)


__all__ = ["ilike_as_like", "like_as_functions"]
