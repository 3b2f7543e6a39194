# # An elastic slider-crank: a rigid crank at constant speed, an elastic rod, a slider with mass
#
# The classic flexible mechanism: a crank of length r turns at a constant speed ω about a
# ground pin; a connecting rod of length l joins the crank pin A to the pin B of a slider that
# runs along the x axis. The crank is rigid (a `RigidBody` on a `Hinge` whose angle a motor
# drives, `model.motor(hub, angle=...)`), the slider is rigid (a `RigidBody` of mass m_s on a
# planar `Free` frame, held to the ground by a prismatic joint), and the rod is elastic: a 2D
# plane-stress strip of aluminium with the cross-section of a 10 mm round bar (A = 7.854e-5 m²,
# I = 4.909e-10 m⁴), meshed with P2 elements. The rod's frame is a planar `Free` frame too: its
# motion is computed with the rod's deformation. Its reference condition is the chord: the
# rod's node at A has no displacement in the frame and its node at B none across the rod
# (`model.clamp`), so the frame is the line through the two pins.
#
# The rod bends under its own inertia (it swings and accelerates) and the slider's: its
# midpoint deflection is the result. The demo checks
#
# * that the mechanism's kinematics are the rigid mechanism's closed form where the rod is
#   stiff (slider position x_s = r cos θ + √(l² − r² sin² θ), rod angle
#   φ = −asin(r sin θ / l)), and how far the elastic rod's slider is from it;
# * the midpoint deflection against the prescribed-frame model of the same mechanism (the
#   kineto-elastodynamic approach: the rod's frame moves as in the rigid mechanism,
#   `frames.Planar`, and the slider on its joints is computed): they differ by how the
#   deformation changes the rod's own rigid motion, a small fraction of the peak here.
#
# Run: `mpirun -n 2 python demos/elastic_slider_crank.py`; `MBS_DEMO_QUICK=1` for a short
# version. The coupled run's history goes to `out/elastic_slider_crank.csv` as the run
# produces it, a plot to `out/elastic_slider_crank.png`. The mesh and step convergence of the
# midpoint deflection is in `docs/slider_crank.md` (`make slider-crank`).

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

R, L, OMEGA = 0.152, 0.304, 150.0                 # crank, rod (m), crank speed (rad/s)
E, NU, RHO = 70e9, 0.3, 2770.0                    # aluminium (Pa, kg/m^3)
AREA, INERTIA = 7.854e-5, 4.909e-10               # a 10 mm round bar
H = math.sqrt(12 * INERTIA / AREA)                # the strip with the bar's A and I
THICK = AREA / H
M_ROD = RHO * AREA * L
M_SLIDER, M_CRANK = 0.5 * M_ROD, 0.1
NX = 12 if quick else 24


def rod_body(frame, name="rod"):
    msh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([L, H / 2])],
                                 [NX, 2])
    mat = mbs.materials.PlaneStress(E=E, nu=NU, density=RHO, thickness=THICK)
    return mbs.Body(msh, mat, frame, degree=2, name=name)


def at(px, py=0.0):
    return lambda x: np.isclose(x[0], px, atol=1e-9) & np.isclose(x[1], py, atol=1e-9)


def slider():
    return mbs.RigidBody(mass=M_SLIDER, inertia=1e-6, centre=(0, 0, 0), name="slider",
                         frame=mbs.frames.Free(position=(R + L, 0, 0), name="slider_frame",
                                               dim=2))


# the coupled model: the rod's frame computed
hub = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="hub")
crank = mbs.RigidBody(mass=M_CRANK, inertia=M_CRANK * R ** 2 / 12, frame=hub,
                      centre=(R / 2, 0, 0), name="crank")
rod = rod_body(mbs.frames.Free(position=(R, 0, 0), name="rod_frame", dim=2))
sl = slider()
model = mbs.Model([crank, rod, sl])
model.clamp(rod, where=at(0.0), name="chord A")
model.clamp(rod, where=at(L), components=[1], name="chord B")
model.revolute(crank, rod, point=(R, 0.0), name="A")
model.revolute(rod, sl, point=(R + L, 0.0), name="B")
model.prismatic(None, sl, point=(R + L, 0.0), axis=(1.0, 0.0), name="guide")
model.motor(hub, angle=lambda t: OMEGA * t, name="drive")
# -

# One turn of the crank (a quarter in the quick version), steps of 1e-4 s: about 47 per
# period of the rod's first bending mode (pinned-pinned, ~1340 rad/s).

# +
t_end = (0.25 if quick else 1.0) * 2 * math.pi / OMEGA
dt = 1e-4
r = model.integrate(t_end=t_end, dt=dt, output="out/elastic_slider_crank",
                    probes=[(rod, (L / 2, 0.0))], progress=not quick)
theta = r.frames["hub"].angle
x_rigid = R * np.cos(theta) + np.sqrt(L ** 2 - (R * np.sin(theta)) ** 2)
mid = r.probes[:, 0, 1]
slider_gap = np.abs(r.frames["slider_frame"].r_O[:, 0] - x_rigid).max()
drift = max(float(np.max(r.joints[k].drift)) for k in ("A", "B", "guide", "drive"))
# -

# The prescribed-frame model: the rod's frame moves as the rigid mechanism's rod
# (`frames.Planar` with the closed-form angle and the crank pin's path); the rod is pinned at
# A in it and joined at B to the slider, whose motion is computed.

# +
phi = (lambda t: math.asin(-R * math.sin(OMEGA * t) / L))
pre_frame = mbs.frames.Planar(theta=phi, origin=lambda t: (R * math.cos(OMEGA * t),
                                                            R * math.sin(OMEGA * t)))
rod_p = rod_body(pre_frame, name="rod_p")
sl_p = slider()
model_p = mbs.Model([rod_p, sl_p])
model_p.clamp(rod_p, where=at(0.0), name="pin A")
model_p.revolute(rod_p, sl_p, point=(R + L, 0.0), name="B")
model_p.prismatic(None, sl_p, point=(R + L, 0.0), axis=(1.0, 0.0), name="guide")
rp = model_p.integrate(t_end=t_end, dt=dt, probes=[(rod_p, (L / 2, 0.0)), (rod_p, (L, 0.0))],
                       progress=False)
# the deflection from the chord: the midpoint's less half the end's (A does not move)
mid_p = rp.probes[:, 0, 1] - 0.5 * rp.probes[:, 1, 1]
peak = np.abs(mid).max()
gap = np.abs(mid - mid_p).max() / peak
if comm.rank == 0:
    print(f"rod: m = {M_ROD:.4f} kg, slider {M_SLIDER:.4f} kg; {r.steps} steps of {dt:g} s")
    print(f"joints closed to {drift:.1e} m; slider from the rigid mechanism's by up to "
          f"{slider_gap:.2e} m")
    print(f"midpoint deflection: peak {peak * 1e3:.4f} mm (coupled), "
          f"{np.abs(mid_p).max() * 1e3:.4f} mm (prescribed frame); largest difference "
          f"{gap:.2e} of the peak")
assert drift < 1e-10, drift
assert slider_gap < 1e-4, slider_gap
assert gap < 0.02, gap
# -

# The midpoint deflection over the turn, both models (rank 0).

# +
if comm.rank == 0:
    plt = mbs.io.pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(np.degrees(theta), mid * 1e3, label="coupled (rod frame computed)")
        ax.plot(np.degrees(theta), mid_p * 1e3, "--", label="prescribed rod frame")
        ax.set_xlabel("crank angle (deg)")
        ax.set_ylabel("rod midpoint deflection (mm)")
        ax.legend()
        fig.tight_layout()
        fig.savefig("out/elastic_slider_crank.png", dpi=120)
        mbs.plot.show("out/elastic_slider_crank.png")
# -
