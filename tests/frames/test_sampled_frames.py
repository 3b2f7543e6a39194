"""Sampled, marker-fitted and composed frames against analytic motions (issue 14, items 1-2),
and seed 003's example b (synthetic): a beam driven by the frame fitted to its markers against
the same beam driven by the analytic motion."""

import math

import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs.frames import rotation_about, skew
from tests.models import seed003b as sb

EX, EZ = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])


def say(*a):
    if MPI.COMM_WORLD.rank == 0:
        print(*a)


def vee(W):
    return 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])


def axis_jet(axis, a):
    """R = exp(a0 K) and its first two time derivatives, for an angle jet a = (a, a', a'')."""
    K = skew(axis)
    R = rotation_about(axis, a[0])
    return R, a[1] * K @ R, (a[2] * K + a[1] ** 2 * K @ K) @ R


def product_jet(*jets):
    """(R, R', R'') of a product of rotations by Leibniz' rule."""
    R, dR, ddR = jets[0]
    for S, dS, ddS in jets[1:]:
        R, dR, ddR = R @ S, dR @ S + R @ dS, ddR @ S + 2 * dR @ dS + R @ ddS
    return R, dR, ddR


def state_from_jets(R, dR, ddR, r, dr, ddr):
    """The definitions of docs/theory.md section 1: omega~ = R^T R', alpha = d omega / dt, ..."""
    return (vee(R.T @ dR), vee(dR.T @ dR + R.T @ ddR), R.T @ dr, R.T @ ddr)


# --- a 3D spin with nutation and precession, sampled at 1 kHz ------------------------------

def spinning_top(t):
    """R = Rz(psi) Rx(theta) Rz(phi): precession 2 rad/s, nutation 0.3 + 0.1 sin 5t,
    spin 20 + 6 t rad/s; the origin on a helix. Returns the jets of R and r_O."""
    psi = (2 * t, 2.0, 0.0)
    th = (0.3 + 0.1 * math.sin(5 * t), 0.5 * math.cos(5 * t), -2.5 * math.sin(5 * t))
    phi = (20 * t + 3 * t * t, 20 + 6 * t, 6.0)
    R = product_jet(axis_jet(EZ, psi), axis_jet(EX, th), axis_jet(EZ, phi))
    r = (np.array([0.1 * math.cos(3 * t), 0.1 * math.sin(3 * t), 0.05 * t * t]),
         np.array([-0.3 * math.sin(3 * t), 0.3 * math.cos(3 * t), 0.1 * t]),
         np.array([-0.9 * math.cos(3 * t), -0.9 * math.sin(3 * t), 0.1]))
    return R, r, (psi, th, phi)


def test_sampled_3d_spin_with_nutation():
    """Sampled at 1 kHz over 1 s, interpolated: omega within 1e-6 and alpha within 1e-4 of
    the analytic values relative to their maxima, everywhere including the first and last
    samples (measured: 1.3e-11 and 1.0e-7); v_O and a_O likewise. Matrices and quaternions
    give the same frame. The analytic omega is checked against the Euler-angle formula."""
    times = np.linspace(0.0, 1.0, 1001)
    jets = [spinning_top(t) for t in times]
    Rs = np.array([j[0][0] for j in jets])
    rs = np.array([j[1][0] for j in jets])
    f = mbs.frames.Sampled(times, rotations=Rs, origins=rs)
    from scipy.spatial.transform import Rotation
    fq = mbs.frames.Sampled(times, rotations=Rotation.from_matrix(Rs).as_quat(), origins=rs)
    te = np.concatenate([np.linspace(0.0, 1.0, 1777), [0.0005, 0.9995]])
    got, ref = [], []
    for t in te:
        (R, r, (psi, th, phi)) = spinning_top(t)
        ex = state_from_jets(*R, *r)
        # Euler angles z-x-z: omega in body axes
        w_euler = np.array([psi[1] * math.sin(th[0]) * math.sin(phi[0]) + th[1] * math.cos(phi[0]),
                            psi[1] * math.sin(th[0]) * math.cos(phi[0]) - th[1] * math.sin(phi[0]),
                            psi[1] * math.cos(th[0]) + phi[1]])
        assert np.allclose(ex[0], w_euler, atol=1e-12)
        s = f.state(t)
        assert np.abs(s.R - R[0]).max() < 1e-11
        assert np.abs(s.r_O - r[0]).max() < 1e-12
        got.append((s.omega, s.alpha, s.v_O, s.a_O))
        ref.append(ex)
        sq = fq.state(t)
        assert np.allclose(sq.omega, s.omega, rtol=0, atol=1e-9)
    got, ref = np.array(got), np.array(ref)
    names = ("omega", "alpha", "v_O", "a_O")
    err = [np.abs(got[:, i] - ref[:, i]).max() / np.abs(ref[:, i]).max() for i in range(4)]
    say("sampled 3D, relative errors:", dict(zip(names, (f"{e:.1e}" for e in err))))
    assert err[0] < 1e-6 and err[1] < 1e-4 and err[2] < 1e-6 and err[3] < 1e-4, err
    assert f.time_invariant is False and f.origin_accelerates


# --- composed frames --------------------------------------------------------------------

def hub_and_blade():
    """A hub spinning up about z through (0.2, 0.1, 0) carries a blade that pitches up about
    x through the hub point (0.5, 0, 0.1): both SpinUp frames (closed-form angles)."""
    cp, cc = np.array([0.2, 0.1, 0.0]), np.array([0.5, 0.0, 0.1])
    parent = mbs.frames.SpinUp(axis=EZ, final_rate=3.0, ramp_time=2.0, origin=cp)
    child = mbs.frames.SpinUp(axis=EX, final_rate=5.0, ramp_time=1.0, origin=cc)
    return parent, child, cp, cc


def spin_up_angle(W, T, t):
    s = 2 * math.pi / T
    return ((W / T) * (t * t / 2 + (math.cos(s * t) - 1) / s**2),
            (W / T) * (t - math.sin(s * t) / s), (W / T) * (1 - math.cos(s * t)))


def test_composed_equals_analytic_and_prescribed():
    """Composed(hub, blade) against (1) the analytic motion R = Rz(a) Rx(b),
    r_O = c_p - Rz c_p + Rz (c_c - Rx c_c), differentiated by hand (round-off, 1e-12), and
    (2) a Prescribed frame of the composed R(t), r_O(t), differentiated numerically
    (Richardson, error control 1e-7: agreement to 1e-8 relative). Nested composition with a
    fixed offset frame changes nothing."""
    parent, child, cp, cc = hub_and_blade()
    comp = mbs.frames.Composed(parent, child)
    pres = mbs.frames.Prescribed(
        rotation=lambda t: parent.state(t).R @ child.state(t).R,
        origin=lambda t: parent.state(t).r_O + parent.state(t).R @ child.state(t).r_O,
        time_scale=0.2)
    ident = mbs.frames.ConstantSpin(rate=0.0)
    nested = mbs.frames.Composed(ident, mbs.frames.Composed(parent, child))
    worst_a = worst_p = 0.0
    for t in (0.13, 0.41, 0.77):
        Rp = axis_jet(EZ, spin_up_angle(3.0, 2.0, t))
        Rc = axis_jet(EX, spin_up_angle(5.0, 1.0, t))
        R = product_jet(Rp, Rc)
        d = [-Rc[k] @ cc for k in range(3)]
        d[0] = d[0] + cc
        r = [-Rp[k] @ cp for k in range(3)]
        r[0] = r[0] + cp
        r = [r[0] + Rp[0] @ d[0], r[1] + Rp[1] @ d[0] + Rp[0] @ d[1],
             r[2] + Rp[2] @ d[0] + 2 * Rp[1] @ d[1] + Rp[0] @ d[2]]
        ex = state_from_jets(*R, *r)
        s, p, n = comp.state(t), pres.state(t), nested.state(t)
        assert np.abs(s.R - R[0]).max() < 1e-14 and np.abs(s.r_O - r[0]).max() < 1e-14
        for q_s, q_e, q_p, q_n in zip((s.omega, s.alpha, s.v_O, s.a_O), ex,
                                      (p.omega, p.alpha, p.v_O, p.a_O),
                                      (n.omega, n.alpha, n.v_O, n.a_O)):
            scale = np.abs(q_e).max()
            worst_a = max(worst_a, np.abs(q_s - q_e).max() / scale)
            worst_p = max(worst_p, np.abs(q_s - q_p).max() / scale)
            assert np.allclose(q_n, q_s, rtol=0, atol=1e-14 * scale)
    say(f"composed vs analytic {worst_a:.1e}, vs Prescribed {worst_p:.1e}")
    assert worst_a < 1e-12 and worst_p < 1e-8
    assert comp.time_invariant is False and comp.origin_accelerates


def test_composed_of_sampled_child():
    """A sampled blade motion on a steadily spinning hub equals the analytic composition
    through the sampled frame's accuracy (the composition itself is exact)."""
    times = np.linspace(0.0, 1.0, 1001)
    b = lambda t: (0.4 * math.sin(4 * t), 1.6 * math.cos(4 * t), -6.4 * math.sin(4 * t))  # noqa
    cc = np.array([0.5, 0.0, 0.0])
    child = mbs.frames.Sampled(times, rotations=[axis_jet(EX, b(t))[0] for t in times],
                               origins=np.tile(cc, (times.size, 1)))
    hub = mbs.frames.ConstantSpin(axis=EZ, rate=10.0)
    comp = mbs.frames.Composed(hub, child)
    for t in (0.0, 0.37, 1.0):
        R = product_jet(axis_jet(EZ, (10 * t, 10.0, 0.0)), axis_jet(EX, b(t)))
        Rz = axis_jet(EZ, (10 * t, 10.0, 0.0))
        ex = state_from_jets(*R, *(Rz[k] @ cc for k in range(3)))
        s = comp.state(t)
        for q, e in zip((s.omega, s.alpha, s.v_O, s.a_O), ex):
            assert np.abs(q - e).max() < 1e-6 * np.abs(e).max()


# --- seed 003 example b, synthetic -------------------------------------------------------

def sample_grid(t_end, pad=0.1):
    """1 kHz samples from -pad to t_end + pad (the smoothing spline's ends lie outside)."""
    n0, n1 = int(round(pad * sb.RATE)), int(round((t_end + pad) * sb.RATE))
    return np.arange(-n0, n1 + 1) / sb.RATE


def kinematic_errors(frame, te):
    got = np.array([[s.omega[2], s.alpha[2], *s.a_O[:2]] for s in map(frame.state, te)])
    ref = np.array([[w, a, *aO] for w, a, aO in map(sb.exact_state, te)])
    e = np.abs(got - ref)
    return (e[:, 0].max() / np.abs(ref[:, 0]).max(), e[:, 1].max() / np.abs(ref[:, 1]).max(),
            e[:, 2:].max() / np.abs(ref[:, 2:]).max())


def test_example_b_motion_has_the_seeds_ranges():
    """The synthetic motion's markers 1 and 2 sweep Table 2's ranges (1 %)."""
    lo = [sb.marker_ranges(x) for x in (0.05, 0.45)]
    sp = (min(r[0] for r in lo), max(r[1] for r in lo))
    ac = (min(r[2] for r in lo), max(r[3] for r in lo))
    say(f"marker speeds {sp[0]:.3f}-{sp[1]:.3f} m/s, accelerations {ac[0]:.2f}-{ac[1]:.2f} m/s^2")
    assert np.allclose(sp, (0.24, 1.54), rtol=0.01) and np.allclose(ac, (0.9, 16.3), rtol=0.05)


@pytest.mark.parametrize("k", [2, 3])
def test_example_b_kinematics_from_markers(k):
    """Two or three markers at 1 kHz over one revolution. Without noise, interpolated: omega,
    alpha, a_O within 1e-8 of the analytic values (relative to their maxima). With 0.1 mm noise
    and smoothing tau = 10 ms: the error is the smoothing spline's (Sampled's docstring):
    filtered noise of standard deviation 0.30 s sqrt(h) tau^(-5/2) (s the fitted angle's or
    origin's noise), plus the bias (w tau)^4 of the motion's harmonics (w = 2 W: 7e-4); the
    maxima over 781 times must stay below 5 such deviations plus the bias."""
    pts = sb.BODY_POINTS[[0, 2]] if k == 2 else sb.BODY_POINTS
    t_end = 2 * np.pi / sb.W
    times = sample_grid(t_end)
    te = np.linspace(0.0, t_end, 781)
    clean = mbs.frames.from_markers(times, sb.markers(times, pts), pts)
    e_clean = kinematic_errors(clean, te)
    assert clean.max_residual < 1e-12 and clean.residual.shape == times.shape
    assert max(e_clean) < 1e-8, e_clean
    sigma, tau, h = 1e-4, 0.01, 1.0 / sb.RATE
    noisy = mbs.frames.from_markers(times, sb.markers(times, pts, noise=sigma), pts,
                                    smoothing=tau)
    e_noisy = kinematic_errors(noisy, te)
    # noise of the fitted angle and origin: least squares over the markers
    Xc = pts - pts.mean(axis=0)
    s_th = sigma / math.sqrt(np.sum(Xc**2))
    s_r = math.sqrt(sigma**2 / k + (np.linalg.norm(pts.mean(axis=0)) * s_th) ** 2)
    amp = lambda s: 0.30 * s * math.sqrt(h) * tau**-2.5  # noqa: E731
    thdd_max = np.abs(sb.theta(te, 2)).max()
    aO_max = max(np.abs(e[2]).max() for e in map(sb.exact_state, te))
    bias = (2 * sb.W * tau) ** 4
    bound_a = 5 * amp(s_th) / thdd_max + bias
    bound_aO = 5 * amp(s_r) / aO_max + bias
    say(f"{k} markers: clean errors omega {e_clean[0]:.1e}, alpha {e_clean[1]:.1e}, "
        f"a_O {e_clean[2]:.1e}; 0.1 mm noise, tau = 10 ms: omega {e_noisy[0]:.2%}, "
        f"alpha {e_noisy[1]:.2%} (bound {bound_a:.2%}), a_O {e_noisy[2]:.2%} "
        f"(bound {bound_aO:.2%}); fit residual max {noisy.max_residual * 1e3:.3f} mm")
    assert e_noisy[1] < bound_a and e_noisy[2] < bound_aO
    assert e_noisy[0] < e_noisy[1]          # the rate is less noisy than the acceleration
    assert noisy.max_residual < 5 * sigma
    med = float(np.median(noisy.smoothed_residual()))
    assert 0.5 * sigma < med < 3 * sigma    # what smoothing leaves is about the noise


def test_example_b_beam_response():
    """The strip (P2, 10 x 1) driven from rest over 0.15 s (dt = 1 ms, generalized-alpha) by
    the frame fitted to three markers matches the one driven by Planar(theta, origin) within
    1 % of the peak tip deflection without noise; with 0.1 mm noise (tau = 10 ms) the
    difference is stated and bounded by 10 %."""
    comm = MPI.COMM_WORLD
    t_end, dt = 0.15, 1e-3
    times = sample_grid(t_end)
    t_ref, w_ref = sb.tip_response(comm, sb.planar_frame(), t_end, dt)
    peak = np.abs(w_ref).max()
    out = {}
    for noise, tau in ((0.0, 0.0), (1e-4, 0.01)):
        f = mbs.frames.from_markers(times, sb.markers(times, noise=noise), sb.BODY_POINTS,
                                    smoothing=tau)
        t, w = sb.tip_response(comm, f, t_end, dt)
        assert np.allclose(t, t_ref)
        out[noise] = np.abs(w - w_ref).max() / peak
    say(f"tip deflection peak {peak * 1e6:.1f} um; fitted frame vs Planar: "
        f"{out[0.0]:.1e} without noise, {out[1e-4]:.2%} with 0.1 mm noise")
    assert peak > 1e-5
    assert out[0.0] < 0.01 and out[1e-4] < 0.10


# --- bad input ------------------------------------------------------------------------

def test_bad_input():
    t = np.linspace(0.0, 1.0, 11)
    R = np.array([rotation_about(EZ, 0.1 * s) for s in range(11)])
    with pytest.raises(ValueError, match=r"rotations must have shape \(11, 3, 3\)"):
        mbs.frames.Sampled(t, rotations=R[:-1])
    with pytest.raises(ValueError, match=r"origins must have shape \(11, 3\)"):
        mbs.frames.Sampled(t, rotations=R, origins=np.zeros((11, 4)))
    with pytest.raises(ValueError, match=r"strictly increasing: times\[4\]"):
        mbs.frames.Sampled(np.r_[t[:5], t[4], t[6:]], rotations=R)
    with pytest.raises(ValueError, match="at least 6 sample times"):
        mbs.frames.Sampled(t[:3], rotations=R[:3])
    with pytest.raises(ValueError, match=r"rotations\[3\] is not orthonormal"):
        mbs.frames.Sampled(t, rotations=np.concatenate([R[:3], 1.1 * R[3:4], R[4:]]))
    with pytest.raises(ValueError, match="sample the rotation more densely"):
        mbs.frames.Sampled(t, rotations=[rotation_about(EX, 2.0 * s) for s in range(11)])
    with pytest.raises(ValueError, match="smoothing must be >= 0"):
        mbs.frames.Sampled(t, rotations=R, smoothing=-1.0)
    f = mbs.frames.Sampled(t, rotations=R)
    with pytest.raises(ValueError, match=r"t=1.5 is outside the sampled times \[0, 1\]"):
        f.state(1.5)
    with pytest.raises(ValueError, match=r"t=-0.1 is outside"):
        mbs.frames.Composed(mbs.frames.ConstantSpin(rate=1.0), f).state(-0.1)
    with pytest.raises(TypeError, match="child must be a dolfinx_mbs.frames.Frame"):
        mbs.frames.Composed(f, "spin")
    m3 = np.zeros((11, 3, 3))
    with pytest.raises(ValueError, match="three markers not on one line"):
        mbs.frames.from_markers(t, m3[:, :2], np.eye(3)[:2])
    with pytest.raises(ValueError, match="three markers not on one line"):
        mbs.frames.from_markers(t, m3, np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0.0]]))
    with pytest.raises(ValueError, match="two distinct markers"):
        mbs.frames.from_markers(t, np.zeros((11, 1, 2)), np.zeros((1, 2)))
    with pytest.raises(ValueError, match=r"body_points must have shape \(3, 3\)"):
        mbs.frames.from_markers(t, m3, np.eye(2))
    with pytest.raises(ValueError, match="markers has 10 samples but times has 11"):
        mbs.frames.from_markers(t, m3[:10], np.eye(3))
    with pytest.raises(ValueError, match=r"markers must have shape \(n, k, 3\)"):
        mbs.frames.from_markers(t, np.zeros((11, 3)), np.eye(3))


def test_read_markers(tmp_path):
    """A CSV in mm with a header and comments reads back as the markers in m; a wrong column
    count is refused naming the file and the layout."""
    times = sample_grid(0.05, pad=0.0)
    m = sb.markers(times)
    path = tmp_path / f"markers_{MPI.COMM_WORLD.rank}.csv"
    with open(path, "w") as fh:
        fh.write("# seed 003 example b, synthetic\n")
        fh.write("t," + ",".join(f"x{i},y{i}" for i in range(1, 4)) + "\n")
        for t, row in zip(times, m):
            coords = (repr(float(v) * 1e3) for v in row.reshape(-1))
            fh.write(f"{float(t)!r}," + ",".join(coords) + "\n")
    t2, m2 = mbs.frames.read_markers(path, dim=2, scale=1e-3)
    assert np.array_equal(t2, times) and np.allclose(m2, m, rtol=1e-15, atol=1e-18)
    f = mbs.frames.from_markers(t2, m2, sb.BODY_POINTS)
    assert abs(f.state(0.02).omega[2] - sb.theta(0.02, 1)) < 1e-8
    bad = tmp_path / f"bad_{MPI.COMM_WORLD.rank}.csv"
    bad.write_text("0.0,1.0,2.0,3.0\n0.1,1.0,2.0,3.0\n")
    with pytest.raises(ValueError, match=r"bad_\d.csv: expected columns t, then 2 coordinates"):
        mbs.frames.read_markers(bad, dim=2)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        mbs.frames.read_markers(tmp_path / "none.csv")
