"""The builders of a rotor's parts, which ``Model.bearing``, ``Model.disk`` and
``Model.unbalance`` forward to: each checks its arguments against the model's bodies and makes
the element (:class:`~dolfinx_mbs.bodies.attachments.Bearing`,
:class:`~dolfinx_mbs.bodies.attachments.Disk`, :class:`~dolfinx_mbs.bodies.attachments.Unbalance`,
the data classes that the operators read); the model attaches it to its body.

    b = parts.bearing(model.bodies, rotor, where=journal, kxx=1e7, kyy=1e7, cxx=500.0)

A bearing's coefficients are given as keywords (``kxx`` ... ``cyy``, numbers or arrays over
``speeds``; ``kzz``, ``czz``, ``ktilt``, ``ctilt``) and held by the bearing as a
:class:`~dolfinx_mbs.bodies.attachments.Coefficients` and an
:class:`~dolfinx_mbs.bodies.attachments.AxialTilt`; a fluid film with ``speeds`` is tabulated
there once (:meth:`dolfinx_mbs.rotors.PlainJournal.table`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, Tuple

from dolfinx_mbs.bodies.attachments import (
    COEFFICIENTS,
    EXTRA,
    AxialTilt,
    Bearing,
    Coefficients,
    Disk,
    Housing,
    Unbalance,
    journal_load,
)

if TYPE_CHECKING:
    import numpy as np
    from dolfinx.mesh import MeshTags
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.body import Body

__all__ = ["bearing", "disk", "unbalance"]


def _member(bodies: Sequence[Any], body: Any, what: str) -> None:
    if not any(body is b for b in bodies):
        raise ValueError(f"{what} body {getattr(body, 'name', body)!r} is not part of this "
                         "model")


def _table(eight: Mapping[str, Any], speeds: ArrayLike | None,
           extrapolate: bool) -> Coefficients:
    """The coefficients named in ``eight`` (the others zero) over ``speeds``."""
    def g(k: str) -> Any:
        return eight.get(k, 0.0)

    return Coefficients(kxx=g("kxx"), kxy=g("kxy"), kyx=g("kyx"), kyy=g("kyy"), cxx=g("cxx"),
                        cxy=g("cxy"), cyx=g("cyx"), cyy=g("cyy"), speeds=speeds,
                        extrapolate=extrapolate)


def bearing(bodies: Sequence[Any], body: Body, facets: Tuple[MeshTags, int] | None = None,
            where: Callable[[np.ndarray], np.ndarray] | None = None,
            speeds: ArrayLike | None = None, extrapolate: bool = False,
            name: str | None = None, housing: Housing | None = None, journal: Any = None,
            load: ArrayLike | None = None, **coefficients: Any) -> Bearing:
    """A bearing of ``body`` (one of ``bodies``) to the ground or to ``housing``: see
    ``Model.bearing`` and :class:`~dolfinx_mbs.bodies.attachments.Bearing`.

    Args:
        bodies: the model's bodies.
        body: the elastic body of the journal.
        facets: the journal's facets, ``(meshtags, tag)``.
        where: the journal's facets by a predicate instead.
        speeds: the speeds the coefficients are given at (rad/s), or None for constants.
        extrapolate: allow speeds outside the table (the end values held).
        name: the bearing's name.
        housing: the housing on another body of ``bodies`` (None: the ground).
        journal: a fluid film that gives the coefficients, or None.
        load: the static load on the film's journal (N, x and y), with ``journal``.
        **coefficients: ``kxx`` ... ``cyy`` (numbers or arrays over ``speeds``), ``kzz``,
            ``czz``, ``ktilt``, ``ctilt``.

    Returns:
        The bearing (not yet attached).

    Raises:
        ValueError: a body (or the housing's) not of ``bodies``; what
            :class:`~dolfinx_mbs.bodies.attachments.Bearing` and
            :class:`~dolfinx_mbs.bodies.attachments.Coefficients` refuse.
        TypeError: an unknown coefficient; ``journal`` with the eight coefficients.
    """
    _member(bodies, body, "bearing:")
    if housing is not None:
        _member(bodies, housing.body, "bearing: other=")
    unknown = set(coefficients) - set(COEFFICIENTS) - set(EXTRA)
    if unknown:
        raise TypeError(f"bearing: unknown coefficient(s) {sorted(unknown)}; expected "
                        f"{COEFFICIENTS + EXTRA}")
    eight = {k: v for k, v in coefficients.items() if k in COEFFICIENTS}
    axial = AxialTilt(**{k: v for k, v in coefficients.items() if k in EXTRA})
    table: Coefficients | None = None
    if journal is not None:
        if eight:
            raise TypeError(f"bearing: journal= gives the eight coefficients; {sorted(eight)} "
                            "given beside it")
        if speeds is not None:   # the film tabulated once, interpolated as any table
            table = journal.table(journal_load(journal, load), Coefficients(speeds=speeds).speeds,
                                  extrapolate).coefficients
    else:
        table = _table(eight, speeds, extrapolate)
    return Bearing(body, facets=facets, where=where, coefficients=table, axial=axial,
                   name=name, housing=housing, journal=journal, load=load)


def disk(bodies: Sequence[Any], body: Body, facets: Tuple[MeshTags, int] | None = None,
         where: Callable[[np.ndarray], np.ndarray] | None = None, mass: float = 0.0,
         polar: float = 0.0, diametral: float = 0.0, name: str | None = None) -> Disk:
    """A rigid disk on a surface of ``body`` (one of ``bodies``): see ``Model.disk`` and
    :class:`~dolfinx_mbs.bodies.attachments.Disk`.

    Args:
        bodies: the model's bodies.
        body: the elastic body.
        facets: the disk's seat, ``(meshtags, tag)``.
        where: the seat by a predicate instead.
        mass: the mass (kg).
        polar: the polar moment of inertia (kg m^2).
        diametral: the diametral moment of inertia (kg m^2).
        name: the disk's name.

    Returns:
        The disk (not yet attached).

    Raises:
        ValueError: a body not of ``bodies``; what
            :class:`~dolfinx_mbs.bodies.attachments.Disk` refuses.
    """
    _member(bodies, body, "disk:")
    return Disk(body, facets=facets, where=where, mass=mass, polar=polar,
                diametral=diametral, name=name)


def unbalance(bodies: Sequence[Any], on: Disk | Bearing, m_e: float,
              phase: float = 0.0) -> Unbalance:
    """An unbalance on the journal of ``on`` (a disk or bearing on one of ``bodies``): see
    ``Model.unbalance`` and :class:`~dolfinx_mbs.bodies.attachments.Unbalance`.

    Args:
        bodies: the model's bodies.
        on: the disk or bearing.
        m_e: the unbalance (kg m).
        phase: its phase (rad).

    Returns:
        The unbalance (not yet attached).

    Raises:
        TypeError: ``on`` is not a disk or a bearing.
        ValueError: its body is not of ``bodies``.
    """
    if not isinstance(on, (Disk, Bearing)):
        raise TypeError(f"unbalance: on must be a disk or bearing of this model, got {on!r}")
    _member(bodies, on.body, "unbalance:")
    return Unbalance(on, m_e, phase)
