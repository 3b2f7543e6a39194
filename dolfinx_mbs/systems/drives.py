"""Inverse dynamics: the force and torque that keep a prescribed frame on its motion.

A frame whose motion is prescribed is driven: something supplies the force and the torque
that move it, with the bodies it carries, as prescribed (the drive torque of a spin-up, the
force on a shaker's table). They are the frame's rows of the equations of motion
(docs/theory.md section 8) evaluated on the motion: the bodies' dynamic residual tested with
the rigid fields e_i and e_i x x (x = X + u the deformed position in the frame),

    F = sum_n e_n,     M_O = sum_n x_n x e_n,
    e = M u'' + (G + D_a) u' + (K_omega + K_alpha) u - Q,

e being the inertia and applied loads of every node (the residual without the internal
elastic, geometric and damping forces, which do no work on a rigid motion of the frame), plus
the Newton-Euler forces of the rigid bodies it carries (:class:`dolfinx_mbs.bodies.RigidBody`).
Applying that torque to a computed frame (:class:`dolfinx_mbs.frames.Hinge`) gives the
motion back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Mapping, Sequence, Tuple

import numpy as np
from mpi4py import MPI
from petsc4py import PETSc

from dolfinx_mbs.frames.computed import ComputedFrame
from dolfinx_mbs.records import FrozenMapping

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dolfinx_mbs.bodies.body import Body
    from dolfinx_mbs.bodies.rigid import RigidBody
    from dolfinx_mbs.frames.base import Frame
    from dolfinx_mbs.systems.second_order import SecondOrderSystem

__all__ = ["Drives", "rigid_resultants", "frame_label"]


def rigid_resultants(e: np.ndarray, X: np.ndarray, u: np.ndarray, gdim: int, comm: MPI.Comm
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The resultant force sum_n e_n and moment sum_n (X_n + u_n) x e_n about the frame's
    origin (local components, summed over ranks) of nodal vectors ``e`` (owned, flat, ``gdim``
    components a node); ``X`` (n, 3) the nodes, ``u`` flat like ``e``.

    Args:
        e: nodal vectors (owned, flat, ``gdim`` components a node).
        X: (n, 3) the nodes' positions.
        u: the displacement (flat, like ``e``).
        gdim: the geometric dimension.
        comm: the communicator.

    Returns:
        ``(force, moment)``.
    """
    def as3(a: np.ndarray) -> np.ndarray:
        a = a.reshape(-1, gdim)
        if gdim == 3:
            return a
        out = np.zeros((a.shape[0], 3))
        out[:, :gdim] = a
        return out
    ea = as3(e)
    x = X + as3(u)
    local = np.concatenate([ea.sum(axis=0), np.cross(x, ea).sum(axis=0)])
    out = np.empty(6)
    comm.Allreduce(local, out, op=MPI.SUM)
    return out[:3], out[3:]


def frame_label(frame: Frame, carried: Sequence[Body | RigidBody]) -> str:
    """A prescribed frame's key in the results: its ``name`` if it has one, else
    ``"frame:"`` and the names of what it carries.

    Args:
        frame: the frame.
        carried: the bodies it carries.

    Returns:
        The label.
    """
    name = getattr(frame, "name", None)
    if isinstance(name, str) and name:
        return name
    return "frame:" + "+".join(b.name for b in carried)


class Drives:
    """The drive force and torque of each prescribed frame of a system.

    Args:
        system: a :class:`~dolfinx_mbs.systems.SecondOrderSystem`.
        rigid: the model's rigid bodies (those on prescribed frames count).
        gravity: the model's gravity (global components) or None.
    """

    def __init__(self, system: SecondOrderSystem, rigid: Sequence[RigidBody] = (),
                 gravity: ArrayLike | None = None) -> None:
        self.system = system
        self.gravity = None if gravity is None else np.asarray(gravity, dtype=float)
        frames: list = []
        for b in list(system.bodies) + list(rigid):
            if not isinstance(b.frame, ComputedFrame) and all(b.frame is not f for f in frames):
                frames.append(b.frame)
        self.frames = frames
        self.bodies_on = [[i for i, b in enumerate(system.bodies) if b.frame is f]
                          for f in frames]
        self.rigid_on = [[r for r in rigid if r.frame is f] for f in frames]
        self.labels = [frame_label(f, [system.bodies[i] for i in ib] + rb)
                       for f, ib, rb in zip(frames, self.bodies_on, self.rigid_on)]
        self._X = {}
        for i, b in enumerate(system.bodies):
            g = b.gdim
            n = b.V.dofmap.index_map.size_local
            X = np.zeros((n, 3))
            X[:, :g] = b.V.tabulate_dof_coordinates()[:n, :g]
            self._X[i] = X
        self._work: Tuple[int, List[PETSc.Vec]] | None = None

    def at(self, t: float, u: PETSc.Vec, ud: PETSc.Vec, udd: PETSc.Vec
           ) -> Mapping[str, Tuple[np.ndarray, np.ndarray]]:
        """{label: (force, torque about the frame's origin)} in global components at ``t``
        for the full displacement, velocity and acceleration ``u``, ``ud``, ``udd``.

        Args:
            t: time (s).
            u: the full displacement.
            ud: the full velocity.
            udd: the full acceleration.

        Returns:
            The forces and torques by label (read-only).
        """
        s = self.system
        asm, space = s.assembly, s.space
        states = asm.states(t)
        ops = asm.at(t, states)
        ua, uda, udda = (x.getArray(readonly=True) for x in (u, ud, udd))
        out: Dict[str, Tuple[np.ndarray, np.ndarray]] = {}
        for f, label, ib, rb in zip(self.frames, self.labels, self.bodies_on, self.rigid_on):
            st = None
            F, M = np.zeros(3), np.zeros(3)
            for i in ib:
                o, b = ops[i], s.bodies[i]
                st = states[i]
                lo, hi = space.offsets[i], space.offsets[i + 1]
                if self._work is None or self._work[0] != i:
                    vecs = [o.M.createVecLeft() for _ in range(5)]
                    self._work = (i, vecs)
                vu, vud, vudd, e, tmp = self._work[1]
                vu.array[:] = ua[lo:hi]
                vud.array[:] = uda[lo:hi]
                vudd.array[:] = udda[lo:hi]
                o.M.mult(vudd, e)
                gyroscopic = o.matrix("gyroscopic")
                assert gyroscopic is not None  # (every body's operators have it)
                gyroscopic.multAdd(vud, e, e)
                for name in ("spin_softening", "angular_acceleration"):
                    A = o.matrix(name)
                    if A is not None:
                        A.multAdd(vu, e, e)
                e.axpy(-1.0, o.Q)
                Fb, Mb = rigid_resultants(e.getArray(readonly=True), self._X[i], ua[lo:hi],
                                          b.gdim, s.comm)
                F += Fb
                M += Mb
            if st is None:
                st = f.state(t)
            for r in rb:
                Fr, Mr = r.forces(st, self.gravity)
                F += Fr
                M += Mr
            out[label] = (st.R @ F, st.R @ M)
        return FrozenMapping(out)
