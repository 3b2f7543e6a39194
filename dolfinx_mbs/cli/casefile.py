"""A case file as text and data: TOML read with :mod:`tomllib`, the line of every key (tomllib
gives none: the text is scanned for the key in its table), ``--set`` overrides and sweep values,
and :class:`CaseError`, the error that names the file, the line and the key.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Sequence, Tuple

import numpy as np

from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    import os
    from types import ModuleType

__all__ = ["CaseError", "CaseText", "describe", "parse_assignment", "parse_value", "sweep_values",
           "is_range", "key_lines"]

Path_ = Tuple[object, ...]  # a key's path: table names, array indices, the key


def _toml() -> ModuleType:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise ImportError("reading a case file needs Python >= 3.11 (tomllib) or the "
                              "tomli package (pip install tomli)") from None
    return tomllib

#: arguments of the material and frame classes that are words, not expressions
WORD_ARGUMENTS = {"plane"}


class CaseError(ValueError):
    """A case that cannot be run as written: the message starts with ``file:line:`` (or
    ``--set key:`` for a value given on the command line) and names the key."""


def describe(e: BaseException) -> str:
    """An exception as one line: a :class:`CaseError`'s message as it is, others prefixed by
    their type.

    Args:
        e: the exception.

    Returns:
        The line.
    """
    return str(e) if isinstance(e, CaseError) else f"{type(e).__name__}: {e}"


def dotted(path: Sequence) -> str:
    """``("analysis", "static", "t")`` -> ``"analysis.static.t"``, indices as ``clamp[1]``.

    Args:
        path: a key's path.

    Returns:
        The dotted text.
    """
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (("." if out else "") + str(p))
    return out


# --- where each key is written ------------------------------------------------------------

_BARE = r"[A-Za-z0-9_\-]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"|\'[^\']*\''
_KEY = rf"(?:{_BARE}|{_QUOTED})(?:\s*\.\s*(?:{_BARE}|{_QUOTED}))*"
_KEY_RE = re.compile(rf"\s*({_KEY})\s*=")


def _split_key(text: str) -> Tuple[str, ...]:
    parts = re.findall(rf"{_BARE}|{_QUOTED}", text)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def _strip_comment(line: str) -> str:
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return line[:i]
    return line


def _inline_keys(value: str, base: Path_, lineno: int, out: Dict[Path_, int]) -> int:
    """Record the keys of inline tables in ``value`` (a value's text, or a line of it) under
    ``base``; returns the change of bracket depth ([] and {}), strings skipped."""
    brackets: List[str] = []
    paths, last, quote, depth, i = [base], base, None, 0, 0

    def key_at(j: int) -> int:
        nonlocal last
        m = _KEY_RE.match(value, j)
        if not m:
            return j
        last = paths[-1] + _split_key(m.group(1))
        out.setdefault(last, lineno)
        return m.end()

    while i < len(value):
        c = value[i]
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "{":
            brackets.append(c)
            paths.append(last)
            depth += 1
            i = key_at(i + 1)
            continue
        elif c == "[":
            brackets.append(c)
            depth += 1
        elif c in "]}":
            if brackets and brackets.pop() == "{":
                paths.pop()
            depth -= 1
        elif c == "," and brackets and brackets[-1] == "{":
            i = key_at(i + 1)
            continue
        i += 1
    return depth


def key_lines(text: str) -> Mapping[Path_, int]:
    """The line (1-based) of every table header and key of a TOML text, by path: a table
    ``[a.b]`` is ``("a", "b")``, the second ``[[c]]`` is ``("c", 1)``, a key ``k`` in it is
    ``("c", 1, "k")``, a key of an inline table ``p = {q = 1}`` is ``(..., "p", "q")``.

    Args:
        text: the text.

    Returns:
        The lines by path (read-only).
    """
    out: Dict[Path_, int] = {}
    table: Path_ = ()
    key: Path_ = ()
    arrays: Dict[Tuple[str, ...], int] = {}
    depth = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).strip()
        if not line:
            continue
        if depth > 0:  # inside a multi-line array or inline table
            depth += _inline_keys(line, key, lineno, out)
            continue
        m = re.fullmatch(r"\[\[\s*(.+?)\s*\]\]", line) or re.fullmatch(r"\[\s*(.+?)\s*\]", line)
        if m:
            names = _split_key(m.group(1))
            path: List[object] = []
            for k in range(1, len(names) + 1):  # an enclosing array of tables: its last one
                path.append(names[k - 1])
                if names[:k] in arrays and (k < len(names) or not line.startswith("[[")):
                    path.append(arrays[names[:k]])
            if line.startswith("[["):
                arrays[names] = arrays.get(names, -1) + 1
                path.append(arrays[names])
            table = tuple(path)
            out.setdefault(table, lineno)
            continue
        m = _KEY_RE.match(line)
        if m:
            key = table + _split_key(m.group(1))
            out.setdefault(key, lineno)
            depth = _inline_keys(line[m.end():], key, lineno, out)
    return FrozenMapping(out)


# --- values from the command line ----------------------------------------------------------

def parse_value(text: str) -> Any:
    """A command-line value: a TOML value (``1e-5``, ``[10, 1, 1]``, ``"hex"``, ``true``) or,
    when it is none, the text itself (an expression or a name: ``SpinUp``, ``2*pi``).

    Args:
        text: the text.

    Returns:
        The value.
    """
    try:
        return _toml().loads(f"v = {text}")["v"]
    except Exception:  # noqa: BLE001 - anything tomllib refuses is taken as text
        return text.strip()


def _split_top(text: str) -> List[str]:
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "[({":
            depth += 1
        elif c in "])}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


_RANGE = "a range is start:stop:count (count evenly spaced values, both ends included)"


def _range(text: str) -> List[float] | None:
    """The values of ``start:stop:count``, or None for a text that is no range.

    A text is no range when its first part is not a number (a file name with a colon stays a
    value).
    """
    parts = text.split(":")
    if len(parts) < 2 or any(c in text for c in ",[]{}\"'"):
        return None
    try:
        a = float(parts[0])
    except ValueError:
        return None
    if len(parts) == 2:
        raise ValueError(f"{_RANGE}: {text!r} has no count (e.g. {text.strip()}:11)")
    if len(parts) > 3:
        raise ValueError(f"{_RANGE}, got {text!r}")
    try:
        b = float(parts[1])
    except ValueError:
        raise ValueError(f"{_RANGE}: the stop of {text!r} is not a number") from None
    count = parts[2].strip()
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"{_RANGE}: the count of {text!r} must be an integer >= 1")
    return [float(v) for v in np.linspace(a, b, int(count))]


def is_range(text: str) -> bool:
    """True when ``text`` is written as a range ``start:stop[:count]`` (right or wrong).

    Args:
        text: the text.

    Returns:
        Whether it is a range.
    """
    try:
        return _range(text.strip()) is not None
    except ValueError:
        return True


def sweep_values(text: str) -> list:
    """The values of a sweep parameter.

    ``a,b,c`` (each a :func:`parse_value`) or ``start:stop:count`` (``count`` evenly spaced
    numbers, both ends included).

    Args:
        text: the text.

    Returns:
        The values.

    Raises:
        ValueError: a range without its count or with a count that is not a positive
            integer, or an empty value in a list.
    """
    values = _range(text.strip())
    if values is not None:
        return values
    values = [parse_value(p) for p in _split_top(text)]
    if any(v == "" for v in values):
        raise ValueError(f"empty value in {text!r}")
    return values


def parse_assignment(text: str) -> Tuple[str, str]:
    """``"material.density=1000"`` -> ``("material.density", "1000")``.

    Args:
        text: the text.

    Returns:
        ``(key, value)``.
    """
    key, eq, value = text.partition("=")
    if not eq or not key.strip() or not value.strip():
        raise ValueError(f"--set takes key=value (e.g. material.density=7800), got {text!r}")
    return key.strip(), value.strip()


def split_path(key: str) -> Path_:
    """``"clamp.1.where"`` -> ``("clamp", 1, "where")``; quoted parts keep their dots.

    Args:
        key: the dotted key.

    Returns:
        The path.
    """
    return tuple(int(p) if p.isdigit() else p for p in _split_key(key))


# --- the case as read ----------------------------------------------------------------------

class CaseText:
    """A case file's data (a dict from tomllib) with the line of each key and the overrides
    applied from the command line.

    Args:
        path: the TOML file.
        overrides: ``(key, value)`` pairs (``"frame.rate"``, ``2000.0``) set over the file's
            values; their paths may create tables.

    Raises:
        CaseError: a TOML syntax error (with its line), or an override through a value that is
            not a table.
        FileNotFoundError: no such file.
    """

    def __init__(self, path: str | os.PathLike,
                 overrides: Iterable[Tuple[str, object]] = ()) -> None:
        self.path = Path(path)
        self.text = self.path.read_text()
        try:
            self.data = _toml().loads(self.text)
        except Exception as e:  # tomllib.TOMLDecodeError: its message has the line
            raise CaseError(f"{self.path}: {e}") from None
        self.lines = key_lines(self.text)
        self.overridden: Dict[Path_, str] = {}
        #: the overridden keys the file did not have (``--set`` made them)
        self.created: Dict[Path_, str] = {}
        for key, value in overrides:
            self.set(split_path(key), value, key)

    def set(self, path: Path_, value: Any, label: str) -> None:
        """Set the value at ``path`` (made by ``--set label=...``).

        Args:
            path: a key's path.
            value: the value.
            label: the ``--set`` key, in messages.
        """
        node = self.data
        for i, p in enumerate(path[:-1]):
            if isinstance(node, list):
                if not isinstance(p, int) or not -len(node) <= p < len(node):
                    raise CaseError(f"--set {label}: {dotted(path[:i])} has {len(node)} "
                                    f"entries, {p!r} is not one of them")
                node = node[p]
            elif isinstance(node, dict):
                if p not in node and isinstance(path[i + 1], int):
                    raise CaseError(f"--set {label}: no [[{dotted(path[:i + 1])}]] in the case")
                node = node.setdefault(p, {})
            else:
                raise CaseError(f"--set {label}: {dotted(path[:i])} is a value, not a table")
        if not isinstance(node, dict):
            raise CaseError(f"--set {label}: {dotted(path[:-1])} is not a table")
        if path[-1] not in node:
            self.created[tuple(path)] = label
        node[path[-1]] = value
        self.overridden[tuple(path)] = label

    def where(self, path: Path_) -> str:
        """``"file:line:"`` of the key at ``path`` (the nearest enclosing table's line when the
        key is not written in the file), or ``"--set key:"`` for a value from the command
        line (at ``path``, around it, or under it).

        Args:
            path: a key's path.

        Returns:
            The place, for messages.
        """
        path = tuple(path)
        for k in range(len(path), 0, -1):
            if path[:k] in self.overridden:
                return f"--set {self.overridden[path[:k]]}:"
            if k == len(path):
                under = [v for p, v in self.overridden.items() if p[:k] == path]
                if under and path not in self.lines:
                    return f"--set {under[0]}:"
            if path[:k] in self.lines:
                return f"{self.path}:{self.lines[path[:k]]}:"
        return f"{self.path}:"

    def error(self, path: Path_, message: str) -> CaseError:
        """A :class:`CaseError` at ``path``: ``file:line: table.key: message``.

        For a value given on the command line: ``--set table.key: message``.

        Args:
            path: a key's path.
            message: what is wrong.

        Returns:
            The error.
        """
        where = self.where(path)
        if where == f"--set {self.overridden.get(tuple(path))}:":
            return CaseError(f"{where} {message}")
        return CaseError(f"{where} {dotted(path)}: {message}")

    def unknown(self, path: Path_, known: Iterable[str], what: str = "key",
                name: object = None) -> CaseError:
        """The error for an unknown key (the last part of ``path``) or an unknown value
        ``name`` at ``path``, with the close match and what is known.

        Args:
            path: a key's path.
            known: the known names.
            what: what the names are, in the message.
            name: the unknown value (None: the key itself).

        Returns:
            The error.
        """
        known = sorted(known)
        name = path[-1] if name is None else name
        near = difflib.get_close_matches(str(name), known, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return self.error(path, f"{name!r} is not a known {what}{hint}; expected one of: "
                                f"{', '.join(known)}")
