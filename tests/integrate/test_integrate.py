"""Time integration: the three formulations agree, converge at their order, conserve or
dissipate energy as their schemes say, and give the same histories on 1 and 2 ranks."""

import os

import numpy as np
import pytest
from dolfinx import fem
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.rodmodel import ROD, axial_rod, tip_displacement

W1 = np.pi / (2 * ROD["L"]) * np.sqrt(ROD["E"] / ROD["rho"])


def seed_rod(comm=MPI.COMM_WORLD, n=5, omega=15.0):
    """Seed 003's rod with its sinusoidal axial end force (period pi/100; amplitude 1 kN)."""
    model, body = axial_rod(comm, n, omega, 3, None, 1)
    body.add_traction(lambda t: (1000.0 / ROD["A"] * np.sin(200.0 * t), 0.0, 0.0),
                      where=lambda x: np.isclose(x[0], ROD["L"]))
    return model, body


def test_three_formulations_agree_on_seed_rod():
    """Seed 003's case: the rod spins steadily (initial state: its centrifugal elongation) when
    the end force starts. The three formulations agree; the response is quasi-static, as the
    forcing (200 rad/s) is far below w1 (3219 rad/s)."""
    res = {}
    for form in mbs.integrate.FORMULATIONS:
        model, body = seed_rod()
        u0 = model.solve_static(t=0.0)
        tip0 = tip_displacement(body)
        res[form] = model.integrate(t_end=2e-3, dt=1e-5, formulation=form, u0=u0,
                                    probes=[(ROD["L"], 0, 0), (0.6, 0, 0)], progress=False)
    ref = res["second-order"].probes[:, :, 0]
    assert ref.shape == (201, 2)
    for form in ("first-order", "hamiltonian"):
        assert np.allclose(res[form].times, res["second-order"].times)
        err = np.abs(res[form].probes[:, :, 0] - ref).max() / np.abs(ref).max()
        assert err < 1e-5, (form, err)
    assert abs(ref[0, 0] - tip0) < 1e-12 * abs(tip0)


def rod_closed_form(t, x, omega, F0=1000.0, wf=200.0, modes=400):
    """Closed form of the spinning rod's axial response to F0 sin(wf t) at x = L from its steady
    state: modal superposition of the continuous rod, w_n^2 = c^2 k_n^2 - Omega^2."""
    E, rho, A, L = ROD["E"], ROD["rho"], ROD["A"], ROD["L"]
    u = np.zeros_like(t)
    for n in range(1, modes + 1):
        k = (2 * n - 1) * np.pi / (2 * L)
        wn = np.sqrt(E / rho * k**2 - omega**2)
        fn = 2 * F0 * np.sin(k * L) / (rho * A * L)
        u += np.sin(k * x) * fn / (wn**2 - wf**2) * (np.sin(wf * t) - wf / wn * np.sin(wn * t))
    return u


@pytest.mark.parametrize("omega", [15.0, 0.5 * W1])
def test_response_matches_closed_form(omega):
    """Tip and mid-span history against the modal closed form, at the seed's spin and at a spin
    where softening lowers w1 by 13 %."""
    model, body = axial_rod(MPI.COMM_WORLD, 16, omega, 3, None, 2)
    body.add_traction(lambda t: (1000.0 / ROD["A"] * np.sin(200.0 * t), 0.0, 0.0),
                      where=lambda x: np.isclose(x[0], ROD["L"]))
    u0 = model.solve_static(t=0.0)
    r = model.integrate(t_end=4e-3, dt=1e-5, u0=u0, probes=[(ROD["L"], 0, 0), (0.5, 0, 0)],
                        progress=False)
    static = r.probes[0, :, 0]
    for j, x in enumerate((ROD["L"], 0.5)):
        ref = rod_closed_form(r.times, x, omega)
        err = np.abs(r.probes[:, j, 0] - static[j] - ref).max() / np.abs(ref).max()
        print(f"closed-form check omega={omega:.1f} x={x}: {err:.2e}")
        assert err < 5e-3, (x, err)


@pytest.mark.parametrize("form,order", [("second-order", 2), ("first-order", 2),
                                        ("hamiltonian", 2)])
def test_convergence_order(form, order):
    """Errors against a fine-step solution fall as dt^order."""
    def run(dt):
        model, _ = seed_rod(n=4, omega=0.5 * W1)
        return model.integrate(t_end=1e-3, dt=dt, formulation=form,
                               probes=[(ROD["L"], 0, 0)], progress=False).probes[-1, 0, 0]
    ref = run(1e-3 / 1280)
    e = np.array([abs(run(1e-3 / k) - ref) for k in (80, 160)])
    rate = np.log2(e[0] / e[1])
    assert rate > 0.9 * order, (e, rate)


def free_vibration(formulation, steps, **kw):
    """A steadily spinning 3D blade (spin about a skew axis, Coriolis coupling active) set
    vibrating by an initial velocity."""
    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.1, 0.05])],
                            [8, 2, 1], dmesh.CellType.hexahedron)
    frame = mbs.frames.ConstantSpin(axis=(0.3, 0.2, 1.0), rate=30.0)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(E=7e10, nu=0.3, density=2700.0), frame)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    v0 = fem.Function(body.V)
    v0.interpolate(lambda x: np.vstack([0.1 * x[0], x[0] ** 2, -0.5 * x[0] ** 2]))
    return model.integrate(t_end=steps * 2e-4, dt=2e-4, formulation=formulation, v0=v0,
                           probes=[(1.0, 0.1, 0.05)], progress=False, **kw)


def test_midpoint_conserves_jacobi_integral():
    r = free_vibration("hamiltonian", 2000)
    ej = r.energy["jacobi"]
    drift = np.abs(ej - ej[0]).max() / abs(ej[0])
    assert drift < 1e-9, drift
    assert r.energy["kinetic"].min() < 0.5 * r.energy["kinetic"].max()  # it does vibrate


def test_generalized_alpha_dissipates():
    """With spectral radius 1 the scheme is energy-neutral; below 1 the Jacobi integral falls,
    the more the smaller the radius."""
    e = {r: free_vibration("second-order", 300, spectral_radius=r).energy["jacobi"]
         for r in (1.0, 0.8, 0.5)}
    assert abs(e[1.0][-1] / e[1.0][0] - 1) < 1e-8
    loss = {r: 1 - e[r][-1] / e[r][0] for r in (0.8, 0.5)}
    assert 1e-3 < loss[0.8] < loss[0.5], loss


def test_spin_up_frame_formulations_agree():
    """A time-varying frame (spin-up about z, angular acceleration and Euler load active) on a
    2D plane-stress blade: the three formulations give the same tip history."""
    res = {}
    for form in mbs.integrate.FORMULATIONS:
        mesh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.array([0.5, 0.0]), np.array([2.5, 0.2])],
                                      [12, 2], dmesh.CellType.quadrilateral)
        frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=20.0, ramp_time=0.05)
        body = mbs.Body(mesh, mbs.materials.PlaneStress(E=7e10, nu=0.3, density=2700.0,
                                                        thickness=0.05), frame, degree=2)
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.5))
        res[form] = model.integrate(t_end=0.03, dt=2e-4, formulation=form,
                                    probes=[(2.5, 0.1)], progress=False)
    ref = res["second-order"].probes[:, 0, :]
    assert np.abs(ref[:, 1]).max() > 1e-6  # the Euler load bends the blade
    for form in ("first-order", "hamiltonian"):
        err = np.abs(res[form].probes[:, 0, :] - ref).max() / np.abs(ref).max()
        assert err < 2e-3, (form, err)


def test_world_equals_self_histories(tmp_path_factory):
    out = {}
    for name, comm in (("world", MPI.COMM_WORLD), ("self", MPI.COMM_SELF)):
        model, _ = seed_rod(comm, n=6, omega=0.5 * W1)
        out[name] = model.integrate(t_end=5e-4, dt=1e-5, formulation="hamiltonian",
                                    probes=[(ROD["L"], 0, 0), (0.5, 0, 0)], progress=False)
    a, b = out["world"].probes, out["self"].probes
    assert np.abs(a - b).max() <= 1e-10 * np.abs(b).max()


def test_time_series_file(tmp_path):
    path = MPI.COMM_WORLD.bcast(str(tmp_path / "rod") if MPI.COMM_WORLD.rank == 0 else None)
    model, _ = seed_rod()
    r = model.integrate(t_end=1e-4, dt=1e-5, probes=[(ROD["L"], 0, 0)], output=path,
                        progress=False)
    if MPI.COMM_WORLD.rank == 0:
        data = np.loadtxt(path + ".csv", delimiter=",", skiprows=1)
        assert data.shape == (11, 1 + 3 + 5)
        assert np.allclose(data[:, 0], r.times) and np.allclose(data[:, 1], r.probes[:, 0, 0])
        fields = path + "_" + model.bodies[0].name
        if mbs.compat.has_vtx:  # read back in test_io
            assert os.path.isdir(fields + ".bp")
        else:
            xdmf = open(fields + ".xdmf").read()
            assert xdmf.count('/Function/motion/') == 11 and xdmf.count('/Function/u/') == 11


def test_bad_arguments():
    model, _ = seed_rod()
    with pytest.raises(ValueError, match="formulation"):
        model.integrate(t_end=1e-3, dt=1e-5, formulation="lagrange")
    with pytest.raises(ValueError, match="dt must be positive"):
        model.integrate(t_end=1e-3, dt=0.0)
    with pytest.raises(ValueError, match=r"dt=0.002 exceeds the run's length t_end - t0 = "):
        model.integrate(t_end=1e-3, dt=2e-3)
    with pytest.raises(ValueError, match="lies in no cell"):
        model.integrate(t_end=1e-3, dt=1e-5, probes=[(5.0, 0, 0)])


@pytest.mark.slow
def test_midpoint_conserves_jacobi_integral_10k_steps():
    r = free_vibration("hamiltonian", 10000)
    ej = r.energy["jacobi"]
    assert np.abs(ej - ej[0]).max() / abs(ej[0]) < 1e-9


def test_spin_up_3d_formulations_agree():
    """3D blade during a spin-up about an axis through an offset hub: omega, alpha, v_O and a_O
    all change every step (basis-combined operators)."""
    res = {}
    for form in mbs.integrate.FORMULATIONS:
        mesh = dmesh.create_box(MPI.COMM_WORLD, [np.array([0.3, 0.0, 0.0]),
                                                 np.array([1.3, 0.08, 0.04])],
                                [10, 2, 1], dmesh.CellType.hexahedron)
        frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=30.0, ramp_time=0.04,
                                  origin=(-0.1, 0.02, 0.0))
        body = mbs.Body(mesh, mbs.materials.LinearElastic(E=7e10, nu=0.3, density=2700.0),
                        frame)
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.3))
        res[form] = model.integrate(t_end=0.02, dt=2e-4, formulation=form,
                                    probes=[(1.3, 0.08, 0.04)], progress=False)
        assert model.assembly.body_operators[0].strategy == "basis"
    ref = res["second-order"].probes[:, 0, :]
    assert np.abs(ref[:, 1]).max() > 1e-6
    for form in ("first-order", "hamiltonian"):
        err = np.abs(res[form].probes[:, 0, :] - ref).max() / np.abs(ref).max()
        assert err < 2e-3, (form, err)


def test_initial_momentum_equals_initial_velocity():
    """p0 = M v0 + G_p u0 + pi_0 given directly gives the history v0 gives."""
    model, body = seed_rod(n=4, omega=0.5 * W1)
    u0 = model.solve_static()
    v0 = fem.Function(body.V)
    v0.interpolate(lambda x: np.vstack([0.01 * x[0], 0 * x[0], 0 * x[0]]))
    ra = model.integrate(t_end=2e-4, dt=1e-5, formulation="hamiltonian", u0=u0, v0=v0,
                         probes=[(ROD["L"], 0, 0)], progress=False)
    s = model.system("hamiltonian").at(0.0)
    red = model.reducer
    q0 = red.create_reduced_vec()
    red.A.multTranspose(u0[0].vector if hasattr(u0[0], "vector") else u0[0].x.petsc_vec, q0)
    qv = red.create_reduced_vec()
    red.A.multTranspose(v0.vector if hasattr(v0, "vector") else v0.x.petsc_vec, qv)
    p0 = s.pi0.copy()
    s.M.multAdd(qv, p0, p0)
    s.Gp.multAdd(q0, p0, p0)
    model2, _ = seed_rod(n=4, omega=0.5 * W1)
    rb = model2.integrate(t_end=2e-4, dt=1e-5, formulation="hamiltonian",
                          u0=model2.solve_static(), p0=p0, probes=[(ROD["L"], 0, 0)],
                          progress=False)
    assert np.allclose(ra.probes, rb.probes, rtol=1e-10, atol=1e-18)


def test_adaptive_bdf_through_options():
    """Any implicit TS through the options: adaptive BDF on the first-order form follows the
    fixed-step Crank-Nicolson history within its tolerance, and the options do not leak."""
    model, _ = seed_rod(n=5)
    fixed = model.integrate(t_end=2e-3, dt=1e-6, formulation="first-order", u0=model.solve_static(),
                            probes=[(ROD["L"], 0, 0)], progress=False)
    model2, _ = seed_rod(n=5)
    adap = model2.integrate(t_end=2e-3, dt=1e-6, formulation="first-order",
                            u0=model2.solve_static(), probes=[(ROD["L"], 0, 0)], progress=False,
                            options={"ts_type": "bdf", "ts_adapt_type": "basic",
                                     "ts_rtol": 1e-4, "ts_atol": 1e-10})
    assert adap.ts_type == "bdf"
    steps = np.diff(adap.times)
    assert steps.max() > 3 * steps.min()  # it did adapt
    ref = np.interp(adap.times, fixed.times, fixed.probes[:, 0, 0])
    assert np.abs(adap.probes[:, 0, 0] - ref).max() < 1e-2 * np.abs(ref).max()
    from petsc4py import PETSc
    assert not PETSc.Options().hasName("mbs_ts_type")
    assert not PETSc.Options().hasName("mbs_ts_adapt_type")


def test_failed_step_reports_time_and_reason():
    model, _ = seed_rod(n=4)
    with pytest.raises(RuntimeError, match=r"(?s)at t=0.*DIVERGED"):
        model.integrate(t_end=1e-4, dt=1e-5, progress=False,
                        options={"ksp_type": "cg", "pc_type": "none", "ksp_max_it": 1,
                                 "ksp_error_if_not_converged": 1, "ts_max_snes_failures": 1})


def test_energy_balance_with_time_dependent_load():
    """Steady spin, undamped, end force varying in time: kinetic + potential minus the work of
    the loads stays constant (Coriolis forces do no work), to the time discretisation."""
    for dt in (4e-6, 2e-6):
        model, body = seed_rod(n=6, omega=0.5 * W1)
        r = model.integrate(t_end=2e-3, dt=dt, formulation="hamiltonian",
                            probes=[(ROD["L"], 0, 0)], progress=False)
        e = r.energy
        balance = e["kinetic"] + e["potential"] - e["work"]
        drift = np.abs(balance - balance[0]).max() / np.abs(e["work"]).max()
        assert drift < 1e-7, (dt, drift)
        if dt == 4e-6:
            coarse = drift
    assert drift < 0.3 * coarse  # it is the time discretisation: falls like dt^2


def test_without_energy_monitor_same_history():
    """energy=False skips the energy monitor only: the same probe history, no energies."""
    model, body = seed_rod()
    u0 = [f.copy() for f in model.solve_static(t=0.0)]  # body.u is overwritten by each run
    out = [model.integrate(t_end=5e-4, dt=1e-5, formulation=f, u0=u0, probes=[(ROD["L"], 0, 0)],
                           progress=False, energy=e)
           for f in ("second-order", "hamiltonian") for e in (True, False)]
    for a, b in (out[:2], out[2:]):
        assert np.array_equal(a.probes, b.probes)
        assert a.energy and not b.energy


def _kron_models(comm):
    """Models whose constraints fix whole nodes, with every inertia-type term present."""
    out = []
    box = dmesh.create_box(comm, [np.zeros(3), np.array([1.0, 0.2, 0.1])], [6, 2, 1],
                           dmesh.CellType.tetrahedron)
    b3 = mbs.Body(box, mbs.materials.LinearElastic(E=2e9, nu=0.3, density=7800.0,
                                                   rayleigh=(0.3, 1e-4)),
                  mbs.frames.SpinUp(axis=(0.2, 0.3, 1.0), final_rate=40.0, ramp_time=1.0),
                  degree=2)
    m3 = mbs.Model([b3])
    m3.clamp(b3, lambda x: np.isclose(x[0], 0.0))
    out.append((m3, 0.4))
    sq = [dmesh.create_rectangle(comm, [np.zeros(2), np.array([1.0, 0.1])], [8, 2])
          for _ in range(2)]
    mat = mbs.materials.PlaneStress(E=2e9, nu=0.3, density=7800.0, thickness=0.01,
                                    rayleigh=(0.5, 0.0))
    frame = mbs.frames.ConstantSpin(rate=30.0)
    ba = mbs.Body(sq[0], mat, frame, degree=2, stiffening="prestress")
    bb = mbs.Body(sq[1], mat, frame, degree=1, stiffening="prestress")
    m2 = mbs.Model([ba, bb], gravity=(0.0, -9.81, 0.0))
    m2.clamp(ba, lambda x: np.isclose(x[0], 0.0))
    m2.clamp(bb, lambda x: np.isclose(x[0], 0.0))
    out.append((m2, 0.0))
    return out


def test_node_block_residual_equals_the_matrix_residual():
    """The second-order residual in node-block form (two matrix products, for constraints
    that fix whole nodes) equals M a + C v + K u - f with the assembled matrices, to round-off:
    a spinning-up 3D body with Rayleigh damping, and two 2D prestressed bodies with gravity."""
    import dataclasses

    from dolfinx_mbs.integrate.state_products import second_order_residual

    for model, t in _kron_models(MPI.COMM_WORLD):
        s = model.system().at(t)
        assert s.blocks is not None
        U, V, A = (model.reducer.create_reduced_vec() for _ in range(3))
        rng = np.random.default_rng(7 + MPI.COMM_WORLD.rank)
        for x, scale in ((U, 1e-3), (V, 1e-1), (A, 1e1)):
            x.setArray(scale * rng.standard_normal(x.getLocalSize()))
        F1, F2, w = U.duplicate(), U.duplicate(), U.duplicate()
        second_order_residual(s, U, V, A, F1, w)
        second_order_residual(dataclasses.replace(s, blocks=None), U, V, A, F2, w)
        ref = F2.norm()
        F1.axpy(-1.0, F2)
        assert ref > 0 and F1.norm() < 1e-12 * ref, F1.norm() / ref


def test_node_blocks_only_for_whole_node_fixes():
    """A component clamp (fixing x only) or a tie leaves the matrix form in place."""
    mesh = dmesh.create_rectangle(MPI.COMM_WORLD, [np.zeros(2), np.array([1.0, 0.1])], [8, 2])
    mat = mbs.materials.PlaneStress(E=2e9, nu=0.3, density=7800.0)
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=30.0))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    assert model.reducer.node_blocks() is not None
    model.clamp(body, lambda x: np.isclose(x[0], 1.0), components=[0])
    assert model.reducer.node_blocks() is None
    assert model.system().at(0.0).blocks is None


def test_near_nullspace_and_multigrid():
    """The near null space handed to GAMG holds the rigid-body modes: the elastic stiffness of
    a free body maps each to zero (1e-10 of ||K||). With it, GMRES + GAMG steps a clamped
    spinning 3D bar with the probe history of the direct solver (1e-7)."""
    comm = MPI.COMM_WORLD
    mesh = dmesh.create_box(comm, [np.zeros(3), np.array([1.0, 0.1, 0.1])], [10, 2, 2],
                            dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=2.1e11, nu=0.3, density=7850.0)
    free = mbs.Model([mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=15.0))])
    ns = free.system().near_nullspace()
    K = free.system().at(0.0).Kel
    vecs = ns.getVecs()
    assert len(vecs) == 6
    y = vecs[0].duplicate()
    for v in vecs:
        K.mult(v, y)
        assert y.norm() < 1e-10 * K.norm(), y.norm() / K.norm()
    res = []
    for opts in (None, {"ksp_type": "gmres", "pc_type": "gamg", "ksp_rtol": 1e-12}):
        body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=15.0))
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        model.apply_load(body, traction=lambda t: (0.0, 1e6 * np.sin(200 * t), 0.0),
                         where=lambda x: np.isclose(x[0], 1.0))
        r = model.integrate(t_end=2e-3, dt=1e-4, probes=[(1.0, 0.0, 0.0)], options=opts,
                            progress=False)
        res.append(r.probes)
    assert np.abs(res[1] - res[0]).max() < 1e-7 * np.abs(res[0]).max()


@pytest.mark.parametrize("formulation", ["first-order", "hamiltonian"])
def test_schur_complement_step_equals_the_full_factorization(formulation):
    """The default solver of the 2n step systems (Schur complement on n unknowns, exact) gives
    the probe history of the LU factorization of the whole 2n system (1e-10): a damped body
    spinning up, so that every block of the step matrix is present."""
    comm = MPI.COMM_WORLD
    mesh = dmesh.create_box(comm, [np.zeros(3), np.array([1.0, 0.1, 0.1])], [8, 2, 2],
                            dmesh.CellType.hexahedron)
    mat = mbs.materials.LinearElastic(E=2.1e11, nu=0.3, density=7850.0, rayleigh=(2.0, 1e-5))
    res = []
    for opts in (None, {"pc_type": "lu", "pc_factor_mat_solver_type": "mumps"}):
        body = mbs.Body(mesh, mat, mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=100.0,
                                                     ramp_time=1e-3))
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        r = model.integrate(t_end=1e-3, dt=1e-4, formulation=formulation,
                            probes=[(1.0, 0.0, 0.0)], options=opts, progress=False)
        res.append(r.probes)
    assert np.abs(res[0]).max() > 0
    assert np.abs(res[0] - res[1]).max() < 1e-10 * np.abs(res[1]).max()
