"""Rotors in the stationary frame (docs/theory.md section 9): bearings, disks, whirl and log dec
against closed forms, and the rotating and stationary descriptions of one rotor against each
other."""

import numpy as np
import pytest
import ufl
from dolfinx import mesh as dmesh
from mpi4py import MPI
from petsc4py import PETSc

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes
from tests.models import ROOT

STEEL = dict(E=210e9, nu=0.3, density=7850.0)


# -- rotating against stationary ---------------------------------------------------------------
def sections_rotor(frame, nz=6, L=0.6, a=0.04):
    """A square shaft of P2 hexahedra whose cross-sections (every node layer) move rigidly:
    its displacements t(z) + theta(z) x (x - z e_z), t and theta piecewise quadratic, are
    mapped into themselves by rotations about the axis, and every integral of them involves
    the section's second moments only, which a square has isotropic. So the rotating and the
    stationary descriptions are exactly one rotor, discretized alike."""
    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.array([-a / 2, -a / 2, 0.0]),
                                             np.array([a / 2, a / 2, L])], [2, 2, nz],
                            dmesh.CellType.hexahedron)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(**STEEL), frame, degree=2)
    model = mbs.Model([body])
    for k in range(2 * nz + 1):
        z = k * L / (2 * nz)
        model.rigid(body, lambda x, z=z: np.isclose(x[2], z, atol=1e-9 * L))
    for z in (0.0, L):  # isotropic bearings with a skew cross-coupling: rotation invariant
        model.bearing(body, where=lambda x, z=z: np.isclose(x[2], z), kxx=2e7, kyy=2e7,
                      kxy=3e6, kyx=-3e6, cxx=800.0, cyy=800.0, cxy=150.0, cyx=-150.0)
    return model


def test_rotating_and_stationary_descriptions_agree():
    """The complex eigenvalues of the stationary description are those of the rotating one
    shifted by i Omega times the whirl (+1 forward, -1 backward, 0 for torsion), to 1e-6."""
    speeds = np.array([500.0, 1500.0])
    st = sections_rotor(mbs.frames.Stationary((0, 0, 1), 0.0, check="off"))
    tab_s = st.campbell(speeds, n=6)
    rt = sections_rotor(mbs.frames.ConstantSpin((0, 0, 1), 0.0))
    tab_r = rt.campbell(speeds, n=10, damping=True)
    assert np.all(tab_s.whirl[:, :4] != 0)
    for i, om in enumerate(speeds):
        lam_r = tab_r.eigenvalues[i]
        shifted = lam_r.real + 1j * np.abs(lam_r.imag + tab_r.whirl[i] * om)
        for lam in tab_s.eigenvalues[i]:
            d = np.min(np.abs(shifted - lam)) / abs(lam)
            assert d < 1e-6, (om, lam, shifted)


# -- a Jeffcott rotor -------------------------------------------------------------------------
L_J, R_J, W_J = 0.6, 0.012, 0.02     # shaft length, radius; disk seat width (m)


def jeffcott(kb=1e6, cb=0.0, E=STEEL["E"], shaft_density=1.0, m=5.0, Ip=0.025, Id=0.0127,
             size=0.01, radius=R_J, **bearing):
    """A disk (mass m, inertias Ip, Id) at mid-span of a shaft whose own mass is negligible,
    on two isotropic bearings at its end faces."""
    cuts = (L_J / 2 - W_J / 2, L_J / 2 + W_J / 2)
    mesh, cells, facets = meshes.shaft(MPI.COMM_WORLD, L_J, radius, size, cuts)
    law = mbs.materials.LinearElastic(E=E, nu=0.3, density=shaft_density)
    body = mbs.Body(mesh, law, mbs.frames.Stationary((0, 0, 1), 0.0), degree=2)
    model = mbs.Model([body])
    for tag in (meshes.BEARING_A, meshes.BEARING_B):
        model.bearing(body, facets=(facets, tag), **{"kxx": kb, "kyy": kb, "cxx": cb,
                                                     "cyy": cb, **bearing})
    model.disk(body, facets=(facets, meshes.SHAFT_SEGMENT + 1), mass=m, polar=Ip, diametral=Id)
    return model


def section(mesh):
    """Area and second moment of the meshed section, from the volume integrals of the
    prism."""
    from dolfinx import fem

    x = ufl.SpatialCoordinate(mesh)
    dx = ufl.dx(domain=mesh)
    vol, Ixx = (mesh.comm.allreduce(fem.assemble_scalar(fem.form(f * dx)), op=MPI.SUM)
                for f in (1.0, x[0] * x[0]))
    return vol / L_J, Ixx / L_J


def beam_stiffness(kb, A, I, E=STEEL["E"], nu=0.3):  # noqa: E741
    """Translational and tilting stiffness at mid-span of a simply supported Timoshenko shaft
    on springs kb at its ends: P/delta = (L^3/48EI + L/(4 kappa G A) + 1/(2 kb))^-1 and
    M/psi = (L/12EI + 1/(L kappa G A) + 2/(L^2 kb))^-1 (psi the section's rotation)."""
    EI = E * I
    kGA = 6 * (1 + nu) / (7 + 6 * nu) * E / (2 * (1 + nu)) * A
    k = 1.0 / (L_J**3 / (48 * EI) + L_J / (4 * kGA) + 1.0 / (2 * kb))
    kt = 1.0 / (L_J / (12 * EI) + 1.0 / (L_J * kGA) + 2.0 / (L_J**2 * kb))
    return k, kt


def test_jeffcott_critical_speed_and_gyroscopic_split():
    """A disk on a slender massless shaft on isotropic springs: the translation at
    sqrt(k/m) at every speed (no split), the tilt's forward and backward whirl at the roots of
    I_d w^2 -/+ I_p Omega w - k_theta = 0; the critical speed (forward crossing with 1x) at
    sqrt(k/m)."""
    m, Ip, Id = 5.0, 0.025, 0.0127
    model = jeffcott(m=m, Ip=Ip, Id=Id)
    k, kt = beam_stiffness(1e6, *section(model.bodies[0].mesh))
    speeds = np.array([0.0, 300.0, 1200.0])
    tab = model.campbell(speeds, n=4)
    wt = np.sqrt(k / m)
    f = np.sort(tab.frequencies, axis=1)
    assert np.allclose(f[:, :2], wt, rtol=5e-3), (f[:, :2], wt)
    # the tilt: I_d w^2 -/+ I_p Omega w - k_theta = 0, so w_F w_B = k_theta / I_d and
    # w_F - w_B = I_p Omega / I_d; k_theta of the beam with the moment at a point (the disk's
    # seat spreads it over W_J: 2 % here)
    assert np.allclose(f[:, 2] * f[:, 3], kt / Id, rtol=4e-2), (f[:, 2] * f[:, 3], kt / Id)
    assert np.allclose(f[1:, 3] - f[1:, 2], Ip * speeds[1:] / Id, rtol=1e-2), \
        (f[1:, 3] - f[1:, 2], Ip * speeds[1:] / Id)
    for i, om in enumerate(speeds[1:], 1):  # forward: the stiffened branch
        j = int(np.argmax(tab.frequencies[i]))
        assert tab.whirl[i, j] == 1
    # the translation's two whirls are one frequency here (the disk's translation has no
    # gyroscopic coupling): the critical speed is its crossing with 1x, whatever the whirl
    crit = [c.speed for c in tab.critical_speeds if c.order == 1]
    assert crit and abs(crit[0] - wt) < 5e-3 * wt, (crit, wt)


# -- what a mode does: lateral, torsional; whirl of elliptic orbits -----------------------------
def two_disks(kxx=1e6, kyy=1e6, size=0.015):
    """Two disks (5 kg, I_p = 0.025, I_d = 0.0127 kg m^2, on 20 mm seats centred at 0.15 and
    0.45 m) on the Jeffcott rotor's slender shaft, whose own mass is negligible, on two
    bearings at its end faces."""
    cuts = (0.15 - W_J / 2, 0.15 + W_J / 2, 0.45 - W_J / 2, 0.45 + W_J / 2)
    mesh, cells, facets = meshes.shaft(MPI.COMM_WORLD, L_J, R_J, size, cuts)
    law = mbs.materials.LinearElastic(E=STEEL["E"], nu=0.3, density=1.0)
    body = mbs.Body(mesh, law, mbs.frames.Stationary((0, 0, 1), 0.0), degree=2)
    model = mbs.Model([body])
    for tag in (meshes.BEARING_A, meshes.BEARING_B):
        model.bearing(body, facets=(facets, tag), kxx=kxx, kyy=kyy)
    for k in (1, 3):
        model.disk(body, facets=(facets, meshes.SHAFT_SEGMENT + k), mass=5.0, polar=0.025,
                   diametral=0.0127)
    return model


def test_a_torsional_mode_is_named_and_has_no_critical_speed():
    """The two disks twist against each other on the shaft between them: w^2 = (G J / l)
    (2 / I_p) with l between the seats' centres (0.3 m) and inner edges (0.28 m: the disks
    are spread over their seats). That mode is the table's one torsional mode at every speed,
    flat in the speed, without whirl; it crosses the 1x line but an unbalance does not excite
    it: no critical speed there (every branch's crossings, kinds=None, has it), while the
    lateral modes' crossings remain."""
    model = two_disks()
    speeds = np.array([0.0, 400.0, 900.0, 1300.0])
    tab = model.campbell(speeds, n=8)
    G, J = STEEL["E"] / 2.6, np.pi * R_J**4 / 2
    lo, hi = (np.sqrt(G * J / ell * 2 / 0.025) for ell in (0.3, 0.28))
    torsional = tab.kind == "torsional"
    assert np.all(torsional.sum(axis=1) == 1), tab.kind
    assert np.all((tab.kind == "lateral") | torsional), tab.kind
    j = int(np.flatnonzero(torsional[0])[0])
    assert np.all(torsional[:, j])
    w = tab.frequencies[:, j]
    assert np.all((lo < w) & (w < hi)), (w, lo, hi)
    assert np.all(tab.fractions[:, j, 1] > 0.95) and np.all(tab.whirl[:, j] == 0)
    assert np.all(tab.stationary[:, j] == w)
    near = [c for c in tab.critical_speeds if abs(c.speed - w[0]) < 0.03 * w[0]]
    assert not near and all(c.kind == "lateral" for c in tab.critical_speeds)
    every = tab.crossings("stationary", orders=(1,), kinds=None)
    assert [c for c in every if c.mode == j and abs(c.speed - w[0]) < 1e-6 * w[0]]
    assert len([c for c in tab.critical_speeds if c.order == 1]) >= 4
    with pytest.raises(ValueError, match="kinds must name"):
        tab.crossings(kinds=("bending",))


def test_critical_speed_map_of_two_disks():
    """The map of the two-disk rotor from its synchronous whirl problem (one eigen-solve a
    stiffness): at each critical speed W_c the Campbell solve at W_c of the rotor built
    directly on bearings of that stiffness has a lateral forward mode at W_c (1e-6); the
    torsional mode, which crosses 1x at 847 rad/s, is no critical speed; the critical speeds
    rise with the bearings' stiffness. The map reads new bearings in place of the model's:
    the model's bearings and its Campbell diagram are those before the map (1e-6, the
    eigensolver's scatter on 2 ranks: 4e-8; bearings of the map's stiffness would move them by
    percents)."""
    model = two_disks(kxx=3e6, kyy=2e6, size=0.024)
    before = model.campbell([0.0, 600.0], n=6, damping=False).eigenvalues
    own = [(b, b.coefficients) for b in model.bodies[0].attachments[:2]]
    cmap = model.critical_speed_map([1e6, 1e8], n=2)
    assert all(b.coefficients is c and c.kxx[0] == 3e6 for b, c in own)
    after = model.campbell([0.0, 600.0], n=6, damping=False).eigenvalues
    assert np.allclose(after, before, rtol=1e-6, atol=0.0), (after, before)
    assert np.all(np.isfinite(cmap.speeds)) and np.all(np.diff(cmap.speeds, axis=0) > 0)
    for k, row in zip((1e6, 1e8), cmap.speeds):
        direct = two_disks(kxx=k, kyy=k, size=0.024)
        for wc in row:
            assert abs(wc - 847.0) > 20.0
            tab = direct.campbell([wc], n=8, damping=False)
            ok = (tab.kind[0] == "lateral") & (tab.whirl_stationary[0] >= 0)
            assert np.min(np.abs(tab.stationary[0][ok] - wc)) < 1e-6 * wc, (k, wc, tab.stationary)


def test_elliptic_orbits_keep_their_whirl():
    """On bearings of unequal stiffness (kyy = 0.6 kxx) the orbits are ellipses (whirl index
    0.2 at 200 rad/s): each lateral mode still has its sense, and the gyroscopic moments say
    which: a forward whirl's frequency rises with the speed, a backward one's falls."""
    model = two_disks(kxx=1e6, kyy=0.6e6)
    tab = model.campbell(np.array([200.0, 220.0]), n=6)
    order = tab.in_frequency_order()
    assert np.all(np.diff(np.take_along_axis(tab.frequencies, order, axis=1), axis=1) >= 0)
    lateral = np.flatnonzero(tab.kind[0] == "lateral")[:4]
    assert len(lateral) == 4
    for j in lateral:
        assert abs(tab.whirl_index[0, j]) < 0.5 and tab.whirl[0, j] == tab.whirl[1, j] != 0
        rise = tab.frequencies[1, j] - tab.frequencies[0, j]
        assert np.sign(rise) == tab.whirl[0, j], (j, rise, tab.whirl[:, j])


# -- a uniform shaft against the Timoshenko beam -----------------------------------------------
def timoshenko(n, om, L, A, I, rho, E, nu):  # noqa: E741
    """The whirl frequencies (backward, forward) of the n-th bending pair of a simply supported
    spinning Timoshenko shaft in the stationary frame: with u = U sin(kz) and the section's
    slopes (a, b) = (A_x, A_y) cos(kz), k = n pi / L,

        rho A u'' - kGA (u'' - a') = 0,
        rho I a'' + rho I_p Omega b' - EI a'' - kGA (u' - a) = 0   (and y, b: -Omega),

    I_p = 2 I (the polar moment), kappa = 6 (1 + nu) / (7 + 6 nu): a 4 x 4 quadratic
    eigenproblem, solved in companion form."""
    k = n * np.pi / L
    kGA = 6 * (1 + nu) / (7 + 6 * nu) * E / (2 * (1 + nu)) * A
    EI = E * I
    Kq = np.array([[kGA * k * k, -kGA * k], [-kGA * k, EI * k * k + kGA]])
    K = np.zeros((4, 4))
    K[:2, :2] = K[2:, 2:] = Kq
    M = np.diag([rho * A, rho * I, rho * A, rho * I])
    G = np.zeros((4, 4))
    G[1, 3], G[3, 1] = rho * 2 * I * om, -rho * 2 * I * om
    Z = np.zeros((4, 4))
    C = np.block([[Z, np.eye(4)], [-np.linalg.solve(M, K), -np.linalg.solve(M, G)]])
    lam = np.linalg.eigvals(C)
    w = np.sort(lam.imag[lam.imag > 0])
    return w[:2]  # backward, forward (the two above are the shear branch's)


def test_uniform_shaft_against_the_timoshenko_beam():
    """A uniform steel shaft (L/D = 12.5) on stiff isotropic bearings at its end faces
    (simply supported), spinning at 3000 rad/s with its centrifugal prestress: the first
    three pairs of backward and forward whirl against the Timoshenko beam with gyroscopic
    moments of the meshed section, within 1 %, and their splits within 10 %."""
    L, r, om = 1.0, 0.04, 3000.0
    mesh, cells, facets = meshes.shaft(MPI.COMM_WORLD, L, r, 0.02)
    body = mbs.Body(mesh, mbs.materials.LinearElastic(**STEEL),
                    mbs.frames.Stationary((0, 0, 1), 0.0), degree=2, stiffening="prestress")
    model = mbs.Model([body])
    for tag in (meshes.BEARING_A, meshes.BEARING_B):
        model.bearing(body, facets=(facets, tag), kxx=1e13, kyy=1e13)
    dx = ufl.dx(domain=mesh)
    x = ufl.SpatialCoordinate(mesh)
    from dolfinx import fem

    vol, Ixx = (mesh.comm.allreduce(fem.assemble_scalar(fem.form(f * dx)), op=MPI.SUM)
                for f in (1.0, x[0] * x[0]))
    tab = model.campbell(np.array([0.0, 0.5 * om, om]), n=6)
    f = tab.frequencies[-1]
    for n in (1, 2, 3):
        ref = timoshenko(n, om, L, vol / L, Ixx / L, STEEL["density"], STEEL["E"], 0.3)
        pair = np.sort(f[2 * n - 2: 2 * n])
        assert np.allclose(pair, ref, rtol=1e-2), (n, pair, ref)
        split, ref_split = pair[1] - pair[0], ref[1] - ref[0]
        assert abs(split - ref_split) < 0.1 * ref_split, (n, split, ref_split)
        j = 2 * n - 2 + int(np.argmax(f[2 * n - 2: 2 * n]))
        assert tab.whirl[-1, j] == 1   # the forward whirl is the stiffened one


# -- damping and cross-coupling: a rigid rotor ------------------------------------------------
def test_every_reported_pair_is_an_eigenpair_of_a_damped_rotor_at_rest():
    """The rigid rotor of the next test without cross-coupling, at rest: a passive damped
    system, so no root grows. Its pencil (two free rigid motions, axial and torsional, held
    by a border: a singular M, infinite eigenvalues) made SLEPc pass roots with backward
    errors of 1e-5 to 1e-2 beside true ones of 1e-8 (a real root +2.6e5 1/s on the demo's
    mesh). Every pair of the 10 nearest 0 has, by an explicit residual, at most the accepted
    backward error, no growth (Re lambda <= 1e-6 |lambda|, the package's test: the
    undamped axial and torsional modes have a real part of round-off), and the lowest ones
    are the cylindrical whirl's closed form m lam^2 + 2c lam + 2k = 0."""
    from dolfinx_mbs.modal import eigen
    from dolfinx_mbs.systems.rigid_modes import rigid_subspace

    kb, cb = 2e6, 400.0
    model = jeffcott(kb=kb, cb=cb, E=STEEL["E"] * 300, shaft_density=STEEL["density"], m=5.0,
                     Ip=0.025, Id=0.0127, radius=0.03, size=0.025)
    m = 5.0 + STEEL["density"] * section(model.bodies[0].mesh)[0] * L_J
    system = model.system()
    rigid = rigid_subspace(system, 0.0)
    assert rigid is not None and rigid.dim == 2
    K, G, M = rigid.border(*system.pencil(0.0, 6, "damping"))
    tol = 1e-10
    lam, vecs = eigen.gyroscopic_modes(K, G, M, 10, tol=tol, border=rigid.dim)
    norms = [A.norm(PETSc.NormType.INFINITY) for A in (K, G, M)]
    for li, (xr, xi) in zip(lam, vecs):
        r = []
        for A in (K, G, M):
            ar, ai = A.createVecLeft(), A.createVecLeft()
            A.mult(xr, ar)
            A.mult(xi, ai)
            r.append(ar.getArray() + 1j * ai.getArray())
        res = r[0] + li * r[1] + li**2 * r[2]
        x = xr.getArray() + 1j * xi.getArray()
        num = np.sqrt(MPI.COMM_WORLD.allreduce(np.sum(np.abs(res) ** 2)))
        xn = np.sqrt(MPI.COMM_WORLD.allreduce(np.sum(np.abs(x) ** 2)))
        err = num / ((norms[0] + abs(li) * norms[1] + abs(li) ** 2 * norms[2]) * xn)
        assert err <= eigen.accepted_error(tol), (li, err)
        assert li.real <= eigen.UNSTABLE * abs(li), li   # no growth (round-off on undamped)
    low = np.roots([m, 2 * cb, 2 * kb])
    low = low[low.imag > 0][0]
    assert np.all(np.abs(lam[:2] - low) < 2e-3 * abs(low)), (lam[:2], low)
    for xr, xi in vecs:
        xr.destroy()
        xi.destroy()


def test_log_dec_and_onset_of_instability_of_a_rigid_rotor():
    """A stiff shaft with a disk on two bearings (k, c each, cross-coupling kxy = -kyx = q
    Omega, tabulated over speed): its cylindrical whirl is m lam^2 + 2c lam + 2k -/+ 2i q Omega
    = 0 (m the rotor's mass). At rest the log dec is 2 pi zeta / sqrt(1 - zeta^2),
    zeta = 2c / (2 sqrt(2 k m)); the forward whirl turns unstable at Omega_th =
    c sqrt(2k/m) / q. (The shaft's own compliance is 5e-4 of the bearings'.)"""
    mesh_rho, kb, cb = STEEL["density"], 2e6, 400.0
    table = np.array([0.0, 4000.0])

    def rotor(q):
        return jeffcott(kb=kb, cb=cb, E=STEEL["E"] * 300, shaft_density=mesh_rho, m=5.0,
                        Ip=0.025, Id=0.0127, radius=0.03, size=0.025, speeds=table,
                        kxy=q * table, kyx=-q * table)

    m = 5.0 + mesh_rho * section(rotor(1.0).bodies[0].mesh)[0] * L_J
    w0 = np.sqrt(2 * kb / m)
    om_th = 2500.0
    q = cb * w0 / om_th
    model = rotor(q)
    speeds = np.array([0.0, 1000.0, 2000.0, 2400.0, 2600.0, 3000.0])
    tab = model.campbell(speeds, n=2)
    zeta = 2 * cb / (2 * np.sqrt(2 * kb * m))
    ld = 2 * np.pi * zeta / np.sqrt(1 - zeta**2)
    assert np.allclose(tab.log_dec[0], ld, rtol=1e-3), (tab.log_dec[0], ld)
    for i, om in enumerate(speeds):
        ref = []
        for s in (1.0, -1.0):
            r = np.roots([m, 2 * cb, 2 * kb + s * 2j * q * om])
            ref += list(r[r.imag > 0])
        for lam in tab.eigenvalues[i]:
            assert np.min(np.abs(np.array(ref) - lam)) < 1e-3 * abs(lam), (om, lam, ref)
    # the onset: the forward branch's growth crosses zero where the closed form says
    g = tab.growth.max(axis=1)
    assert np.all(g[speeds < om_th] < 0) and np.all(g[speeds > om_th] > 0)
    j = np.flatnonzero(speeds > om_th)[0]
    onset = speeds[j - 1] - g[j - 1] * (speeds[j] - speeds[j - 1]) / (g[j] - g[j - 1])
    assert abs(onset - om_th) < 2e-3 * om_th, (onset, om_th)
    assert not tab.stable[-1].all() and tab.stable[0].all()


# -- unbalance response ------------------------------------------------------------------------
def test_unbalance_response_of_a_rigid_rotor(tmp_path):
    """An unbalance m_e on the disk of a stiff rotor on damped isotropic bearings: the
    damped Jeffcott rotor, X = m_e Omega^2 e^{i phase} / (k_e - m Omega^2) along x and -i times
    it along y, k_e = (1/k_s + 1/(2 (k + i c Omega)))^-1 the shaft (beam theory, 1/2000 of
    the bearings' compliance) in series with the damped bearings (the cylindrical whirl alone:
    the unbalance is in the plane of symmetry), over the speed range to 0.1 %; the peak and
    its half-power amplification factor as the closed form's, to 0.1 %."""
    rho, kb, cb, me, phase = 10.0, 2e6, 150.0, 2e-4, 0.7
    model = jeffcott(kb=kb, cb=cb, E=STEEL["E"] * 300, shaft_density=rho, m=5.0,
                     Ip=0.025, Id=0.0127, radius=0.03, size=0.025)
    disk = model.bodies[0].attachments[2]
    m = 5.0 + rho * section(model.bodies[0].mesh)[0] * L_J
    w0 = np.sqrt(2 * kb / m)
    speeds = np.linspace(0.2, 1.8, 40) * w0
    resp = model.unbalance_response(speeds, unbalances=[(disk, me, phase)], probes=[disk])

    ks = beam_stiffness(np.inf, *section(model.bodies[0].mesh), E=STEEL["E"] * 300)[0]

    def exact(w):
        ke = 1.0 / (1.0 / ks + 1.0 / (2 * (kb + 1j * cb * w)))
        return me * w**2 * np.exp(1j * phase) / (ke - m * w**2)

    X = exact(speeds)
    assert np.allclose(resp.response[:, 0, 0], X, rtol=1e-3, atol=0), \
        np.abs(resp.response[:, 0, 0] / X - 1).max()
    assert np.allclose(resp.response[:, 0, 1], -1j * X, rtol=1e-3, atol=0)
    # the closed form's peak and half-power speeds
    from scipy.optimize import brentq, minimize_scalar

    r = minimize_scalar(lambda w: -abs(exact(w)), bounds=(0.8 * w0, 1.2 * w0), method="bounded",
                        options={"xatol": 1e-10 * w0})
    nc, peak = r.x, -r.fun
    lo = brentq(lambda w: abs(exact(w)) - peak / np.sqrt(2), 0.5 * w0, nc)
    hi = brentq(lambda w: abs(exact(w)) - peak / np.sqrt(2), nc, 1.5 * w0)
    found = [p for p in resp.critical_speeds if p.direction == "x"]
    assert len(found) == 1
    p = found[0]
    assert abs(p.speed - nc) < 1e-3 * nc and abs(p.amplitude - peak) < 1e-3 * peak
    assert abs(p.amplification - nc / (hi - lo)) < 1e-3 * nc / (hi - lo), \
        (p.amplification, nc / (hi - lo))
    # the table, its peaks and the Bode/polar plot as files (rank 0 writes)
    d = MPI.COMM_WORLD.bcast(str(tmp_path), root=0)
    import os

    resp.to_csv(os.path.join(d, "r.csv"))
    resp.peaks_to_csv(os.path.join(d, "p.csv"))
    resp.plot(os.path.join(d, "bode.png"))
    if MPI.COMM_WORLD.rank == 0:
        rows = np.genfromtxt(os.path.join(d, "r.csv"), delimiter=",", names=True, dtype=None,
                             encoding="utf-8")
        assert np.allclose(rows["x_re"] + 1j * rows["x_im"], resp.response[:, 0, 0], rtol=1e-15)
        assert os.path.getsize(os.path.join(d, "bode.png")) > 10_000
        assert "amplification_factor" in open(os.path.join(d, "p.csv")).readline()
    MPI.COMM_WORLD.Barrier()


def test_unbalance_response_at_rest_and_past_the_linear_range():
    """At rest an unbalance has no force, so no response: a speed 0 among the speeds gives 0
    there, the others as the closed form (the damped Jeffcott rotor of the test above), one
    probe's amplitudes shaped (speeds, 1, 2), also for the speed 0 alone. An unbalance
    whose orbit would tilt the shaft past 0.1 rad is answered, with a warning on every
    rank."""
    import warnings

    rho, kb, cb, me = 10.0, 2e6, 150.0, 2e-4
    model = jeffcott(kb=kb, cb=cb, E=STEEL["E"] * 300, shaft_density=rho, m=5.0,
                     Ip=0.025, Id=0.0127, radius=0.03, size=0.025)
    disk = model.bodies[0].attachments[2]
    m = 5.0 + rho * section(model.bodies[0].mesh)[0] * L_J
    ks = beam_stiffness(np.inf, *section(model.bodies[0].mesh), E=STEEL["E"] * 300)[0]
    w0 = np.sqrt(2 * kb / m)
    speeds = np.array([0.0, 0.5 * w0, 1.5 * w0])
    ke = 1.0 / (1.0 / ks + 1.0 / (2 * (kb + 1j * cb * speeds)))
    X = me * speeds**2 / (ke - m * speeds**2)
    resp = model.unbalance_response(speeds, unbalances=[(disk, me, 0.0)], probes=[disk],
                                    refine=False)
    assert resp.response.shape == (3, 1, 2)
    assert np.all(resp.response[0] == 0.0)
    assert np.allclose(resp.response[1:, 0, 0], X[1:], rtol=1e-3, atol=0)
    rest = model.unbalance_response([0.0], unbalances=[(disk, me, 0.0)], probes=[disk])
    assert rest.response.shape == (1, 1, 2) and np.all(rest.response == 0.0)
    assert rest.critical_speeds == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        big = model.unbalance_response(speeds, unbalances=[(disk, 50.0, 0.0)], probes=[disk],
                                       refine=False)
    past = [w for w in caught if issubclass(w.category, mbs.checks.SmallDisplacementWarning)]
    assert len(past) == 1 and "past the range of the linear model" in str(past[0].message)
    assert np.allclose(big.response, resp.response * (50.0 / me), rtol=1e-6, atol=0)


def test_critical_speed_map_of_a_rigid_rotor(tmp_path):
    """The first undamped critical speed of the stiff rotor against the bearing stiffness:
    the Jeffcott rotor's sqrt(k_e / m), k_e = (1/k_s + 1/(2k))^-1, to 1e-3."""
    rho = 10.0
    model = jeffcott(kb=1e6, cb=0.0, E=STEEL["E"] * 300, shaft_density=rho, m=5.0,
                     Ip=0.025, Id=0.0127, radius=0.03, size=0.025, kxy=5e5, cxx=300.0)
    m = 5.0 + rho * section(model.bodies[0].mesh)[0] * L_J
    ks = beam_stiffness(np.inf, *section(model.bodies[0].mesh), E=STEEL["E"] * 300)[0]
    k = np.array([3e5, 3e6])
    cmap = model.critical_speed_map(k, n=1)
    ref = np.sqrt(1.0 / (1.0 / ks + 1.0 / (2 * k)) / m)
    assert np.allclose(cmap.speeds[:, 0], ref, rtol=1e-3), (cmap.speeds[:, 0], ref)
    b = model.bodies[0].attachments[0]  # the bearings' own coefficients are back
    assert b.value("kxx", 0.0) == 1e6 and b.value("kxy", 0.0) == 5e5
    cmap.to_csv(tmp_path / "map.csv") if MPI.COMM_WORLD.rank == 0 else None


# -- bad input ------------------------------------------------------------------------------
def test_bad_input_is_refused_on_every_rank():
    mesh = dmesh.create_box(MPI.COMM_WORLD, [np.array([-0.02, -0.01, 0.0]),
                                             np.array([0.02, 0.01, 0.5])], [2, 2, 6],
                            dmesh.CellType.tetrahedron)
    law = mbs.materials.LinearElastic(**STEEL)
    body = mbs.Body(mesh, law, mbs.frames.Stationary((0, 0, 1), 100.0), degree=1)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[2], 0.0))
    with pytest.raises(ValueError, match=r"not axisymmetric .* order 2 .* is [0-9.e+-]+ of"):
        model.natural_frequencies(n=2, gyroscopic=True)
    with pytest.raises(ValueError, match="holds no facet: the predicate where= is true at no"):
        model.bearing(body, where=lambda x: x[2] > 10.0, kxx=1.0, kyy=1.0)
    tags = dmesh.meshtags(mesh, 2, np.array([0], dtype=np.int32), np.array([4], dtype=np.int32))
    with pytest.raises(ValueError, match=r"no facet has the tag 7 \(the facet tags hold \[4\]\)"):
        model.bearing(body, facets=(tags, 7), kxx=1.0, kyy=1.0)
    with pytest.raises(ValueError, match="kxy must be finite"):
        model.bearing(body, where=lambda x: np.isclose(x[2], 0.5), kxx=1.0, kxy=np.nan)
    b = model.bearing(body, where=lambda x: np.isclose(x[2], 0.5), speeds=[0.0, 50.0],
                      kxx=[1.0, 2.0], kyy=[1.0, 2.0])
    with pytest.raises(ValueError, match="outside its table"):
        b.matrices(100.0)
    assert b.value("kxx", 25.0) == pytest.approx(1.5)
    wide = b.replaced(mbs.rotors.Coefficients(kxx=[1.0, 2.0], kyy=[1.0, 2.0],
                                              speeds=[0.0, 50.0], extrapolate=True))
    assert wide.value("kxx", 100.0) == 2.0
    with pytest.raises(ValueError, match="outside its table"):   # b itself is unchanged
        b.value("kxx", 100.0)
    with pytest.raises(ValueError, match="disk mass must be >= 0"):
        model.disk(body, where=lambda x: np.isclose(x[2], 0.5), mass=-1.0)
    with pytest.raises(ValueError, match=r"polar=10 exceeds twice diametral=0.001"):
        model.disk(body, where=lambda x: np.isclose(x[2], 0.5), mass=1.0, polar=10,
                   diametral=0.001)
    for key in ("kxx", "cyy", "kzz"):
        with pytest.raises(ValueError, match=f"{key} must not be negative"):
            model.bearing(body, where=lambda x: np.isclose(x[2], 0.0),
                          **{"kxx": 1e6, "kyy": 1e6, key: -1e6})
    with pytest.raises(ValueError, match=r"kyy must not be negative.*\[1000.0, -1.0\]"):
        model.bearing(body, where=lambda x: np.isclose(x[2], 0.0), speeds=[0.0, 50.0],
                      kxx=[1e3, 1e3], kyy=[1e3, -1.0])
    assert len(body.attachments) == 1   # the refused ones left nothing behind
    with pytest.raises(ValueError, match=r"unbalances\[0\]: the point .* lies in no body"):
        model.unbalance_response([100.0], unbalances=[((0.0, 0.0, 0.8), 1e-4, 0.0)],
                                 probes=[(0.0, 0.0, 0.25)])
    for speeds in ([-100.0, 100.0], [100.0, 50.0, 200.0], [np.nan]):
        with pytest.raises(ValueError, match="speeds must be a non-empty, strictly monotonic "
                                             "sequence of finite, non-negative"):
            model.unbalance_response(speeds, unbalances=[((0.0, 0.0, 0.25), 1e-4, 0.0)],
                                     probes=[(0.0, 0.0, 0.25)])


def test_bearings_far_stiffer_than_the_shaft_are_named():
    """Bearings of 1e17 N/m on a shaft whose own stiffness is near 1e6 N/m: SLEPc stops at
    its iteration limit; the error says so in words and points at the spread of the
    stiffness (the matrix's diagonal spans 1e5 where the sound model spans 22)."""
    model = jeffcott(kb=1e17, size=0.02)
    with pytest.raises(RuntimeError, match=r"converged [0-9]+ of the [0-9]+ requested "
                                           r"eigenvalues: it reached its iteration limit .*"
                                           r"diagonal spans .*clamp a support meant to be rigid"):
        model.campbell([0.0, 500.0], n=4)


def test_case_file_with_bearings_disks_and_unbalance():
    """demos/cases/rotor_on_bearings.toml runs from the command line's case reader; the peaks
    of its unbalance response (major semi-axis, a frequency response) lie at the forward
    critical speeds of its Campbell diagram (an eigenproblem) within 0.2 %: two paths, one
    rotor. A lightly damped mode peaks at its damped frequency's crossing with 1x."""
    from dolfinx_mbs.cli.case import Case

    path = ROOT / "demos" / "cases" / "rotor_on_bearings.toml"
    case = Case(path, [("analysis.campbell.speeds", "0:2000:6"),
                       ("analysis.unbalance.speeds", "20:2000:15")])
    res = case.run(MPI.COMM_WORLD)
    crit = np.array([c["speed"] for c in res["campbell"]["critical"]])
    peaks = [p for p in res["unbalance"]["peaks"] if p["direction"] == "major"]
    assert len(peaks) >= 2
    for p in peaks:
        assert np.min(np.abs(crit - p["speed"])) < 2e-3 * p["speed"], (p, crit)
        assert p["amplification"] > 2.5


# -- run-up in time ------------------------------------------------------------------------------
@pytest.mark.slow  # 1500 time steps: about 3 minutes on a loaded 2-core machine
def test_run_up_through_the_critical_speed():
    """A run-up of the stiff rotor through its critical speed, the speed prescribed (a
    stationary frame whose rate is a function of time) and the unbalance turning with it,
    integrated in time: the disk's motion against the damped Jeffcott rotor's equations
    m x'' + 2c x' + 2k x = F(t) (F the unbalance force at the spin law's angle, rate and
    acceleration) integrated by scipy; the largest amplitude of the passage within 2 %."""
    from scipy.integrate import solve_ivp

    from dolfinx_mbs.forms.stationary import unbalance_force

    rho, kb, cb, me = 10.0, 2e6, 400.0, 2e-4
    a, b, T = 400.0, 1400.0, 0.15                      # rad/s, rad/s, s

    def rate(t):
        return a + (b - a) * min(t, T) / T

    frame = mbs.frames.Stationary((0, 0, 1), rate, acceleration=lambda t: (b - a) / T,
                                  angle=lambda t: a * t + 0.5 * (b - a) * t * t / T)
    cuts = (L_J / 2 - W_J / 2, L_J / 2 + W_J / 2)
    mesh, _, facets = meshes.shaft(MPI.COMM_WORLD, L_J, 0.03, 0.025, cuts)
    law = mbs.materials.LinearElastic(E=STEEL["E"] * 300, nu=0.3, density=rho)
    body = mbs.Body(mesh, law, frame, degree=2)
    model = mbs.Model([body])
    for tag in (meshes.BEARING_A, meshes.BEARING_B):
        model.bearing(body, facets=(facets, tag), kxx=kb, kyy=kb, cxx=cb, cyy=cb)
    disk = model.disk(body, facets=(facets, meshes.SHAFT_SEGMENT + 1), mass=5.0,
                      polar=0.025, diametral=0.0127)
    model.unbalance(disk, me, 0.0)
    m = 5.0 + rho * section(mesh)[0] * L_J
    jm = model.assembly.body_operators[0].rotor.maps[id(disk)]
    hist = []

    def record(t, u, v):
        r0, r1 = u.getOwnershipRange()
        own = (jm.index >= r0) & (jm.index < r1)
        x = u.getArray(readonly=True)[jm.index[own] - r0]
        hist.append((t, MPI.COMM_WORLD.allreduce(float(jm.L[0, own] @ x), op=MPI.SUM)))

    dt = 2 * np.pi / b / 40
    model.integrate(t_end=T, dt=dt, callback=record, energy=False)
    t_fe, x_fe = np.array(hist).T

    def rhs(t, y):
        th = a * t + 0.5 * (b - a) * t * t / T
        F = unbalance_force(me, 0.0, th, rate(t), (b - a) / T)
        return [y[1], (F[0] - 2 * cb * y[1] - 2 * kb * y[0]) / m]

    ref = solve_ivp(rhs, (0.0, T), [0.0, 0.0], t_eval=t_fe, rtol=1e-10, atol=1e-14)
    x_ref = ref.y[0]
    assert abs(np.abs(x_fe).max() - np.abs(x_ref).max()) < 2e-2 * np.abs(x_ref).max(), \
        (np.abs(x_fe).max(), np.abs(x_ref).max())
    # the passage happens at the same time (the peaks within one step of the record)
    assert abs(t_fe[np.argmax(np.abs(x_fe))] - t_fe[np.argmax(np.abs(x_ref))]) < 0.02 * T
