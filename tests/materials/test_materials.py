"""Anisotropic, orthotropic and user-written material laws against independent references: the
closed-form compliance of a rotated orthotropic bar (Jones, Mechanics of Composite Materials,
section 2.6), the built-in isotropic laws (stiffness, geometric stiffness and St Venant-Kirchhoff
tangent), the invariance of a transversely isotropic law under rotation about its axis of
isotropy, and the argument checks."""

import numpy as np
import pytest
import ufl
from dolfinx import mesh as dm
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import forms as F
from dolfinx_mbs.materials import (
    Anisotropic,
    LinearElastic,
    Orthotropic,
    PlaneStrain,
    PlaneStress,
    UserLaw,
)
from tests.models.formcases import mat, rel_mat, rel_vec, vec

COMM = MPI.COMM_WORLD
#: a carbon-epoxy-like orthotropic law (not transversely isotropic: all nine constants differ)
ORTHO = dict(E=(140e9, 10e9, 8e9), nu=(0.3, 0.28, 0.45), G=(5e9, 4.5e9, 3.5e9))
E_ISO, NU_ISO, RHO = 70e9, 0.33, 2700.0


def rot_z(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def isotropic_C(E, nu):
    """The 6x6 Voigt stiffness (engineering shear strains) of an isotropic law."""
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    mu = E / (2 * (1 + nu))
    C = np.zeros((6, 6))
    C[:3, :3] = lam
    C[np.arange(3), np.arange(3)] = lam + 2 * mu
    C[np.arange(3, 6), np.arange(3, 6)] = mu
    return C


def isotropic_constants(E, nu):
    G = E / (2 * (1 + nu))
    return dict(E=(E, E, E), nu=(nu, nu, nu), G=(G, G, G))


def generic_C():
    """A fully populated symmetric positive definite 6x6 matrix (Pa), the same on every rank."""
    A = np.random.default_rng(7).uniform(-1.0, 1.0, (6, 6))
    return 1e10 * (A @ A.T + 2.0 * np.eye(6))


# --- the rotated orthotropic bar: homogeneous strain, exact on degree-1 hexahedra ----------

def off_axis_compliance(E, nu, G, theta):
    """S'_11, S'_12, S'_13 and S'_16 of an orthotropic law whose axis 1 is turned by theta
    about z (from x towards y): Jones (1999), eq. (2.88), engineering shear strain."""
    (E1, E2, _), (nu12, nu13, nu23), (G12, _, _) = E, nu, G
    S11, S22, S12, S66 = 1 / E1, 1 / E2, -nu12 / E1, 1 / G12
    S13, S23 = -nu13 / E1, -nu23 / E2
    c, s = np.cos(theta), np.sin(theta)
    return {
        "11": c**4 / E1 + (1 / G12 - 2 * nu12 / E1) * s**2 * c**2 + s**4 / E2,
        "12": S12 * (s**4 + c**4) + (S11 + S22 - S66) * s**2 * c**2,
        "13": S13 * c**2 + S23 * s**2,
        "16": (2 * S11 - 2 * S12 - S66) * s * c**3 - (2 * S22 - 2 * S12 - S66) * s**3 * c,
    }


def strain_by_tensor_rotation(E, nu, G, R, sigma):
    """The strain tensor under uniaxial stress sigma along x, through the material axes:
    sigma_m = R^T sigma R, the compliance in material axes, eps = R eps_m R^T."""
    (E1, E2, E3), (nu12, nu13, nu23), (G12, G13, G23) = E, nu, G
    s = R.T @ np.diag([sigma, 0.0, 0.0]) @ R
    e = np.zeros((3, 3))
    e[0, 0] = s[0, 0] / E1 - nu12 / E1 * s[1, 1] - nu13 / E1 * s[2, 2]
    e[1, 1] = -nu12 / E1 * s[0, 0] + s[1, 1] / E2 - nu23 / E2 * s[2, 2]
    e[2, 2] = -nu13 / E1 * s[0, 0] - nu23 / E2 * s[1, 1] + s[2, 2] / E3
    e[1, 2] = e[2, 1] = s[1, 2] / (2 * G23)
    e[0, 2] = e[2, 0] = s[0, 2] / (2 * G13)
    e[0, 1] = e[1, 0] = s[0, 1] / (2 * G12)
    return R @ e @ R.T


def test_reference_compliance_closed_form_equals_tensor_rotation():
    """The test's two references agree: Jones's closed forms and the rotation of the strain."""
    for theta in np.radians([0.0, 30.0, 45.0, 70.0]):
        S = off_axis_compliance(**ORTHO, theta=theta)
        e = strain_by_tensor_rotation(**ORTHO, R=rot_z(theta), sigma=1.0)
        got = np.array([e[0, 0], e[1, 1], e[2, 2], 2 * e[0, 1], e[0, 2], e[1, 2]])
        want = np.array([S["11"], S["12"], S["13"], S["16"], 0.0, 0.0])
        assert np.abs(got - want).max() < 1e-14 * abs(S["11"]), (theta, got, want)


def owned_nodes(body, u):
    n = body.V.dofmap.index_map.size_local
    x = body.V.tabulate_dof_coordinates()[:n]
    return x, u.x.array[: 3 * n].reshape(n, 3)


def gathered(values):
    return np.concatenate(COMM.allgather(np.asarray(values, dtype=float).reshape(-1)))


@pytest.mark.parametrize("kind", ["numpy", "ufl"])
def test_rotated_orthotropic_bar_in_tension(kind):
    """A box bar of an orthotropic law with axis 1 at 30 degrees to x, under a uniform traction
    sigma on x = L, held only against rigid motion: the displacement is
    u = (e_xx x, g_xy x + e_yy y, e_zz z) with e = S' sigma (off-axis compliance)."""
    L, B, H, sigma = 1.0, 0.2, 0.1, 1.0e6
    theta = np.radians(30.0)
    R = rot_z(theta)
    axes = R if kind == "numpy" else ufl.as_matrix(R.tolist())
    material = Orthotropic(**ORTHO, density=1600.0, axes=axes)
    mesh = dm.create_box(COMM, [np.array([0.0, 0.0, 0.0]), np.array([L, B, H])], [4, 2, 2],
                         dm.CellType.hexahedron)
    body = mbs.Body(mesh, material, mbs.frames.ConstantSpin(rate=0.0))
    model = mbs.Model([body])
    model.apply_load(body, traction=(sigma, 0.0, 0.0), where=lambda x: np.isclose(x[0], L))
    model.clamp(body, lambda x: np.isclose(x[0], 0.0), components=[0])
    origin = lambda x: np.isclose(x[0], 0) & np.isclose(x[1], 0) & np.isclose(x[2], 0)  # noqa
    model.clamp(body, origin, components=[1, 2])
    model.clamp(body, lambda x: np.isclose(x[0], 0) & np.isclose(x[1], B) & np.isclose(x[2], 0),
                components=[2])
    u, = model.solve_static()
    S = off_axis_compliance(**ORTHO, theta=theta)
    e_xx, e_yy, e_zz, g_xy = (sigma * S[k] for k in ("11", "12", "13", "16"))
    x, U = owned_nodes(body, u)
    # the measured strains, from the nodes where they are read off
    end = np.isclose(x[:, 0], L)
    e_xx_fe = gathered(U[end, 0] / L)
    side = np.isclose(x[:, 0], 0.0) & np.isclose(x[:, 1], B)
    e_yy_fe = gathered(U[side, 1] / B)
    top = np.isclose(x[:, 2], H)
    e_zz_fe = gathered(U[top, 2] / H)
    axis = np.isclose(x[:, 0], L) & np.isclose(x[:, 1], 0.0)
    g_xy_fe = gathered(U[axis, 1] / L)
    for name, fe, ref in (("e_xx", e_xx_fe, e_xx), ("e_yy", e_yy_fe, e_yy),
                          ("e_zz", e_zz_fe, e_zz), ("g_xy", g_xy_fe, g_xy)):
        assert len(fe) > 0 and np.abs(fe / ref - 1).max() < 1e-10, (name, fe, ref)
    # and the whole field
    exact = np.stack([e_xx * x[:, 0], g_xy * x[:, 0] + e_yy * x[:, 1], e_zz * x[:, 2]], axis=1)
    err = COMM.allreduce(float(np.abs(U - exact).max(initial=0.0)), op=MPI.MAX)
    assert err < 1e-10 * abs(e_xx) * L, err
    # the off-axis law is neither the fibre one nor the transverse one
    assert 1.5 < e_xx * ORTHO["E"][0] / sigma and abs(g_xy) > 0.5 * abs(e_xx)


# --- isotropic laws written as anisotropic ones: the same operators ------------------------

def mesh_for(gdim):
    if gdim == 3:
        return dm.create_box(COMM, [np.array([0.1, -0.2, 0.0]), np.array([1.0, 0.3, 0.2])],
                             [3, 2, 2], dm.CellType.hexahedron)
    return dm.create_rectangle(COMM, [np.array([0.1, -0.2]), np.array([1.0, 0.3])], [4, 3],
                               dm.CellType.triangle)


def field(x):
    """A displacement of all strain components (m): large enough for the nonlinear terms."""
    f = [0.05 * np.sin(2 * x[0] + x[1]) + 0.02 * x[1] ** 2,
         0.04 * np.cos(x[0] - 3 * x[1]) + 0.03 * x[0] * x[1],
         0.03 * np.sin(x[0] + x[1] + 2 * x[2]) + 0.02 * x[0] * x[2]]
    return np.array(f)


def operators(material, mesh, degree=2):
    """Stiffness K, geometric stiffness of the prestress of ``field`` (its stress by the same
    law), and the St Venant-Kirchhoff tangent excess and internal force excess at ``field``,
    each assembled through the body's forms; and the body, which must outlive the PETSc
    objects (they use the communicator of its space)."""
    body = mbs.Body(mesh, material, mbs.frames.ConstantSpin(rate=0.0), degree=degree,
                    stiffening="nonlinear")
    gdim = body.gdim
    body.u_state.interpolate(lambda x: field(x)[:gdim])
    u, v = body.trial_test()
    sigma0 = material.stress(F.strain(body.u_state))
    nl = body.nonlinear_forms()
    return {"stiffness": mat(body.bilinear_forms()["stiffness"]),
            "geometric": mat(F.geometric_stiffness(material, sigma0, u, v)),
            "svk_tangent": mat(nl["tangent"]),
            "svk_force": vec(nl["force"]), "body": body}


def compare(a, b, tol=1e-12):
    out = {}
    for k in a:
        if k == "body":
            continue
        out[k] = rel_mat(a[k], b[k]) if k != "svk_force" else rel_vec(a[k], b[k])
        assert out[k] < tol, (k, out[k])
    return out


def psi_iso(E, nu):
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    mu = E / (2 * (1 + nu))
    return lambda e: mu * ufl.inner(e, e) + 0.5 * lam * ufl.tr(e) ** 2


@pytest.mark.parametrize("law", ["anisotropic", "orthotropic", "rotated-orthotropic",
                                 "user-energy"])
def test_isotropic_law_as_general_law_3d(law):
    """LinearElastic against the same law as a 6x6 matrix, as nine equal orthotropic constants
    (also turned by a generic rotation, under which an isotropic law does not change), and as a
    strain energy differentiated by UFL."""
    mesh = mesh_for(3)
    ref = operators(LinearElastic(E=E_ISO, nu=NU_ISO, density=RHO), mesh)
    R = mbs.frames.rotation_about((1.0, -2.0, 0.5), 0.7)
    other = {
        "anisotropic": lambda: Anisotropic(C=isotropic_C(E_ISO, NU_ISO), density=RHO),
        "orthotropic": lambda: Orthotropic(**isotropic_constants(E_ISO, NU_ISO), density=RHO),
        "rotated-orthotropic": lambda: Orthotropic(**isotropic_constants(E_ISO, NU_ISO),
                                                   density=RHO, axes=R),
        "user-energy": lambda: UserLaw(energy=psi_iso(E_ISO, NU_ISO), density=RHO, gdim=3),
    }[law]()
    compare(operators(other, mesh), ref)


@pytest.mark.parametrize("plane", ["stress", "strain"])
@pytest.mark.parametrize("law", ["anisotropic", "orthotropic"])
def test_isotropic_law_as_general_law_2d(plane, law):
    """PlaneStress / PlaneStrain (thickness 1 cm) against the 3D isotropic matrix reduced by
    Anisotropic(plane=...): static condensation of sigma_zz = 0, or the in-plane block."""
    mesh = mesh_for(2)
    t = 0.01
    builtin = {"stress": PlaneStress, "strain": PlaneStrain}[plane]
    ref = operators(builtin(E=E_ISO, nu=NU_ISO, density=RHO, thickness=t), mesh)
    if law == "anisotropic":
        other = Anisotropic(C=isotropic_C(E_ISO, NU_ISO), density=RHO, plane=plane,
                            thickness=t)
    else:
        other = Orthotropic(**isotropic_constants(E_ISO, NU_ISO), density=RHO, plane=plane,
                            thickness=t, axes=rot_z(0.4)[:2, :2])
    compare(operators(other, mesh), ref)


# --- rotations ---------------------------------------------------------------------------

def stiffness_matrix(material, V, qdeg=None):
    """K on the space V (which must outlive K: K uses the communicator of V's dofmap)."""
    mesh = V.mesh
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    md = {} if qdeg is None else {"quadrature_degree": qdeg}
    return mat(F.stiffness(material, u, v, ufl.Measure("dx", domain=mesh, metadata=md)))


@pytest.mark.parametrize("plane", [None, "stress", "strain"])
def test_numeric_axes_equal_ufl_axes(plane):
    """A fully anisotropic C in a constant frame: the Bond rotation of C (numeric axes) equals
    the rotation of strain and stress in UFL (the same axes as a UFL matrix)."""
    C = generic_C()
    if plane is None:
        mesh = mesh_for(3)
        R = mbs.frames.rotation_about((0.3, 1.0, -0.4), 1.1)
        Ru = ufl.as_matrix(R.tolist())
    else:
        mesh = mesh_for(2)
        R = rot_z(1.1)[:2, :2]
        Ru = ufl.as_matrix(rot_z(1.1).tolist())   # the 3x3 form of the in-plane rotation
    kw = dict(density=RHO, plane=plane)
    V = mbs.compat.vector_space(mesh, 2)
    K_num = stiffness_matrix(Anisotropic(C=C, axes=R, **kw), V)
    K_ufl = stiffness_matrix(Anisotropic(C=C, axes=Ru, **kw), V)
    K_id = stiffness_matrix(Anisotropic(C=C, **kw), V)
    assert rel_mat(K_num, K_ufl) < 1e-12
    assert rel_mat(K_num, K_id) > 1e-2   # the rotation matters


def test_fibre_angle_function_equals_constant_axes_per_region():
    """Fibre directions as a ``fem.Function`` (a DG0 fibre angle, as a laminate or a wood
    model gives it per cell): two regions of different angle. The reference assembles each
    region with its own constant (numeric, Bond-rotated) axes over tagged cells."""
    from dolfinx import fem

    mesh = mesh_for(3)
    tdim = mesh.topology.dim
    n_cells = mesh.topology.index_map(tdim).size_local + mesh.topology.index_map(tdim).num_ghosts
    mid = dm.compute_midpoints(mesh, tdim, np.arange(n_cells, dtype=np.int32))
    left = mid[:, 0] < 0.55
    angles = {1: 0.35, 2: -1.0}
    Q = fem.functionspace(mesh, ("DG", 0)) if hasattr(fem, "functionspace") else \
        fem.FunctionSpace(mesh, ("DG", 0))
    theta = fem.Function(Q)   # DG0: interpolated at the cell midpoints
    theta.interpolate(lambda x: np.where(x[0] < 0.55, angles[1], angles[2]))
    c, s = ufl.cos(theta), ufl.sin(theta)
    R_field = ufl.as_matrix([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    V = mbs.compat.vector_space(mesh, 1)
    K_field = stiffness_matrix(Orthotropic(**ORTHO, density=1600.0, axes=R_field), V)
    cells = np.arange(n_cells, dtype=np.int32)
    tags = dm.meshtags(mesh, tdim, cells, np.where(left, 1, 2).astype(np.int32))
    dx = ufl.Measure("dx", domain=mesh, subdomain_data=tags)
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    ref = sum(F.stiffness(Orthotropic(**ORTHO, density=1600.0, axes=rot_z(a)), u, v, dx(k))
              for k, a in angles.items())
    K_ref = mat(ref)
    assert rel_mat(K_field, K_ref) < 1e-12
    K_one = stiffness_matrix(Orthotropic(**ORTHO, density=1600.0, axes=rot_z(angles[1])), V)
    assert rel_mat(K_field, K_one) > 1e-2   # the second region's angle matters


def transversely_isotropic(axes=None, plane=None):
    """Isotropic in the 2-3 plane: E2 = E3, nu12 = nu13, G12 = G13, G23 = E2 / (2 (1 + nu23))."""
    E2, nu23 = 9e9, 0.4
    return Orthotropic(E=(150e9, E2, E2), nu=(0.3, 0.3, nu23),
                       G=(6e9, 6e9, E2 / (2 * (1 + nu23))), density=1600.0, axes=axes,
                       plane=plane)


@pytest.mark.parametrize("axes", ["constant", "field"])
def test_transversely_isotropic_law_turned_about_its_axis(axes):
    """Turning a transversely isotropic law about its axis of isotropy (x) changes nothing:
    by a constant angle, or by an angle that varies in space (a UFL field of
    SpatialCoordinate). On degree-1 tetrahedra the integrand is constant per cell."""
    mesh = dm.create_box(COMM, [np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.5, 0.4])],
                         [3, 2, 2], dm.CellType.tetrahedron)
    if axes == "constant":
        R = mbs.frames.rotation_about((1.0, 0.0, 0.0), 0.9)
        qdeg = None
    else:
        X = ufl.SpatialCoordinate(mesh)
        phi = 2.0 * X[0] + 3.0 * X[1] * X[2]
        c, s = ufl.cos(phi), ufl.sin(phi)
        R = ufl.as_matrix([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        qdeg = 4
    V = mbs.compat.vector_space(mesh, 1)
    K_rot = stiffness_matrix(transversely_isotropic(axes=R), V, qdeg=qdeg)
    K_ref = stiffness_matrix(transversely_isotropic(), V, qdeg=qdeg)
    assert rel_mat(K_rot, K_ref) < 1e-12
    # turned about another axis the law does change
    K_other = stiffness_matrix(
        transversely_isotropic(axes=mbs.frames.rotation_about((0.0, 0.0, 1.0), 0.9)), V)
    assert rel_mat(K_other, K_ref) > 0.1


def test_plane_law_axes_with_flipped_z():
    """A 3x3 axes matrix whose third column is -e_z (a half turn about an in-plane axis) is a
    valid plane rotation: a turn by pi about x of a plane-stress law equals the reflection
    y -> -y of its in-plane matrix."""
    C = generic_C()
    V = mbs.compat.vector_space(mesh_for(2), 1)
    flip = np.diag([1.0, -1.0, -1.0])
    K_flip = stiffness_matrix(Anisotropic(C=C, density=RHO, axes=flip, plane="stress"), V)
    # the reflection in Voigt form: the xy shear changes sign
    P = np.diag([1.0, 1.0, 1.0, -1.0, 1.0, -1.0])
    K_ref = stiffness_matrix(Anisotropic(C=P @ C @ P, density=RHO, plane="stress"), V)
    assert rel_mat(K_flip, K_ref) < 1e-12


# --- argument checks: the same data on every rank, so every rank raises -------------------

BAD = [
    ("C", lambda: Anisotropic(C=generic_C() + np.triu(np.full((6, 6), 1e9), 1), density=RHO),
     r"C must be symmetric"),
    ("C", lambda: Anisotropic(C=isotropic_C(E_ISO, 0.6), density=RHO),
     r"C must be positive definite.*smallest eigenvalue is -"),
    ("C", lambda: Anisotropic(C=np.eye(5), density=RHO), r"C must be a 6x6 matrix"),
    ("C", lambda: Anisotropic(C=np.full((6, 6), np.nan), density=RHO), r"C must be finite"),
    ("nu12", lambda: Orthotropic(E=(10e9, 140e9, 8e9), nu=(0.3, 0.28, 0.45), G=ORTHO["G"],
                                 density=RHO), r"nu12\^2 E2/E1 must be < 1"),
    ("nu", lambda: Orthotropic(E=(1e9, 1e9, 1e9), nu=(0.6, 0.6, 0.6), G=(1e9, 1e9, 1e9),
                               density=RHO), r"1 - nu12 nu21 .* must be > 0"),
    ("E2", lambda: Orthotropic(E=(1e9, -1e9, 1e9), nu=(0.3, 0.3, 0.3), G=(1e9, 1e9, 1e9),
                               density=RHO), r"E2 must be positive"),
    ("axes", lambda: Anisotropic(C=generic_C(), density=RHO,
                                 axes=[[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
     r"axes must be orthogonal"),
    ("axes", lambda: Anisotropic(C=generic_C(), density=RHO, axes=np.diag([1.0, 1.0, -1.0])),
     r"axes must be a rotation \(det \+1\)"),
    ("axes", lambda: Anisotropic(C=generic_C(), density=RHO, plane="stress",
                                 axes=mbs.frames.rotation_about((1, 0, 0), 0.3)),
     r"axes of a plane law.*third column must be \+-e_z"),
    ("axes", lambda: Anisotropic(C=generic_C(), density=RHO, axes=np.eye(2)),
     r"axes must be a finite 3x3"),
    ("density", lambda: Anisotropic(C=generic_C(), density=0.0), r"density must be positive"),
    ("thickness", lambda: Anisotropic(C=generic_C(), density=RHO, plane="strain",
                                      thickness=-1.0), r"thickness must be positive"),
    ("thickness", lambda: Anisotropic(C=generic_C(), density=RHO, thickness=0.1),
     r"thickness applies to plane laws only"),
    ("plane", lambda: Anisotropic(C=generic_C(), density=RHO, plane="3d"), r"plane must be"),
    ("gdim", lambda: UserLaw(lambda e: e, density=RHO, gdim=1), r"gdim must be"),
]


@pytest.mark.parametrize("case", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_raises_on_every_rank(case):
    name, make, match = case
    with pytest.raises(ValueError, match=match) as info:
        make()
    assert name in str(info.value)


def test_user_law_checks_and_dimensions():
    with pytest.raises(TypeError, match="stress must be a callable"):
        UserLaw(stress=3.0, density=RHO)
    with pytest.raises(TypeError, match="energy must be a callable"):
        UserLaw(energy="psi", density=RHO)
    with pytest.raises(TypeError, match="give stress="):
        UserLaw(density=RHO)
    any_dim = UserLaw(lambda e: 2.0 * e, density=RHO)
    any_dim.check_mesh(2)
    any_dim.check_mesh(3)
    with pytest.raises(ValueError, match="2D meshes"):
        Anisotropic(C=generic_C(), density=RHO, plane="stress").check_mesh(3)
    with pytest.raises(ValueError, match="3D meshes"):
        Orthotropic(**ORTHO, density=RHO).check_mesh(2)
    assert "Orthotropic(E=(1.4e+11" in repr(Orthotropic(**ORTHO, density=RHO))
    assert mbs.materials.__all__ and all(hasattr(mbs.materials, n)
                                         for n in mbs.materials.__all__)


# --- through the model: natural frequencies and a Campbell sweep --------------------------

def cantilever(material, stiffening=None):
    mesh = dm.create_box(COMM, [np.array([0.0, -0.02, -0.03]), np.array([1.0, 0.02, 0.03])],
                         [10, 1, 1], dm.CellType.hexahedron)
    frame = mbs.frames.ConstantSpin(axis=(0.0, 0.0, 1.0), rate=0.0)
    body = mbs.Body(mesh, material, frame, degree=2, stiffening=stiffening)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model


def test_orthotropic_cantilever_with_isotropic_constants_frequencies():
    """Natural frequencies of a cantilever of Orthotropic(isotropic constants), turned by a
    generic rotation, equal those of LinearElastic; a genuinely orthotropic one with its
    stiff axis along the beam is stiffer in bending than with it across."""
    R = mbs.frames.rotation_about((1.0, 2.0, 3.0), 0.8)
    w_iso = cantilever(LinearElastic(E=E_ISO, nu=NU_ISO, density=RHO)).natural_frequencies(n=4)
    w_ort = cantilever(Orthotropic(**isotropic_constants(E_ISO, NU_ISO), density=RHO, axes=R)
                       ).natural_frequencies(n=4)
    # the operators agree to 1e-12 (test_isotropic_law_as_general_law_3d); the frequencies to
    # the eigensolver's convergence: 1.1e-10 measured on DOLFINx 0.9 / 2 ranks
    assert np.all(w_iso > 0) and np.abs(w_ort / w_iso - 1).max() < 5e-10, (w_iso, w_ort)
    w_along = cantilever(Orthotropic(**ORTHO, density=1600.0)).natural_frequencies(n=2)
    w_across = cantilever(Orthotropic(**ORTHO, density=1600.0, axes=rot_z(np.pi / 2))
                          ).natural_frequencies(n=2)
    assert w_along[0] > 2.0 * w_across[0]


def test_orthotropic_campbell_with_prestress_equals_isotropic():
    """With prestress stiffening (the geometric stiffness of the centrifugal stress of the
    anisotropic law), Orthotropic(isotropic constants, turned) gives LinearElastic's reduced
    stiffness K + K_omega + K_sigma at speed to round-off, and the same Campbell diagram to
    the accuracy of the quadratic eigensolver (a few 1e-10 between pencils equal to 1e-15)."""
    speeds = [0.0, 150.0, 300.0]
    R = mbs.frames.rotation_about((0.0, 1.0, 1.0), 0.5)
    models = [cantilever(LinearElastic(E=E_ISO, nu=NU_ISO, density=RHO), "prestress"),
              cantilever(Orthotropic(**isotropic_constants(E_ISO, NU_ISO), density=RHO, axes=R),
                         "prestress")]
    Kr = []
    for m in models:
        state = m.bodies[0].frame.at_rate(speeds[-1]).state(0.0)
        Kr.append(m.system().pencil(0.0, 3, "gyroscopic", [state])[0].copy())
    assert rel_mat(Kr[1], Kr[0]) < 1e-12
    w_iso, w_ort = (np.asarray(m.campbell(speeds, n=3).frequencies) for m in models)
    assert np.all(np.abs(w_iso) > 0) and w_iso[-1, 0] > 1.1 * w_iso[0, 0]  # stiffened
    assert np.abs(w_ort / w_iso - 1).max() < 1e-8, (w_iso, w_ort)
