# # An elastic slider-crank: two bodies in their own frames, joined by rheonomic joints
#
# A crank (r = 0.1 m) driven by a motor about the ground pivot O = (0, 0) carries at its tip a
# coupler (connecting rod, l = 0.3 m) whose far end slides on the ground x-axis, like the
# piston pin of an engine. Both links are aluminium strips (E = 70 GPa, nu = 0.3,
# rho = 2700 kg/m^3) with a 10 mm x 10 mm section, modelled in 2D plane stress (thickness
# 10 mm) with P2 quadrilaterals.
#
# Each body lives in its own moving frame:
# - the crank in `frames.Planar(theta(t))`, rotating about O; it is clamped over its hub edge
#   x = 0 in that frame (a motor shaft that imposes theta(t));
# - the coupler in `frames.Planar(phi(t), origin=crank tip)`, the rigid slider-crank's motion:
#   origin at r (cos theta, sin theta), angle phi from sin(phi) = -r sin(theta) / l.
#
# The frames carry the large rigid motion; the bodies' displacements in them are the small
# elastic part. The joints, written in the global frame, couple the two: `model.pin(crank,
# coupler, P)` makes the coupler's node at P follow the crank's tip node, and
# `model.slider(coupler, B, axis=(1, 0))` keeps the coupler's end node B on the x-axis. Both are
# rheonomic (their rows change with the frames' motion); the Maggi reducer eliminates them
# with their A-dot and A-ddot terms.
#
# The motor starts from rest: the speed ramps to OMEGA = 600 rpm over T_RAMP with the profile
# of Kane, Ryan & Banerjee (zero speed, zero acceleration at both ends), then stays constant
# for one full revolution and a bit. We record the joint reactions (the force the crank's pin
# exerts on the coupler, and the ground's force on the slider, global components), the
# coupler's mid-span transverse deflection (in its frame), and check:
# 1. the slider pushes only normal to its axis;
# 2. the Maggi solution equals the Lagrange-multiplier one (`constraints="multipliers"`) up
#    to the time discretization (both approach the same DAE solution as dt^2);
# 3. the reactions are those of the rigid slider-crank (coupler mass times the acceleration of
#    its centre of mass, the slider's normal force from the moment balance), computed here
#    independently from the rigid kinematics: the links are stiff (the coupler's first bending
#    mode is far above the crank's speed), so the elastic correction is a few per cent.
#
# Run: `mpirun -n 2 python demos/elastic_linkage.py`. The history goes to
# `out/elastic_linkage.csv` as it is produced (the fields for ParaView to
# `out/elastic_linkage_*.bp`, or `*.xdmf` on DOLFINx 0.5), the plot to `out/elastic_linkage.png`.

# +
import math
import os
import time

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

comm = MPI.COMM_WORLD
R_CRANK, L_COUPLER, SIDE = 0.1, 0.3, 0.01         # m
E, NU, RHO = 70e9, 0.3, 2700.0                    # aluminium
OMEGA = 600 * 2 * np.pi / 60                      # rad/s (600 rpm)
T_RAMP = 0.05                                     # s, spin-up time
QUICK = os.environ.get("MBS_DEMO_QUICK") == "1"  # the test-suite runs a short version
T_END = 0.006 if QUICK else T_RAMP + 2 * np.pi / OMEGA * 1.05
DT = 1e-4 if QUICK else 5e-5  # s: 90 steps per period of the first elastic mode (224 Hz)
CELLS = (8, 24)                                   # along crank, coupler (2 across each)


def say(*a):
    if comm.rank == 0:
        print(*a, flush=True)


def theta(t):
    """Crank angle: Kane-Ryan-Banerjee spin-up to OMEGA over T_RAMP, then constant speed.
    Returns (angle, speed, acceleration).

    The ramp's formula is kept for t < 0 (it is even in t) rather than a zero angle: the
    frames differentiate theta numerically with stencils that reach before t = 0, and the
    error check of `frames.Prescribed` rejects the one-sided kink of a zero extension there
    (at t = 0 the derivatives vanish, and so does its error floor)."""
    W, T = OMEGA, T_RAMP
    if t >= T:
        return W * T / 2 + W * (t - T), W, 0.0
    s = 2 * np.pi / T
    return ((W / T) * (t * t / 2 + (math.cos(s * t) - 1) / (s * s)),
            (W / T) * (t - math.sin(s * t) / s), (W / T) * (1 - math.cos(s * t)))


r, l = R_CRANK, L_COUPLER
th = lambda t: theta(t)[0]                                      # noqa: E731
tip = lambda t: np.array([r * np.cos(th(t)), r * np.sin(th(t))])  # noqa: E731
phi = lambda t: math.asin(-r * math.sin(th(t)) / l)               # noqa: E731


def strip(length, n):
    return dmesh.create_rectangle(comm, [np.array([0.0, -SIDE / 2]), np.array([length, SIDE / 2])],
                                  [n, 2], dmesh.CellType.quadrilateral)


def linkage():
    mat = mbs.materials.PlaneStress(E=E, nu=NU, density=RHO, thickness=SIDE)
    # time_scale: the frames' derivatives are taken by extrapolated differences over steps of
    # a tenth of it; the motion changes over 1/OMEGA = 16 ms
    ts = 0.2 / OMEGA
    crank = mbs.Body(strip(r, CELLS[0]), mat, mbs.frames.Planar(theta=th, time_scale=ts),
                     degree=2, name="crank")
    coupler = mbs.Body(strip(l, CELLS[1]), mat,
                       mbs.frames.Planar(theta=phi, origin=tip, time_scale=ts),
                       degree=2, name="coupler")
    model = mbs.Model([crank, coupler])
    model.clamp(crank, lambda x: np.isclose(x[0], 0.0), name="motor")
    pin = model.pin(crank, coupler, (r, 0.0), name="pin")
    slider = model.slider(coupler, (r + l, 0.0), axis=(1, 0), name="slider")
    return model, crank, coupler, pin, slider


model, crank, coupler, pin, slider = linkage()
w = model.natural_frequencies(t=0.0, n=3)
say(f"dofs: {model.space.n_global} full, {model.reducer.n_reduced} independent; lowest "
    f"natural frequencies at rest: {', '.join(f'{x / 2 / np.pi:.0f}' for x in w)} Hz "
    f"(crank speed {OMEGA / 2 / np.pi:.0f} Hz)")
# -

# Integrate with generalized-alpha (PETSc TSALPHA2, no numerical damping) in Maggi's reduced
# coordinates, recording the joint reactions and three probes on the coupler's centre line
# (its ends and middle node; displacement in the coupler's frame). The same model is then
# integrated with Lagrange multipliers for check 2, and in the full run both again with twice
# the step, to see the two approach each other as dt^2.

# +
os.makedirs("out", exist_ok=True) if comm.rank == 0 else None
PROBES = [(coupler, (0.0, 0.0)), (coupler, (l / 2, 0.0)), (coupler, (l, 0.0))]


def run(constraints, dt, output=None):
    t0 = time.perf_counter()
    r = model.integrate(t_end=T_END, dt=dt, constraints=constraints, probes=PROBES,
                        reactions=[pin, slider], output=output, output_every=20)
    wall = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    say(f"{constraints:12s} {r.steps} steps of {dt:g} s in {wall:6.1f} s")
    return r


res = run("maggi", DT, output="out/elastic_linkage")
t = res.times
Fp, Fs = res.reactions["pin"], res.reactions["slider"]
u = res.probes[:, :, 1]   # transverse (coupler-frame y) displacement of the three probes
defl = u[:, 1] - 0.5 * (u[:, 0] + u[:, 2])   # mid-span deflection from the chord
ang = np.array([th(x) for x in t])
say(f"peak |pin reaction| = {np.linalg.norm(Fp, axis=1).max():.3f} N, peak |slider normal "
    f"force| = {np.abs(Fs[:, 1]).max():.3f} N, peak mid-span deflection = "
    f"{np.abs(defl).max() * 1e6:.2f} um (crank tip: {np.abs(u[:, 0]).max() * 1e6:.2f} um)")
# -

# ## Check 1: a slider transmits no force along its axis

# +
ax_ratio = np.abs(Fs[:, 0]).max() / np.abs(Fs[:, 1]).max()
say(f"check 1: max |slider force along the axis| / max |normal force| = {ax_ratio:.2e}")
assert ax_ratio < 1e-9
# -

# ## Check 2: Maggi's reduced coordinates and Lagrange multipliers agree
#
# The two are different discretizations of one DAE: the multipliers impose B(t) Delta = c(t)
# at each step, the reducer eliminates the rheonomic rows with their time derivatives. They
# differ by O(dt^2). The displacements agree closely; the reactions less so: the reducer's are
# recovered from the end-of-step state through the equations of motion (M Delta'' + ... - Q),
# which carries the error of the elastic accelerations, while the multipliers are unknowns of
# the scheme. Measured here, the reactions differ by about 2.4 (w1 dt)^2 of the peak joint
# force (w1: the lowest natural frequency; 1.2 % at dt = 5e-5 s, 4.7 % at 1e-4 s), and the
# multipliers' are the closer to the converged values (with `spectral_radius=0`, which
# enforces the equations at the end of each step, the two reactions coincide to 1e-6, at the
# price of numerical damping). Tolerances: 4 (w1 dt)^2 for the reactions, 1e-4 of the peak
# displacement for the probes.


# +
def differences(a, b):
    """Max differences of the probes (relative to the peak displacement) and of the
    reactions (relative to the peak pin force)."""
    scale = np.linalg.norm(a.reactions["pin"], axis=1).max()
    return (np.abs(a.probes - b.probes).max() / np.abs(a.probes).max(),
            np.abs(a.reactions["pin"] - b.reactions["pin"]).max() / scale,
            np.abs(a.reactions["slider"] - b.reactions["slider"]).max() / scale)


mul = run("multipliers", DT)
d = differences(res, mul)
tol = 4 * (w[0] * DT) ** 2
say(f"check 2: Maggi vs multipliers at dt = {DT:g} s, max difference: displacements "
    f"{d[0]:.2e}, pin reaction {d[1]:.2e}, slider force {d[2]:.2e} (tolerance {tol:.1e})")
assert d[0] < 1e-4 and max(d[1:]) < tol
if not QUICK:  # the same at twice the step: the differences grow as dt^2
    d2 = differences(run("maggi", 2 * DT), run("multipliers", 2 * DT))
    ratio = [x / y for x, y in zip(d2, d)]
    say(f"         at dt = {2 * DT:g} s: {d2[0]:.2e}, {d2[1]:.2e}, {d2[2]:.2e}: ratios "
        f"{', '.join(f'{x:.2f}' for x in ratio)} (dt^2: 4)")
    assert min(ratio) > 3.0
# -

# ## Check 3: the rigid slider-crank
#
# For rigid links, with theta and its derivatives known, phi' and phi'' follow from
# l sin(phi) = -r sin(theta); the coupler's centre of mass G = P + (l/2)(cos phi, sin phi) has
# the acceleration a_G. The forces on the coupler are the pin force F_P (at P) and the slider's
# normal force N e_y (at B): F_P + N e_y = m a_G, and the moments about P:
# l cos(phi) N = I_G phi'' + (l/2) m (cos(phi) a_Gy - sin(phi) a_Gx), I_G = m (l^2 + h^2) / 12.

# +
def rigid(t):
    a, ad, add = theta(t)
    p = math.asin(-r * math.sin(a) / l)
    pd = -r * math.cos(a) * ad / (l * math.cos(p))
    pdd = (r * math.sin(a) * ad ** 2 - r * math.cos(a) * add + l * math.sin(p) * pd ** 2) / (
        l * math.cos(p))
    aP = r * np.array([-math.sin(a) * add - math.cos(a) * ad ** 2,
                       math.cos(a) * add - math.sin(a) * ad ** 2])
    aG = aP + l / 2 * np.array([-math.sin(p) * pdd - math.cos(p) * pd ** 2,
                                math.cos(p) * pdd - math.sin(p) * pd ** 2])
    m = RHO * SIDE * SIDE * l
    IG = m * (l * l + SIDE * SIDE) / 12
    N = (IG * pdd + l / 2 * m * (math.cos(p) * aG[1] - math.sin(p) * aG[0])) / (l * math.cos(p))
    return m * aG - np.array([0.0, N]), N


rig = [rigid(x) for x in t]
Fp_r = np.array([x[0] for x in rig])
N_r = np.array([x[1] for x in rig])
# the elastic links lag behind the rigid motion while the load builds up from rest over a
# time comparable to their first period T1 (the first 2 ms of the spin-up: the reactions are
# tiny there, but their relative deviation large): compare from t = T1 on
T1 = 2 * np.pi / w[0]
k = t >= T1
scale = np.linalg.norm(Fp_r[k], axis=1).max()
dev_p = np.linalg.norm(Fp[k] - Fp_r[k], axis=1).max() / scale
dev_n = np.abs(Fs[k, 1] - N_r[k]).max() / np.abs(N_r[k]).max()
say(f"check 3: rigid slider-crank (t >= {T1 * 1e3:.1f} ms): peak |F_P| {scale:.3f} N (elastic "
    f"model {np.linalg.norm(Fp[k], axis=1).max():.3f} N), peak |N| {np.abs(N_r[k]).max():.3f} N "
    f"({np.abs(Fs[k, 1]).max():.3f} N); max deviation relative to the peak: pin "
    f"{dev_p:.2%}, slider {dev_n:.2%}")
assert dev_p < 0.10 and dev_n < 0.10
# -

# A plot of the reactions and the deflection over the crank angle (rank 0).

if comm.rank == 0 and not QUICK:
    plt = mbs.io.pyplot()
    if plt is not None:
        deg = np.degrees(ang)
        fig, axes = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
        axes[0].plot(deg, Fp[:, 0], label="pin $F_x$")
        axes[0].plot(deg, Fp[:, 1], label="pin $F_y$")
        axes[0].plot(deg, Fs[:, 1], label="slider normal force $N$")
        axes[0].plot(deg, Fp_r[:, 0], "k:", lw=1, label="rigid slider-crank")
        axes[0].plot(deg, Fp_r[:, 1], "k:", lw=1)
        axes[0].plot(deg, N_r, "k:", lw=1)
        axes[0].set_ylabel("force on the coupler [N]")
        axes[0].legend(fontsize=8)
        axes[1].plot(deg, defl * 1e6, label="from the chord")
        axes[1].plot(deg, u[:, 1] * 1e6, "--", label="coupler-frame $u_y$")
        axes[1].set_ylabel("coupler mid-span deflection [µm]")
        axes[1].set_xlabel("crank angle [deg]")
        axes[1].legend(fontsize=8)
        for a in axes:
            a.axvline(np.degrees(th(T_RAMP)), color="grey", lw=0.5)
        axes[0].text(np.degrees(th(T_RAMP)), axes[0].get_ylim()[1], " spin-up ends",
                     va="top", fontsize=8, color="grey")
        axes[0].set_title(f"elastic slider-crank, {OMEGA * 30 / np.pi:.0f} rpm: forces on the "
                          "coupler (global components)", fontsize=10)
        fig.tight_layout()
        fig.savefig("out/elastic_linkage.png", dpi=120)
        print("plot: out/elastic_linkage.png")
        mbs.plot.show("out/elastic_linkage.png")
