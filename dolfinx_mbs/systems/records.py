"""The typed records of the systems (:mod:`dolfinx_mbs.systems`): the operators of one
formulation at one frame state, and the protocol linking a system's coordinates to the full
coordinate vector. Import them from :mod:`dolfinx_mbs.systems`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, List, Protocol, Sequence

from petsc4py import PETSc

if TYPE_CHECKING:
    from mpi4py import MPI

    from dolfinx_mbs.assembly.full import Assembly
    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.constraints.maggi import MaggiReducer

__all__ = ["Coordinates", "Reducer", "AssembledSystem", "SecondOrder", "Hamiltonian",
           "InertiaBlocks", "FORMED_ON_READ", "check_choice", "constant_frame"]

#: the record's matrices that a combining system forms when they are read (``formed``)
FORMED_ON_READ = frozenset(("C", "K", "Kpot", "Gp", "Kh"))


class Coordinates(Protocol):
    """A system's coordinates and their link to the full coordinate vector Delta: what every
    system gives (the Maggi reducer, the multiplier form, the coupled system)."""

    def create_reduced_vec(self) -> PETSc.Vec:
        """A vector of the system's coordinates."""

    def restrict(self, x: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """The system's coordinates of a full vector.

        Args:
            x: a full vector Delta.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """

    def expand(self, q: PETSc.Vec, out: PETSc.Vec | None = None,
               homogeneous: bool = False) -> PETSc.Vec:
        """The full vector Delta = A q + a0 (A q when ``homogeneous``).

        Args:
            q: the system's coordinates.
            out: the vector to fill (new if None).
            homogeneous: leave out a0.

        Returns:
            ``out``.
        """


class Reducer(Coordinates, Protocol):
    """The link between a system's coordinates and the full coordinate vector Delta, at the
    time of the last ``update(t)``: the Maggi reducer and the multiplier form satisfy it."""

    n_reduced: int

    def update(self, t: float) -> bool:
        """Bring the reducer to time ``t``.

        Args:
            t: time (s).

        Returns:
            True when its operators changed.
        """

    def project(self, b: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """A full load vector in the system's coordinates (A^T b for the Maggi reducer).

        Args:
            b: a full vector.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """

    def expand_rate(self, q: PETSc.Vec, v: PETSc.Vec,
                    out: PETSc.Vec | None = None) -> PETSc.Vec:
        """The full velocity Delta' = A q' + A' q + a0'.

        Args:
            q: the system's coordinates.
            v: their rates q'.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """

    def expand_acceleration(self, q: PETSc.Vec, v: PETSc.Vec, a: PETSc.Vec,
                            out: PETSc.Vec | None = None) -> PETSc.Vec:
        """The full acceleration Delta'' = A q'' + 2 A' q' + A'' q + a0''.

        Args:
            q: the system's coordinates.
            v: their rates q'.
            a: their second rates q''.
            out: the vector to fill (new if None).

        Returns:
            ``out``.
        """


class AssembledSystem(Protocol):
    """A system over assembled bodies and a Maggi reducer, as the parts that serve it (the
    film bearings, the choice of a stepper) read it:
    :class:`~dolfinx_mbs.systems.second_order.SecondOrderSystem` gives it."""

    @property
    def assembly(self) -> Assembly:
        """The full operators."""

    @property
    def reducer(self) -> MaggiReducer:
        """The reducer of the constraints."""

    @property
    def bodies(self) -> List[Body]:
        """The bodies, in the assembly's order."""

    @property
    def comm(self) -> MPI.Comm:
        """The communicator."""

    @property
    def nonlinear(self) -> bool:
        """True when a body's strain is nonlinear."""

    def expand(self, q: PETSc.Vec, out: PETSc.Vec | None = None,
               homogeneous: bool = False) -> PETSc.Vec:
        """The full vector (:meth:`Coordinates.expand`)."""

    def expand_rate(self, q: PETSc.Vec, v: PETSc.Vec,
                    out: PETSc.Vec | None = None) -> PETSc.Vec:
        """The full velocity (:meth:`Reducer.expand_rate`)."""

    def project(self, b: PETSc.Vec, out: PETSc.Vec | None = None) -> PETSc.Vec:
        """A full load vector in the system's coordinates (:meth:`Reducer.project`)."""


@dataclasses.dataclass
class InertiaBlocks:
    """The node-block form of the second-order residual (constraints that fix whole nodes):
    M a + C v + K u = M (a + W_C v + W_K u) + K_s (u + b v), per body W_C = 2 skew(omega) +
    a_R I, W_K = skew(omega)^2 + skew(alpha), b the stiffness-proportional Rayleigh
    coefficient. ``blocks``: ((start, stop), gdim, W_C, W_K, b) per body.

    Hamilton's form the same way: M q' + G_p q = M (q' + W_p q), (G_p + D) q' + K_h q =
    M ((W_p + a_R I) q' + W_w q) + K_s (q + b q'), W_p = skew(omega), W_w = skew(omega)^2;
    ``momentum``: ((start, stop), gdim, W_p, W_p + a_R I, W_w, b) per body."""

    Ks: PETSc.Mat
    blocks: List[tuple]
    momentum: List[tuple] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class SecondOrder:
    """M q'' + C q' + K q = f at one frame state.

    Attributes:
        M, C, K: mass, velocity operator (G + D, and 2 A^T M A' for moving constraints),
            stiffness (K + K_omega + K_alpha (+ K_sigma) and the moving-constraint terms).
        Kel: the elastic stiffness (strain energy).
        Kpot: the stiffness of the potential energy (K, or K without the constraint rows of
            the multiplier form).
        f: all loads of the second-order form.
        blocks: the node-block form (:class:`InertiaBlocks`) or None.
        version: changes whenever a matrix changed.
        formed: None, or ``formed(name)`` that brings the matrix ``name`` (one of
            :data:`FORMED_ON_READ`) up to date: a system that combines its matrices
            (:class:`dolfinx_mbs.systems.reduced_basis.ReducedBasis`) forms each when it is first
            read at a new state, so that no one pays for a matrix nobody reads.
    """

    t: float
    M: PETSc.Mat
    C: PETSc.Mat
    K: PETSc.Mat
    Kel: PETSc.Mat
    Kpot: PETSc.Mat
    f: PETSc.Vec
    blocks: InertiaBlocks | None
    version: int
    formed: Callable[[str], None] | None = None

    def __getattribute__(self, name: str) -> Any:
        if name in FORMED_ON_READ:
            formed = object.__getattribute__(self, "formed")
            if formed is not None:
                formed(name)
        return object.__getattribute__(self, name)


@dataclasses.dataclass
class Hamiltonian(SecondOrder):
    """Hamilton's form in (q, p) at one frame state (``docs/theory.md`` section 4).

    Beside the second-order operators (for energies):

        M q' + G_p q + pi0 - p = 0,     p' + G_q q' + K_h q + h - f_a = 0,

    G_q = G_p + D for fixed constraints (``Gq`` None), else its own matrix."""

    Gp: PETSc.Mat | None = None
    D: PETSc.Mat | None = None
    Kh: PETSc.Mat | None = None
    Gq: PETSc.Mat | None = None
    pi0: PETSc.Vec | None = None
    h: PETSc.Vec | None = None
    fa: PETSc.Vec | None = None


def check_choice(formulation: str, constraints: str, velocity: bool, nonlinear: bool, reduced: bool,
                 formulations: Sequence[str] = ("second-order", "first-order", "hamiltonian")
                 ) -> None:
    """Raise ValueError (the same on every rank) for a formulation (one of
    ``formulations``) and constraint handling that a model with ``velocity`` constraints,
    ``nonlinear`` strain or ``reduced`` bodies cannot take together.

    Args:
        formulation: the formulation.
        constraints: the constraint handling.
        velocity: the model has velocity constraints.
        nonlinear: the strain is nonlinear.
        reduced: the model has reduced bodies.
        formulations: the known formulations.
    """
    if formulation not in formulations:
        raise ValueError(f"formulation must be one of {formulations}, got {formulation!r}")
    if constraints not in ("maggi", "multipliers"):
        raise ValueError(f"constraints must be 'maggi' or 'multipliers', got {constraints!r}")
    if velocity and (formulation != "first-order" or constraints != "maggi"):
        raise ValueError("velocity constraints (Model.constrain_velocity) need "
                         "formulation='first-order' with constraints='maggi', got "
                         f"formulation={formulation!r}, constraints={constraints!r}")
    if constraints == "multipliers" and formulation != "second-order":
        raise ValueError("constraints='multipliers' works with the second-order formulation "
                         "only")
    if constraints == "multipliers" and nonlinear:
        raise ValueError("constraints='multipliers' works with linear strain only (a body "
                         "has stiffening='nonlinear'): use constraints='maggi'")
    if velocity and nonlinear:
        raise ValueError("velocity constraints (constrain_velocity) work with linear strain "
                         "only: a body has stiffening='nonlinear'")
    if reduced and (velocity or constraints == "multipliers"):
        raise ValueError("reduced bodies (Model.reduce) work with constraints='maggi' and "
                         "without velocity constraints (constrain_velocity)")


def constant_frame(system: AssembledSystem) -> bool:
    """True when the operators of ``system`` cannot change in time: every body's frame is
    time invariant (its state in local components constant), the constraints do not move,
    and the strain is linear.

    Args:
        system: the typed system.

    Returns:
        Whether they cannot change.
    """
    red = getattr(system, "reducer", None)
    return (all(b.frame.time_invariant for b in system.bodies) and red is not None
            and not getattr(red, "rheonomic", False) and not system.nonlinear)
