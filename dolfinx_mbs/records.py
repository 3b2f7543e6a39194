"""Typed records that are also read as mappings of their fields.

A result with fixed fields is a frozen dataclass; where callers (tests, demos, the user's
scripts) read it by name, as the dict it used to be, :class:`Record` lets ``r["name"]``,
``r.items()`` and ``dict(r)`` keep working. Prefer the attributes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator, Mapping, Tuple

__all__ = ["Record"]


class Record(Mapping[str, Any]):
    """A frozen dataclass's fields, read also as a read-only mapping of their names.

    Subclasses are ``@dataclasses.dataclass(frozen=True, eq=False)``; their fields are the
    keys, in the order declared.
    """

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    @classmethod
    def _keys(cls) -> Tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
