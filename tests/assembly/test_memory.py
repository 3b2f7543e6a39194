"""What a constant-frame model holds after ``system.at(t)`` (issue 17, memory): with constraints
that only fix values, the reduced operators of the record and no full-size matrix; the full
matrices made again, with the same values, when something asks for them (an eigenproblem,
another frame state), and the reduced operators unchanged."""

import gc

import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI
from petsc4py import PETSc

import dolfinx_mbs as mbs

RECORD = ("M", "C", "K", "Kel", "Kpot", "Gp", "D", "Kh", "Gq")


def spinning_bar(rate=40.0, components=None, bodies=1):
    """3D bars spinning steadily about z (a constant frame state), clamped at their roots
    (the second one shorter, with Rayleigh damping)."""
    out = []
    for i in range(bodies):
        mesh = dmesh.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0 - 0.5 * i, 0.1,
                                                                         0.1])],
                                [8 - 4 * i, 2, 2], dmesh.CellType.hexahedron)
        mat = mbs.materials.LinearElastic(E=2e9, nu=0.3, density=7800.0,
                                          rayleigh=(0.0, 0.0) if i == 0 else (2.0, 1e-5))
        out.append(mbs.Body(mesh, mat, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate)))
    model = mbs.Model(out)
    for body in out:
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    if components is not None:
        model.clamp(out[0], lambda x: np.isclose(x[0], 1.0), components=components)
    return model, out[0]


def held_matrices(*roots) -> list:
    """The PETSc matrices reachable from ``roots`` through Python objects (each once)."""
    seen, out, todo = set(), {}, list(roots)
    skip = (type, type(gc), type(held_matrices), type(len), np.ndarray, str, bytes)
    while todo:
        o = todo.pop()
        if id(o) in seen or isinstance(o, skip):
            continue
        seen.add(id(o))
        if isinstance(o, PETSc.Mat):
            if o.handle:
                out[o.handle] = o
            continue
        if isinstance(o, (PETSc.Object, MPI.Comm)):
            continue
        todo.extend(gc.get_referents(o))
    return list(out.values())


def square_of_size(mats, *sizes: int) -> list:
    return [A for A in mats if A.getType() not in ("python", "shell")
            and A.getSize()[0] == A.getSize()[1] and A.getSize()[0] in sizes]


def full_sizes(model) -> tuple:
    """The full problem's size and each body's."""
    return (model.space.n_global,) + tuple(
        b.V.dofmap.index_map.size_global * b.V.dofmap.index_map_bs for b in model.bodies)


def record_matrices(s) -> dict:
    """The record's distinct matrices (by handle): what the formulation's physics reads."""
    out = {}
    for name in RECORD:
        A = getattr(s, name, None)
        if A is not None:
            out[A.handle] = A
    if s.blocks is not None:
        out[s.blocks.Ks.handle] = s.blocks.Ks
    return out


@pytest.mark.parametrize("bodies", [1, 2])
@pytest.mark.parametrize("formulation", ["second-order", "hamiltonian"])
def test_constant_frame_holds_the_reduced_operators_only(formulation, bodies):
    """After ``system.at(t)``: no matrix of the full size is held by the model, and the
    reduced-size matrices held are exactly the record's distinct ones (second-order: M, C, K,
    K_el; Hamilton: those and G_p, and D with damping, K_h being K at alpha = 0) - no copy of
    any."""
    model, body = spinning_bar(bodies=bodies)
    system = model.system(formulation)
    assert system.lean
    s = system.at(0.0)
    n, nr = model.space.n_global, system.n_reduced
    assert nr < n
    mats = held_matrices(model, system)
    assert square_of_size(mats, *full_sizes(model)) == []
    need = record_matrices(s)
    assert len(need) == 4 + (formulation == "hamiltonian") * (1 + (bodies == 2))
    assert sorted(A.handle for A in square_of_size(mats, nr)) == sorted(need)
    # a second time and a later step hold no more
    system.at(1e-3)
    assert square_of_size(held_matrices(model, system), *full_sizes(model)) == []


@pytest.mark.parametrize("bodies", [1, 2])
def test_released_matrices_come_back_with_the_same_values(bodies):
    """The eigenproblem's K (re-assembled full matrices, reduced as K_omega without alpha)
    equals the run's K (and G + D its C); a Campbell-type frame state at another speed
    (states=) forms its own, and the record at the run's state formed again afterwards equals
    the first one. Two bodies: block-diagonal full matrices, one with Rayleigh damping."""
    model, body = spinning_bar(bodies=bodies)
    system = model.system()
    assert system.lean
    s = system.at(0.0)
    K0, C0, M0 = (A.copy() for A in (s.K, s.C, s.M))
    Kr, Gr, Mr = system.pencil(0.0, 2, coupling="damping")
    for X, Y in ((Kr, K0), (Gr, C0), (Mr, M0)):
        D = X.copy()
        D.axpy(-1.0, Y)
        assert D.norm() <= 1e-13 * Y.norm()
    other = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=100.0).state(0.0)
    Kw = system.pencil(0.0, 2, states=[other] * bodies)[0].copy()
    s = system.at(2e-3)  # the run's state again: formed again, released again
    assert square_of_size(held_matrices(model, system), *full_sizes(model)) == []
    for X, Y in ((s.K, K0), (s.C, C0), (s.M, M0)):
        D = X.copy()
        D.axpy(-1.0, Y)
        assert D.norm() <= 1e-13 * Y.norm()
    # spin softening at 100 rad/s against 40 rad/s: (100^2 - 40^2) times the unit one
    d100, d40 = Kw.copy(), K0.copy()
    Kel = s.Kel
    d100.axpy(-1.0, Kel)
    d40.axpy(-1.0, Kel)
    d100.axpy(-(100.0 / 40.0) ** 2, d40)
    assert d100.norm() <= 1e-10 * d40.norm() * (100.0 / 40.0) ** 2


@pytest.mark.parametrize("components, bs", [(None, 3), ([1], 1)])
def test_submatrices_keep_the_node_blocks(components, bs):
    """Clamps of whole nodes: the reduced operators keep the block size 3 (what GAMG
    aggregates by); a clamp of one component at some nodes: block size 1."""
    model, _ = spinning_bar(components=components)
    s = model.system().at(0.0)
    assert s.K.getBlockSizes() == (bs, bs)
    assert (model.reducer.node_blocks() is not None) == (bs == 3)
