"""Mechanism modes (issue 27, item 2): a motion without elastic strain that the frame's
centrifugal field or gravity resists is a mode with its frequency, not a free motion to deflate
(:mod:`dolfinx_mbs.systems.rigid_modes`); the free motions of free bodies stay deflated
(tests/systems/test_free_modes.py).

The centrifugal pendulum: a link of length l and width h (plane stress, uniform), pinned at the
middle of its end P at radius R on an arm turning at Omega about z, hanging radially outwards,
swinging by theta in the plane. The arm is held on its whole area: the arm of the driven frame,
rigid. In the rotating frame the potential is V = -1/2 Omega^2 int rho |x|^2 dA; a rigid rotation
by theta about P moves X to P + R_theta (X - P), so to second order

    V = V_0 + 1/2 theta^2 Omega^2 int rho P . (X - P) = V_0 + 1/2 theta^2 Omega^2 m R l / 2,
    T = 1/2 theta'^2 J_P,   J_P = m (l^2 / 3 + h^2 / 12),

    w_s^2 = Omega^2 (m R l / 2) / J_P = Omega^2 (3 R / (2 l)) / (1 + h^2 / (4 l^2)).

In the linear model this stiffness is K_sigma + K_omega of the swing field r = e_z x (X - P):
int tr sigma_0 = q . (X - P) = Omega^2 m (R l / 2 + l^2 / 3 + h^2 / 12) (the centrifugal
tension; exact on the mesh, X - P being a field of the space on which the pin's reaction does no
work) and -Omega^2 J_P: only with ``stiffening="prestress"``. The link's elasticity: the swing
field is not an eigenvector of the elastic link (K_sigma r is not proportional to M r), and it
couples to the link's bending at second order, w = w_s (1 - kappa (w_s / w_b)^2), w_b the first
elastic frequency; bounded here by abs(w / w_s - 1) <= 0.2 (w_s / w_b)^2 (a tenth of that is
seen for 0.02 and 0.04 wide links at 20 and 40 rad/s).

The same link hanging under gravity g e_x at rest (the arm's frame not turning):
V = V_0 + 1/2 theta^2 m g l / 2, w_g^2 = (3 g / (2 l)) / (1 + h^2 / (4 l^2)).
"""

import dolfinx.mesh as dmesh
import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.systems import rigid_subspace

E, NU, RHO = 210e9, 0.3, 7850.0
R, L_LINK, H = 1.0, 2.0 / 3.0, 0.02
G = 9.81
GEOMETRY = 1.0 / np.sqrt(1.0 + H**2 / (4.0 * L_LINK**2))   # the link's width in J_P


def swing(rate):
    """The centrifugal pendulum's closed form (module docstring)."""
    return abs(rate) * np.sqrt(3.0 * R / (2.0 * L_LINK)) * GEOMETRY


def pendulum(rate, gravity=None, stiffening="prestress", frames="one", pin_radius=R):
    """The arm (held on its whole area) and the link pinned to it at ``pin_radius``.
    ``frames``: ``"one"`` frame object for both bodies, ``"two"`` equal ConstantSpin objects,
    ``"planar"`` / ``"planar-two"`` one or two equal Planar frames turning at ``rate``."""
    comm = MPI.COMM_WORLD
    if frames.startswith("planar"):
        def make():
            return mbs.frames.Planar(theta=lambda t: rate * t)
    else:
        def make():
            return mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=rate)
    fa = make()
    fb = make() if frames.endswith("two") else fa
    mat = mbs.materials.PlaneStress(E=E, nu=NU, density=RHO, thickness=H)
    arm_mesh = dmesh.create_rectangle(comm, [np.array([pin_radius - 1.0, -0.05]),
                                             np.array([pin_radius, 0.05])], [10, 2],
                                      dmesh.CellType.quadrilateral)
    link_mesh = dmesh.create_rectangle(comm, [np.array([pin_radius, -H / 2]),
                                              np.array([pin_radius + L_LINK, H / 2])],
                                       [16, 2], dmesh.CellType.quadrilateral)
    arm = mbs.Body(arm_mesh, mat, fa, degree=2, name="arm", stiffening=stiffening)
    link = mbs.Body(link_mesh, mat, fb, degree=2, name="link", stiffening=stiffening)
    model = mbs.Model([arm, link], gravity=gravity)
    model.clamp(arm, lambda x: np.full(x.shape[1], True))
    model.pin(arm, link, (pin_radius, 0.0, 0.0))
    return model


def _within(w, ws, wb, what, largest=0.0, roundoff=0.0):
    """w against the closed form ws, to the second-order coupling with the link's bending
    (and to 1e-8 of the ``largest`` frequency of a Campbell sweep, its solves' accuracy, and
    to ``roundoff``, :func:`_roundoff`)."""
    assert abs(w - ws) <= 0.2 * (ws / wb) ** 2 * ws + 1e-8 * largest + roundoff, (
        what, w, ws, wb, roundoff)


def _roundoff(model, ws):
    """What round-off of the stiffness may shift a slow swing's frequency ws by: the elastic
    stiffness of the swing field (a rigid rotation) is zero in exact arithmetic, but its
    products carry round-off of the link's elastic scale, eps lambda_max in w^2, with
    lambda_max >= max_i K_ii / M_ii (the Rayleigh quotients of the unit vectors)."""
    asm = model.assembly
    k, m = asm.elastic().getDiagonal(), asm.mass().getDiagonal()
    lam = np.max(k.array / m.array, initial=0.0)
    lam = MPI.COMM_WORLD.allreduce(lam, op=MPI.MAX)
    return np.finfo(float).eps * lam / (2.0 * ws)


def test_centrifugal_pendulum():
    """The swing at Omega (3 R / 2 l)^(1/2) (60 rad/s at 40 rad/s) in natural_frequencies
    (with and without Coriolis coupling), modes() and a Campbell sweep (20, 30, 40 rad/s); it is
    no free motion (none is left)."""
    rate = 40.0
    model = pendulum(rate)
    ws = swing(rate)
    sym = model.natural_frequencies(n=3)
    wb = sym[1]   # the link's first bending
    assert wb > 10 * ws
    _within(sym[0], ws, wb, "symmetric")
    gyro = model.natural_frequencies(n=3, gyroscopic=True)
    _within(gyro[0], ws, wb, "gyroscopic")
    res = model.modes(n=3, damping=False)
    assert res.rigid_dim == 0 and len(res.rigid_eigenvalues) == 0
    # two independent eigensolves, each converged to its tolerance (1.3e-8 apart seen on
    # DOLFINx 0.5.2, 2 ranks)
    assert abs(res.frequencies[0] / gyro[0] - 1.0) < 1e-6
    assert rigid_subspace(model.system(), 0.0) is None
    speeds = np.array([20.0, 30.0, rate])
    table = model.campbell(speeds, n=3)
    branch = table.frequencies[:, 0]
    for w, s in zip(branch, speeds):
        _within(w, swing(s), wb, f"campbell at {s}", np.abs(table.frequencies).max())
    # the sweep's subspace solves agree with independent solves to 1e-8 of the largest
    assert abs(branch[-1] - gyro[0]) < 1e-8 * np.abs(table.frequencies[-1]).max()


def test_gravity_pendulum():
    """The same link hanging under gravity at rest: (3 g / 2 l)^(1/2) (4.70 rad/s), in
    natural_frequencies and a Campbell sweep at rest; without stiffening the linear model has
    no gravity stiffness and the swing is a free motion (deflated, a rigid eigenvalue 0)."""
    model = pendulum(0.0, gravity=(G, 0.0, 0.0))
    wg = np.sqrt(3.0 * G / (2.0 * L_LINK)) * GEOMETRY
    sym = model.natural_frequencies(n=2)
    # the swing's stiffness m g l / 2 is 2e-9 of the link's elastic scale E t, so the elastic
    # stiffness's round-off shows: 1.8e-5 rad/s off the closed form with DOLFINx 0.11 and
    # 0.5.2, 5.0e-5 with 0.9 (the coupling bound: 1.9e-5); -3.0e-4 and +2.3e-4 on 32 x 4 and
    # 64 x 4 links, each within its round-off bound (5.0e-4, 5.3e-4)
    roundoff = _roundoff(model, wg)
    _within(sym[0], wg, sym[1], "symmetric", roundoff=roundoff)
    # at rest G = 0: the quadratic solve is the same problem, its small root to the PEP's
    # accuracy (relative to the pencil's scale: 5e-6 of this 4.7 rad/s on 2 ranks)
    gyro = model.natural_frequencies(n=2, gyroscopic=True)
    assert abs(gyro[0] / sym[0] - 1.0) < 2e-5, (gyro, sym)
    # the sweep at rest is the same quadratic problem, against the closed form to the same
    # round-off: the factorization of K in its first solve (LU, or LDL^T) moves this slow root
    # by 3.8e-5 relative (4.69752 against 4.69770 rad/s, the closed form 4.69761, the
    # round-off bound 1.2e-4 rad/s)
    f = model.campbell([0.0], n=2).frequencies
    _within(f[0, 0], wg, f[0, 1], "campbell at rest", roundoff=roundoff)
    soft = pendulum(0.0, gravity=(G, 0.0, 0.0), stiffening=None)
    res = soft.modes(n=2, damping=False)
    # lambda^2 = 0 to the round-off of r^T K r (1e-16 of max K_ii / max M_ii, ~1e-4 here)
    assert res.rigid_dim == 1 and np.abs(res.rigid_eigenvalues[0]) ** 2 < 1e-3 * wg**2
    assert abs(res.frequencies[0] / sym[1] - 1.0) < 1e-3   # the link's bending


@pytest.mark.parametrize("frames", ["two", "planar", "planar-two"])
def test_frames_alike(frames):
    """Without stiffening the spin softening -Omega^2 M (a 2D body in a frame turning about z)
    is the swing's only stiffness: the linear model's divergence at Omega, a mode (-Omega), the
    same whether the two equal frames are one object or two, ConstantSpin or Planar (rheonomic
    pin rows between two Planar objects)."""
    rate = 40.0
    one = pendulum(rate, stiffening=None).natural_frequencies(n=3)
    assert abs(one[0] + rate) < 1e-7 * rate
    other = pendulum(rate, stiffening=None, frames=frames).natural_frequencies(n=3)
    # Planar frames differentiate theta(t) numerically: omega to ~1e-8
    assert np.allclose(other, one, rtol=1e-7, atol=0), (frames, other, one)


def test_pinned_on_the_axis_is_free():
    """A link pinned on the spin axis turns about it freely (no centrifugal stiffness,
    w_s = 0 at R = 0): deflated as a free motion with and without stiffening, its rigid
    eigenvalue the divergence Omega of the unbalanced spin softening without, 0 with (K_sigma
    + K_omega cancel: tr sigma_0 integrates to Omega^2 J_P; to the solves' round-off)."""
    rate = 40.0
    for stiffening, lam, tol in ((None, rate, 1e-6), ("prestress", 0.0, 1e-3)):
        res = pendulum(rate, stiffening=stiffening, pin_radius=0.0).modes(n=2, damping=False)
        assert res.rigid_dim == 1, stiffening
        assert abs(res.rigid_eigenvalues[0] - lam) < tol * rate, (stiffening,
                                                                  res.rigid_eigenvalues)
        assert np.all(res.frequencies > 0.0)
