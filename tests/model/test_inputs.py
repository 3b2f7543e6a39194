"""Initial states, frame changes and solver failures: checked against the model's spaces,
named in the errors (argument, time, PETSc's reason in words), the same on every rank."""

import numpy as np
import pytest
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI
from petsc4py import PETSc

import dolfinx_mbs as mbs
from dolfinx_mbs import compat

M = mbs.materials
COMM = MPI.COMM_WORLD


def strip(rate=100.0, stiffening=None, frame=None, load=True):
    mesh = dmesh.create_rectangle(COMM, [np.zeros(2), np.array([1.0, 0.1])], [8, 1],
                                  dmesh.CellType.quadrilateral)
    kw = {} if stiffening is None else dict(stiffening=stiffening)
    body = mbs.Body(mesh, M.PlaneStress(E=70e9, nu=0.3, density=2700.0, thickness=0.01),
                    frame or mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate), **kw)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    if load:
        model.apply_load(body, point=(1.0, 0.1), force=(0.0, 1e3))
    return body, model


def test_initial_state_checked_against_the_spaces():
    body, model = strip()
    run = dict(t_end=2e-3, dt=1e-3, progress=False)
    with pytest.raises(ValueError, match="u0: expected None, a PETSc Vec .* got ndarray"):
        model.integrate(u0=np.zeros(7), **run)
    v = PETSc.Vec().createMPI(7, comm=COMM)
    with pytest.raises(ValueError, match=r"v0: a Vec of 7 entries fits neither layout "
                                         r"\(reduced: 32, full: 36\)"):
        model.integrate(v0=v, **run)
    v.destroy()
    other = dmesh.create_rectangle(COMM, [np.zeros(2), np.array([1.0, 0.1])], [8, 1],
                                   dmesh.CellType.quadrilateral)
    with pytest.raises(ValueError, match="u0: the Function for body .* is on another mesh"):
        model.integrate(u0=fem.Function(compat.vector_space(other, 1)), **run)
    scalar = fem.functionspace(body.mesh, ("Lagrange", 1)) if hasattr(fem, "functionspace") \
        else fem.FunctionSpace(body.mesh, ("Lagrange", 1))
    with pytest.raises(ValueError, match=r"u0: the Function for body .* has value shape \(\)"):
        model.integrate(u0=fem.Function(scalar), **run)
    with pytest.raises(ValueError, match="u0: give one Function per body"):
        model.integrate(u0=[body.u, body.u], **run)


def test_initial_displacement_on_another_space_is_interpolated():
    """u0 given on P2 of the body's mesh, u = (0, 1e-3 x^2): interpolated into the body's P1
    space, the probe at the free corner node reads 1e-3 at t0 (the field's nodal value), on
    any number of ranks."""
    body, model = strip(load=False)
    V2 = compat.vector_space(body.mesh, 2)
    f = fem.Function(V2)
    f.interpolate(lambda x: np.vstack([0.0 * x[0], 1e-3 * x[0] ** 2]))
    r = model.integrate(t_end=1e-6, dt=1e-6, u0=f, probes=[(1.0, 0.1), (0.5, 0.0)],
                        progress=False)
    assert np.abs(r.probes[0] - [[0.0, 1e-3], [0.0, 0.25e-3]]).max() < 1e-15


def test_frame_changed_in_place_is_seen():
    """A steady spin changed in place between runs (frame.rate) gives what a model built with
    the new rate gives: the runs' operators and the prestress follow the frame's state."""
    for stiffening in (None, "prestress"):
        body, model = strip(100.0, stiffening)
        model.integrate(t_end=5e-3, dt=1e-3, progress=False)
        f_before = model.natural_frequencies(n=2)
        body.frame.rate = 300.0
        got = model.integrate(t_end=5e-3, dt=1e-3, probes=[(1.0, 0.1)], progress=False)
        f_got = model.natural_frequencies(n=2)
        _, fresh = strip(300.0, stiffening)
        ref = fresh.integrate(t_end=5e-3, dt=1e-3, probes=[(1.0, 0.1)], progress=False)
        f_ref = fresh.natural_frequencies(n=2)
        assert np.abs(got.probes - ref.probes).max() <= 1e-12 * np.abs(ref.probes).max()
        assert np.allclose(f_got, f_ref, rtol=1e-10)
        assert not np.allclose(f_before, f_ref, rtol=1e-3)  # the change matters


def test_frame_errors_name_the_time():
    theta = mbs.frames.Planar(lambda t: np.nan if t > 0.03 else 2.0 * t, time_scale=0.01)
    body, model = strip(frame=theta)
    with pytest.raises(ValueError, match=r"theta\(t=0.031\) must be finite, got nan \(sampled at "
                                         r"t=0.031 for the derivatives of theta at t=0.03:"):
        model.integrate(t_end=0.06, dt=0.01, progress=False)

    def R(t):  # NaN at every t > 0: every difference step samples it (a smaller step would
        return np.eye(3) * (np.nan if t > 0.0 else 1.0)  # avoid a NaN only from some t on)
    body, model = strip(frame=mbs.frames.Prescribed(R))
    with pytest.raises(ValueError, match=r"rotation\(t=0.1\) must be finite.*sampled at "
                                         r"t=0.1 for the derivatives of rotation at t=0"):
        model.solve_static(t=0.0)


def test_eigen_solver_errors_in_words():
    body, model = strip()
    with pytest.raises(ValueError, match="shift must be finite, got nan"):
        model.modes(n=2, shift=float("nan"))
    with pytest.raises(ValueError, match="shift must be finite"):
        model.natural_frequencies(n=2, shift=np.inf)
    mesh = dmesh.create_rectangle(COMM, [np.zeros(2), np.array([1.0, 0.1])], [8, 1],
                                  dmesh.CellType.quadrilateral)
    extreme = mbs.Body(mesh, M.PlaneStress(E=1e300, nu=0.3, density=1e-300, thickness=0.01),
                       mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=10.0))
    model = mbs.Model([extreme])
    model.clamp(extreme, lambda x: np.isclose(x[0], 0.0))
    with pytest.raises(RuntimeError, match=r"the eigenvalue solve \(SLEPc EPS\) failed: .*"
                                           r"\(error \d+\); are the operators finite"):
        model.natural_frequencies(n=2)
