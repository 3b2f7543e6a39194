# # A rotor spun up by its motor: the hub's speed is computed, not prescribed
#
# A hub (a rigid disk, `mbs.RigidBody`) carries two elastic blades and turns about z on a
# bearing: its angle θ is an unknown of the model (`mbs.frames.Hinge`), driven by a motor whose
# torque follows a motor curve, falling linearly from the stall torque τ₀ at rest to zero at
# the no-load speed Ω₀:
#
#     τ(Ω) = τ₀ (1 − Ω/Ω₀),
#
# minus a bearing friction c Ω. The blades (2D plane-stress strips, P2) are attached to the
# hub at their roots (`model.attach`, the elastic reference condition of the blades on the
# hub's frame) and bend under the Euler force of the spin-up, lagging behind the hub; their
# centrifugal tension stiffens them (`stiffening="prestress"`, following the computed speed).
#
# What the coupled model gives that a prescribed spin-up cannot: the speed is what the torque,
# the inertia and the blades' motion make of it. Without blades (a rigid rotor of inertia J)
# the speed would be Ω(t) = Ω_f (1 − exp(−t/τ_m)), Ω_f = τ₀/(τ₀/Ω₀ + c), τ_m = J/(τ₀/Ω₀ + c):
# the demo checks the computed speed against that closed form with the blades' inertia in J
# (the blades are stiff enough for it to hold to 1 % here), and reports how far the blade
# tips lag while the motor accelerates them, and the energy balance: the motor's work equals
# the kinetic and elastic energy gained plus what friction took.
#
# Run: `mpirun -n 2 python demos/motor_spin_up.py`; `MBS_DEMO_QUICK=1` for a short version.
# The frames' history and the energies go to `out/motor_spin_up.csv` as the run produces them,
# a plot to `out/motor_spin_up.png`.

# +
import math
import os

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

quick = os.environ.get("MBS_DEMO_QUICK") == "1"
comm = MPI.COMM_WORLD
os.makedirs("out", exist_ok=True)

# hub: radius 0.2 m, a disk of 20 kg; blades: 1.5 m steel-like strips, 0.1 m x 0.01 m
R_HUB, M_HUB = 0.2, 20.0
J_HUB = 0.5 * M_HUB * R_HUB**2
L, H, T = 1.5, 0.1, 0.01
E, NU, RHO = 70e9, 0.3, 2700.0
TAU0, OMEGA0, C_FRICTION = 60.0, 40.0, 0.05

hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
disk = mbs.RigidBody(mass=M_HUB, inertia=J_HUB, frame=hub, name="disk")
blades = []
for k, angle in enumerate((0.0, math.pi)):
    msh = dmesh.create_rectangle(comm, [np.array([R_HUB, -H / 2]), np.array([R_HUB + L, H / 2])],
                                 [12 if quick else 24, 1], dmesh.CellType.quadrilateral)
    if angle:  # the second blade on the other side: its mesh turned by pi about z
        msh.geometry.x[:, :2] *= -1.0
    blades.append(mbs.Body(msh, mbs.materials.PlaneStress(E=E, nu=NU, density=RHO, thickness=T),
                           hub, degree=2, stiffening="prestress", name=f"blade{k}"))
model = mbs.Model([disk] + blades)
for b in blades:
    model.attach(b, lambda x: np.isclose(np.abs(x[0]), R_HUB))
model.apply_torque(hub, lambda t, s: TAU0 * (1.0 - s.rate / OMEGA0) - C_FRICTION * s.rate,
                   name="motor")
# -

# The rotor's inertia about the axis: the disk and the two strips (about the axis,
# m (L^2/3 + L R + R^2 + H^2/12) each).

# +
m_blade = RHO * L * H * T
J = J_HUB + 2 * m_blade * (L**2 / 3 + L * R_HUB + R_HUB**2 + H**2 / 12)
damping = TAU0 / OMEGA0 + C_FRICTION
omega_f, tau_m = TAU0 / damping, J / damping
t_end = 2.0 if quick else 3.0 * tau_m
r = model.integrate(t_end=t_end, dt=t_end / (100 if quick else 400), output="out/motor_spin_up",
                    probes=[(blades[0], (R_HUB + L, 0.0))], progress=not quick)
rate = r.frames["hub"].rate
rigid = omega_f * (1.0 - np.exp(-r.times / tau_m))
err = np.abs(rate - rigid).max() / omega_f
lag = np.abs(r.probes[:, 0, 1]).max()
if comm.rank == 0:
    print(f"rotor inertia J = {J:.3f} kg m^2, final speed {omega_f:.2f} rad/s, time constant "
          f"{tau_m:.2f} s")
    print(f"speed at t = {r.times[-1]:.2f} s: {rate[-1]:.3f} rad/s (rigid rotor: "
          f"{rigid[-1]:.3f}); largest difference {err:.2e} of the final speed")
    print(f"largest tip lag of the blades: {lag * 1e3:.2f} mm")
assert err < 0.01, err
# energy: the motor's and friction's work is the kinetic and elastic energy gained
E_gain = r.energy["total"][-1] - r.energy["total"][0]
assert abs(r.energy["work"][-1] - E_gain) < 0.01 * E_gain, (r.energy["work"][-1], E_gain)
# -

# A plot of the speed and of the tip lag (rank 0).

# +
if comm.rank == 0:
    plt = mbs.io.pyplot()
    if plt is not None:
        fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(6, 5))
        a1.plot(r.times, rate, label="computed (elastic blades)")
        a1.plot(r.times, rigid, "--", label="rigid rotor, closed form")
        a1.set_ylabel("hub speed (rad/s)")
        a1.legend()
        a2.plot(r.times, r.probes[:, 0, 1] * 1e3)
        a2.set_ylabel("blade tip lag (mm)")
        a2.set_xlabel("t (s)")
        fig.tight_layout()
        fig.savefig("out/motor_spin_up.png", dpi=120)
        mbs.plot.show("out/motor_spin_up.png")
# -
