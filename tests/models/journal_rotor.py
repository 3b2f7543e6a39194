"""Plain journal bearings for the tests: the short bearing's closed forms (Ocvirk; Friswell
et al.'s eight coefficients), a rigid rotor on two bearings (oil whirl), its separate 4-dof
model built from the same film's eight coefficients, and the onset of whirl in a Campbell
table.

The rotor: a rigid disk at mid-span of a shaft of radius 0.05 m, 0.4 m long, 1000 times as
stiff as steel and nearly massless (density 1e-3 kg/m^3): a rigid body for the film (the shaft's
first bending mode lies some 10^3 times above the whirl), whose inertia is the disk's (a rigid
disk has no spin softening; an elastic shaft's -Omega^2 k_theta would need its centrifugal
prestress to cancel on rigid tilts; and a shaft mesh's slight asymmetry would feel a
centrifugal force in the stationary frame, 1e-5 N at this density). The journals are the
lateral surfaces of the first and last 25 mm. Each bearing carries half the weight, ``load``
N.
"""

import math

import numpy as np
import ufl
from dolfinx import fem
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

#: the film of the tests (m, Pa s) and their speed (rad/s)
D, C, MU, SPEED = 0.1, 1e-4, 0.03, 300.0
LENGTH, RADIUS = 0.4, 0.05
CUTS = (0.025, 0.19, 0.21, 0.375)
JOURNALS = (meshes.SHAFT_SEGMENT, meshes.SHAFT_SEGMENT + 4)
DISK = dict(mass=4000.0 / 9.81, polar=8.2, diametral=4.3)
RIGID = dict(E=2.1e14, nu=0.3, density=1e-3)


def film(**kw):
    """The issue's bearing: D = 0.1 m, L = 0.05 m, c = 0.1 mm, mu = 0.03 Pa s."""
    return mbs.rotors.PlainJournal(diameter=0.1, length=0.05, clearance=1e-4, viscosity=0.03,
                                   **kw)


def rigid_rotor(journal, load=2000.0, size=0.06, degree=None, comm=MPI.COMM_WORLD, rate=0.0,
                disk=DISK):
    """The rotor on two bearings of ``journal``, each loaded by (0, -load): (model, body,
    bearings, facet tags)."""
    mesh, _, facets = meshes.shaft(comm, LENGTH, RADIUS, size, CUTS)
    rotor = mbs.Body(mesh, mbs.materials.LinearElastic(**RIGID),
                     mbs.frames.Stationary((0, 0, 1), rate), degree=degree)
    model = mbs.Model([rotor])
    bearings = [model.bearing(rotor, facets=(facets, tag), journal=journal,
                              load=(0.0, -load), name=f"journal {i}")
                for i, tag in enumerate(JOURNALS)]
    if disk:
        model.disk(rotor, facets=(facets, meshes.SHAFT_SEGMENT + 2), **disk)
    return model, rotor, bearings, facets


def rigid_properties(body, facets, disk=DISK):
    """The mesh's rigid-body data (mass, centre z, transverse and polar moments about the
    centre) with the disk's, and the journals' centroids z, from integrals over the mesh."""
    mesh, rho = body.mesh, RIGID["density"]
    x = ufl.SpatialCoordinate(mesh)

    def integral(f, measure):
        return mesh.comm.allreduce(fem.assemble_scalar(fem.form(f * measure)), op=MPI.SUM)

    dx = ufl.dx(domain=mesh)
    m = integral(rho, dx)
    zc = integral(rho * x[2], dx) / m
    Ip = integral(rho * (x[0] ** 2 + x[1] ** 2), dx)
    Id = integral(rho * (x[1] ** 2 + (x[2] - zc) ** 2), dx)
    ds = ufl.Measure("ds", domain=mesh, subdomain_data=facets)
    zj = [integral(x[2], ds(t)) / integral(1.0, ds(t)) for t in JOURNALS]
    if disk:
        m_all = m + disk["mass"]
        z_all = (m * zc + disk["mass"] * 0.5 * LENGTH) / m_all
        Id = Id + m * (zc - z_all) ** 2 + disk["diametral"] + \
            disk["mass"] * (0.5 * LENGTH - z_all) ** 2
        m, zc, Ip = m_all, z_all, Ip + disk["polar"]
    return dict(mass=m, center=zc, polar=Ip, diametral=Id, journals=zj)


def four_dof_matrices(props, K, C):
    """(K_q, C_q, M, G) of the rigid rotor (x, y, theta_x, theta_y at its centre) on the two
    bearings (K, C at each journal): M q'' + (C_q + speed G) q' + K_q q = Q, K_q = sum T^T K T
    and C_q likewise, T the journal's translation (x + dz theta_y, y - dz theta_x), G the polar
    moment's gyroscopic coupling per speed (theory section 9, as the disks')."""
    M = np.diag([props["mass"], props["mass"], props["diametral"], props["diametral"]])
    Kq, Cq = np.zeros((4, 4)), np.zeros((4, 4))
    for z in props["journals"]:
        d = z - props["center"]
        T = np.array([[1.0, 0.0, 0.0, d], [0.0, 1.0, -d, 0.0]])
        Kq += T.T @ K @ T
        Cq += T.T @ C @ T
    G = np.zeros((4, 4))
    G[2, 3], G[3, 2] = props["polar"], -props["polar"]
    return Kq, Cq, M, G


def four_dof_eigenvalues(props, K, C, speed):
    """The eigenvalues of the 4-dof rigid rotor (:func:`four_dof_matrices`) at ``speed``."""
    Kq, Cq, M, G = four_dof_matrices(props, K, C)
    A = np.block([[np.zeros((4, 4)), np.eye(4)],
                  [-np.linalg.solve(M, Kq), -np.linalg.solve(M, Cq + speed * G)]])
    return np.linalg.eigvals(A)


def four_dof_threshold(journal, props, load, low, high):
    """The speed where the 4-dof model's largest growth rate crosses zero (brentq)."""
    from scipy.optimize import brentq

    def growth(w):
        K, C = journal.coefficients((0.0, -load), w)
        return four_dof_eigenvalues(props, K, C, w).real.max()

    w = brentq(growth, low, high, xtol=1e-10 * high, rtol=1e-12)
    K, C = journal.coefficients((0.0, -load), w)
    lam = four_dof_eigenvalues(props, K, C, w)
    return w, abs(lam[np.argmax(lam.real)].imag)


def log_dec(lam):
    """-2 pi Re / |Im| of eigenvalues."""
    return -2 * math.pi * lam.real / np.abs(lam.imag)


def ocvirk_force(L, eps, speed=SPEED):
    """The short bearing's half-Sommerfeld force on a journal of the tests' film (length L)
    displaced by eps c along -y, spinning at ``speed`` about +z: (tangential, along the line
    of centres) = (F_x, F_y)."""
    s = MU * speed * (D / 2) * L ** 3 / C ** 2
    return np.array([s * math.pi * eps / (4.0 * (1 - eps * eps) ** 1.5),
                     s * eps * eps / (1 - eps * eps) ** 2])


def friswell(eps, load, speed):
    """The short bearing's eight coefficients (Friswell et al., Dynamics of Rotating Machines,
    section 5.5: u horizontal, v along the load), dimensional."""
    pi, e = math.pi, eps
    h0 = 1 / (pi ** 2 * (1 - e ** 2) + 16 * e ** 2) ** 1.5
    r = math.sqrt(1 - e ** 2)
    auu = h0 * 4 * (pi ** 2 * (2 - e ** 2) + 16 * e ** 2)
    auv = h0 * pi * (pi ** 2 * (1 - e ** 2) ** 2 - 16 * e ** 4) / (e * r)
    avu = -h0 * pi * (pi ** 2 * (1 - e ** 2) * (1 + 2 * e ** 2) + 32 * e ** 2 * (1 + e ** 2)) \
        / (e * r)
    avv = h0 * 4 * (pi ** 2 * (1 + 2 * e ** 2) + 32 * e ** 2 * (1 + e ** 2) / (1 - e ** 2))
    buu = h0 * 2 * pi * r * (pi ** 2 * (1 + 2 * e ** 2) - 16 * e ** 2) / e
    buv = -h0 * 8 * (pi ** 2 * (1 + 2 * e ** 2) - 16 * e ** 2)
    bvv = h0 * 2 * pi * (pi ** 2 * (1 - e ** 2) ** 2 + 48 * e ** 2) / (e * r)
    return (load / C * np.array([[auu, auv], [avu, avv]]),
            load / (C * speed) * np.array([[buu, buv], [buv, bvv]]))


def _whirl_log_dec(table):
    """The least log dec of the modes below the speed (the whirl modes; not the stiff
    shaft's bending, some 10^5 times higher, nearly undamped), and its column."""
    ld = np.where(table.stationary < np.abs(table.speeds)[:, None], table.log_dec, np.inf)
    return ld.min(axis=1), ld.argmin(axis=1)


def whirl_onset(model, speeds, table):
    """The speed where the least log dec of the whirl modes crosses zero: bracketed by the
    sweep, then found by regula falsi (Illinois) on single-speed sweeps to 1e-5."""
    ld = _whirl_log_dec(table)[0]
    i = int(np.flatnonzero(np.sign(ld[:-1]) != np.sign(ld[1:]))[0])
    a, b, fa, fb = speeds[i], speeds[i + 1], ld[i], ld[i + 1]
    side = 0
    for _ in range(8):
        w = (a * fb - b * fa) / (fb - fa)
        t = model.campbell([w], n=4, n_extra=0, tol=1e-9)   # see test_journal_rotor
        fw = _whirl_log_dec(t)[0][0]
        if abs(b - a) < 1e-5 * w or abs(fw) < 1e-9:
            break
        if np.sign(fw) == np.sign(fa):
            a, fa = w, fw
            fb = fb / 2 if side == -1 else fb
            side = -1
        else:
            b, fb = w, fw
            fa = fa / 2 if side == 1 else fa
            side = 1
    j = int(_whirl_log_dec(t)[1][0])
    return w, t.stationary[0, j], int(t.whirl_stationary[0, j]), (speeds[i], speeds[i + 1])


def flexible_rotor(speed=1000.0, comm=MPI.COMM_WORLD):
    """The rotor of demos/journal_bearing.py: a disk of 1000/g kg at mid-span of a massless
    steel shaft (0.8 m, radius 30 mm; P2 tetrahedra) on two plain journal bearings (D = 60 mm,
    L = 30 mm, c = 60 um, mu = 0.03 Pa s, 32 x 6 film cells), each loaded by 500 N, spinning
    at ``speed``: its first bending mode on the films (~345 rad/s at 1000 rad/s) whips above
    ~600 rad/s. Returns (model, body, film)."""
    W, LS, RS = 500.0, 0.8, 0.03
    jb = mbs.rotors.PlainJournal(0.06, 0.03, 6e-5, 0.03, cells=(32, 6), name="journal")
    m = 2 * W / 9.81
    mesh, _, facets = meshes.shaft(comm, LS, RS, 0.03, (0.03, LS / 2 - 0.01, LS / 2 + 0.01,
                                                         LS - 0.03))
    steel = mbs.materials.LinearElastic(E=2.1e11, nu=0.3, density=1e-3)
    # a massless shaft: its mesh's circumferential mass moments matter little (gmsh 4.8's
    # mesh of Debian's DOLFINx 0.5 has 1.1e-2 of order 2)
    frame = mbs.frames.Stationary((0, 0, 1), speed, axisymmetry_tol=0.05)
    body = mbs.Body(mesh, steel, frame, degree=2)
    model = mbs.Model([body])
    for i, tag in enumerate((meshes.SHAFT_SEGMENT, meshes.SHAFT_SEGMENT + 4)):
        model.bearing(body, facets=(facets, tag), journal=jb, load=(0.0, -W),
                      name=f"bearing {i}")
    model.disk(body, facets=(facets, meshes.SHAFT_SEGMENT + 2), mass=m,
               polar=m * 0.15 ** 2 / 2, diametral=m * 0.15 ** 2 / 4)
    return model, body, jb


def rigid_support_frequency():
    """The first bending frequency (rad/s) of :func:`flexible_rotor`'s shaft on rigid supports
    pinned at the journals' middles: Jeffcott's rotor, a massless shaft of stiffness
    48 E I / span^3 at mid-span carrying the disk's mass (a closed form: the bound the whip's
    frequency approaches as the films, far from their centre, grow stiff)."""
    E, RS, span, m = 2.1e11, 0.03, 0.8 - 0.03, 2 * 500.0 / 9.81
    return float(np.sqrt(48 * E * np.pi * RS**4 / 4 / span**3 / m))


def whirl_frequency(times, x):
    """The angular frequency of a signal from its upward crossings of its mean."""
    y = x - x.mean()
    up = np.flatnonzero(np.diff(np.sign(y)) > 0)
    return 2 * np.pi * (len(up) - 1) / (times[up[-1]] - times[up[0]]) if len(up) > 2 \
        else np.nan
