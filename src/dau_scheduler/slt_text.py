"""The text a sqllogictest file runs, as DuckDB's runner makes it (``test/sqlite/``), and its
records (:func:`parse`: statements, queries, ``load`` and ``restart``).

Its keywords (:func:`keywords`): ``{TEST_DIR}`` (and ``__TEST_DIR__``, ``{TEMP_DIR}``) name a
scratch folder of the file's own, ``{DATA_DIR}`` DuckDB's ``data``, ``{UUID}`` a new UUID.

Its loops, unrolled into the lines they run (:func:`unroll`; ``sqllogic_command.cpp``).
``loop i 0 3`` runs its body for i = 0, 1, 2; ``foreach t int bigint`` for each token, where
``<integral>``, ``<numeric>`` and the like stand for DuckDB's type lists and ``a,b`` names take
the parts of ``x,y`` tokens; ``endloop`` closes either. ``${i}`` and ``{i}`` in the body become
the value. A ``skipif``/``onlyif`` on a loop's name (``skipif i=2``, ``onlyif t<>int``) is
decided here, per pass. A concurrent loop runs its passes one after another: the oracle is
DuckDB on the same connection, so the order of the passes is all that differs.

A file whose loops unroll past :data:`MAX_LINES` lines is left out, with the reason."""

from __future__ import annotations

import functools
import operator
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb

__all__ = ["MAX_LINES", "Record", "keywords", "loaded_extensions", "parse", "unroll"]

#: What a file's loops may unroll to; past it the file is left out (a loop of 10,000 INSERTs
#: tests DuckDB's storage, not a split).
MAX_LINES = 40_000

_OPENERS = ("loop", "foreach", "concurrentloop", "concurrentforeach")

_SIGNED = ["tinyint", "smallint", "integer", "bigint", "hugeint"]
_UNSIGNED = ["utinyint", "usmallint", "uinteger", "ubigint", "uhugeint"]
_COMPRESSION = ["none", "uncompressed", "rle", "bitpacking", "dictionary", "fsst", "dict_fsst"]
_COMPRESSION += ["alp", "alprd"]
#: DuckDB's token lists, in its order.
_TOKENS: dict[str, list[str]] = {
    "<signed>": _SIGNED,
    "<unsigned>": _UNSIGNED,
    "<integral>": [*_SIGNED, *_UNSIGNED],
    "<numeric>": [*_SIGNED, *_UNSIGNED, "float", "double"],
    "<alltypes>": [*_SIGNED, *_UNSIGNED, "float", "double", "bool", "interval", "varchar"],
    "<compression>": _COMPRESSION,
}

_COMPARATORS: list[tuple[str, Callable[[Any, Any], bool]]] = [
    ("<>", operator.ne),
    (">=", operator.ge),
    (">", operator.gt),
    ("<=", operator.le),
    ("<", operator.lt),
    ("=", operator.eq),
]


#: Directives that make a file depend on what this runner does not model.
_UNSUPPORTED = ("reconnect",)
#: ``require`` flags a release build of DuckDB (as in the Python wheel) meets: sqllogictest's
#: own run options, 64 bits, and vector sizes up to the default 2048.
_MET_FLAGS = frozenset(
    (
        "skip_reload",
        "no_alternative_verify",
        "noforcestorage",
        "no_force_storage",
        "64bit",
        "notwindows",
    )
)


@functools.cache
def loaded_extensions() -> frozenset[str]:
    """The extensions this DuckDB has loaded in a fresh connection (statically linked ones)."""
    rows = (
        duckdb.connect()
        .execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded")
        .fetchall()
    )
    return frozenset(str(r[0]) for r in rows)


def _met(parts: list[str], extensions: frozenset[str]) -> bool:
    """Whether a ``require`` line's condition holds here."""
    what = parts[1] if len(parts) > 1 else ""
    if what in ("vector_size", "exact_vector_size") and len(parts) > 2 and parts[2].isdigit():
        return int(parts[2]) <= 2048 if what == "vector_size" else parts[2] == "2048"
    return what in _MET_FLAGS or what in extensions


@dataclass
class Record:
    """One statement or query of a test file."""

    kind: str  # "statement", "query", "load" (sql: the path and its mode) or "restart"
    sql: str
    line: int
    expect_error: bool = False
    sort: str | None = None


def parse(
    text: str, extensions: frozenset[str] = frozenset(), engine: str = "duckdb"
) -> tuple[list[Record], str | None]:
    """The records of a test file, or why the file is left out (``extensions``: those loaded
    here, which a ``require`` may name; ``engine``: the name ``skipif``/``onlyif`` lines are
    read for)."""
    text, why = unroll(text)
    if why is not None:
        return [], f"loops: {why}"
    lines = text.splitlines()
    records: list[Record] = []
    i = 0
    skipping = False
    skip_next = False
    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        word = line.split()[0].lower()
        if word == "require":
            if not _met(line.split(), extensions):
                return [], f"requires {' '.join(line.split()[1:2])}"
            continue
        if word in _UNSUPPORTED:
            return [], f"uses {word}"
        if word in ("load", "restart"):
            if word == "restart" and not any(r.kind == "load" for r in records):
                return [], "restarts a database in memory"
            if not (skipping or skip_next):
                records.append(Record(word, " ".join(line.split()[1:]), i))
            skip_next = False
            continue
        if word == "halt":
            if skip_next:  # a halt under a condition that does not hold here
                skip_next = False
                continue
            break
        if word == "mode":
            skipping = line.split()[1:2] == ["skip"]
            continue
        if word in ("skipif", "onlyif"):
            skip_next = (word == "skipif") == (line.split()[1:2] == [engine])
            continue
        if word not in ("statement", "query"):
            continue  # hash-threshold, set seed, tags, ...
        start = i
        body: list[str] = []
        while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
            body.append(lines[i])
            i += 1
        if i < len(lines) and lines[i].strip() == "----":
            i += 1
            while i < len(lines) and lines[i].strip():
                i += 1
        parts = line.split()
        record = Record(word, "\n".join(body), start)
        if word == "statement":
            record.expect_error = len(parts) > 1 and parts[1] == "error"
        elif len(parts) > 2 and parts[2] in ("rowsort", "valuesort", "nosort"):
            record.sort = parts[2]
        if skipping or skip_next:
            skip_next = False
            continue
        records.append(record)
    return records, None


def keywords(text: str, directory: str, name: str) -> str:
    """``text`` with the runner's keywords replaced: ``directory`` for the test folder (where
    the file's COPY and ATTACH write), ``name`` for the test's name."""
    here = os.getcwd()
    for word, value in (
        ("TEST_DIR", directory),
        ("TEMP_DIR", directory),
        ("DATA_DIR", "data"),
        ("WORKING_DIRECTORY", here),
        ("TEST_NAME", name),
        ("BASE_TEST_NAME", name.replace("/", "_")),
    ):
        text = text.replace("${" + word + "}", value).replace("{" + word + "}", value)
    text = text.replace("__TEST_DIR__", directory).replace("__WORKING_DIRECTORY__", here)
    while "{UUID}" in text:
        text = text.replace("{UUID}", str(uuid.uuid4()), 1)
    return text


class _LeftOut(Exception):
    """Why a file's loops are not unrolled."""


def unroll(text: str) -> tuple[str, str | None]:
    """``text`` with its loops unrolled, or why they are not (then ``text`` as given)."""
    lines = text.splitlines()
    if not any(_opener(line) for line in lines):
        return text, None
    try:
        body, end = _block(lines, 0, top=True)
        assert end == len(lines)
        out = _expand(body, {})
    except _LeftOut as why:
        return text, str(why)
    return "\n".join(out) + "\n", None


def _opener(line: str) -> bool:
    words = line.split()
    return bool(words) and words[0].lower() in _OPENERS


_Node = str | tuple[list[str], list["_Node"]]


def _block(lines: list[str], start: int, top: bool = False) -> tuple[list[_Node], int]:
    """The lines from ``start`` to the matching ``endloop`` (past it) or the end of the file,
    loops as (header words, body)."""
    nodes: list[_Node] = []
    i = start
    while i < len(lines):
        line = lines[i]
        i += 1
        words = line.split()
        word = words[0].lower() if words else ""
        if word == "endloop":
            if top:
                raise _LeftOut("an endloop without a loop")
            return nodes, i
        if word in _OPENERS:
            inner, i = _block(lines, i)
            nodes.append((words, inner))
            continue
        nodes.append(line)
    if not top:
        raise _LeftOut("a loop without its endloop")
    return nodes, i


def _values(words: list[str]) -> tuple[str, list[str]]:
    """A loop header's name and the values its passes take."""
    kind = words[0].lower()
    if len(words) < 3:
        raise _LeftOut(f"a {kind} without values")
    name = words[1]
    if kind.endswith("loop"):
        try:
            first, end = int(words[2]), int(words[3])
        except (IndexError, ValueError):
            raise _LeftOut(f"a loop's bounds: {' '.join(words[2:])}") from None
        if end - first > MAX_LINES:
            raise _LeftOut(f"a loop of {end - first} passes")
        return name, [str(v) for v in range(first, end)]
    values: list[str] = []
    for token in words[2:]:
        listed = _TOKENS.get(token.lower())
        if listed is not None:
            values.extend(listed)
        elif token.startswith("<") and token.endswith(">"):
            raise _LeftOut(f"a foreach over {token}")
        elif token.startswith("!") and token[1:] in values:
            values.remove(token[1:])
        else:
            values.append(token)
    return name, values


def _bind(name: str, value: str) -> dict[str, str]:
    """The names a pass binds: ``a,b`` over ``x,y`` binds a to x and b to y."""
    if "," not in name:
        return {name: value}
    names, parts = name.split(","), value.split(",")
    if len(names) != len(parts):
        raise _LeftOut(f"foreach {name} over {value}: the parts do not match")
    return dict(zip(names, parts, strict=True))


def _expand(nodes: list[_Node], bound: dict[str, str]) -> list[str]:
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(_condition(node, bound) if bound else node)
        else:
            words, body = node
            name, values = _values(words)
            for value in values:
                inner = {**bound, **_bind(name, value)}
                out.extend(_substitute(line, inner) for line in _expand(body, inner))
                out.append("")  # (a pass ends its last record)
                if len(out) > MAX_LINES:
                    raise _LeftOut(f"loops that unroll past {MAX_LINES} lines")
    return out


def _substitute(line: str, bound: dict[str, str]) -> str:
    for name, value in bound.items():
        line = line.replace("${" + name + "}", value).replace("{" + name + "}", value)
    return line


def _condition(line: str, bound: dict[str, str]) -> str:
    """A ``skipif``/``onlyif`` on loop names decided for this pass: dropped where the record
    runs, ``onlyif <never>`` (which skips it on every engine) where it does not."""
    words = line.split()
    if len(words) < 2 or words[0].lower() not in ("skipif", "onlyif"):
        return line
    condition = " ".join(words[1:])
    if not any(c in condition for c in "=<>"):
        return line
    skip = words[0].lower() == "skipif"
    held: list[bool] = []
    for part in condition.split("&&"):
        found = next(((s, c) for s, c in _COMPARATORS if s in part), None)
        if found is None:
            return line
        symbol, compare = found
        key, value = (side.strip() for side in part.split(symbol, 1))
        if key not in bound:
            return line  # (threadid and the like: not a loop of this file's)
        if symbol in ("=", "<>"):
            held.append(compare(bound[key], value))
            continue
        try:
            held.append(compare(int(bound[key]), int(value)))
        except ValueError:
            raise _LeftOut(f"a loop condition on a number: {part.strip()}") from None
    # (DuckDB: skipif skips where any part holds; onlyif where any does not)
    runs = not any(held) if skip else all(held)
    return "" if runs else "onlyif <never>"
