"""Geometric (prestress) stiffening of spinning bodies, against an Euler-Bernoulli beam with
centrifugal tension written here (Hermite cubics) and the published table of the rotating
cantilever (Wright et al. 1982: 3.5160 at lambda = 0, 11.2023 at lambda = 10)."""

import numpy as np
import pytest
from mpi4py import MPI
from scipy.linalg import eigh

import dolfinx.mesh as dm

import dolfinx_mbs as mbs
import ebbeam

E, RHO, NU = 70e9, 2700.0, 0.3
L, H = 1.0, 0.02


def eb_rotating(lam, stiffening=True, softening=False, n_el=80, n=2):
    """Nondimensional frequencies (EI = rho A = L = 1) of a cantilever spinning about an axis
    through its root: EI w'''' - (N w')' [- rho A lam^2 w] = rho A w^2 w,
    N = rho A lam^2 (L^2 - x^2) / 2."""
    M, K, G, _ = ebbeam.cantilever(L, 1.0, 1.0, n_el)
    if stiffening:
        K = K + lam**2 * G
    if softening:
        K = K - lam**2 * M
    ev = eigh(K, M, eigvals_only=True)[:n]
    return np.sign(ev) * np.sqrt(np.abs(ev))


def test_reference_beam_reproduces_published_table():
    assert abs(eb_rotating(0.0)[0] - 3.5160) < 2e-4
    assert abs(eb_rotating(10.0)[0] - 11.2023) < 2e-3


def beam(comm, stiffening, axis=(0.0, 0.0, 1.0)):
    """A slender square cantilever along x (L/h = 50), root on the spin axis."""
    mesh = dm.create_box(comm, [np.array([0.0, -H / 2, -H / 2]), np.array([L, H / 2, H / 2])],
                         [40, 1, 1], dm.CellType.hexahedron)
    frame = mbs.frames.ConstantSpin(axis=axis, rate=0.0)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=E, nu=NU, density=RHO), frame,
                    degree=2, stiffening=stiffening)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model, frame


W_REF = np.sqrt(E * H**4 / 12 / (RHO * H * H * L**4))


def sweep(model, frame, lams, n=4):
    out = []
    for lam in lams:
        frame.rate = lam * W_REF
        model._system = None
        model._system_key = None
        out.append(model.natural_frequencies(n=n) / W_REF)
    return np.array(out)


def test_stiffened_cantilever_matches_euler_bernoulli():
    """Flapwise (out of the plane of rotation) and chordwise (in-plane, spin-softened) first
    and second frequencies, lambda = 0 ... 10, within 1 %."""
    model, frame = beam(MPI.COMM_WORLD, "prestress")
    lams = (0.0, 2.0, 5.0, 10.0)
    fe = sweep(model, frame, lams)
    for lam, w in zip(lams, fe):
        ref = np.sort(np.concatenate([eb_rotating(lam), eb_rotating(lam, softening=True)]))
        assert np.max(np.abs(w / ref - 1)) < 0.01, (lam, w, ref)
    # stiffening raises the flapwise frequency 3.2 times at lambda = 10
    assert fe[-1, 1] > 3 * fe[0, 1]


def test_without_stiffening_chordwise_mode_softens_to_divergence():
    """The linear floating-frame model: flapwise frequencies do not change with spin, the
    chordwise one follows w^2 = w0^2 - Omega^2 and vanishes at lambda = 3.516 (then a
    divergent, negative, value)."""
    model, frame = beam(MPI.COMM_WORLD, None)
    w0 = eb_rotating(0.0)[0]
    fe = sweep(model, frame, (0.0, 3.0, 3.6), n=2)
    ref3 = eb_rotating(3.0, stiffening=False, softening=True)[0]
    assert abs(fe[1, 0] / ref3 - 1) < 0.01
    assert abs(fe[1, 1] / fe[0, 1] - 1) < 1e-3          # flapwise unchanged
    assert fe[2, 0] < 0 and abs(-fe[2, 0] - np.sqrt(3.6**2 - w0**2)) < 0.02 * np.sqrt(
        3.6**2 - w0**2) + 0.02


def test_prestress_superposes_unit_cases():
    """The prestress of a skew spin, sum_ij omega_i omega_j u_ij of the six unit fields, equals
    the direct solve K u = q_omega (elastic stiffness, same constraints)."""
    omega = np.array([0.3, -0.5, 1.0]) * 40.0
    model, frame = beam(MPI.COMM_WORLD, "prestress", axis=omega)
    frame.rate = np.linalg.norm(omega)
    model.update(0.0)
    body = model.bodies[0]
    u = sum(body.unit_coefficient(ij, omega) * f.x.array for ij, f in body.prestress_fields.items())
    red = model.reducer
    Kr = red.reduce(model._full("Kel", lambda o, w: o.K), key="Kel")
    Q = model.full_load()   # the frame's inertia load: centrifugal only for a steady spin
    q = red.create_reduced_vec()
    model._linear_solver(Kr).solve(red.project(Q), q)
    x = red.expand(q, homogeneous=True)
    n = len(x.getArray())
    diff = np.abs(u[:n] - x.getArray()).max()
    scale = MPI.COMM_WORLD.allreduce(np.abs(x.getArray()).max(), op=MPI.MAX)
    diff = MPI.COMM_WORLD.allreduce(diff, op=MPI.MAX)
    assert scale > 0 and diff < 1e-10 * scale


def test_stiffened_world_equals_self():
    res = []
    for comm in (MPI.COMM_WORLD, MPI.COMM_SELF):
        model, frame = beam(comm, "prestress", axis=(0.2, 0.0, 1.0))
        res.append(sweep(model, frame, (4.0,), n=4))
    assert np.allclose(res[0], res[1], rtol=1e-9, atol=0)


def test_bad_stiffening_argument():
    mesh = dm.create_unit_cube(MPI.COMM_WORLD, 1, 1, 1)
    mat = mbs.materials.LinearElastic(E=E, nu=NU, density=RHO)
    with pytest.raises(ValueError, match="stiffening"):
        mbs.Body(mesh, mat, mbs.frames.ConstantSpin(), stiffening="geometric")
