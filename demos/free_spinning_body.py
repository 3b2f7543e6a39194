# # A free body spinning about its axis: elastic modes beside the rigid motions
#
# A square aluminium bar 1 x 0.1 x 0.1 m with no constraint at all spins about its long axis
# at $\Omega$. Its six rigid motions have no stiffness: `natural_frequencies`, `modes` and
# `campbell` find them, deflate them and return the elastic modes (M-orthogonal to the rigid
# motions), the same on any number of ranks (`dolfinx_mbs.systems.rigid_modes`). In the rotating
# frame:
#
# - a bending pair $\omega_b$ at rest splits into $\omega_b - \Omega$ (forward whirl) and
#   $\omega_b + \Omega$ (backward), the Euler–Bernoulli result of
#   $(\partial_t + i\Omega)^2 z + (EI/m) z'''' = 0$, $z = v + i w$, up to the axial motion of
#   the sections (a few per cent of $\Omega$);
# - the torsion mode, a displacement across the axis, is softened: $(\omega_t^2 - \Omega^2)^{1/2}$
#   (checked in `tests/systems/test_free_modes.py`);
# - the rigid translations across the axis whirl at $i\Omega$ (the bar at rest in the inertial
#   frame), the one along it stays at 0 (`modes().rigid_eigenvalues`).
#
# The elastic modes at speed are drawn at the end (`mbs.plot.mode_shapes`, with PyVista).
#
# Run it with `python demos/free_spinning_body.py` or under `mpirun -n 2`.

# +
import os

import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

comm = MPI.COMM_WORLD
QUICK = os.environ.get("MBS_DEMO_QUICK") == "1"
E, NU, RHO = 70e9, 0.3, 2700.0
CELLS = [8, 2, 2] if QUICK else [16, 2, 2]


def say(*args):
    if comm.rank == 0:
        print(*args, flush=True)


def bar(rate):
    mesh = dmesh.create_box(comm, [np.zeros(3), np.array([1.0, 0.1, 0.1])], CELLS,
                            dmesh.CellType.hexahedron)
    body = mbs.Body(mesh, mbs.materials.Isotropic(E=E, nu=NU, density=RHO),
                    frame=mbs.frames.ConstantSpin(axis=(1, 0, 0), rate=rate))
    return mbs.Model([body])


# -
# At rest, and spinning at 100 rad/s: every routine gives the same elastic modes.

# +
rate = 100.0
w0 = bar(0.0).natural_frequencies(n=4)
model = bar(rate)
gyro = model.natural_frequencies(n=8, gyroscopic=True)
res = model.modes(n=8, damping=False, shapes=True)
table = model.campbell([0.0, rate / 2, rate], n=4)
say(f"free bar, {CELLS} hexahedra, {comm.size} rank(s)")
say(f"at rest: {np.round(w0, 2)} rad/s (bending pair first)")
say(f"spinning at {rate} rad/s: natural_frequencies {np.round(gyro, 4)}")
say(f"                        modes               {np.round(res.frequencies, 4)}")
say(f"  Campbell branches from the 4 lowest at rest: {np.round(table.frequencies[-1], 4)}, "
    f"whirl {table.whirl[-1]}")
say(f"  closed forms: w_b -/+ Omega = {w0[0] - rate:.2f}, {w0[0] + rate:.2f} "
    f"(computed {gyro[0]:.2f}, {gyro[1]:.2f})")
say(f"  {res.rigid_dim} free rigid motions; their eigenvalues: "
    f"{np.array2string(res.rigid_eigenvalues, precision=4)}")
assert np.allclose(res.frequencies, gyro, rtol=1e-8)
# every Campbell branch at this speed is one of the elastic modes
assert np.all(np.abs(table.frequencies[-1][:, None] / gyro[None, :] - 1).min(axis=1) < 1e-8)
assert abs(0.5 * (gyro[1] - gyro[0]) - rate) < 0.06 * rate

# The first four elastic modes of the spinning bar, each at the phase of its largest motion
# (no point of the free bar is held: its rigid motions are left out of the shapes, which are
# M-orthogonal to them, so the bar's centre of mass does not move).

# +
try:
    os.makedirs("out", exist_ok=True) if comm.rank == 0 else None
    comm.Barrier()
    mbs.plot.mode_shapes(res.shapes[:4], "out/free_spinning_body_modes.png", columns=4,
                         labels=[f"{f:.1f} rad/s" for f in res.frequencies[:4]],
                         window_size=(1200, 300))
    mbs.plot.show("out/free_spinning_body_modes.png")
except ImportError as err:  # PyVista is optional
    say(f"no mode shape pictures: {err}")
# -
