# # A cart flung out along a spinning flexible arm: a prismatic joint on an elastic body
#
# A steel arm turns in the horizontal plane at a constant 10 rad/s (a `Hinge` frame held at
# that speed by a driven motor, `model.motor(hub, speed=lambda t: W)`), clamped at the hub. A cart
# rides on a frictionless rail along the arm: a rigid body on its own planar `Free` frame,
# joined to the arm's node at 0.2 m by `model.prismatic`. The rail is the line through that
# node along the arm's frame (the hub's), so the cart follows the node's deflection across it
# and turns with the hub. Released at rest on the arm, it is flung outwards.
#
# On a rigid arm the closed form is a bead on a spinning wire: r(t) = r0 cosh(W t), pushed
# sideways by the rail with the Coriolis force 2 m W r'(t). The elastic arm bends under that
# force (a third of a millimetre at the tip by the end), so the cart's radius and the rail's
# force follow the closed form to a fraction of a percent, with the arm's vibration on top.
# The arm is not reduced: the TS path (multipliers bordered on the arm's sparse rows) steps it,
# as it would a large 3D mesh. Run: `mpirun -n 2 python demos/sliding_cart.py`;
# `MBS_DEMO_QUICK=1` for a short version. The history goes to `out/sliding_cart.csv` as the
# run produces it, a plot to `out/sliding_cart.png`.

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

L, H, THICK = 0.6, 0.02, 0.01          # arm (m): length, depth in the plane, thickness
E, NU, RHO = 210e9, 0.3, 7850.0        # steel
W = 10.0                               # the arm's speed (rad/s)
M, R0 = 0.5, 0.2                       # the cart (kg) and where it starts on the arm (m)
NX = 12 if quick else 24

msh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])], [NX, 2])
steel = mbs.materials.PlaneStress(E=E, nu=NU, density=RHO, thickness=THICK)
hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), rate=W, name="hub")
arm = mbs.Body(msh, steel, hub, degree=2, name="arm")
cart_frame = mbs.frames.Free(position=(R0, 0.0, 0.0), dim=2, name="cart_frame")
cart = mbs.RigidBody(mass=M, inertia=M * 0.05 ** 2 / 6, frame=cart_frame, name="cart")
model = mbs.Model([arm, cart])
model.clamp(arm, where=lambda x: np.isclose(x[0], 0.0))
model.prismatic(arm, cart, point=(R0, 0.0), axis=(1.0, 0.0), name="rail")
model.motor(hub, speed=lambda t: W, name="drive")
# -

# Until the cart is near the arm's end (0.05 s in the quick version), steps of 0.5 ms.

# +
t_end = 0.05 if quick else 0.15
dt = 5e-4
r = model.integrate(t_end=t_end, dt=dt, stepper="ts", output="out/sliding_cart",
                    probes=[(arm, (L, 0.0))], progress=not quick)
t = r.times
radius = np.linalg.norm(r.frames["cart_frame"].r_O[:, :2], axis=1)
closed = R0 * np.cosh(W * t)
# the rail's force across the arm (the arm's direction is the hub's angle) against 2 m W r'
angle = r.frames["hub"].angle
across = np.stack([-np.sin(angle), np.cos(angle)], axis=1)
push = np.einsum("ij,ij->i", r.joints["rail"].force[:, :2], across)
coriolis = 2 * M * W * R0 * W * np.sinh(W * t)
tip = r.probes[:, 0, 1]          # the arm's tip across the arm, in the hub's frame
late = t > t_end / 2
e_r = float(np.abs(radius - closed).max() / closed[-1])
e_f = float(np.abs(push[late] - coriolis[late]).max() / coriolis[-1])
drift = float(np.max(r.joints["rail"].drift))
if comm.rank == 0:
    print(f"{r.steps} steps of {dt:g} s on the {r.stepper.upper()} path")
    print(f"cart at {radius[-1]:.4f} m (bead on a rigid wire: {closed[-1]:.4f} m); radius off "
          f"the closed form by up to {100 * e_r:.3f} % of its last value")
    print(f"rail's push across the arm {push[-1]:.2f} N (2 m W r': {coriolis[-1]:.2f} N); off "
          f"by up to {100 * e_f:.2f} % over the second half")
    print(f"arm's tip deflection: up to {np.abs(tip).max() * 1e3:.3f} mm; "
          f"rail held to {drift:.1e}")
assert drift < 1e-10, drift
assert e_r < 5e-3, e_r
assert e_f < 0.1, e_f
# -

# The cart's radius and the rail's push beside the rigid arm's closed forms, and the arm's tip
# deflection (rank 0).

# +
if comm.rank == 0:
    plt = mbs.io.pyplot()
    if plt is not None:
        fig, (ax, bx, cx) = plt.subplots(3, 1, figsize=(6, 6.5), sharex=True)
        ax.plot(t, radius, label="cart (elastic arm)")
        ax.plot(t, closed, "--", label="r0 cosh(W t)")
        ax.set_ylabel("radius (m)")
        ax.legend(fontsize=8)
        bx.plot(t, push, label="rail's push across the arm")
        bx.plot(t, coriolis, "--", label="2 m W r'")
        bx.set_ylabel("force (N)")
        bx.legend(fontsize=8)
        cx.plot(t, tip * 1e3)
        cx.set_xlabel("t (s)")
        cx.set_ylabel("tip deflection (mm)")
        fig.tight_layout()
        fig.savefig("out/sliding_cart.png", dpi=120)
        mbs.plot.show("out/sliding_cart.png")
# -
