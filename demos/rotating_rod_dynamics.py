# # Seed 003's rotating rod in time: Lagrange's and Hamilton's equations side by side
#
# The rod of `rotating_rod.py` (L = 1 m, 1 kg, A = 0.2 cm², E = 210 GPa) spins at
# 15 rad/s about z through its root; an axial end force F(t) = F0 sin(2 pi t / T) with period
# T = pi/100 s acts at its tip (seed 003; F0 = 1 kN is our choice, the paper gives none). Ten
# linear elements along the rod, as in the paper, whose nodes it numbers 1 to 11 from the axis;
# the axial displacement of its nodes 3, 7 and 10 (x = 0.2, 0.6, 0.9 m, the seed's Figs. 2-3)
# and of the tip (node 11, x = 1 m) is recorded, without and with Rayleigh damping (2 % of
# critical at the first mode, stiffness-proportional).
#
# First the rod's axial frequencies: those of this mesh of ten two-node elements are known
# exactly (the discrete eigenproblem has a closed form), so the assembled model must give them
# to round-off; the continuum's are higher by the discretisation error of linear elements.
#
# The same model is integrated in the three forms `dolfinx_mbs` offers:
# - second-order (Lagrange): generalized-alpha (PETSc TSALPHA2);
# - first-order (u, v): the conversion of Lagrange's equations (Crank–Nicolson, TSTHETA);
# - Hamilton (u, p): generalized momenta, implicit midpoint (TSTHETA, no endpoint).
# (a model this small steps them in dense form, `stepper="auto"`: the same steps as PETSc TS);
# then exactly, by matrix exponentials (`stepper="exact"`).
#
# Run: `mpirun -n 2 python demos/rotating_rod_dynamics.py`; options such as
# `-mbs_ts_type bdf` go to PETSc. The histories are written to `out/rod_dynamics_*.csv` as they are
# produced, and a plot to `out/rod_dynamics.png`.

# +
import os
import time

import numpy as np
import scipy.linalg
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

comm = MPI.COMM_WORLD
L, A, E, mass = 1.0, 0.2e-4, 210e9, 1.0
rho, side = mass / (A * L), np.sqrt(A)
OMEGA, F0, PERIOD = 15.0, 1000.0, np.pi / 100
QUICK = os.environ.get("MBS_DEMO_QUICK") == "1"  # the test-suite runs a short version
T_END = 0.004 if QUICK else 0.1
DT = 1e-5
NODES = (0.2, 0.6, 0.9, 1.0)  # x of the seed's nodes 3, 7, 10 and 11 (the tip)
SEED_NODES = (3, 7, 10, 11)
N_EL = 10
w1 = np.pi / (2 * L) * np.sqrt(E / rho)


def say(*a):
    if comm.rank == 0:
        print(*a, flush=True)


def rod(damping):
    mesh = dmesh.create_box(comm, [np.zeros(3), np.array([L, side, side])], [N_EL, 1, 1],
                            dmesh.CellType.hexahedron)
    ray = (0.0, 2 * 0.02 / w1) if damping else None
    material = mbs.materials.LinearElastic(E=E, nu=0.0, density=rho, rayleigh=ray)
    body = mbs.Body(mesh, material, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=OMEGA))
    body.add_traction(lambda t: (F0 / A * np.sin(2 * np.pi * t / PERIOD), 0.0, 0.0),
                      where=lambda x: np.isclose(x[0], L))
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=[1, 2])
    return model


# -
# The frequencies of the ten-element rod. With nu = 0 and the transverse motion clamped, a
# trilinear hexahedron moving axially is the two-node rod element: stiffness EA/h [1 -1; -1 1],
# consistent mass rho A h/6 [2 1; 1 2], and the spin subtracts Omega^2 M. For a rod clamped at
# one end and free at the other, the mode u_j = sin(j theta) satisfies every nodal equation
# when n theta = (2k - 1) pi/2, so
#
# $\omega_k^2 = \frac{6 E}{\rho h^2}\,\frac{1 - \cos\theta_k}{2 + \cos\theta_k} - \Omega^2,
# \qquad \theta_k = \frac{(2k-1)\pi}{2n}$,
#
# checked here against scipy's eigensolver on the assembled 1D matrices, and the continuum's
# $\omega_k^2 = (E/\rho)((2k-1)\pi/2L)^2 - \Omega^2$ (docs/theory.md section 6).

# +
h = L / N_EL
theta = (2 * np.arange(1, 4) - 1) * np.pi / (2 * N_EL)
w_discrete = np.sqrt(6 * E / (rho * h**2) * (1 - np.cos(theta)) / (2 + np.cos(theta))
                     - OMEGA**2)
k1 = E * A / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
m1 = rho * A * h / 6 * np.array([[2.0, 1.0], [1.0, 2.0]])
K1, M1 = np.zeros((N_EL + 1, N_EL + 1)), np.zeros((N_EL + 1, N_EL + 1))
for e in range(N_EL):
    K1[e:e + 2, e:e + 2] += k1
    M1[e:e + 2, e:e + 2] += m1
lam = scipy.linalg.eigh(K1[1:, 1:] - OMEGA**2 * M1[1:, 1:], M1[1:, 1:], eigvals_only=True)
k = (2 * np.arange(1, 4) - 1) * np.pi / (2 * L)
w_continuum = np.sqrt(E / rho * k**2 - OMEGA**2)
w_fe = rod(False).natural_frequencies(n=3)
say(f"axial frequencies at Omega = {OMEGA} rad/s, {N_EL} two-node elements (rad/s):")
for i in range(3):
    say(f"  w{i + 1}: model {w_fe[i]:12.6f}   exact discrete {w_discrete[i]:12.6f} "
        f"(rel. diff. {abs(w_fe[i] / w_discrete[i] - 1):.1e})   continuum {w_continuum[i]:10.4f} "
        f"(rel. diff. {abs(w_fe[i] / w_continuum[i] - 1):.1e})")
assert np.allclose(np.sqrt(lam[:3]), w_discrete, rtol=1e-12, atol=0)
assert np.allclose(w_fe, w_discrete, rtol=1e-9, atol=0)
assert np.all(w_fe > w_continuum) and abs(w_fe[0] / w_continuum[0] - 1) < 2e-3

# -
# Each run starts from the steady spinning state (the centrifugal elongation) and records the
# nodes' axial displacement.

# +
os.makedirs("out", exist_ok=True) if comm.rank == 0 else None
results = {}
for damping in (False, True):
    for form in mbs.integrate.FORMULATIONS:
        model = rod(damping)
        u0 = model.solve_static()
        t0 = time.perf_counter()
        tag = f"{form}{'_damped' if damping else ''}"
        r = model.integrate(t_end=T_END, dt=DT, formulation=form, u0=u0,
                            probes=[(x, 0.0, 0.0) for x in NODES],
                            output=f"out/rod_dynamics_{tag}", output_every=100)
        wall = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        results[(form, damping)] = r
        say(f"{tag:24s} {r.ts_type:7s} {r.steps} steps in {wall:6.2f} s; "
            f"tip u(T) = {r.probes[-1, -1, 0]:.6e} m")

# -
# The formulations integrate the same equations; they differ by their schemes only.

# +
for damping in (False, True):
    ref = results[("second-order", damping)].probes[:, :, 0]
    for form in ("first-order", "hamiltonian"):
        d = np.abs(results[(form, damping)].probes[:, :, 0] - ref).max() / np.abs(ref).max()
        say(f"max difference {form} vs second-order{' (damped)' if damping else ''}: {d:.2e}")
        assert d < 1e-3
# -
# The rod's frame state is constant in time and its loads are a constant (centrifugal) part and
# a sinusoid: `stepper="exact"` propagates it by matrix exponentials, with the load fitted on
# the sinusoid's frequency, so its steps carry no time-discretization error and dt is only the
# output step wanted (here 10 x the step above). The exact histories at two output steps agree
# to round-off; the three schemes above differ from them by their own errors, mostly the phase
# error of the highest axial modes (w dt = 0.17 for the third), which grows with the time
# simulated: about 3e-4 of the peak after the short run's 0.004 s, 3e-3 after 0.1 s.

# +
W_LOAD = 2 * np.pi / PERIOD
for damping in (False, True):
    model = rod(damping)
    u0 = [u.copy() for u in model.solve_static()]  # the bodies' own u: a run overwrites them
    runs = {}
    for dt_out in (DT, 10 * DT):
        t0 = time.perf_counter()
        runs[dt_out] = model.integrate(t_end=T_END, dt=dt_out, u0=u0, stepper="exact",
                                       load_frequencies=(W_LOAD,), load_degree=0,
                                       probes=[(x, 0.0, 0.0) for x in NODES])
        wall = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        say(f"exact{' (damped)' if damping else ''}, output every {dt_out:g} s: "
            f"{runs[dt_out].steps} steps in {wall:.3f} s")
    fine, coarse = runs[DT].probes[::10, :, 0], runs[10 * DT].probes[:, :, 0]
    d = np.abs(fine - coarse).max() / np.abs(fine).max()
    say(f"  exact at two output steps: max difference {d:.1e}")
    assert d < 1e-9
    for form in mbs.integrate.FORMULATIONS:
        e = np.abs(results[(form, damping)].probes[:, :, 0] - runs[DT].probes[:, :, 0]).max()
        e /= np.abs(runs[DT].probes[:, :, 0]).max()
        say(f"  {form} (dt = {DT:g}) vs exact: {e:.1e}")
        assert e < (1e-3 if QUICK else 5e-3)

# -

# A plot of the seed's three nodes and the tip (rank 0).

if comm.rank == 0 and not QUICK:
    plt = mbs.io.pyplot()
    if plt is not None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for ax, damping in zip(axes, (False, True)):
            for form, style in zip(mbs.integrate.FORMULATIONS, ("-", "--", ":")):
                r = results[(form, damping)]
                for j, (x, node) in enumerate(zip(NODES, SEED_NODES)):
                    first = j == 0 or form == "second-order"
                    ax.plot(r.times, r.probes[:, j, 0] * 1e6, style,
                            label=f"node {node} (x = {x} m), {form}" if first else None)
            ax.set_title("with Rayleigh damping" if damping else "undamped")
            ax.set_xlabel("t [s]")
        axes[0].set_ylabel("axial displacement [µm]")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig("out/rod_dynamics.png", dpi=120)
        print("plot: out/rod_dynamics.png")
        mbs.plot.show("out/rod_dynamics.png")
