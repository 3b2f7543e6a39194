# # Campbell diagram of a 3D rotor: a steel shaft with an overhung disk, meshed with gmsh
#
# A shaft (0.6 m long, 20 mm radius) carries a disk (120 mm radius, 20 mm thick) at 2/3 of its
# length; both shaft ends sit in rigid bearings (clamped). The rotor is modelled as one 3D
# elastic body (P2 tetrahedra) in a frame spinning about the shaft axis, so the Coriolis
# forces of the rotating-frame formulation give the disk's gyroscopic stiffening and the
# forward/backward whirl split of every bending pair, spin softening included, and with
# `stiffening="prestress"` the centrifugal prestress of the disk.
#
# For each speed of the sweep, the gyroscopic quadratic eigenproblem
# (lambda^2 M + lambda G + K_eff(Omega)) x = 0 is solved with SLEPc; the branches are tracked
# across speeds (modal assurance criterion), their whirl direction is read from the mode
# shapes' orbits about the spin axis, and the rotating-frame frequencies are mapped to the
# stationary frame (w_rot + Omega forward, w_rot - Omega backward: an axisymmetric rotor).
# Critical speeds are the crossings of the stationary-frame branches with the engine-order
# lines Omega and 2 Omega.
#
# At the top speed the lowest backward and forward whirling modes are drawn as the orbits the
# shaft's axis runs through (`mbs.plot.whirl`).
#
# Run: `mpirun -n 2 python demos/rotor_campbell.py`. Output: `out/rotor_campbell.csv`, the
# diagram `out/rotor_campbell.png`, the whirl pictures `out/rotor_whirl_<kind>.png` and
# `out/rotor_whirl.gif` (with PyVista), and the time of the sweep.

# +
import os
import time

import numpy as np
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

comm = MPI.COMM_WORLD
QUICK = os.environ.get("MBS_DEMO_QUICK") == "1"  # the test-suite runs a short version
OUT = os.environ.get("MBS_DEMO_OUT", "out")
RPM = np.linspace(0.0, 30000.0, 5 if QUICK else 31)
N_MODES = 4 if QUICK else 6


def say(*a):
    if comm.rank == 0:
        print(*a, flush=True)


mesh, cells, facets = meshes.rotor(comm, size=0.025 if QUICK else 0.015)
frame = mbs.frames.ConstantSpin(axis=(0.0, 0.0, 1.0), rate=0.0)
steel = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0)
rotor = mbs.Body(mesh, steel, frame, degree=2, name="rotor", stiffening="prestress")
model = mbs.Model([rotor])
model.clamp(rotor, facets=(facets, meshes.BEARING_A), name="bearing A")
model.clamp(rotor, facets=(facets, meshes.BEARING_B), name="bearing B")
ndofs = rotor.V.dofmap.index_map.size_global * 3
say(f"rotor: {ndofs} dofs, {comm.size} process(es), {len(RPM)} speeds up to {RPM[-1]:.0f} rpm")
# -

# The sweep. Speeds in rad/s; each point solves one quadratic eigenproblem.

# +
t0 = time.perf_counter()
table = model.campbell(RPM * 2 * np.pi / 60, n=N_MODES, engine_orders=(1, 2))
elapsed = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
say(f"Campbell sweep: {elapsed:.1f} s ({elapsed / len(RPM):.2f} s per speed)")
os.makedirs(OUT, exist_ok=True) if comm.rank == 0 else None
comm.Barrier()
table.to_csv(os.path.join(OUT, "rotor_campbell.csv"))
table.plot(os.path.join(OUT, "rotor_campbell.png"), frame="stationary",
           title="Rotor with overhung disk: Campbell diagram (stationary frame)")
mbs.plot.show(os.path.join(OUT, "rotor_campbell.png"))
hz = table.frequencies / (2 * np.pi)
say("rotating-frame frequencies (Hz) at rest and at the top speed:")
say("  0 rpm:     ", np.round(hz[0], 1))
say(f"  {RPM[-1]:.0f} rpm:", np.round(hz[-1], 1))
for c in table.critical_speeds:
    kind = {1: "forward whirl", -1: "backward whirl", 0: "no whirl (torsion, axial)"}[int(c.whirl)]
    say(f"critical speed: branch {c.mode}, engine order {c.order}, {c.speed * 60 / 2 / np.pi:.0f} "
        f"rpm ({c.frequency / 2 / np.pi:.1f} Hz, {kind})")
# -

# Checks. At rest every bending pair of the axisymmetric rotor is a double eigenvalue (up to
# the unstructured mesh's small asymmetry); with
# spin it splits into a forward and a backward whirl branch, which the sweep identifies; both
# map back to nearly the same stationary frequency at low speed.

# +
w0 = table.frequencies[0]
pairs = np.isclose(w0[:-1], w0[1:], rtol=1e-2)  # equal up to the mesh's asymmetry
assert pairs.any(), f"no degenerate bending pair at rest: {w0}"
spin = table.speeds[1]
split = table.whirl[1] != 0
assert (table.whirl[1][split] > 0).any() and (table.whirl[1][split] < 0).any(), table.whirl[1]
assert table.stable[:2].all()
# the first critical speed of the first-order engine line lies inside the sweep
first = [c for c in table.critical_speeds if c.order == 1]
say(f"{len(first)} crossings of the 1x line; all speeds stable: {bool(table.stable.all())}")
say("done")
# -

# ## Whirl at the top speed
#
# The same rotor in a frame spinning at the top speed: its complex modes (rotating frame)
# with their shapes kept. In a bending mode the shaft's axis runs through ellipses about the
# bearing line, against the spin (backward whirl) or with it (forward); the orbit sense
# computed here from the shapes, h = 2 sum (re x (-im))_z / sum (|re|^2 + |im|^2) over the
# axis' nodes (+1 a forward circle, -1 a backward one), is checked against the sweep's whirl
# at that speed. The lowest backward and forward modes are drawn: the orbits as tubes, the
# cones pointing the way each turns, the rotor at the phase of its largest motion.

# +
top = RPM[-1] * 2 * np.pi / 60
spun = mbs.Body(mesh, steel, mbs.frames.ConstantSpin(axis=(0.0, 0.0, 1.0), rate=top),
                degree=2, name="rotor", stiffening="prestress")
spun_model = mbs.Model([spun])
spun_model.clamp(spun, facets=(facets, meshes.BEARING_A), name="bearing A")
spun_model.clamp(spun, facets=(facets, meshes.BEARING_B), name="bearing B")
m = spun_model.modes(n=N_MODES, damping=False, shapes=True)


def orbit_sense(shape):
    """The axis' mean orbit sense h about +z (+1 forward, -1 backward) and its largest
    motion (the shapes are scaled to a unit largest displacement)."""
    re, im = shape[0]
    x = spun.V.tabulate_dof_coordinates()
    axis = np.linalg.norm(x[:, :2], axis=1) < 1e-9
    r, i = re.x.array.reshape(-1, 3)[axis], im.x.array.reshape(-1, 3)[axis]
    # the motion re cos(phi) - im sin(phi) turns about z as (re x (-im))_z at phi = 0
    turn = np.sum(r[:, 0] * (-i[:, 1]) - r[:, 1] * (-i[:, 0]))
    size = np.sum(r[:, :2] ** 2 + i[:, :2] ** 2)
    turn, size = comm.allreduce(np.array([turn, size]))
    amp = comm.allreduce(np.sqrt((r[:, :2] ** 2 + i[:, :2] ** 2).sum(axis=1)).max(initial=0.0),
                         op=MPI.MAX)
    return 2 * turn / size, amp


senses, amps = np.array([orbit_sense(s) for s in m.shapes]).T
bending = amps > 0.1  # the axis moves: a bending mode (torsion and axial modes leave it)
say(f"modes at {RPM[-1]:.0f} rpm, rotating frame (Hz):", np.round(m.frequencies / (2 * np.pi), 1))
say("the axis' largest motion:", np.round(amps, 3), "its orbit sense h:", np.round(senses, 3))
for k, f in enumerate(m.frequencies):  # the sweep's whirl (mass-weighted orbits) agrees
    j = int(np.argmin(np.abs(table.frequencies[-1] - f)))
    if abs(table.frequencies[-1][j] / f - 1) < 1e-6 and bending[k]:
        assert np.sign(senses[k]) == table.whirl[-1][j] and abs(senses[k]) > 0.9, \
            (senses, table.whirl[-1])
backward, forward = (int(np.flatnonzero(bending & (np.sign(senses) == w))[0]) for w in (-1, 1))
try:
    for k in (backward, forward):
        kind = "forward" if k == forward else "backward"
        path = os.path.join(OUT, f"rotor_whirl_{kind}.png")
        mbs.plot.whirl(m.shapes[k][0], path, axis=(0, 0, 1), title=(
            f"{kind} whirl, {m.frequencies[k] / (2 * np.pi):.1f} Hz in the rotating frame, "
            f"{RPM[-1]:.0f} rpm"), view="iso", window_size=(800, 500))
        mbs.plot.show(path)
    mbs.plot.whirl(m.shapes[forward][0], os.path.join(OUT, "rotor_whirl.gif"), axis=(0, 0, 1),
                   frames=12 if QUICK else 24, window_size=(480, 360))
    mbs.plot.show(os.path.join(OUT, "rotor_whirl.gif"))
except ImportError as err:  # PyVista is optional
    say(f"no whirl pictures: {err}")
# -
