"""The joints and driven motors between computed frames on the dense path: their rows at the
dense state, and what Maggi's elimination of their multipliers needs.

The rows are those of :class:`~dolfinx_mbs.systems.coupled_joints.JointSet` (a revolute
joint's coincidence and, in 3D, alignment rows; a prismatic joint's rows across its axis and
its relative angle or alignments; a driven motor's angle or speed): position values g(p) and
velocity values h(p, V) = B(p) V + b(t, p), linear in the velocities V = (the elastic rates
v, the frames' speeds w). Here they are taken at the dense state: an elastic node's
displacement and rate are rows of the reduced basis applied to q and v (the rows gathered
once), so nothing talks to the other ranks after the set-up.

For Maggi's equations (:mod:`dolfinx_mbs.integrate.dense.coupled`) this gives, at positions
p = (q, z): g, g_p = dg/dp, h, B = dh/dV (one evaluation of the rows: the nodes' rates'
coefficients come with them), h_p = dh/dp at fixed V and the derivative of the joints'
generalized forces B^T lam at fixed lam (the curvature of the rows), both by central
differences over the frames' coordinates and the nodes' displacements, as the TS path
differences the rows in the frames' coordinates;
the torque motors' generalized forces; and the joints' outputs (force, torque, drift) from
the multipliers recovered after a step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, Mapping, Protocol, Tuple

import numpy as np

from dolfinx_mbs.constraints.frame_joints import ElementOutput, Spring
from dolfinx_mbs.systems.coupled_joints import NodeValues, _central

if TYPE_CHECKING:
    from dolfinx_mbs.systems.coupled import CoupledSystem

__all__ = ["DenseJoints", "DenseBasis", "dense_joints_reason"]


class DenseBasis(Protocol):
    """What :class:`DenseJoints` reads of the dense form
    (:class:`~dolfinx_mbs.systems.coupled_dense.DenseCoupled`, which names this module): the
    number of reduced elastic coordinates and this rank's rows of the reduced basis."""

    @property
    def n(self) -> int:
        """The number of reduced elastic coordinates."""

    @property
    def _T_local(self) -> np.ndarray: ...


class DenseJoints:
    """The joints' and driven motors' rows of ``system`` at the dense state (see the module
    docstring). Collective at construction (the nodes' rows of the reduced basis).

    Args:
        system: the coupled system.
        dense: its dense form (the reduced basis' rows, the layout).
    """

    def __init__(self, system: CoupledSystem, dense: DenseBasis) -> None:
        self.system = system
        self.js = js = system.jointset
        n = self.n = dense.n
        nz, nw, na = system.nz, system.nw, system.na
        #: the dense state's positions p = (q, z), velocities V = (v, w), auxiliary momenta
        self.P = np.concatenate([np.arange(n), 2 * n + np.arange(nz)]).astype(np.int64)
        self.V = np.concatenate([n + np.arange(n), 2 * n + nz + np.arange(nw)]).astype(np.int64)
        self.A = (2 * n + nz + nw + np.arange(na)).astype(np.int64)
        #: the frames' unknowns of the dense state (the joints' block of f left out)
        self.m = nz + nw + na
        self.n_rows = js.n_rows
        #: the position rows among the rows
        self.pos = js.position_rows
        # the reduced basis' rows at the joints' elastic nodes (local components, 3 x n)
        self.T: Dict[Tuple[int, int], np.ndarray] = {}
        comm = system.comm
        basis = dense._T_local
        for ij, j in enumerate(js.joints):
            for k, pt in enumerate((j.a, j.b)):
                if not pt.elastic:
                    continue
                rows = None
                if pt.node is not None:
                    p = system.parts[pt.body_index]
                    g = p.gdim
                    lo = p.slice.start + pt.node * g
                    rows = np.zeros((3, n))
                    rows[:g] = basis[lo:lo + g]
                self.T[(ij, k)] = comm.bcast(rows, root=pt.owner)
        self._zero_joint = np.zeros(js.n_unknowns)
        #: each joint's rows
        self.rows_of = {b.joint: slice(b.start, b.stop) for b in js.blocks
                        if b.joint is not None}

    # -- the state as the joints' rows read it -------------------------------------------------
    def f_full(self, y: np.ndarray) -> np.ndarray:
        """The frames' unknowns in the TS path's layout (the joints' block zero).

        Args:
            y: the dense state (q, v, f).

        Returns:
            The unknowns f.
        """
        return np.concatenate([y[2 * self.n:2 * self.n + self.m], self._zero_joint])

    def nodes(self, y: np.ndarray) -> NodeValues:
        """{(joint, side): (u, u')} at the elastic nodes (local components).

        Args:
            y: the dense state.

        Returns:
            The nodes' values.
        """
        n = self.n
        q, v = y[:n], y[n:2 * n]
        return {key: (T @ q, T @ v) for key, T in self.T.items()}

    def values(self, t: float, y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(g, h) of every row at the state (g zero for velocity rows).

        Args:
            t: the time (s).
            y: the dense state.

        Returns:
            (g, h).
        """
        g, h, _ = self.js.rows_at(t, self.f_full(y), self.nodes(y))
        return g, h

    def _rows(self, t: float, f: np.ndarray, nodes: NodeValues
              ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(g, h, B) at the frames' unknowns ``f`` and the nodes' values, in one evaluation
        of the rows: the frames' speeds' coefficients come with them, the elastic rates'
        are the rows' coefficients of the nodes' rates applied to the reduced basis' rows
        (u' = T v)."""
        s, n = self.system, self.n
        du = np.zeros((self.n_rows, 2, 3))
        g, h, G = self.js.rows_at(t, f, nodes, du)
        B = np.zeros((self.n_rows, n + s.nw))
        for r in range(self.n_rows):
            for i, v in G[r].items():
                ws = s.wslice[i]
                B[r, n + ws.start - s.nz:n + ws.stop - s.nz] += v
        for (ij, k), T in self.T.items():
            rs = self.rows_of[ij]
            B[rs, :n] += du[rs, k] @ T
        return g, h, B

    def evaluate(self, t: float, y: np.ndarray, positions: bool = True
                 ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """The rows and their derivatives at the state, in one evaluation of the rows: (g, h,
        B = dh/dV (rows x (n + nw)), g_p = dg/dp (position rows x (n + nz))). The frames'
        speeds' coefficients come with the rows, their coordinates' in closed form
        (:meth:`~dolfinx_mbs.systems.coupled_joints.JointSet.position_rows_z`); an elastic
        node's rate enters the rows linearly, its coefficients given by the rows, and a
        position row's coefficients of the node's displacement are the same (h = dg/dt),
        applied to the reduced basis' rows.

        Args:
            t: the time (s).
            y: the dense state.
            positions: form g_p too (else None).

        Returns:
            (g, h, B, g_p).
        """
        s, js, n = self.system, self.js, self.n
        f = self.f_full(y)
        nodes = self.nodes(y)
        g, h, B = self._rows(t, f, nodes)
        gp = None
        if positions:
            gp = np.zeros((len(self.pos), n + s.nz))
            gp[:, :n] = B[self.pos, :n]
            gp[:, n:] = js.position_rows_z(t, f, nodes)[:, :s.nz]
        return g, h, B, gp

    def velocity_matrix(self, t: float, y: np.ndarray) -> np.ndarray:
        """B = dh/dV (rows x (n + nw)) (:meth:`evaluate`).

        Args:
            t: the time (s).
            y: the dense state.

        Returns:
            B.
        """
        return self._rows(t, self.f_full(y), self.nodes(y))[2]

    def _by_positions(self, fn: Callable[[np.ndarray, NodeValues], np.ndarray],
                      y: np.ndarray) -> np.ndarray:
        """The derivative of ``fn`` by the positions p at the state, the velocities held, by
        central differences: over the frames' coordinates, and over the elastic coordinates
        through the nodes' displacements (u = T q: a column per node component, not per
        mode)."""
        n, nz = self.n, self.system.nz
        f = self.f_full(y)
        nodes = self.nodes(y)
        cols = [_central(lambda ff: fn(ff, nodes), f, c) for c in range(nz)]
        elastic = np.zeros((len(cols[0]) if cols else len(fn(f, nodes)), n))
        for key, T in self.T.items():
            rate = nodes[key][1]
            for c in range(3):
                if not T[c].any():
                    continue

                def moved(u: np.ndarray, key: Tuple[int, int] = key,
                          rate: np.ndarray = rate) -> np.ndarray:
                    at = dict(nodes)
                    at[key] = (u, rate)
                    return fn(f, at)
                elastic += np.outer(_central(moved, nodes[key][0], c), T[c])
        return np.column_stack([elastic] + cols)

    def position_derivatives(self, t: float, y: np.ndarray, lam: np.ndarray
                             ) -> Tuple[np.ndarray, np.ndarray]:
        """dh/dp at fixed velocities (rows x (n + nz)) and d(B^T lam)/dp at fixed lam ((n + nw)
        x (n + nz)): how the rows and the joints' forces on the velocities' rows turn with
        the configuration, by central differences, both from one evaluation of the rows a
        displaced position.

        Args:
            t: the time (s).
            y: the dense state.
            lam: the multipliers.

        Returns:
            (dh/dp, d(B^T lam)/dp).
        """
        def both(f: np.ndarray, nodes: NodeValues) -> np.ndarray:
            _, h, B = self._rows(t, f, nodes)
            return np.concatenate([h, B.T @ lam])
        d = self._by_positions(both, y)
        return d[:self.n_rows], d[self.n_rows:]

    # -- torque motors: loads of the relative state -------------------------------------------
    def motor_torques(self, t: float, y: np.ndarray) -> np.ndarray:
        """The torque motors' generalized forces at the frames' speeds' places of f (as the
        TS path's :meth:`~dolfinx_mbs.systems.coupled_joints.JointSet.motor_torques`, without
        its collective: the dense path keeps its faults to the batch's end).

        Args:
            t: the time (s).
            y: the dense state.

        Returns:
            The generalized forces (m).
        """
        s, js = self.system, self.js
        out = np.zeros(self.m)
        f = self.f_full(y)
        for mo in js.torque_motors:
            th, thd, G = js.driven(mo, t, f)
            tau = mo.torque_at(t, th, thd)
            for i, v in G.items():
                out[s.wslice[i]] += tau * v
        return out

    # -- outputs ------------------------------------------------------------------------------
    def outputs(self, t: float, y: np.ndarray, lam: np.ndarray) -> Mapping[str, ElementOutput]:
        """The joints' and motors' outputs by name as :meth:`~dolfinx_mbs.systems.
        coupled_joints.JointSet.outputs` gives them (a revolute joint's force on its second
        body, global; a driven motor's torque; the largest position row, the drift), from the
        multipliers ``lam``.

        Args:
            t: the time (s).
            y: the dense state.
            lam: the multipliers (one per row).

        Returns:
            The outputs by name.
        """
        f = self.f_full(y)
        f[self.m:self.m + self.n_rows] = lam
        return self.js.outputs(t, f, nodes=self.nodes(y))


def dense_joints_reason(system: CoupledSystem) -> str | None:
    """Why the dense path cannot take ``system``'s joints, or None.

    Args:
        system: the coupled system.

    Returns:
        The reason in words, or None.
    """
    if any(isinstance(j, Spring) for j in system.jointset.joints):
        return "springs between computed frames"
    return None
