"""JSON text and files for the planner's records, written once: ``to_json``/``from_json`` and
``save``/``load`` on top of a record's ``to_dict``/``from_dict``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

from dau_scheduler.errors import SizingError
from dau_scheduler.paths import write_atomic


class JsonFile:
    """Mixin: what a record needs beyond ``to_dict`` and ``from_dict`` to live in JSON files.
    Bad JSON and unreadable files are :class:`SizingError`, naming the file."""

    #: How the record is named in error messages.
    what: ClassVar[str] = "record"

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> Self:
        raise NotImplementedError

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Self:
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SizingError(f"{cls.what} JSON is not valid JSON: {exc}") from exc
        return cls.from_dict(payload)

    def save(self, path: str | Path, **kwargs: Any) -> None:
        write_atomic(Path(path), self.to_json(indent=kwargs.pop("indent", 1), **kwargs))

    @classmethod
    def load(cls, path: str | Path) -> Self:
        try:
            return cls.from_json(Path(path).read_text(encoding="utf-8"))
        except (SizingError, OSError) as exc:
            raise SizingError(f"{cls.what} file {path} cannot be read: {exc}") from exc


__all__ = ["JsonFile"]
