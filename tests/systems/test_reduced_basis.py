"""The cheap step paths of time-varying frames against the general ones.

* The reduced operators combined from matrices reduced once (:mod:`dolfinx_mbs.systems.reduced_basis`)
  equal A^T X A of the assembled full operators at the same frame state, formed with scipy from
  the gathered A and X (tests/models/gather.py): a clamped 3D body spun up about a skewed axis
  through an offset hub (damping, prestress, gravity), and two tied 2D bodies in one planar
  frame (A not an injection), at two times each.
* The frame load and Hamilton's momentum vectors as combinations of unit loads equal their
  direct forms assembled on their own.
* PETSc's own LU of small step systems gives MUMPS's history; Hamilton's stepped velocity (no
  mass solve) gives the energies of the solved one.
* A run evaluates each frame's state once per distinct time (two per step).
"""

import numpy as np
import pytest
import scipy.sparse.linalg as spla
import ufl
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import forms as F
from dolfinx_mbs.assembly import BodyOperators
from dolfinx_mbs.integrate.state_products import SteppedVelocity
from dolfinx_mbs.integrate.ts import second_order as formulations
from dolfinx_mbs.systems import ReducedBasis
from tests.models.formcases import CASES, make_body, rel_vec, vec
from tests.models.gather import gather_aij
from tests.models.reducedcases import spun_up_3d, tied_2d

COMM = MPI.COMM_WORLD






def rel(X, ref) -> float:
    return spla.norm(X - ref) / spla.norm(ref)


@pytest.mark.parametrize("make", [spun_up_3d, tied_2d], ids=["3d-hub", "2d-tied"])
def test_combined_operators_equal_reduced_assembly(make):
    model = make()
    so, ham = model.system("second-order"), model.system("hamiltonian")
    asm, red = so.assembly, so.reducer
    assert ReducedBasis.make(asm, red) is not None
    A = gather_aij(red.A)
    assert not (make is tied_2d and red.injection)

    def reduced(X):
        return A.T @ gather_aij(X) @ A

    for t in (0.31, 0.77):  # a second state: the combinations formed again
        s = so.at(t)
        got = {k: gather_aij(getattr(s, k)) for k in ("M", "C", "K", "Kel", "Kpot")}
        ref = {"M": asm.mass(), "C": asm.damping(t), "K": asm.stiffness(t),
               "Kel": asm.elastic(), "Kpot": asm.stiffness(t)}
        for k, X in ref.items():
            err = rel(got[k], reduced(X))
            assert err < 1e-12, (k, t, err)
        h = ham.at(t)
        got = {"Gp": 2.0 * gather_aij(h.Gp), "Kh": gather_aij(h.Kh)}
        ref = {"Gp": asm.gyroscopic(t), "Kh": asm.stiffness(t, angular_acceleration=False)}
        if h.D is not None:
            got["D"], ref["D"] = gather_aij(h.D), asm.rayleigh()
        assert (h.D is not None) == (make is spun_up_3d)
        for k, X in ref.items():
            err = rel(got[k], reduced(X))
            assert err < 1e-12, (k, t, err)


@pytest.mark.parametrize("case", CASES, ids=["tet1", "hex2", "tri2", "quad1"])
def test_unit_load_combinations_equal_direct_forms(case):
    """With the basis strategy the frame load and Hamilton's pi_0 and h are combinations of
    unit loads; they equal q_omega + q_alpha + q_O, pi_0 and h assembled from their forms."""
    body = make_body(*case)
    ops = BodyOperators(body, strategy="basis")
    v = ufl.TestFunction(body.V)
    r = body.rho
    for t in (0.9, 1.3):
        state = body.frame.state(t)
        ops.update(state)
        hv = ops.hamilton_vectors(state)
        q = (vec(F.centrifugal_load(r, body.omega, body.X, v))
             + vec(F.euler_load(r, body.alpha, body.X, v))
             + vec(F.base_acceleration_load(r, body.a_O, v)))
        pi0 = vec(F.momentum_offset(r, body.omega, body.v_O, body.X, v))
        h = vec(F.momentum_load(r, body.omega, body.v_O, body.X, v))
        for name, got, ref in (("Q", ops.Q, q), ("pi0", hv["momentum_offset"], pi0),
                               ("h", hv["momentum_load"], h)):
            assert np.abs(ref).max() > 0
            assert rel_vec(got, ref) < 1e-12, (name, t)


def strip(nx=30):
    mesh = dmesh.create_rectangle(COMM, [np.array([0.0, -0.04]), np.array([10.0, 0.04])],
                                  [nx, 1], dmesh.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=4.67e9, nu=0.3, density=200.0, thickness=0.0775)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=6.0, ramp_time=15.0)
    body = mbs.Body(mesh, mat, frame, degree=2, stiffening="prestress")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model


@pytest.mark.parametrize("formulation", ["second-order", "hamiltonian"])
def test_small_system_lu_equals_mumps(formulation):
    """The spin-up strip (360 unknowns): PETSc's own LU, the default for such a size on one
    rank (MUMPS on two), and MUMPS asked for give the same tip history to the round-off of two
    factorizations of a step matrix whose axial and bending stiffnesses differ by (L/h)^2 ~
    1.6e4 (measured 1.2e-9 and 2.9e-9 of the largest deflection; bound 1e-8)."""
    res = []
    key = "pc_factor_mat_solver_type" if formulation == "second-order" else \
        "fieldsplit_s_pc_factor_mat_solver_type"
    for opts in (None, {key: "mumps"}):
        model = strip()
        system = model.system(formulation)
        assert formulations.small_lu(system, "mbs_", opts) == (COMM.size == 1 and not opts)
        r = model.integrate(t_end=1.0, dt=0.02, formulation=formulation, probes=[(10.0, 0.0)],
                            options=opts, progress=False)
        res.append(r.probes[:, 0, 1])
    assert np.abs(res[0]).max() > 1e-4
    assert np.abs(res[0] - res[1]).max() < 1e-8 * np.abs(res[1]).max()


@pytest.mark.parametrize("frame", ["steady", "spin-up"])
def test_stepped_velocity_equals_solved(monkeypatch, frame):
    """Hamilton's energies with the velocity from the step (a product with M checks it every
    tenth step where the relation holds by construction, every step elsewhere) equal those
    with the velocity solved from M v = p - G_p q - pi_0 at every step after the first (v0
    there; 1e-10 of the largest kinetic energy); the step gives it in a steady frame (few
    mass solves), never in a spin-up (the check fails: a solve every step)."""
    solves = []
    solve = formulations.TSProblem.mass_solve

    def spy(self, M, b, x):
        solves.append(1)
        return solve(self, M, b, x)

    monkeypatch.setattr(formulations.TSProblem, "mass_solve", spy)
    out = []
    for rtol, every in ((SteppedVelocity.RTOL, SteppedVelocity.CHECK_EVERY), (-1.0, 1)):
        monkeypatch.setattr(SteppedVelocity, "RTOL", rtol)
        monkeypatch.setattr(SteppedVelocity, "CHECK_EVERY", every)
        solves.clear()
        mesh = dmesh.create_box(COMM, [np.zeros(3), np.array([1.0, 0.1, 0.05])], [8, 2, 1],
                                dmesh.CellType.hexahedron)
        fr = (mbs.frames.ConstantSpin(axis=(0.3, 0.2, 1.0), rate=30.0) if frame == "steady"
              else mbs.frames.SpinUp(axis=(0.3, 0.2, 1.0), final_rate=60.0, ramp_time=0.1))
        body = mbs.Body(mesh, mbs.materials.LinearElastic(E=7e10, nu=0.3, density=2700.0), fr)
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        body.add_traction(lambda t: (0.0, 2e5 * np.sin(300.0 * t), 0.0),
                          where=lambda x: np.isclose(x[0], 1.0))
        r = model.integrate(t_end=0.06, dt=2e-4, formulation="hamiltonian", progress=False,
                            stepper="ts")
        out.append((r.energy["kinetic"], len(solves), r.steps))
    (k0, n0, steps), (k1, n1, _) = out
    assert k0.max() > 0
    assert np.abs(k0 - k1).max() < 1e-10 * k0.max()
    assert n1 == steps
    assert n0 < 0.1 * steps if frame == "steady" else n0 == steps, n0


class CountingSpinUp(mbs.frames.SpinUp):
    calls = 0

    def state(self, t):
        CountingSpinUp.calls += 1
        return super().state(t)


@pytest.mark.parametrize("formulation", ["second-order", "hamiltonian"])
def test_one_frame_state_per_distinct_time(formulation):
    """Residual, Jacobian and observers of a step share the operators of its times: a run
    evaluates the frame's state about twice per step (the stage time and the step's end),
    not once per call (15 per step before)."""
    mesh = dmesh.create_box(COMM, [np.zeros(3), np.array([1.0, 0.1, 0.1])], [4, 1, 1],
                            dmesh.CellType.hexahedron)
    frame = CountingSpinUp(axis=(0, 0, 1), final_rate=20.0, ramp_time=0.1)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=7e10, nu=0.3, density=2700.0), frame)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.system(formulation).at(0.0)  # set-up (prestress, reduced basis) before counting
    CountingSpinUp.calls = 0
    r = model.integrate(t_end=0.02, dt=5e-4, formulation=formulation, probes=[(1.0, 0, 0)],
                        progress=False, stepper="ts")
    assert r.steps == 40
    # + the divergence check's own look at the frame, every tenth step (5)
    assert CountingSpinUp.calls <= 2 * r.steps + 6 + 5, CountingSpinUp.calls


@pytest.mark.parametrize("spin", ["spin-up", "steady"])
def test_node_block_momentum_residual_equals_matrix_residual(monkeypatch, spin):
    """Hamilton's residual in node-block form (clamps only: M (q' + W_p q) and
    M ((W_p + a_R I) q' + W_w q) + K_s (q + b q'), three products) gives the tip history of the
    matrix form (monkeypatched away) to round-off: a damped 3D body spinning up about a skewed
    axis, and a steady spin with gravity."""
    from dolfinx_mbs import systems

    mesh = dmesh.create_box(COMM, [np.zeros(3), np.array([1.0, 0.1, 0.05])], [6, 2, 1],
                            dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=7e10, nu=0.3, density=2700.0, rayleigh=(0.5, 2e-5))
    res = []
    for plain in (False, True):
        if plain:
            monkeypatch.setattr(systems.SecondOrderSystem, "_blocks_plan", lambda self: None)
        fr = (mbs.frames.SpinUp(axis=(0.3, 0.2, 1.0), final_rate=60.0, ramp_time=0.05)
              if spin == "spin-up" else mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=40.0))
        body = mbs.Body(mesh, mat, fr)
        model = mbs.Model([body], gravity=(0.0, 0.0, -9.81) if spin == "steady" else None)
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        assert (model.system("hamiltonian").at(0.01).blocks is None) == plain
        r = model.integrate(t_end=0.03, dt=5e-4, formulation="hamiltonian",
                            probes=[(1.0, 0.1, 0.05)], progress=False)
        res.append(r.probes)
    err = np.abs(res[0] - res[1]).max() / np.abs(res[1]).max()
    print(f"node-block against matrix residual ({spin}): {err:.1e}")
    assert np.abs(res[0]).max() > 0 and err < 1e-10
