"""Row sources: the rows one arm owns, by offset and, where the caller has them, by value.

A split hands each arm a :class:`RowSource`. :class:`RowRange` names rows by their offsets only, for
arms that already hold the table; :class:`RowBatch` also carries values the caller materialized.
``slice`` always takes indices relative to the source and returns a source whose ``start``/``stop``
are absolute offsets in the whole table, the numbers an arm cuts its resident copy at.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from dau_scheduler.errors import SplitError


def _check_bounds(start: int, stop: int, length: int | None = None) -> None:
    for name, value in (("start", start), ("stop", stop)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise SplitError(f"row {name} must be an int, got {value!r}")
    if start < 0 or stop < start:
        raise SplitError(f"row range [{start}, {stop}) is not a range of offsets")
    if length is not None and stop > length:
        raise SplitError(f"row range [{start}, {stop}) runs past the source's {length} rows")


class RowSource:
    """The rows one arm owns, named by offset and optionally by value."""

    __slots__ = ()

    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start

    def slice(self, start: int, stop: int) -> RowSource:
        """The sub-source covering ``[start, stop)`` of this source (relative in, absolute out)."""
        raise NotImplementedError

    def values(self) -> Sequence[Any]:
        """The rows' values; a source that names rows only by offset has none."""
        raise SplitError(f"{self!r} names rows by offset only; it carries no values")

    def __iter__(self) -> Iterator[Any]:
        return iter(self.values())


class RowRange(RowSource):
    """Rows named by their offsets and nothing else: two integers whatever the range's size."""

    __slots__ = ("start", "stop")

    def __init__(self, start: int, stop: int) -> None:
        _check_bounds(start, stop)
        self.start = start
        self.stop = stop

    def slice(self, start: int, stop: int) -> RowRange:
        _check_bounds(start, stop, len(self))
        return RowRange(self.start + start, self.start + stop)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RowRange):
            return NotImplemented
        return (self.start, self.stop) == (other.start, other.stop)

    def __hash__(self) -> int:
        return hash((RowRange, self.start, self.stop))

    def __repr__(self) -> str:
        return f"RowRange({self.start}, {self.stop})"


class _SequenceView(Sequence[Any]):
    """A read-only window ``[lo, hi)`` onto another sequence; slicing it never copies rows."""

    __slots__ = ("_base", "_hi", "_lo")

    def __init__(self, base: Sequence[Any], lo: int, hi: int) -> None:
        self._base, self._lo, self._hi = base, lo, hi

    def __len__(self) -> int:
        return self._hi - self._lo

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            lo, hi, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(lo, hi, step)]
            return _SequenceView(self._base, self._lo + lo, self._lo + max(lo, hi))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._base[self._lo + index]

    def __iter__(self) -> Iterator[Any]:
        for i in range(self._lo, self._hi):
            yield self._base[i]


class RowBatch(RowSource):
    """Rows the caller already materialized: offsets and values, wrapped in place, never copied."""

    __slots__ = ("rows", "start")

    def __init__(self, rows: Sequence[Any], start: int = 0) -> None:
        _check_bounds(start, start)
        self.rows = rows
        self.start = start

    @property
    def stop(self) -> int:  # type: ignore[override]
        return self.start + len(self.rows)

    def slice(self, start: int, stop: int) -> RowBatch:
        _check_bounds(start, stop, len(self))
        return RowBatch(_SequenceView(self.rows, start, stop), self.start + start)

    def values(self) -> Sequence[Any]:
        return self.rows

    def __repr__(self) -> str:
        return f"RowBatch(start={self.start}, stop={self.stop})"


def as_row_source(rows: RowSource | Iterable[Any]) -> RowSource:
    """The split's row argument from whatever the caller holds.

    A source passes through untouched; a sequence is wrapped in place at no cost; any other iterable
    (an iterator, a generator) is drained once, because both arms read one source.
    """
    if isinstance(rows, RowSource):
        return rows
    if isinstance(rows, Sequence) or (hasattr(rows, "__getitem__") and hasattr(rows, "__len__")):
        return RowBatch(rows)  # type: ignore[arg-type]
    return RowBatch(list(rows))


__all__ = ["RowBatch", "RowRange", "RowSource", "as_row_source"]
