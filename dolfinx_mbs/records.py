"""Typed records that are also read as mappings of their fields.

A result with fixed fields is a frozen dataclass; where callers (tests, demos, the user's
scripts) read it by name, as the dict it used to be, :class:`Record` lets ``r["name"]``,
``r.items()`` and ``dict(r)`` keep working. Prefer the attributes. A collection keyed by the
user's names (outputs by joint name, physical groups by name) is a :class:`FrozenMapping`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterable, Iterator, Mapping, Tuple, TypeVar

__all__ = ["Record", "FrozenMapping"]

K = TypeVar("K")
V = TypeVar("V")


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
        keys = _KEYS.get(cls)
        if keys is None:   # once a class (records are read by name in every step)
            fields = dataclasses.fields(cls)  # type: ignore[arg-type]
            keys = _KEYS[cls] = tuple(f.name for f in fields)
        return keys


#: each Record class's field names, in order (filled by Record._keys)
_KEYS: Dict[type, Tuple[str, ...]] = {}


class FrozenMapping(Mapping[K, V]):
    """A read-only mapping of a collection keyed by names (or other keys), in the order given.

    Unlike ``types.MappingProxyType`` it can be pickled (sent between ranks by mpi4py); it
    compares equal to a dict of the same items. ``dict(m)`` gives a mutable copy.

    Args:
        items: the entries, a mapping or (key, value) pairs (copied).
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[K, V] | Iterable[Tuple[K, V]] = ()) -> None:
        self._items: dict[K, V] = dict(items)

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._items!r})"
