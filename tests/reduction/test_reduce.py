"""Reduced-order bodies (Model.reduce) against the full model, the independent reference: the
same bodies and constraints integrated or solved on every dof.

* the spinning cantilever of test_stiffening (prestress): at the reference state the kept
  modes' frequencies are exact (the shapes are eigenvectors there); at another speed, with
  Coriolis coupling, within 0.1 %; its Campbell branches up to lambda = 10 within 0.5 %;
* Kane, Ryan & Banerjee's spin-up with prestress (test_spin_up_beam): tip history within 1 %
  of the peak with 10 modes (measured 2e-6), 5 modes with residual flexibility; the
  first-order and Hamilton forms with Rayleigh damping (measured 1.2e-6);
* the slider-crank of demos/elastic_linkage.py (rheonomic pin and slider between two reduced
  bodies): joint reactions within 1 % of the full model's;
* a full body tied to a reduced one (Craig-Bampton interface), the residual flexibility's
  static solution (exact for the load it corrects), the clamp reaction, bad arguments.
"""


import numpy as np
import pytest
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.reducedruns import ALU, krb_tip, slider_crank
from tests.models.spinbeam import W_REF, beam


def test_kept_modes_exact_at_reference_and_within_0p1pct_spinning():
    full, frame_f = beam(MPI.COMM_WORLD, "prestress")
    red, frame_r = beam(MPI.COMM_WORLD, "prestress")
    rb = red.reduce(red.bodies[0], modes=12)
    w_full, w_red = full.natural_frequencies(n=6), red.natural_frequencies(n=6)
    assert rb.n_coordinates == 12 and rb.n_interface == 0   # the clamp is absorbed
    assert np.allclose(rb.frequencies[:6], w_full, rtol=1e-7)   # SLEPc tolerance
    assert np.allclose(w_red, w_full, rtol=1e-7)
    for frame in (frame_f, frame_r):   # the shapes stay those at rest
        frame.rate = 5.0 * W_REF
    for gyro in (False, True):
        a = full.natural_frequencies(n=4, gyroscopic=gyro)
        b = red.natural_frequencies(n=4, gyroscopic=gyro)
        assert np.abs(b / a - 1).max() < 1e-3, (gyro, a, b)


def test_campbell_branches_within_half_percent_to_lambda_10():
    lams = np.array([0.0, 2.0, 5.0, 10.0])
    full, _ = beam(MPI.COMM_WORLD, "prestress")
    red, _ = beam(MPI.COMM_WORLD, "prestress")
    red.reduce(red.bodies[0], modes=20, method="modal")
    # sorted at each speed: which member of a degenerate pair at rest a tracked branch
    # follows is the eigensolver's choice
    a = np.sort(full.campbell(lams * W_REF, n=4).frequencies, axis=1)
    b = np.sort(red.campbell(lams * W_REF, n=4).frequencies, axis=1)
    assert a[-1, 1] > 3 * a[0, 1]     # stiffened 3x: the shapes at rest are far from these
    assert np.abs(b / a - 1).max() < 5e-3, np.abs(b / a - 1).max(axis=0)


# -- Kane-Ryan-Banerjee spin-up ------------------------------------------------------------------



def test_spin_up_tip_history_within_1pct():
    """10 s: the ramp and the peak deflection (near 6.8 s)."""
    ref = krb_tip(t_end=10.0)
    peak = np.abs(ref).max()
    assert 0.5 < peak < 0.65
    for opts, tol in (({"modes": 10}, 1e-4), ({"modes": 5, "residual": [15.0]}, 1e-3)):
        w = krb_tip(opts, t_end=10.0)
        assert np.abs(w - ref).max() < tol * peak, (opts, np.abs(w - ref).max() / peak)


@pytest.mark.parametrize("formulation", ["first-order", "hamiltonian"])
def test_spin_up_other_formulations_with_damping(formulation):
    """The first-order and Hamilton forms (Rayleigh damping: the reduced D and Hamilton's
    momentum terms) on the reduced strip against the full one, 4 s."""
    ref = krb_tip(t_end=4.0, formulation=formulation, rayleigh=(0.01, 1e-4))
    w = krb_tip({"modes": 10}, t_end=4.0, formulation=formulation, rayleigh=(0.01, 1e-4))
    assert np.abs(w - ref).max() < 1e-4 * np.abs(ref).max()


# -- the slider-crank with reduced links ---------------------------------------------------------



def test_slider_crank_reactions_within_1pct():
    """Both links Craig-Bampton reduced (8 modes each, the pin and slider dofs kept). The
    reactions differ from the full model's by the time discretization (measured at
    dt = 1e-4, 5e-5, 2.5e-5: pin 2.2e-2, 2.1e-3, 5.3e-4 of the peak: the full model's reaction
    is its residual at the joint, which generalized-alpha leaves nonzero inside the body)."""
    out = []
    for modes in (None, 8):
        model, coupler = slider_crank(MPI.COMM_WORLD)
        if modes:
            for b in model.bodies:
                model.reduce(b, modes=modes)
        out.append(model.integrate(0.01, 5e-5, probes=[(coupler, (0.15, 0.0))],
                                   reactions=True, progress=False))
    full, red = out
    assert model.system().n_reduced < 30
    for name in ("motor", "pin", "slider"):
        a, b = full.reactions[name], red.reactions[name]
        assert np.abs(a).max() > 1.0
        assert np.abs(b - a).max() < 0.01 * np.abs(a).max(), (name, np.abs(b - a).max())
    assert np.abs(red.probes - full.probes).max() < 1e-3 * np.abs(full.probes).max()


# -- a full body tied to a reduced one; residual flexibility -------------------------------------

def two_strips(comm, load=False):
    mat = mbs.materials.PlaneStress(thickness=0.01, **ALU)
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=30.0)
    meshes = [dmesh.create_rectangle(comm, [np.array([x0, -0.02]), np.array([x0 + 0.5, 0.02])],
                                     [10, 2], dmesh.CellType.quadrilateral) for x0 in (0, 0.5)]
    a, b = (mbs.Body(m, mat, frame, degree=2, name=n) for m, n in zip(meshes, "ab"))
    model = mbs.Model([a, b])
    model.clamp(a, lambda x: np.isclose(x[0], 0.0), name="root")
    model.tie(a, b, lambda x: np.isclose(x[0], 0.5))
    if load:
        model.apply_load(b, traction=(0.0, -2e4), where=lambda x: np.isclose(x[0], 1.0))
    return model, a, b


def test_full_body_tied_to_craig_bampton_body():
    full, _, _ = two_strips(MPI.COMM_WORLD)
    red, _, b = two_strips(MPI.COMM_WORLD)
    rb = red.reduce(b, modes=10)
    wf = full.natural_frequencies(n=4, gyroscopic=True)
    wr = red.natural_frequencies(n=4, gyroscopic=True)
    assert rb.n_interface == 10     # the tied edge: 5 nodes x 2 components
    assert np.abs(wr / wf - 1).max() < 1e-3, (wf, wr)


def test_residual_flexibility_static_solution_and_clamp_reaction():
    """Two Craig-Bampton bodies under centrifugal and tip loads: with the loads' static
    shapes (fixed interface) the reduced static solution is the full one, constraint modes
    and those shapes span it; 2 modes alone miss part of it."""
    full, _, _ = two_strips(MPI.COMM_WORLD, load=True)
    uf = [u.x.array.copy() for u in full.solve_static()]
    rf = full.reactions()
    errs = []
    for residual in (True, False):
        red, a, b = two_strips(MPI.COMM_WORLD, load=True)
        for body in (a, b):
            red.reduce(body, modes=2, residual=residual)
        ur = [u.x.array for u in red.solve_static()]
        scale = red.comm.allreduce(np.abs(uf[1]).max(), op=MPI.MAX)
        errs.append(red.comm.allreduce(max(np.abs(x - y).max() for x, y in zip(ur, uf)),
                                       op=MPI.MAX) / scale)
        if residual:
            rr = red.reactions()
            assert np.allclose(rr["root"], rf["root"], rtol=1e-7, atol=1e-9 * np.abs(
                rf["root"]).max())
    assert errs[0] < 1e-7 and errs[1] > 1e-3, errs


def test_cutoff_world_equals_self():
    """Modes below a frequency cut-off; 2 ranks give the 1-rank frequencies."""
    out = []
    for comm in (MPI.COMM_WORLD, MPI.COMM_SELF):
        model, frame = beam(comm, "prestress")
        w = model.natural_frequencies(n=4)
        rb = model.reduce(model.bodies[0], cutoff=1.01 * w[3], method="modal")
        model.system()      # the shapes: at rest
        frame.rate = 3.0 * W_REF
        out.append(model.natural_frequencies(n=3, gyroscopic=True))
        assert rb.n_coordinates == 4 and np.allclose(rb.frequencies, w, rtol=1e-7)
    assert np.allclose(out[0], out[1], rtol=1e-9)


def test_bad_arguments_raise():
    model, a, b = two_strips(MPI.COMM_WORLD)
    other, _, c = two_strips(MPI.COMM_WORLD)
    with pytest.raises(ValueError, match="method"):
        model.reduce(a, method="guyan")
    for modes in (0, 2.5, True):
        with pytest.raises(ValueError, match="modes"):
            model.reduce(a, modes=modes)
    with pytest.raises(ValueError, match="cutoff"):
        model.reduce(a, cutoff=-1.0)
    with pytest.raises(ValueError, match="residual"):
        model.reduce(a, residual="yes")
    with pytest.raises(ValueError, match="not part of this model"):
        model.reduce(c)
    model.reduce(b, modes=4)
    with pytest.raises(ValueError, match="reduced bodies"):
        model.integrate(0.001, 1e-4, constraints="multipliers", progress=False)
    model.constrain_velocity([{model.dof(b, (1.0, 0.0), 1): 1.0}])
    with pytest.raises(ValueError, match="reduced bodies"):
        model.integrate(0.001, 1e-4, formulation="first-order", progress=False)


def test_free_body_keeps_its_rigid_modes():
    """A free bar, free-interface modes with its rigid-body modes (frequencies ~0 at rest):
    the elastic frequencies of the reduced body, its rigid motions deflated as the full
    model's (dolfinx_mbs.systems.rigid_modes), equal the full ones at rest and spinning about its
    axis (the shapes at the spin: measured 7e-8)."""
    def bar(rate):
        mesh = dmesh.create_box(MPI.COMM_WORLD, [np.array([0.0, -0.05, -0.05]),
                                                 np.array([1.0, 0.05, 0.05])],
                                [10, 1, 1], dmesh.CellType.hexahedron)
        body = mbs.Body(mesh, mbs.materials.LinearElastic(**ALU),
                        mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=rate), degree=2)
        return mbs.Model([body]), body

    for rate, tol in ((0.0, 1e-8), (100.0, 1e-6)):
        full, _ = bar(rate)
        red, body = bar(rate)
        rb = red.reduce(body, modes=16, method="modal")
        a = full.natural_frequencies(n=4, gyroscopic=rate > 0)
        b = red.natural_frequencies(n=4, gyroscopic=rate > 0)
        assert np.abs(b / a - 1).max() < tol, (rate, a, b)
        if rate == 0.0:   # the six rigid-body modes among the shapes
            assert np.sum(np.abs(rb.frequencies) < 1e-3 * a[0]) == 6, rb.frequencies


def test_eigenpairs_kept_from_petsc_lu_or_solved_again_by_mumps(monkeypatch):
    """On one process the reduction's eigenproblem is solved with PETSc's own LU first and its
    pairs kept where their backward errors are small; else MUMPS solves it again: the
    frequencies of the clamped beam the same both ways (a bound that no pair meets forces
    MUMPS), to SLEPc's tolerance."""
    from dolfinx_mbs.reduction import reduced_body
    runs = []
    for bound in (reduced_body.EIGEN_BACKWARD, 0.0):
        monkeypatch.setattr(reduced_body, "EIGEN_BACKWARD", bound)
        model, _ = beam(MPI.COMM_WORLD, None)
        rb = model.reduce(model.bodies[0], modes=8)
        model.natural_frequencies(n=2)
        runs.append(rb.frequencies)
    assert np.allclose(runs[0], runs[1], rtol=1e-7), runs   # (as the full model: 1e-9 here)


def test_interior_factorization_shared_with_the_eigenproblem_or_not(monkeypatch):
    """A Craig-Bampton body solves its interior K_ii (the constraint modes) and its
    eigenproblem with one factorization, the shift zero (K_ii regular); where the pairs'
    backward errors exceed the bound, the eigenproblem is solved again below zero with
    factorizations of its own and K_ii by MUMPS: the shapes' frequencies and the reduced
    model's the same both ways (a second formulation of the same basis), and the model's
    against the unreduced one's."""
    from dolfinx_mbs.reduction import reduced_body
    full, _, _ = two_strips(MPI.COMM_WORLD)
    wf = full.natural_frequencies(n=4, gyroscopic=True)
    seen = []
    eigen = reduced_body._eigenvectors

    def spy(*args):
        out = eigen(*args)
        seen.append((args[4] is not None, out[3] is not None))
        return out

    monkeypatch.setattr(reduced_body, "_eigenvectors", spy)
    runs = []
    for bound in (reduced_body.EIGEN_BACKWARD, 0.0):
        monkeypatch.setattr(reduced_body, "EIGEN_BACKWARD", bound)
        red, _, b = two_strips(MPI.COMM_WORLD)
        rb = red.reduce(b, modes=10)
        w = red.natural_frequencies(n=4, gyroscopic=True)
        runs.append((rb.frequencies, w))
    assert seen == [(True, True), (True, False)], seen
    assert np.allclose(runs[0][0], runs[1][0], rtol=1e-7), runs
    assert np.allclose(runs[0][1], runs[1][1], rtol=1e-9), runs
    assert np.abs(runs[0][1] / wf - 1).max() < 1e-3, (wf, runs[0][1])


def test_eigen_options_leave_the_shared_factorization_alone():
    """A solver package asked for the modal eigenproblems' shift-and-invert (the options'
    eigen prefix, which the reduction's eigenproblem reads too) does not reconfigure the
    interior factorization it shares: the reduction runs, its frequencies those without the
    option, and the option leaves the next model's answer as it was."""
    from petsc4py import PETSc

    from dolfinx_mbs.petsc_options import EIGEN_PREFIX
    runs = []
    opts = PETSc.Options()
    key = EIGEN_PREFIX + "st_pc_factor_mat_solver_type"
    for given in (None, "mumps", None):
        if given is not None:
            opts[key] = given
        try:
            red, _, b = two_strips(MPI.COMM_WORLD)
            rb = red.reduce(b, modes=10)
            runs.append((red.natural_frequencies(n=4, gyroscopic=True), rb.frequencies))
        finally:
            opts.delValue(key)
    for w, f in runs[1:]:
        assert np.allclose(w, runs[0][0], rtol=1e-9), (w, runs[0][0])
        assert np.allclose(f, runs[0][1], rtol=1e-9), (f, runs[0][1])
