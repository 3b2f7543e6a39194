"""Nonlinear (St Venant-Kirchhoff) strain: Body(..., stiffening="nonlinear").

References, each independent of the code under test:
- a bar with Poisson's ratio 0 under an end traction T (per reference area) stretches
  homogeneously: P = E lam (lam^2 - 1) / 2 = T, a cubic for the stretch lam;
- the same bar hanging under its weight: P(X) = rho g (L - X), so u(L) = int_0^L (lam(X) - 1) dX
  with lam(X) the root of the cubic at each X (scipy quadrature);
- the prestress model (a linear solve and the geometric stiffness of its stress) agrees with
  the nonlinear one for small deflections: spinning cantilever frequencies (the nonlinear ones
  linearized about the static equilibrium found by Newton) and the Kane-Ryan-Banerjee spin-up;
- the three time-integration formulations (second-order, first-order, Hamilton) converge to
  one history, and the Jacobi integral of a free vibration at constant spin is kept to the
  integrator's order (this checks the strain energy against the internal force).
"""

import dolfinx.mesh as dm
import numpy as np
import pytest
from dolfinx import fem
from mpi4py import MPI
from scipy.integrate import quad

import dolfinx_mbs as mbs
from tests.models.krb import EA, RHO_A, B, H, fe_tip
from tests.models.krb import L as L_KRB
from tests.models.spinbeam import beam, sweep

E0 = 1.0e6
V_TIP = 0.3   # initial tip speed of the free vibration, x w1 (m/s per rad/s)


def stretch(P):
    """The stretch lam > 0 of a uniaxial St Venant-Kirchhoff bar (nu = 0) under the nominal
    stress P: E lam (lam^2 - 1) / 2 = P."""
    r = np.roots([1.0, 0.0, -1.0, -2.0 * P / E0])
    return float(r[np.abs(r.imag) < 1e-12].real.max())


def tip_x(body, point):
    """x-displacement of ``body.u`` at the node at ``point`` (the same on every rank)."""
    x = body.V.tabulate_dof_coordinates()
    n = body.V.dofmap.index_map.size_local
    d = np.linalg.norm(x[:n] - np.asarray(point)[None, :], axis=1)
    val = body.u.x.array.reshape(-1, body.gdim)[:n][d < 1e-10, 0]
    vals = body.comm.allgather(val.tolist())
    return [v for part in vals for v in part][0]


@pytest.mark.parametrize("dim", [2, 3])
def test_bar_under_end_traction_stretches_as_the_cubic_says(dim):
    """Homogeneous stretch of 22 %: the static Newton solve gives lam - 1 to round-off
    (the linear model would say T / E = 30 %)."""
    T = 0.3 * E0
    if dim == 3:
        mesh = dm.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.1, 0.1])],
                             [6, 1, 1], dm.CellType.hexahedron)
        mat = mbs.materials.LinearElastic(E=E0, nu=0.0, density=1.0)
    else:
        mesh = dm.create_rectangle(MPI.COMM_WORLD, [np.zeros(2), np.array([1.0, 0.1])],
                                   [6, 2], dm.CellType.triangle)
        mat = mbs.materials.PlaneStress(E=E0, nu=0.0, density=1.0, thickness=0.05)
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=0.0), degree=1,
                    stiffening="nonlinear")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.apply_load(body, traction=(T,) + (0.0,) * (dim - 1),
                     where=lambda x: np.isclose(x[0], 1.0))
    model.solve_static()
    ux = tip_x(body, np.array([1.0, 0.0, 0.0][:dim] + [0.0] * (3 - dim)))
    assert abs(ux / (stretch(T) - 1.0) - 1.0) < 1e-10, ux
    assert 3 <= model.last_newton_iterations <= 8


def test_hanging_bar_under_its_weight():
    """A bar hanging from its root (gravity along it, rho g L / E = 0.3): the tip displacement
    against the quadrature of the pointwise stretch, 1e-6 (P2, 20 cells)."""
    rho, g, L = 1000.0, 300.0, 1.0
    mesh = dm.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -0.05]), np.array([L, 0.05])],
                               [20, 1], dm.CellType.quadrilateral)
    mat = mbs.materials.PlaneStress(E=E0, nu=0.0, density=rho, thickness=0.1)
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=0.0), degree=2,
                    stiffening="nonlinear")
    model = mbs.Model([body], gravity=(g, 0.0, 0.0))
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.solve_static()
    ref = quad(lambda X: stretch(rho * g * (L - X)) - 1.0, 0.0, L, epsabs=1e-14)[0]
    ux = tip_x(body, np.array([L, 0.0, 0.0]))
    linear = rho * g * L**2 / (2 * E0)
    assert abs(ref / linear - 1) > 0.05          # the nonlinearity is not small here
    assert abs(ux / ref - 1) < 1e-6, (ux, ref)


def test_prestress_and_nonlinear_frequencies_agree_for_small_deflections():
    """The slender cantilever of test_stiffening spinning at lambda = 2, 5, 10: flapwise and
    chordwise frequencies of the nonlinear model (tangent about the Newton equilibrium) and of
    the prestress model agree to the strain's order (centrifugal strain 1.7e-3 at lambda = 10;
    measured 2.4e-5)."""
    lams = (2.0, 5.0, 10.0)
    w = {st: sweep(*beam(MPI.COMM_WORLD, st), lams) for st in ("prestress", "nonlinear")}
    rel = np.abs(w["nonlinear"] / w["prestress"] - 1)
    assert rel.max() < 1e-4, rel
    # and both carry the stiffening: at lambda = 10 the flapwise frequency is 3.2 x its rest value
    assert w["nonlinear"][-1, 1] > 3 * 3.5160


def test_prestress_and_nonlinear_spin_up_agree():
    """Kane-Ryan-Banerjee's beam spun up to 6 rad/s (tip deflection 0.57 m on 10 m): the
    nonlinear and the prestress tip histories agree to 3e-3 of the peak (measured 1.1e-3)."""
    t, w_nl = fe_tip(6.0, "nonlinear", t_end=20.0)
    _, w_ps = fe_tip(6.0, "prestress", t_end=20.0)
    peak = np.abs(w_ps).max()
    assert 0.5 < peak < 0.65
    assert np.abs(w_nl - w_ps).max() < 3e-3 * peak


def spin_up_strip(comm=MPI.COMM_WORLD, ramp=4.0, final_rate=6.0):
    mesh = dm.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L_KRB, H / 2])],
                               [40, 1], dm.CellType.quadrilateral)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=final_rate, ramp_time=ramp)
    material = mbs.materials.PlaneStress(E=EA / (B * H), nu=0.3, density=RHO_A / (B * H),
                                         thickness=B)
    body = mbs.Body(mesh, material, frame, degree=2, stiffening="nonlinear")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model


def test_three_formulations_agree_with_nonlinear_strain():
    """A 2 s spin-up (to 3 rad/s) of the strip: second-order (generalized-alpha),
    first-order (Crank-Nicolson) and Hamilton (implicit midpoint) tip histories differ by
    O(dt^2): the differences fall at least 3x as dt halves and are below 1e-3 of the peak."""
    hist = {}
    for form in ("second-order", "first-order", "hamiltonian"):
        for dt in (0.02, 0.01):
            model = spin_up_strip(ramp=2.0, final_rate=3.0)
            r = model.integrate(t_end=2.0, dt=dt, formulation=form, probes=[(L_KRB, 0.0)],
                                progress=False)
            hist[form, dt] = r.probes[:: int(round(0.02 / dt)), 0, 1]
    peak = np.abs(hist["first-order", 0.01]).max()
    assert peak > 0.05
    for a, b in (("second-order", "first-order"), ("hamiltonian", "first-order"),
                 ("second-order", "hamiltonian")):
        d1 = np.abs(hist[a, 0.02] - hist[b, 0.02]).max()
        d2 = np.abs(hist[a, 0.01] - hist[b, 0.01]).max()
        assert d2 < 1e-3 * peak and d2 < d1 / 3, (a, b, d1, d2)


def test_jacobi_integral_of_nonlinear_free_vibration():
    """Free vibration at constant spin (0.5 w1) started with a tip velocity large enough that
    the strain energy's nonlinear part matters: implicit midpoint on Hamilton's form keeps
    the Jacobi integral to its order over a period: drift 2.3e-3 and 4.3e-4 of the initial
    kinetic energy at dt = 2e-3 and 1e-3 (5.4x; 6.4x from 4e-3, approaching 4)."""
    drift = []
    for dt in (2e-3, 1e-3):
        mesh = dm.create_rectangle(MPI.COMM_WORLD, [np.array([0.0, -0.05]),
                                                    np.array([1.0, 0.05])],
                                   [20, 1], dm.CellType.quadrilateral)
        mat = mbs.materials.PlaneStress(E=E0, nu=0.3, density=10.0, thickness=0.1)
        w1 = 3.516 * np.sqrt(E0 * 0.1**2 / 12 / (10.0 * 1.0))
        body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=0.5 * w1), degree=2,
                        stiffening="nonlinear")
        model = mbs.Model([body])
        model.clamp(body, lambda x: np.isclose(x[0], 0.0))
        v0 = fem.Function(body.V)
        v0.interpolate(lambda x: np.vstack([0 * x[0], V_TIP * w1 * x[0] ** 2]))
        r = model.integrate(t_end=0.2, dt=dt, formulation="hamiltonian", v0=v0,
                            progress=False)
        e = r.energy
        drift.append(np.abs(e["jacobi"] - e["jacobi"][0]).max() / e["kinetic"][0])
    # the nonlinear part of the strain energy at the last state, against the elastic energy
    q = model.reducer.restrict(mbs.compat.petsc_vec(body.u))
    share = model.system().nonlinear_energy(0.2, q) / e["elastic"][-1]
    assert abs(share) > 0.01, share
    assert drift[1] < 1e-3 and drift[1] < drift[0] / 3, drift


def test_nonlinear_same_on_one_and_all_ranks():
    """The strip's spin-up (first second of 2 s to 3 rad/s, tip deflection 2.8 m) on
    COMM_WORLD and on COMM_SELF: probe histories to 1e-8 of the peak (measured 6e-10 on
    2 ranks). Not the 1e-10 of the linear models: Newton stops where its residual reaches the
    round-off floor, ~3e-10 of the step's initial residual here, and the two layouts round
    differently."""
    res = []
    for comm in (MPI.COMM_WORLD, MPI.COMM_SELF):
        model = spin_up_strip(comm, ramp=2.0, final_rate=3.0)
        r = model.integrate(t_end=1.0, dt=0.02, probes=[(L_KRB, 0.0)], progress=False)
        res.append(r.probes)
    assert np.abs(res[0] - res[1]).max() < 1e-8 * np.abs(res[1]).max()


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("degree", [1, 2])
def test_nonlinear_quadrature_exact_on_affine_simplices(dim, degree):
    """The nonlinear strain's forms on straight triangles and tetrahedra use the rule of
    degree 4 (p - 1) (at least 1): their integrands are polynomials of that degree there, so
    the energy, force and tangent at a large displacement (gradients ~0.3) equal those of a
    rule of degree 12 to round-off. A law varying in space, or quadrilaterals, keep 3 p."""
    from dolfinx.fem import petsc as fpetsc
    from dolfinx.fem import form

    import ufl

    if dim == 2:
        mesh = dm.create_rectangle(MPI.COMM_WORLD, [np.zeros(2), np.array([1.0, 0.3])],
                                   [6, 2], dm.CellType.triangle)
        mat = mbs.materials.PlaneStress(E=E0, nu=0.3, density=1.0, thickness=0.05)
    else:
        mesh = dm.create_box(MPI.COMM_WORLD, [np.zeros(3), np.array([1.0, 0.3, 0.2])],
                             [4, 2, 1], dm.CellType.tetrahedron)
        mat = mbs.materials.Orthotropic(E=(E0, 2 * E0, 3 * E0), nu=(0.2, 0.3, 0.25),
                                        G=(0.4 * E0, 0.5 * E0, 0.6 * E0), density=1.0)
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=0.0), degree=degree,
                    stiffening="nonlinear")
    assert body.nonlinear_degree() == max(4 * (degree - 1), 1)
    body.u_state.interpolate(lambda x: np.array([0.3 * np.sin(2 * x[0] + x[1]),
                                                 0.2 * np.cos(3 * x[0] * x[1]),
                                                 0.1 * np.sin(x[0])][:dim]))
    nf = body.nonlinear_forms()
    dx12 = ufl.Measure("dx", domain=mesh, metadata={"quadrature_degree": 12})
    u, v = body.trial_test()
    n12 = mbs.forms.svk_remainder(mat, body.u_state, v, dx12)
    ref = (mbs.forms.svk_remainder_energy(mat, body.u_state, dx12), n12,
           ufl.derivative(n12, body.u_state, u))
    e, e12 = (mesh.comm.allreduce(fem.assemble_scalar(form(a))) for a in (nf.energy, ref[0]))
    assert abs(e / e12 - 1.0) < 1e-12, (e, e12)
    f, f12 = (fpetsc.assemble_vector(form(a)) for a in (nf.force, ref[1]))
    f.axpy(-1.0, f12)
    assert f.norm() < 1e-12 * f12.norm(), (f.norm(), f12.norm())
    K, K12 = (fpetsc.assemble_matrix(form(a)) for a in (nf.tangent, ref[2]))
    K.assemble()
    K12.assemble()
    K.axpy(-1.0, K12)
    assert K.norm() < 1e-12 * K12.norm(), (K.norm(), K12.norm())
    for obj in (f, f12, K, K12):
        obj.destroy()
    x = ufl.SpatialCoordinate(mesh)
    graded = mbs.materials.UserLaw(stress=lambda eps: E0 * (1.0 + x[0]) * eps, density=1.0,
                                   gdim=dim)
    quads = dm.create_unit_square(MPI.COMM_WORLD, 2, 2, dm.CellType.quadrilateral)

    class Graded(mbs.materials.PlaneStress if dim == 2 else mbs.materials.LinearElastic):
        """An isotropic law made to vary in space by a subclass (its stress its own)."""

        def stress(self, eps):
            return (1.0 + x[0]) * super().stress(eps)

    for m, law in ((mesh, graded), (mesh, Graded(E=E0, nu=0.3, density=1.0)),
                   (quads, mbs.materials.PlaneStress(E=E0, nu=0.3, density=1.0))):
        other = mbs.Body(m, law, mbs.frames.ConstantSpin(rate=0.0), degree=degree,
                         stiffening="nonlinear")
        assert other.nonlinear_degree() == 3 * degree


@pytest.mark.parametrize("law", ["LinearElastic", "PlaneStrain", "PlaneStress"])
def test_declared_law_degree_is_ufls_estimate(law):
    """The isotropic laws' declared degree (linear in the strain, constant in space) is the
    one UFL estimates from their stress."""
    dim = 3 if law == "LinearElastic" else 2
    mesh = (dm.create_unit_cube(MPI.COMM_WORLD, 1, 1, 1) if dim == 3
            else dm.create_unit_square(MPI.COMM_WORLD, 2, 2))
    mat = getattr(mbs.materials, law)(E=E0, nu=0.3, density=1.0)
    body = mbs.Body(mesh, mat, mbs.frames.ConstantSpin(rate=0.0), stiffening="nonlinear")
    assert mat.law_degree == body._estimated_law_degree() == body._law_degree() == 1


def test_law_degree_set_on_a_material(monkeypatch):
    """A user's law that says its degree is taken at its word (UFL not asked); without it,
    UFL's estimate."""
    mesh = dm.create_unit_square(MPI.COMM_WORLD, 2, 2)
    law = mbs.materials.UserLaw(stress=lambda eps: E0 * eps, density=1.0, gdim=2)
    body = mbs.Body(mesh, law, mbs.frames.ConstantSpin(rate=0.0), degree=2,
                    stiffening="nonlinear")
    assert body._law_degree() == 1 and body.nonlinear_degree() == 4
    law.law_degree = 3
    monkeypatch.setattr(type(body), "_estimated_law_degree", lambda self: 1 / 0)
    assert body._law_degree() == 3 and body.nonlinear_degree() == 6


@pytest.mark.parametrize("bad", [-1, 1.5, "1", True])
def test_law_degree_bad_input(bad):
    """A law_degree that is not a non-negative integer is refused, naming it, when the
    forms are made; set right, the next call gives the right degree (nothing kept)."""
    mesh = dm.create_unit_square(MPI.COMM_WORLD, 2, 2)
    law = mbs.materials.UserLaw(stress=lambda eps: E0 * eps, density=1.0, gdim=2)
    body = mbs.Body(mesh, law, mbs.frames.ConstantSpin(rate=0.0), degree=2,
                    stiffening="nonlinear")
    law.law_degree = bad
    with pytest.raises(ValueError, match="law_degree must be a non-negative integer"):
        body.nonlinear_forms()
    law.law_degree = None
    assert body.nonlinear_degree() == 4
    assert body.nonlinear_forms().tangent is not None
    with pytest.raises(ValueError, match="key must be 'force', 'tangent' or 'energy'"):
        body.nonlinear_form("stress")
    assert body.nonlinear_form("energy") is not None   # the refusal left nothing behind


def test_nonlinear_errors():
    mesh = dm.create_unit_square(MPI.COMM_WORLD, 2, 2)
    body = mbs.Body(mesh, mbs.materials.PlaneStress(E=E0, nu=0.3, density=1.0),
                    mbs.frames.ConstantSpin(rate=0.0), stiffening="nonlinear")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    with pytest.raises(ValueError, match="multipliers.*linear strain"):
        model.integrate(t_end=0.01, dt=0.01, constraints="multipliers", progress=False)
    free = mbs.Model([mbs.Body(mesh, mbs.materials.PlaneStress(E=E0, nu=0.3, density=1.0),
                               mbs.frames.ConstantSpin(rate=0.0), stiffening="nonlinear")])
    free.apply_load(free.bodies[0], body_force=(1.0, 0.0))
    with pytest.raises(RuntimeError, match="nonlinear static solve failed"):
        free.solve_static()
