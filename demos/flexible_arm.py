# # A two-link flexible arm moved by PD-controlled joint torques
#
# A planar robot arm of two elastic aluminium links: the first turns about a ground pin (a
# `Hinge` frame), the second is pinned to the first's tip by a revolute joint (its own planar
# `Free` frame, `model.revolute`). Each joint has a motor whose torque is a PD law of the joint
# angle, `model.motor(..., torque=lambda t, s: ...)`, tracking a smooth move of both joints by
# 45 degrees in 0.4 s (the shoulder's torque also carries the elbow's reaction). Each link is
# attached to its frame at its root (`model.attach`): the frame follows the root's section and
# the link bends in it. The links' first bending frequencies (about 130 and 200 rad/s clamped)
# are within reach of the move: the arm's tip overshoots and rings while the joints settle.
#
# The same arm with rigid links (`RigidBody`, the same masses and inertias) is the reference:
# the demo prints how far the flexible arm's joint angles are from the rigid arm's, and the
# elastic tip deflection of the second link. Run: `mpirun -n 2 python demos/flexible_arm.py`;
# `MBS_DEMO_QUICK=1` for a short version. The history goes to `out/flexible_arm.csv` as the
# run produces it, a plot to `out/flexible_arm.png`.

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

L1, L2, H, THICK = 0.5, 0.4, 0.01, 0.01          # links (m): length, width, thickness
E, NU, RHO = 70e9, 0.3, 2770.0                    # aluminium
M1, M2 = RHO * H * THICK * L1, RHO * H * THICK * L2
TARGET, T_MOVE = math.pi / 4, 0.4                 # both joints by 45 deg in 0.4 s
NX = 6 if quick else 10


def profile(t):
    """The joints' set point: a cubic from 0 to TARGET over T_MOVE, then held."""
    s = min(max(t / T_MOVE, 0.0), 1.0)
    return TARGET * (3 * s ** 2 - 2 * s ** 3)


def profile_rate(t):
    s = min(max(t / T_MOVE, 0.0), 1.0)
    return TARGET * 6 * s * (1 - s) / T_MOVE if 0.0 < t < T_MOVE else 0.0


# closed-loop frequencies of about 25 rad/s on the rigid arm's joint inertias, damping 0.7
J1 = M1 * L1 ** 2 / 3 + M2 * L1 ** 2 + M2 * L2 ** 2 / 3
J2 = M2 * L2 ** 2 / 3
WC = 25.0
GAINS = [(J * WC ** 2, 2 * 0.7 * WC * J) for J in (J1, J2)]


def pd(k):
    kp, kd = GAINS[k]
    return lambda t, s: kp * (profile(t) - s.angle) + kd * (profile_rate(t) - s.rate)


def link(frame, length, name):
    msh = dmesh.create_rectangle(comm, [np.array([0.0, -H / 2]), np.array([length, H / 2])],
                                 [NX, 2])
    mat = mbs.materials.PlaneStress(E=E, nu=NU, density=RHO, thickness=THICK)
    return mbs.Body(msh, mat, frame, degree=2, name=name)


def root(x):
    return np.isclose(x[0], 0.0)


# the flexible arm
shoulder = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="shoulder")
upper = link(shoulder, L1, "upper")
fore = link(mbs.frames.Free(position=(L1, 0, 0), name="fore_frame", dim=2), L2, "fore")
arm = mbs.Model([upper, fore])
arm.attach(upper, where=root)
arm.attach(fore, where=root)
elbow = arm.revolute(upper, fore, point=(L1, 0.0), name="elbow")
arm.motor(shoulder, torque=pd(0), name="shoulder motor")
arm.motor(elbow, torque=pd(1), name="elbow motor")

# the rigid arm: the same masses and inertias about the centres
shoulder_r = mbs.frames.Hinge(axis=(0, 0, 1), origin=(0, 0, 0), name="shoulder")
upper_r = mbs.RigidBody(mass=M1, inertia=M1 * (L1 ** 2 + H ** 2) / 12, frame=shoulder_r,
                        centre=(L1 / 2, 0, 0), name="upper")
fore_r = mbs.RigidBody(mass=M2, inertia=M2 * (L2 ** 2 + H ** 2) / 12, centre=(0, 0, 0),
                       frame=mbs.frames.Free(position=(L1 + L2 / 2, 0, 0), name="fore_frame",
                                             dim=2), name="fore")
rigid = mbs.Model([upper_r, fore_r])
elbow_r = rigid.revolute(upper_r, fore_r, point=(L1, 0.0), name="elbow")
rigid.motor(shoulder_r, torque=pd(0), name="shoulder motor")
rigid.motor(elbow_r, torque=pd(1), name="elbow motor")
# -

# Both arms over the move and the settling after it (0.1 s in the quick version), steps of
# 1 ms (about 40 per period of the fore link's first bending).

# +
t_end = 0.1 if quick else 0.8
dt = 1e-3
r = arm.integrate(t_end=t_end, dt=dt, output="out/flexible_arm",
                  probes=[(fore, (L2, 0.0))], progress=not quick)
rr = rigid.integrate(t_end=t_end, dt=dt, progress=False)
th1, th2 = r.frames["shoulder"].angle, r.frames["fore_frame"].angle
gap1 = np.abs(th1 - rr.frames["shoulder"].angle).max()
gap2 = np.abs(th2 - rr.frames["fore_frame"].angle).max()
tip = r.probes[:, 0, 1]          # the fore link's tip across the link, in its frame
drift = float(np.max(r.joints["elbow"].drift))
if comm.rank == 0:
    print(f"links: {M1:.3f} kg and {M2:.3f} kg; {r.steps} steps of {dt:g} s")
    print(f"shoulder {math.degrees(th1[-1]):.2f} deg, fore link {math.degrees(th2[-1]):.2f} deg "
          f"(set points {math.degrees(profile(t_end)):.2f} and "
          f"{2 * math.degrees(profile(t_end)):.2f})")
    print(f"flexible against rigid arm: shoulder by up to {math.degrees(gap1):.3f} deg, fore "
          f"link by up to {math.degrees(gap2):.3f} deg")
    print(f"fore link's tip deflection: up to {np.abs(tip).max() * 1e3:.3f} mm; elbow closed to "
          f"{drift:.1e} m")
assert drift < 1e-10, drift
assert np.all(np.isfinite(tip))
if not quick:   # the arm arrives: within two degrees of the set points
    assert abs(th1[-1] - TARGET) < math.radians(2.0), math.degrees(th1[-1])
    assert abs(th2[-1] - th1[-1] - TARGET) < math.radians(2.0), math.degrees(th2[-1] - th1[-1])
# -

# The joint angles of both arms and the tip deflection (rank 0).

# +
if comm.rank == 0:
    plt = mbs.io.pyplot()
    if plt is not None:
        fig, (ax, bx) = plt.subplots(2, 1, figsize=(6, 5), sharex=True)
        ax.plot(r.times, np.degrees(th1), label="shoulder (flexible)")
        ax.plot(rr.times, np.degrees(rr.frames["shoulder"].angle), "--", label="(rigid)")
        ax.plot(r.times, np.degrees(th2), label="fore link (flexible)")
        ax.plot(rr.times, np.degrees(rr.frames["fore_frame"].angle), "--", label="(rigid)")
        ax.set_ylabel("angle (deg)")
        ax.legend(fontsize=8)
        bx.plot(r.times, tip * 1e3)
        bx.set_xlabel("t (s)")
        bx.set_ylabel("fore tip deflection (mm)")
        fig.tight_layout()
        fig.savefig("out/flexible_arm.png", dpi=120)
        mbs.plot.show("out/flexible_arm.png")
# -
