# # A reduced-order rotor: Craig-Bampton shapes with the moving-frame terms
#
# The rotor of demos/rotor_campbell.py (steel shaft, overhung disk, both shaft ends in rigid
# bearings) as one 3D elastic body in a frame spinning about the shaft axis, reduced by
# `model.reduce(rotor, modes=..., method="craig-bampton")` to a few modes computed once by
# SLEPc at the operating speed (spin softening and centrifugal prestress included; the
# bearings' clamps are built into the shapes), with the residual shapes of the loads there
# (`residual=[0, T/4]`: the static responses to the centrifugal load and to gravity, which
# turns in the rotating frame, at t = 0 and a quarter turn later).
#
# The reduced model is used like the full one: `campbell`, `solve_static` and `integrate`
# take it unchanged; the Coriolis, spin-softening and prestress terms of every speed are the
# full operators projected on the shapes, and probes and fields are the full field expanded
# from the modal coordinates. Checked here against the full model:
# 1. the Campbell branches (rotating frame) within 0.5 % over the sweep;
# 2. the static deformation at the operating speed (centrifugal and gravity): the residual
#    shapes make it exact;
# 3. the disk's motion from that state, under gravity (fixed in the ground, so a load turning
#    at the spin speed in the rotating frame), within 1 % of its peak.
#
# Run: `mpirun -n 2 python demos/reduced_rotor.py`. Output: `out/reduced_rotor.csv` (the
# disk probe and energies of the reduced run, the full field in `out/reduced_rotor_rotor.bp`
# at the first step) and the offline (shapes) and online times.

# +
import logging
import os
import time

import numpy as np
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

comm = MPI.COMM_WORLD
QUICK = os.environ.get("MBS_DEMO_QUICK") == "1"  # the test-suite runs a short version
OUT = os.environ.get("MBS_DEMO_OUT", "out")
RPM = np.linspace(0.0, 30000.0, 3 if QUICK else 7)
MODES = 12 if QUICK else 20
SPEED = 6000 * 2 * np.pi / 60                     # rad/s, for the transient
T_END, DT = (0.004, 2e-4) if QUICK else (0.03, 1e-4)
DISK = (0.12, 0.0, 0.4)                           # a node on the disk's rim (x, y, z)
logging.getLogger("dolfinx_mbs.reduction.basis_reducer").setLevel(logging.INFO)   # says what is reduced
logging.basicConfig(format="%(message)s")


def say(*a):
    if comm.rank == 0:
        print(*a, flush=True)


def rotor_model(reduce):
    mesh, cells, facets = meshes.rotor(comm, size=0.03 if QUICK else 0.015)
    frame = mbs.frames.ConstantSpin(axis=(0.0, 0.0, 1.0), rate=SPEED)
    steel = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0)
    rotor = mbs.Body(mesh, steel, frame, degree=2, name="rotor", stiffening="prestress")
    model = mbs.Model([rotor], gravity=(0.0, -9.81, 0.0))
    model.clamp(rotor, facets=(facets, meshes.BEARING_A), name="bearing A")
    model.clamp(rotor, facets=(facets, meshes.BEARING_B), name="bearing B")
    if reduce:
        model.reduce(rotor, modes=MODES, method="craig-bampton",
                     residual=[0.0, np.pi / 2 / SPEED])
    return model, rotor


full, rotor_f = rotor_model(False)
red, rotor_r = rotor_model(True)
ndofs = rotor_f.V.dofmap.index_map.size_global * 3
t0 = time.perf_counter()
red.system()   # the offline phase: the shapes (SLEPc) and the reduced constraints
offline = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
say(f"rotor: {ndofs} dofs, reduced to {red.system().n_reduced} coordinates "
    f"({MODES} modes and the loads' static shapes) in {offline:.2f} s, {comm.size} process(es)")
# -

# 1. Campbell diagrams, full and reduced (rotating-frame frequencies).

# +
tables = []
for model in (full, red):
    t0 = time.perf_counter()
    tables.append(model.campbell(RPM * 2 * np.pi / 60, n=4))
    say(f"{'full' if model is full else 'reduced'} sweep: "
        f"{comm.allreduce(time.perf_counter() - t0, op=MPI.MAX):.2f} s")
# compared sorted at each speed (which member of a degenerate pair at rest a tracked branch
# follows is the eigensolver's choice)
f_full, f_red = (np.sort(t.frequencies, axis=1) for t in tables)
err = np.abs(f_red / f_full - 1).max()
say(f"Campbell branches: reduced within {err:.1e} of the full model")
assert err < 5e-3, err
# -

# 2. The static deformation at the operating speed, and 3. the disk's motion from it.

# +
sag = []
for model, rotor in ((full, rotor_f), (red, rotor_r)):
    model.solve_static(t=0.0)
    sag.append(model.comm.allreduce(np.abs(rotor.u.x.array).max(), op=MPI.MAX))
say(f"static deformation at {SPEED * 60 / 2 / np.pi:.0f} rpm: full {sag[0]:.4e} m, reduced "
    f"{sag[1]:.4e} m")
assert abs(sag[1] / sag[0] - 1) < 1e-6
runs = []
if comm.rank == 0:
    os.makedirs(OUT, exist_ok=True)
for model, rotor in ((full, rotor_f), (red, rotor_r)):
    u0 = [rotor.u.copy()]          # the static state (above) as the initial state
    t0 = time.perf_counter()
    r = model.integrate(T_END, DT, u0=u0, probes=[(rotor, DISK)], progress=False,
                        output=os.path.join(OUT, "reduced_rotor") if model is red else None,
                        output_every=10**9)
    runs.append((r, comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)))
(rf, tf), (rr, tr) = runs
diff = np.abs(rr.probes - rf.probes).max() / np.abs(rf.probes).max()
say(f"{len(rf.times) - 1} steps at {SPEED * 60 / 2 / np.pi:.0f} rpm: full {tf:.2f} s, reduced "
    f"{tr:.2f} s online (+ {offline:.2f} s offline); disk probe within {diff:.1e} of the peak")
assert diff < 0.01, diff
say("done")
# -
