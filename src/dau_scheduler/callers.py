"""The calling Python code's names, which DuckDB reads a table name it does not know as.

DuckDB's Python client takes a name no table has for a variable of the Python frame that calls
it (its replacement scan: ``duckdb.sql("SELECT count(*) FROM df")`` reads the pandas, Arrow or
Polars frame ``df``). A Session calls DuckDB from its own frames, where the user's variables
are not, so such a query failed to bind where DuckDB answers it. ``Session.sql`` keeps its
caller's names while it answers (:func:`kept`); a query the Session's DuckDB cannot bind
without them is answered by DuckDB alone, run where they are seen (:func:`run_seen`), and the
refusal names the object (:func:`object_read`). Such objects are not split: they are the
caller's, read once by DuckDB, not tables of the Session.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import FrameType
from typing import Any

import duckdb
import pyarrow as pa

#: The globals and locals of the frame that called the Session, while a call runs.
_NAMES: ContextVar[tuple[Mapping[str, Any], Mapping[str, Any]] | None] = ContextVar(
    "dau_caller_names", default=None
)
#: DuckDB's error for a table name neither the catalog nor a replacement scan knows.
_UNKNOWN = re.compile(r"Table with name (\S+?) does not exist", re.IGNORECASE)


@contextmanager
def kept(frame: FrameType | None) -> Iterator[None]:
    """Keep ``frame``'s names for the call in progress (the outermost call's: ``run_sql``
    calling ``Session.sql`` keeps its own caller's)."""
    if frame is None or _NAMES.get() is not None:
        yield
        return
    token = _NAMES.set((frame.f_globals, frame.f_locals))
    try:
        yield
    finally:
        _NAMES.reset(token)


def object_read(error: str) -> str | None:
    """The caller's variable DuckDB's error ``error`` names as an unknown table, or None."""
    names = _NAMES.get()
    found = _UNKNOWN.search(error)
    if names is None or found is None:
        return None
    name = found.group(1).strip("\"'")
    return name if any(name in scope for scope in names) else None


def refusal(name: str) -> str:
    """Why a query reading the caller's object ``name`` is answered by DuckDB alone."""
    return (
        f"the query reads {name}, a Python object of the calling code (DuckDB's replacement "
        "scan), not a table of the Session: answered by DuckDB alone"
    )


def unbound(error: str) -> str | None:
    """:func:`refusal` where DuckDB's ``error`` names a caller's object as an unknown table,
    else None."""
    name = object_read(error)
    return None if name is None else refusal(name)


def run_seen(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> pa.Table:
    """``sql`` (with its ``params``) run on ``con`` from a frame whose names are the caller's
    (DuckDB's replacement scan reads the frame that calls it, and no other by default); as a
    plain call where no caller's names are kept."""
    names = _NAMES.get()
    if names is None:
        return con.sql(sql, params=params).to_arrow_table()
    scope: dict[str, Any] = {**names[0], **names[1]}
    scope.update(__dau_con=con, __dau_sql=sql, __dau_params=params)
    exec(  # (a frame of the caller's names, fixed text: DuckDB reads the calling frame)
        "__dau_table = __dau_con.sql(__dau_sql, params=__dau_params).to_arrow_table()", scope
    )
    table = scope["__dau_table"]
    assert isinstance(table, pa.Table)
    return table


__all__ = ["kept", "object_read", "refusal", "run_seen", "unbound"]
