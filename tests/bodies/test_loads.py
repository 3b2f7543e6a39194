"""Applied loads on the axial rod at rest, against 1D closed forms (nu = 0, transverse clamped):
tip traction t: u(L) = t L / E; body force f: u(L) = f L^2 / (2E); gravity fixed in the
global frame seen from a rotated frame; point loads at the tip nodes."""

import numpy as np
import pytest
from mpi4py import MPI
from petsc4py import PETSc

import dolfinx_mbs as mbs
from tests.models.rodmodel import ROD, rod_mesh, tip_displacement

E, L, rho = ROD["E"], ROD["L"], ROD["rho"]


def rod(frame, dim=3, degree=2, n=8):
    mesh = rod_mesh(MPI.COMM_WORLD, n, dim, "hex" if dim == 3 else "quad")
    if dim == 3:
        mat = mbs.materials.LinearElastic(E=E, nu=0.0, density=rho, rayleigh=(0.3, 2e-5))
    else:
        mat = mbs.materials.PlaneStress(E=E, nu=0.0, density=rho, thickness=ROD["side"])
    body = mbs.Body(mesh, mat, frame, degree=degree)
    return body


def solve(body, gravity=None):
    model = mbs.Model([body], gravity=gravity)
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=range(1, body.gdim))
    model.solve_static(t=0.0)
    return model, tip_displacement(body)


def test_tip_traction_time_dependent():
    body = rod(mbs.frames.ConstantSpin(rate=0.0))
    body.add_traction(lambda t: (1.0e6 * (1.0 + t), 0.0, 0.0), where=lambda x: np.isclose(x[0], L))
    _, tip = solve(body)
    assert tip == pytest.approx(1.0e6 * L / E, rel=1e-10)


def test_body_force():
    body = rod(mbs.frames.ConstantSpin(rate=0.0))
    body.add_body_force((3.0e5, 0.0, 0.0))
    _, tip = solve(body)
    assert tip == pytest.approx(3.0e5 * L**2 / (2 * E), rel=1e-10)


def test_gravity_is_fixed_in_the_global_frame():
    """Frame turned by +90 deg about z: local x is global y, so global -y gravity pulls along
    local -x."""
    body = rod(mbs.frames.Planar(theta=np.pi / 2))
    _, tip = solve(body, gravity=(0.0, -9.81, 0.0))
    assert tip == pytest.approx(-rho * 9.81 * L**2 / (2 * E), rel=1e-10)


def test_point_loads_2d():
    """P1 strip one element wide: P/2 at each tip node is a uniform end traction."""
    body = rod(mbs.frames.Planar(), dim=2, degree=1, n=6)
    P = 2.0e4
    body.add_point_load((L, 0.0), (P / 2, 0.0))
    body.add_point_load((L, ROD["side"]), lambda t: (P / 2, 0.0))
    _, tip = solve(body)
    assert tip == pytest.approx(P * L / (E * ROD["side"] ** 2), rel=1e-10)


def test_point_must_be_a_node():
    body = rod(mbs.frames.Planar(), dim=2, degree=1, n=6)
    with pytest.raises(ValueError, match="not at a node"):
        body.add_point_load((L * 0.55, 0.0), (1.0, 0.0))


def test_rayleigh_damping_matrix():
    body = rod(mbs.frames.ConstantSpin(rate=0.0))
    model, _ = solve(body)
    ops = model.assembly.body_operators[0]
    D = ops.M.copy()
    D.scale(0.3)
    D.axpy(2e-5, ops.K, structure=PETSc.Mat.Structure.DIFFERENT_NONZERO_PATTERN)
    D.axpy(-1.0, ops.D, structure=PETSc.Mat.Structure.DIFFERENT_NONZERO_PATTERN)
    assert D.norm() <= 1e-14 * ops.D.norm()


def test_model_apply_load_global_components():
    """model.apply_load with a traction given in global components on a frame turned by +90
    degrees about z: global -y is local -x."""
    body = rod(mbs.frames.Planar(theta=np.pi / 2))
    model = mbs.Model([body])
    model.apply_load(body, traction=(0.0, -1.0e6, 0.0), where=lambda x: np.isclose(x[0], L),
                     local=False)
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=range(1, body.gdim))
    model.solve_static()
    assert tip_displacement(body) == pytest.approx(-1.0e6 * L / E, rel=1e-10)
    with pytest.raises(ValueError, match="exactly one"):
        model.apply_load(body)


def test_full_load_of_two_bodies_reuses_one_vector():
    """Two rods (the second one spinning): the full load is each body's own load vector in its
    block, and the same work vector at every call (it was a new distributed vector per call)."""
    a = rod(mbs.frames.ConstantSpin(rate=0.0), n=4)
    b = rod(mbs.frames.ConstantSpin(rate=50.0), n=4)
    a.add_traction((1.0e6, 0.0, 0.0), where=lambda x: np.isclose(x[0], L))
    model = mbs.Model([a, b], gravity=(0.0, -9.81, 0.0))
    Q1 = model.assembly.load(0.0)
    Q2 = model.assembly.load(0.0)
    assert Q1 is Q2
    # resultants against closed forms: tip traction t A, gravity -m g, centrifugal
    # m W^2 (x_c, y_c) with the rod's centroid (L/2, a/2)
    comm = MPI.COMM_WORLD
    A, m, a = ROD["A"], ROD["mass"], ROD["side"]
    expected = [(1.0e6 * A, -9.81 * m, 0.0),
                (m * 50.0**2 * L / 2, -9.81 * m + m * 50.0**2 * a / 2, 0.0)]
    for i, ref in enumerate(expected):
        lo, hi = model.space.offsets[i], model.space.offsets[i + 1]
        block = Q2.getArray(readonly=True)[lo:hi].reshape(-1, 3).sum(axis=0)
        total = comm.allreduce(block, op=MPI.SUM)
        assert total == pytest.approx(np.array(ref), rel=1e-10, abs=1e-9 * abs(ref[0]))


def _fails_on_last_rank(t):
    """A body force that raises on the last rank only, after its first use."""
    if t > 0.0 and MPI.COMM_WORLD.rank == MPI.COMM_WORLD.size - 1:
        raise RuntimeError("the body force's model failed")
    return (1e3, 0.0, 0.0)


def test_a_load_function_failing_on_one_rank_fails_every_rank():
    """A body-force function that raises on one rank (its own data, a file it reads): the same
    error on every rank, no rank left waiting in the step's collectives; the model then runs
    again without it (prescribed frame here; tests/systems/test_coupled_rigid.py has a computed
    frame's)."""
    body = rod(mbs.frames.ConstantSpin(rate=0.0), n=4)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.apply_load(body, body_force=_fails_on_last_rank)
    with pytest.raises(RuntimeError, match=r"body force at t=[0-9.e-]+: the body force's model "
                                           r"failed"):
        model.integrate(t_end=1e-4, dt=2e-5, progress=False)
    body2 = rod(mbs.frames.ConstantSpin(rate=0.0), n=4)
    model2 = mbs.Model([body2])
    model2.clamp(body2, lambda x: np.isclose(x[0], 0.0))
    model2.apply_load(body2, body_force=(1e3, 0.0, 0.0))
    assert model2.integrate(t_end=1e-4, dt=2e-5, progress=False).steps == 5
