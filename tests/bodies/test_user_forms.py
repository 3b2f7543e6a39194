"""The user's own FEniCSx pieces: forms added to a body, a body on the user's space, the frame
state as UFL constants; each against a closed form or the built-in route."""

import numpy as np
import pytest
import ufl
from dolfinx import fem
from dolfinx.fem import petsc as fpetsc
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.rodmodel import ROD, rod_mesh

W1 = np.pi / (2 * ROD["L"]) * np.sqrt(ROD["E"] / ROD["rho"])  # first axial frequency at rest
RHO = ROD["rho"]


def rod(omega=0.0, n=20, degree=2, rayleigh=None, space=False):
    """Seed 003's rod, axial motion only (transverse components clamped)."""
    mesh = rod_mesh(MPI.COMM_WORLD, n)
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=omega)
    mat = mbs.materials.LinearElastic(E=ROD["E"], nu=0.0, density=RHO, rayleigh=rayleigh)
    if space:
        V = fem.functionspace(mesh, ("Lagrange", degree, (3,))) if hasattr(fem, "functionspace") \
            else fem.VectorFunctionSpace(mesh, ("Lagrange", degree))
        body = mbs.Body(V, mat, frame)
    else:
        body = mbs.Body(mesh, mat, frame, degree=degree)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=(1, 2))
    return model, body


def axial_exact(omega, shift=0.0, n=3):
    """Axial frequencies of the spinning rod (docs/theory.md section 6) on a foundation adding
    ``shift`` (rad^2/s^2) to every omega^2."""
    k = (2 * np.arange(1, n + 1) - 1) * np.pi / (2 * ROD["L"])
    return np.sqrt(ROD["E"] / RHO * k**2 - omega**2 + shift)


@pytest.mark.parametrize("omega", [0.0, 0.5 * W1])
def test_winkler_foundation_shifts_every_frequency(omega):
    """An axial Winkler foundation k int u.v (N/m^4) adds k/rho to every omega^2 of the
    spinning rod: exactly between the discrete models (the form is k/rho times the mass
    form), and to the mesh's accuracy against the closed form."""
    kf = 0.8 * W1**2 * RHO
    model0, _ = rod(omega)
    w0 = model0.natural_frequencies(n=3)
    model, body = rod(omega)
    u, v = body.trial_test()
    body.add_form("stiffness", kf * ufl.inner(u, v) * ufl.dx)
    w = model.natural_frequencies(n=3)
    assert np.allclose(w**2 - w0**2, kf / RHO, rtol=1e-9, atol=0), (w**2 - w0**2) / (kf / RHO)
    exact = axial_exact(omega, kf / RHO)
    assert np.all(np.abs(w / exact - 1) < 2e-5), w / exact - 1


def test_user_damping_form_is_mass_proportional_rayleigh():
    """c int rho u.v as a damping form: damping ratio a / (2 w_n) per mode (the closed form
    of mass-proportional damping), the same as the material's Rayleigh (a, 0)."""
    a = 0.05 * W1
    model, body = rod()
    u, v = body.trial_test()
    body.add_form("damping", a * RHO * ufl.inner(u, v) * ufl.dx)
    res = model.modes(n=3, shift=0.0)
    modelr, _ = rod(rayleigh=(a, 0.0))
    ref = modelr.modes(n=3, shift=0.0)
    w_undamped = np.abs(res.eigenvalues)  # |lambda| = w_n for viscous modal damping
    assert np.allclose(res.damping_ratios, a / (2 * w_undamped), rtol=1e-9)
    assert np.allclose(res.eigenvalues, ref.eigenvalues, rtol=1e-10)
    assert np.allclose(w_undamped, axial_exact(0.0), rtol=2e-5)


def test_stiffness_form_with_update_follows_time():
    """A foundation whose stiffness k(t) a callback sets from the frame state: the
    frequencies at two times are those of k(t) (closed form shift k(t)/rho)."""
    model, body = rod()
    k = fem.Constant(body.mesh, 0.0)
    kf = lambda t: (0.3 + t) * W1**2 * RHO  # noqa: E731
    calls = []

    def update(state):
        calls.append(state.t)
        k.value = kf(state.t)

    u, v = body.trial_test()
    body.add_form("stiffness", k * ufl.inner(u, v) * ufl.dx, update=update)
    for t in (0.0, 1.5):
        w = model.natural_frequencies(t=t, n=3)
        assert np.all(np.abs(w / axial_exact(0.0, kf(t) / RHO) - 1) < 2e-5), (t, w)
    assert 0.0 in calls and 1.5 in calls


def test_load_forms_equal_the_built_in_loads():
    """A body force written as a load form equals add_body_force; a traction form with an
    update equals a time-dependent add_traction: the assembled load vectors to 1e-12."""
    f = np.array([3.0e5, 0.0, 0.0])
    ramp = lambda t: np.array([2.0e6 * t, 0.0, 0.0])  # noqa: E731

    def tip(x):
        return np.isclose(x[0], ROD["L"])

    ref_model, ref = rod()
    ref.add_body_force(f)
    ref.add_traction(ramp, where=tip)
    model, body = rod()
    _, v = body.trial_test()
    body.add_form("load", ufl.inner(fem.Constant(body.mesh, f), v) * ufl.dx)
    from dolfinx import mesh as dmesh

    facets = dmesh.locate_entities_boundary(body.mesh, 2, tip)
    mt = dmesh.meshtags(body.mesh, 2, np.sort(facets).astype(np.int32),
                        np.full(len(facets), 7, np.int32))
    ds = ufl.Measure("ds", domain=body.mesh, subdomain_data=mt)
    g = fem.Constant(body.mesh, np.zeros(3))
    body.add_form("load", ufl.inner(g, v) * ds(7),
                  update=lambda state: setattr(g, "value", ramp(state.t)))
    for t in (0.0, 0.25, 1.0):
        Q, Qr = model.assembly.load(t), ref_model.assembly.load(t)
        d = Q.copy()
        d.axpy(-1.0, Qr)
        assert d.norm() <= 1e-12 * Qr.norm(), (t, d.norm(), Qr.norm())


def test_body_on_the_users_space_equals_the_built_in_body():
    """Body(V, ...) on a space the user made equals Body(mesh, ..., degree=2): operators at a
    spinning state to 1e-12, and a transient (tip history) to 1e-12."""
    out = []
    for space in (False, True):
        model, body = rod(0.5 * W1, n=10, space=space)
        assert body.degree == 2
        body.add_traction(lambda t: np.array([1e5 * np.sin(2e3 * t), 0.0, 0.0]),
                          where=lambda x: np.isclose(x[0], ROD["L"]))
        asm = model.assembly
        mats = [asm.mass().copy(), asm.stiffness(0.0).copy(), asm.damping(0.0).copy()]
        res = model.integrate(t_end=2e-4, dt=2e-5, probes=[(body, (ROD["L"], 0.0, 0.0))],
                              energy=False)
        out.append((mats, np.asarray(res.probes)))
    for A, B in zip(out[0][0], out[1][0]):
        D = A.copy()
        D.axpy(-1.0, B)
        assert D.norm() <= 1e-12 * A.norm()
    h0, h1 = out[0][1], out[1][1]
    assert np.abs(h0).max() > 0
    assert np.allclose(h0, h1, rtol=0, atol=1e-12 * np.abs(h0).max())


def test_interior_facet_form_widens_the_sparsity():
    """A penalty on the jump of u across interior facets (zero for a continuous field, but a
    wider sparsity): accepted, and the frequencies are those without it (closed form)."""
    model, body = rod(0.5 * W1, n=10)
    u, v = body.trial_test()
    h = ufl.CellDiameter(body.mesh)
    body.add_form("stiffness", 1e9 * ufl.inner(ufl.jump(u), ufl.jump(v)) / h("+") * ufl.dS)
    w = model.natural_frequencies(n=3)
    assert np.all(np.abs(w / axial_exact(0.5 * W1) - 1) < 1e-3), w


def test_bad_forms_are_refused_on_every_rank():
    model, body = rod(n=4, degree=1)
    u, v = body.trial_test()
    other = mbs.Body(rod_mesh(MPI.COMM_WORLD, 4), body.material, body.frame)
    uo, vo = other.trial_test()
    with pytest.raises(ValueError, match="kind must be one of"):
        body.add_form("spring", ufl.inner(u, v) * ufl.dx)
    with pytest.raises(TypeError, match="form must be a UFL form"):
        body.add_form("stiffness", ufl.inner(u, v))
    with pytest.raises(ValueError, match="bilinear form"):
        body.add_form("stiffness", ufl.inner(ufl.as_vector([1.0, 0, 0]), v) * ufl.dx)
    with pytest.raises(ValueError, match="linear form in the test function"):
        body.add_form("load", ufl.inner(u, v) * ufl.dx)
    with pytest.raises(ValueError, match="on the space of body"):
        body.add_form("mass", ufl.inner(uo, vo) * ufl.dx)
    with pytest.raises(ValueError, match="mass form cannot have an update"):
        body.add_form("mass", ufl.inner(u, v) * ufl.dx, update=lambda s: None)
    with pytest.raises(ValueError, match="vector space of 3 components"):
        V1 = fem.functionspace(body.mesh, ("Lagrange", 1)) if hasattr(fem, "functionspace") \
            else fem.FunctionSpace(body.mesh, ("Lagrange", 1))
        mbs.Body(V1, body.material, body.frame)
    with pytest.raises(ValueError, match="differs from the space's degree"):
        mbs.Body(body.V, body.material, body.frame, degree=2)
    model.natural_frequencies(n=1)  # assembles
    with pytest.raises(RuntimeError, match="already assembled"):
        body.add_form("stiffness", ufl.inner(u, v) * ufl.dx)


def test_frame_constants_drive_the_forms_in_a_users_loop():
    """frame.constants(mesh): the moving-frame forms of dolfinx_mbs.forms assembled with them
    in a user's own code give the model's operators at the same time (spin-up frame, t where
    omega and alpha are both nonzero): K + K_omega + K_alpha and G to 1e-12."""
    mesh = rod_mesh(MPI.COMM_WORLD, 6)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=40.0, ramp_time=2.0)
    mat = mbs.materials.LinearElastic(E=ROD["E"], nu=0.3, density=RHO)
    body = mbs.Body(mesh, mat, frame, degree=1)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    consts = frame.constants(mesh)
    V = fem.functionspace(mesh, ("Lagrange", 1, (3,))) if hasattr(fem, "functionspace") \
        else fem.VectorFunctionSpace(mesh, ("Lagrange", 1))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    F = mbs.forms
    k_eff = fem.form(F.stiffness(mat, u, v) + F.spin_softening(RHO, consts.omega, u, v)
                     + F.angular_acceleration(RHO, consts.alpha, u, v))
    g = fem.form(F.gyroscopic(RHO, consts.omega, u, v))
    t = 0.7
    st = consts.update(t)
    assert np.all(st.omega == frame.state(t).omega) and abs(st.alpha[2]) > 0
    assert np.allclose(consts.omega.value, frame.state(t).omega)
    for form, ref in ((k_eff, model.assembly.stiffness(t)), (g, model.assembly.gyroscopic(t))):
        A = fpetsc.assemble_matrix(form)
        A.assemble()
        A.axpy(-1.0, ref, structure=A.Structure.DIFFERENT_NONZERO_PATTERN)
        assert A.norm() <= 1e-12 * ref.norm(), (A.norm(), ref.norm())
