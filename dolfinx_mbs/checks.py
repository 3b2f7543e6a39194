"""Argument checks shared by the package.

Each check returns the value in the form the package uses (a float, a numpy vector) or raises a
``ValueError`` (``TypeError`` for a value that is not a number at all) whose message names the
argument and what was expected. The arguments are the same on every rank, so a check raises on
every rank: no rank is left waiting in a collective.
"""

from __future__ import annotations

import builtins
import math
import traceback
from typing import TYPE_CHECKING, Any, Literal, Type

import numpy as np

if TYPE_CHECKING:
    from types import TracebackType

    from mpi4py import MPI
    from numpy.typing import ArrayLike

__all__ = ["shown", "real", "positive", "vector", "point3", "unit_axis", "raise_everywhere",
           "collective", "SmallDisplacementWarning"]

#: arrays longer than this are shown by their shape and first entries
SHOWN_ENTRIES = 12


class SubparametricWarning(UserWarning):
    """A body's displacement of a lower degree than its mesh's cells (P1 on the curved,
    second-order cells of a round part): the space cannot hold a rigid rotation exactly, and
    the rigid motions take strain."""


class SmallDisplacementWarning(UserWarning):
    """A result past the range of the small-displacement (linear) model it came from: a body
    rotated relative to its frame by more than a tenth of a radian or so
    (:mod:`dolfinx_mbs.integrate.motion_range`), a rotor whirling on an orbit of that slope
    (:func:`dolfinx_mbs.rotors.unbalance_response`)."""


def shown(value: object) -> str:
    """``value`` as an error message shows it to the user.

    Numbers as numbers (``nan``, ``0.5``), arrays and numpy scalars as plain lists and numbers
    (``[0.0, 0.0, 0.0]``, never ``array(...)`` or ``np.float64(...)``), long arrays by their
    shape and first entries; anything else by its ``repr``.

    Args:
        value: the value an error message quotes.

    Returns:
        The text for the message.
    """
    if isinstance(value, np.ndarray) and value.size > SHOWN_ENTRIES:
        head = ", ".join(shown(v) for v in value.reshape(-1)[:3].tolist())
        return f"an array of shape {value.shape} ([{head}, ...])"
    if isinstance(value, (np.ndarray, np.generic)):
        return shown(value.tolist())
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(shown(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def real(x: Any, name: str) -> float:
    """A finite real number (Python or numpy scalar, or a 0-d array).

    Args:
        x: the value.
        name: the argument's name, for the error.

    Returns:
        The number.
    """
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {shown(x)}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {shown(x)}")
    return v


def positive(x: Any, name: str) -> float:
    """A finite real number > 0.

    Args:
        x: the value.
        name: the argument's name, for the error.

    Returns:
        The number.
    """
    v = real(x, name)
    if v <= 0.0:
        raise ValueError(f"{name} must be positive and finite, got {shown(x)}")
    return v


def vector(value: ArrayLike, n: int, name: str) -> np.ndarray:
    """A finite vector of exactly ``n`` components.

    Args:
        value: the value.
        n: the number of components.
        name: the argument's name, for the error.

    Returns:
        The vector.
    """
    try:
        v = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite vector of length {n}, got "
                         f"{shown(value)}") from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be a finite vector of length {n}, got {shown(value)}")
    return v


def point3(value: ArrayLike, name: str) -> np.ndarray:
    """A finite point (or vector) of 2 or 3 coordinates, as 3 (z = 0 for 2).

    Args:
        value: the value.
        name: the argument's name, for the error.

    Returns:
        The 3-vector.
    """
    try:
        a = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        a = np.zeros(0)
    if a.shape == (2,):
        a = np.array([a[0], a[1], 0.0])
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a finite 2- or 3-vector, got {shown(value)}")
    return a


def unit_axis(value: ArrayLike, name: str = "axis") -> np.ndarray:
    """A direction of 2 or 3 finite components and nonzero length, normalized, as 3.

    Args:
        value: the value.
        name: the argument's name, for the error.

    Returns:
        The unit 3-vector.
    """
    a = point3(value, name)
    norm = float(np.linalg.norm(a))
    if norm < 1e-14:
        raise ValueError(f"{name} must have nonzero length, got {shown(value)}")
    return a / norm


def raise_everywhere(comm: MPI.Comm, msg: str | None, exc: Type[Exception] = ValueError) -> None:
    """Raise ``exc(msg)`` on every rank of ``comm`` if any rank has a message (a ``str``; ``None``
    or ``""`` for none): a check whose outcome differs between ranks (it looked at owned data)
    still leaves no rank waiting in a collective. The first rank's message is raised.

    Args:
        comm: the communicator (collective).
        msg: this rank's message, or None (or ``""``).
        exc: the exception type.
    """
    msgs = [m for m in comm.allgather(msg) if m]
    if msgs:
        raise exc(msgs[0])


#: exception types that :func:`collective` raises as they are on every rank (others: RuntimeError)
_SHARED = ("ValueError", "TypeError", "RuntimeError", "OSError", "FileNotFoundError",
           "FileExistsError", "IsADirectoryError", "NotADirectoryError", "PermissionError",
           "ZeroDivisionError", "FloatingPointError", "OverflowError", "IndexError", "KeyError",
           "ArithmeticError", "LookupError")


class collective:
    """Run a block that may fail on some ranks only (the user's code called with this rank's
    data, a file operation done by one rank) and fail on every rank if it failed on any.

    The first failing rank's error is raised everywhere as ``type(f"{what}: {message}")``
    (the same type for the common built-in exceptions, RuntimeError otherwise), with the
    original traceback as a note on the ranks where it happened. Every rank must enter the
    block (it ends in a collective)::

        with checks.collective(comm, "point load at t=0.05"):
            value = user_function(t)

    The original error is kept as text only: its frames would keep the caller's objects
    (PETSc objects among them) alive on the failing ranks alone, and a later collective
    destruction of those objects would then find the other ranks elsewhere.

    Args:
        comm: the communicator (collective).
        what: what the block does, in the error's words.
    """

    def __init__(self, comm: MPI.Comm, what: str) -> None:
        #: what the block does, in the error's words (the block may change it as it goes)
        self.comm, self.what = comm, what

    def __enter__(self) -> collective:
        return self

    def __exit__(self, typ: Type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        if value is not None and not isinstance(value, Exception):
            return False  # KeyboardInterrupt, SystemExit: not the user's error
        err = trace = None
        if value is not None:
            err = (type(value).__name__, str(value), self.what)
            trace = "".join(traceback.format_exception(typ, value, tb))
            value.__traceback__ = None
            del value, tb
        # (one rank: nothing to gather, and a guarded call in a run's loop costs no collective)
        found = [x for x in (self.comm.allgather(err) if self.comm.size > 1 else [err]) if x]
        if not found:
            return False
        name, msg, what = found[0]  # the failing rank's ``what`` (it may name a time)
        cls = getattr(builtins, name) if name in _SHARED else RuntimeError
        exc = cls(f"{what}: {msg}" if msg else f"{what}: {name}")
        if trace is not None:
            exc.add_note(f"raised on rank {self.comm.rank} as:\n{trace}")
        raise exc from None


class Deferred:
    """Errors of one rank kept until one collective raises them on every rank.

    For work that every rank does on the same data without talking to the others (a dense
    run replicated on the ranks, the user's code called inside its loop): an error is kept
    until :meth:`settle`, where one collective raises the first failing rank's error on every
    rank (as :class:`collective` does). Each rank must call :meth:`settle` as often as the
    others (at the end of each batch of steps, say): then a fault on one rank only never
    leaves the others waiting::

        fault = checks.Deferred(comm)
        for t in batch:
            with fault.guard(f"the loads at t={t:g}"):
                value = user_function(t)
            if fault.found:
                break
        fault.settle()

    Args:
        comm: the communicator.
    """

    def __init__(self, comm: MPI.Comm) -> None:
        self.comm = comm
        #: (type name, message, what, traceback) of this rank's first fault, or None
        self.found: tuple | None = None

    def guard(self, what: str) -> _Guard:
        """A block whose error (an Exception) is kept, not raised.

        Args:
            what: what the block does, in the error's words.

        Returns:
            The context manager.
        """
        return _Guard(self, what)

    def keep(self, error: BaseException, what: str) -> None:
        """Keep ``error`` (the first one) to be raised by :meth:`settle`.

        Args:
            error: the error.
            what: what failed, in the error's words.
        """
        if self.found is None:
            trace = "".join(traceback.format_exception(type(error), error,
                                                       error.__traceback__))
            self.found = (type(error).__name__, str(error), what, trace)
        error.__traceback__ = None

    def settle(self) -> None:
        """Raise the first fault of any rank on every rank (collective where the
        communicator has more than one rank).

        Raises:
            Exception: the fault, as :class:`collective` raises it.
        """
        mine = self.found
        found = [x for x in self.comm.allgather(mine) if x] if self.comm.size > 1 else \
            [x for x in (mine,) if x]
        if not found:
            return
        self.found = None
        name, msg, what, _ = found[0]
        cls = getattr(builtins, name) if name in _SHARED else RuntimeError
        exc = cls(f"{what}: {msg}" if msg else f"{what}: {name}")
        if mine is not None:
            exc.add_note(f"raised on rank {self.comm.rank} as:\n{mine[3]}")
        raise exc from None


class _Guard:
    """:meth:`Deferred.guard`'s block."""

    def __init__(self, deferred: Deferred, what: str) -> None:
        self.deferred, self.what = deferred, what

    def __enter__(self) -> _Guard:
        return self

    def __exit__(self, typ: Type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if value is None or not isinstance(value, Exception):
            return False
        self.deferred.keep(value, self.what)
        return True
