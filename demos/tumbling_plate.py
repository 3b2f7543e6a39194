# # A flexible plate tumbling in space: the intermediate-axis flip
#
# A free body turns about its axis of largest or smallest moment of inertia steadily, but not
# about the intermediate one: a small perturbation grows and the body flips over, again and
# again (the "tennis racket" or Dzhanibekov effect). Here the body is an elastic plate,
# 0.6 m x 0.3 m x 0.02 m of aluminium, in free flight (`mbs.frames.Free`: its frame's position
# and orientation are unknowns, six of them), set spinning at 3 rad/s about its intermediate
# principal axis (y) with a perturbation of 1 %. Its frame follows the plate's central region
# (`model.attach`: the elastic reference condition); the plate's corners vibrate as it tumbles.
#
# Checks (docs/theory.md section 8): with no load, the linear momentum stays constant (to
# round-off: it is a linear function of the unknowns), the angular momentum about the origin
# and the energy drift at the scheme's order; the body-axes angular velocity follows Euler's
# torque-free motion of the plate's inertia (Jacobi's elliptic functions, the rigid body), the
# flip included, as long as the plate is stiff against its spin.
#
# Run: `mpirun -n 2 python demos/tumbling_plate.py`; `MBS_DEMO_QUICK=1` runs 4 s.

# +
import os

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

quick = os.environ.get("MBS_DEMO_QUICK") == "1"
comm = MPI.COMM_WORLD
os.makedirs("out", exist_ok=True)

A, B, T = 0.6, 0.3, 0.02
RHO, E, NU = 2700.0, 70e9, 0.33
msh = dmesh.create_box(comm, [np.array([-A / 2, -B / 2, -T / 2]), np.array([A / 2, B / 2, T / 2])],
                       [6, 3, 1] if quick else [12, 6, 1], dmesh.CellType.hexahedron)
m = RHO * A * B * T
I = m / 12 * np.array([B**2 + T**2, A**2 + T**2, A**2 + B**2])   # x: smallest, y: middle
w0 = np.array([0.03, 3.0, 0.03])
sat = mbs.frames.Free(angular_velocity=w0, name="plate_frame")
plate = mbs.Body(msh, mbs.materials.LinearElastic(E=E, nu=NU, density=RHO), sat, degree=1,
                 name="plate")
model = mbs.Model([plate])
model.attach(plate, lambda x: (np.abs(x[0]) < 0.11) & (np.abs(x[1]) < 0.06))
# -

# The run: generalized-alpha at spectral radius 1 (the implicit midpoint rule), 200 steps a
# second.

# +
t_end = 4.0 if quick else 12.0
r = model.integrate(t_end=t_end, dt=0.005, output="out/tumbling_plate", progress=not quick)
om = r.frames["plate_frame"].omega
P, H, En = r.momentum["linear"], r.momentum["angular"], r.energy["total"]
flips = int(np.sum(np.diff(np.sign(om[:, 1])) != 0))
if comm.rank == 0:
    print(f"principal moments {I.round(5).tolist()} kg m^2; omega_y changed sign {flips} times")
    print(f"momentum drift {np.abs(P - P[0]).max():.1e} kg m/s; angular momentum drift "
          f"{np.abs(H - H[0]).max() / np.linalg.norm(H[0]):.1e} (relative); energy drift "
          f"{np.ptp(En) / En[0]:.1e} (relative)")
assert flips >= 1
assert np.abs(H - H[0]).max() < 1e-3 * np.linalg.norm(H[0])
# -

# Against the rigid plate: Euler's equations of the same principal moments, by Jacobi's
# elliptic functions (scipy), with the same start.

# +
from scipy.special import ellipj, ellipkinc  # noqa: E402


def euler_omega(I, w0, t):
    I1, I2, I3 = I
    E0, M2 = 0.5 * float(I @ (w0 * w0)), float(np.sum((I * w0) ** 2))
    A1 = np.sqrt((2 * E0 * I3 - M2) / (I1 * (I3 - I1)))
    A2 = np.sqrt((2 * E0 * I3 - M2) / (I2 * (I3 - I2)))
    A3 = np.sqrt((M2 - 2 * E0 * I1) / (I3 * (I3 - I1)))
    rate = np.sqrt((I3 - I2) * (M2 - 2 * E0 * I1) / (I1 * I2 * I3))
    k2 = (I2 - I1) * (2 * E0 * I3 - M2) / ((I3 - I2) * (M2 - 2 * E0 * I1))
    tau = rate * t + ellipkinc(np.arctan2(w0[1] / A2, w0[0] / A1), k2)
    sn, cn, dn, _ = ellipj(tau, k2)
    return np.column_stack([A1 * cn, A2 * sn, A3 * dn])


ref = euler_omega(I, w0, r.times)
dev = np.abs(om - ref).max() / np.linalg.norm(w0)
if comm.rank == 0:
    print(f"largest difference from the rigid plate's omega: {dev:.1e} of |omega0|")
assert dev < 0.02, dev
if comm.rank == 0:
    plt = mbs.io.pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for k, c in enumerate("xyz"):
            ax.plot(r.times, om[:, k], label=f"omega_{c}")
            ax.plot(r.times, ref[:, k], "k:", lw=0.8)
        ax.set_xlabel("t (s)")
        ax.set_ylabel("body-axes angular velocity (rad/s)")
        ax.legend()
        fig.tight_layout()
        fig.savefig("out/tumbling_plate.png", dpi=120)
        mbs.plot.show("out/tumbling_plate.png")
# -
