# # The spin-up beam of Kane, Ryan & Banerjee (1987): why a rotating beam needs stiffening
#
# A cantilever beam, L = 10 m, EI = 14 000 N m², ρA = 1.2 kg/m, EA = 2.8·10⁷ N, is clamped at
# its root to a hub that spins up about z (through the root) from rest:
#
#   Ω(t) = (Ω_s/T_s) (t − (T_s/2π) sin(2πt/T_s))  for t < T_s,   Ω_s afterwards,
#
# with T_s = 15 s and Ω_s = 4 or 6 rad/s (`frames.SpinUp`). The angular acceleration
# Ω̇ = (Ω_s/T_s)(1 − cos 2πt/T_s) loads the beam with the Euler force −ρA Ω̇ x in the plane of
# rotation, so the tip lags behind the hub: the reported quantity is the tip deflection normal
# to the beam in the rotating frame (docs/theory.md section 7).
#
# The beam bends in the plane of rotation (chordwise), where the centrifugal field acts twice:
# it softens (the −ρA Ω² w of the rotating frame) and it stretches the beam, whose tension
# N = ρA Ω² (L² − x²)/2 stiffens it (docs/theory.md section 3). A linear floating-frame model has
# the softening but not the tension; its first chordwise frequency follows ω² = ω₁² − Ω², with
# ω₁ = 3.516 √(EI/ρAL⁴) = 3.80 rad/s (period 1.65 s). Both Ω_s exceed ω₁, so that model
# diverges, with growth rate √(Ω_s² − ω₁²) once the spin is steady: 1.26 /s at Ω_s = 4,
# 4.65 /s at Ω_s = 6. With the prestress of the centrifugal tension (`stiffening="prestress"`)
# the frequency rises instead, ω² ≈ ω₁² + (K_s − 1) Ω², K_s ≈ 1.19, and the deflection stays
# bounded: after the spin-up only a small free vibration remains.
# The St Venant–Kirchhoff model (`stiffening="nonlinear"`, Newton at every step) gets the same
# tension from the strain's nonlinear terms, without a prestress solve; for these small strains
# the two agree.
#
# The beam is modelled as a 2D plane-stress strip (P2 quadrilaterals, one cell across) whose
# rectangular section b × h reproduces the three reference stiffnesses and the mass:
# EA/EI = 12/h² gives h = √(12 EI/EA) = 7.75 cm; with a square section (b = h), E = EA/(bh)
# = 4.67 GPa and ρ = ρA/(bh) = 200 kg/m³. (Plane stress with thickness b gives exactly
# EA = Ebh and EI = Ebh³/12; Poisson's ratio 0.3 only adds shear flexibility of order
# (h/L)² ≈ 6·10⁻⁵.)
#
# Time step: the response is slow (the first period is 1.65 s, the load varies over 15 s);
# dt = 0.01 s puts 165 steps in the first period, where the generalized-alpha scheme's period
# error is ~ (ω₁ dt)²/12 ≈ 10⁻⁴. The axial modes (the first at 760 rad/s) and the mesh's high
# modes are far above what dt resolves; generalized-alpha with spectral radius 0.8 damps them.
#
# Run: `mpirun -n 2 python demos/spin_up_beam.py` (a few minutes serially). The tip histories
# are written to `out/spin_up_beam_<Omega_s>_<prestress|nonlinear|linear>.csv` as they are produced, and a
# plot to `out/spin_up_beam.png`; the stiffened beam's spin-up at Ω_s = 4 rad/s is recorded
# and drawn as `out/spin_up_beam.gif` (with PyVista). `MBS_DEMO_QUICK=1` runs a coarser, 12 s
# version.

# +
import os
import time

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

comm = MPI.COMM_WORLD
L, EI, RHO_A, EA = 10.0, 14000.0, 1.2, 2.8e7
T_S = 15.0
H = np.sqrt(12.0 * EI / EA)      # section height (in the plane of rotation)
B = H                            # thickness (out of plane)
E, RHO = EA / (B * H), RHO_A / (B * H)
W1 = 3.516 * np.sqrt(EI / (RHO_A * L**4))   # first bending frequency at rest (rad/s)
QUICK = os.environ.get("MBS_DEMO_QUICK") == "1"  # the test-suite runs a short version
T_END = 12.0 if QUICK else 30.0
DT = 0.04 if QUICK else 0.01
NX = 40 if QUICK else 100
SPINS = (4.0, 6.0)


def say(*a):
    if comm.rank == 0:
        print(*a, flush=True)


def beam(final_rate, stiffening):
    mesh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                  [NX, 1], dmesh.CellType.quadrilateral)
    frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=final_rate, ramp_time=T_S)
    material = mbs.materials.PlaneStress(E=E, nu=0.3, density=RHO, thickness=B)
    body = mbs.Body(mesh, material, frame, degree=2, stiffening=stiffening, name="beam")
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    return model


say(f"section {B * 100:.2f} x {H * 100:.2f} cm, E = {E / 1e9:.3f} GPa, rho = {RHO:.1f} kg/m^3; "
    f"w1 = {W1:.4f} rad/s")

# -
# Four runs: Ω_s = 4 and 6 rad/s, with and without stiffening, from rest. The probe is the
# mid-node of the tip edge, (L, 0); its y-displacement is the deflection normal to the beam.

# +
os.makedirs("out", exist_ok=True) if comm.rank == 0 else None
results, walls, rec_beam = {}, {}, None
for ws in SPINS:
    for stiff in ("prestress", "nonlinear", None):
        model = beam(ws, stiff)
        if stiff is None and ws == SPINS[0]:
            w1_fe = model.natural_frequencies(t=0.0, n=1)[0]
            say(f"FE first bending frequency at rest: {w1_fe:.4f} rad/s "
                f"(Euler-Bernoulli {W1:.4f})")
            assert abs(w1_fe / W1 - 1) < 2e-3
        tag = f"{ws:g}_{stiff or 'linear'}"
        # the stiffened spin-up at 4 rad/s kept every 0.2 s, for the animation at the end
        rec = mbs.plot.Recorder(model, every=int(round(0.2 / DT))) \
            if (ws, stiff) == (SPINS[0], "prestress") else None
        t0 = time.perf_counter()
        r = model.integrate(t_end=T_END, dt=DT, probes=[(L, 0.0)], spectral_radius=0.8,
                            output=f"out/spin_up_beam_{tag}", output_every=50, callback=rec)
        walls[(ws, stiff)] = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        results[(ws, stiff)] = r
        if rec is not None:
            rec_beam = rec
        w = r.probes[:, 0, 1]
        i = int(np.argmax(np.abs(w)))
        say(f"Omega_s = {ws:g} rad/s, {stiff or 'no'} stiffening: "
            f"{r.steps} steps in {walls[(ws, stiff)]:.1f} s; max |w_tip| = {abs(w[i]):.4g} m "
            f"at t = {r.times[i]:.2f} s")

# -
# Self-checks.
#
# With stiffening, the deflection is bounded by the quasi-static tip deflection of the beam at
# rest under the peak Euler load, q(x) = ρA Ω̇_max x with Ω̇_max = 2Ω_s/T_s:
# w_qs = 11 ρA Ω̇_max L⁵/(120 EI) (0.42 m at Ω_s = 4, 0.63 m at Ω_s = 6), up to 10 %: the net
# chordwise stiffness only rises with the spin (K_s − 1 > 0), and the 15 s ramp lasts about
# nine first-mode periods, so the dynamic overshoot over the quasi-static response is small
# (measured: 0.95 w_qs and 0.91 w_qs). Once the spin is steady (t > T_s, no load, a stable
# undamped system) the free vibration left must not grow.
#
# Without stiffening the deflection grows exponentially once Ω > ω₁; in the full run its
# growth rate in the steady spin must be √(Ω_s² − ω₁²) (2 %).

# +
for ws in SPINS:
    r = results[(ws, "prestress")]
    t, w = r.times, r.probes[:, 0, 1]
    w_qs = 11.0 * RHO_A * (2.0 * ws / T_S) * L**5 / (120.0 * EI)
    say(f"Omega_s = {ws:g}: stiffened max |w| = {np.abs(w).max():.4f} m = "
        f"{np.abs(w).max() / w_qs:.3f} w_qs")
    assert np.abs(w).max() < 1.1 * w_qs
    nl = results[(ws, "nonlinear")].probes[:, 0, 1]
    dev = np.abs(nl - w).max() / np.abs(w).max()
    say(f"  nonlinear strain against prestress: histories differ by {dev:.1e} of the peak")
    assert dev < 0.01
    if t[-1] > T_S + 10.0:
        first = np.abs(w[(t > T_S) & (t < T_S + 5.0)]).max()
        last = np.abs(w[t > t[-1] - 5.0]).max()
        say(f"  free vibration after the spin-up: {first * 1e3:.3f} mm, at the end "
            f"{last * 1e3:.3f} mm")
        assert last < 1.05 * first and first < 0.05 * np.abs(w).max()
    lin = results[(ws, None)].probes[:, 0, 1]
    if ws > W1 and t[-1] > T_S + 5.0:  # steady spin: exponential growth
        m = t > T_S + 3.0
        rate = np.polyfit(t[m], np.log(np.abs(lin[m])), 1)[0]
        exact = np.sqrt(ws**2 - W1**2)
        say(f"  without stiffening: |w| = {abs(lin[-1]):.3e} m at t = {t[-1]:g} s, growth "
            f"rate {rate:.4f} /s (sqrt(Omega_s^2 - w1^2) = {exact:.4f} /s)")
        assert abs(rate / exact - 1) < 0.02
    else:
        say(f"  without stiffening: |w| = {abs(lin[-1]):.3e} m at t = {t[-1]:g} s")
# the divergence of the linear model at Omega_s = 6 shows in the quick run as well: the spin
# passes w1 at t = 9.3 s
lin6, stiff6 = (np.abs(results[(6.0, s)].probes[:, 0, 1]) for s in (None, "prestress"))
assert lin6[-1] > 1e3 * stiff6.max()
assert np.all(np.diff(lin6[results[(6.0, None)].times > 10.0]) > 0)

# -
# The plot (rank 0): the stiffened responses and the linear ones until they leave the axes, and
# |w| on a logarithmic scale.

if comm.rank == 0 and not QUICK:
    plt = mbs.io.pyplot()
    if plt is not None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for ws, color in zip(SPINS, ("C0", "C3")):
            for stiff, style in (("prestress", "-"), ("nonlinear", ":"), (None, "--")):
                r = results[(ws, stiff)]
                label = f"Ω_s = {ws:g} rad/s, {stiff or 'no'} stiffening"
                axes[0].plot(r.times, r.probes[:, 0, 1], style, color=color, label=label)
                axes[1].semilogy(r.times, np.abs(r.probes[:, 0, 1]) + 1e-12, style,
                                 color=color, label=label)
        axes[0].set_ylim(-1.0, 0.5)
        axes[0].set_ylabel("tip deflection normal to the beam [m]")
        axes[1].set_ylim(1e-3, None)
        axes[1].set_ylabel("|tip deflection| [m]")
        for ax in axes:
            ax.axvline(T_S, color="0.7", lw=0.8)
            ax.set_xlabel("t [s]")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig("out/spin_up_beam.png", dpi=120)
        print("plot: out/spin_up_beam.png")
        mbs.plot.show("out/spin_up_beam.png")

# ## The spin-up, seen from the ground
#
# The stiffened beam at Ω_s = 4 rad/s during the spin-up and the steady spin after it, drawn
# where it is in the global frame (the hub at the origin turns about z) every 0.2 s, colored
# by the deflection's magnitude. The deflection is drawn 3 times its size: the lag of the tip
# behind the hub (0.4 m at most, on the 10 m beam) grows with the angular acceleration, is
# largest in the middle of the ramp, and leaves a small free vibration once the spin is steady.

# +
try:
    mbs.plot.animate(rec_beam, "out/spin_up_beam.gif", scale=("factor", 3.0), view="xy",
                     title="Kane-Ryan-Banerjee beam, stiffened, spin-up to 4 rad/s",
                     window_size=(520, 520), fps=15, edges=4)
    mbs.plot.show("out/spin_up_beam.gif")
except ImportError as err:  # PyVista is optional
    say(f"no animation: {err}")
# -
