# # A rotor on anisotropic bearings: Campbell diagram, log dec and unbalance response
#
# A steel shaft (1.2 m, 40 mm radius, meshed with gmsh: `meshes/shaft.msh`) carries two rigid
# disks (20 kg and 30 kg) on two seats and rests on two bearings at its end faces, stiffer in
# y than in x and damped. The rotor is described in the *stationary frame* (docs/theory.md
# section 9): the mesh is fixed in the ground, the material spins through it at Omega, which enters as
# a gyroscopic matrix and the circumferential spin softening, with the centrifugal prestress
# (`stiffening="prestress"`). The bearings fixed in the ground keep constant coefficients
# there, so each speed is a constant-coefficient quadratic eigenproblem: damped complex
# modes, their whirl (forward or backward, seen from the ground) and logarithmic decrement.
#
# The unbalance response is the synchronous forced response to two unbalances (one per disk,
# 90 degrees apart), solved in the frequency domain over the speed range; its peaks are the
# critical speeds and their API 684 half-power amplification factors.
#
# Run: `mpirun -n 2 python demos/rotor_on_bearings.py`. Output in `out/`: the Campbell table
# (CSV) and diagram coloured by log dec, the response (CSV, Bode and polar plot) and the peaks.

# +
import os

import numpy as np
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

comm = MPI.COMM_WORLD
QUICK = os.environ.get("MBS_DEMO_QUICK") == "1"  # the test-suite runs a short version
OUT = os.environ.get("MBS_DEMO_OUT", "out")
RPM = 30.0 / np.pi


def say(*a):
    if comm.rank == 0:
        print(*a, flush=True)


mesh, _, facets = meshes.read("shaft", comm)
groups = meshes.physical_groups("shaft")
steel = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0)
frame = mbs.frames.Stationary(spin_axis=(0, 0, 1), rate=0.0)   # spin: a parameter
rotor = mbs.Body(mesh, steel, frame, degree=2, name="rotor", stiffening="prestress")
model = mbs.Model([rotor])
model.bearing(rotor, facets=(facets, groups["bearing_a"][1]), name="bearing A",
              kxx=5e7, kyy=8e7, cxx=2e3, cyy=3e3)
model.bearing(rotor, facets=(facets, groups["bearing_b"][1]), name="bearing B",
              kxx=6e7, kyy=9e7, cxx=2.5e3, cyy=3.5e3)
disk1 = model.disk(rotor, facets=(facets, groups["segment1"][1]), name="disk 1",
                   mass=20.0, polar=0.25, diametral=0.13)
disk2 = model.disk(rotor, facets=(facets, groups["segment3"][1]), name="disk 2",
                   mass=30.0, polar=0.45, diametral=0.24)
say(f"rotor: {rotor.V.dofmap.index_map.size_global * 3} dofs on {comm.size} process(es)")
# -

# The Campbell diagram: damped modes (the bearings' damping) at each speed, seen from the
# ground; `log_dec` per mode, unstable points flagged.

# +
speeds = np.linspace(0.0, 2000.0, 5 if QUICK else 21)
table = model.campbell(speeds, n=4 if QUICK else 8, engine_orders=(1,))
os.makedirs(OUT, exist_ok=True) if comm.rank == 0 else None
comm.Barrier()
table.to_csv(os.path.join(OUT, "rotor_on_bearings_campbell.csv"))
mbs.rotors.campbell_log_dec(table, os.path.join(OUT, "rotor_on_bearings_campbell.png"))
mbs.plot.show(os.path.join(OUT, "rotor_on_bearings_campbell.png"))
say("frequencies (Hz) at the top speed:", np.round(table.frequencies[-1] / (2 * np.pi), 1))
say("log dec there:                   ", np.round(table.log_dec[-1], 4))
say("whirl there (+1 forward):        ", table.whirl[-1])
for c in table.critical_speeds:
    say(f"critical speed {c.speed * RPM:.0f} rpm (branch {c.mode}, whirl {c.whirl:+d})")
# -

# The unbalance response at both disks, its peaks and amplification factors.

# +
w = np.linspace(20.0, 2000.0, 25 if QUICK else 100)
resp = model.unbalance_response(w, unbalances=[(disk1, 1e-4, 0.0), (disk2, 1e-4, np.pi / 2)],
                                probes=[disk1, disk2], directions=("major",))
resp.to_csv(os.path.join(OUT, "rotor_on_bearings_response.csv"))
resp.peaks_to_csv(os.path.join(OUT, "rotor_on_bearings_peaks.csv"))
resp.plot(os.path.join(OUT, "rotor_on_bearings_bode.png"), probe=0)
mbs.plot.show(os.path.join(OUT, "rotor_on_bearings_bode.png"))
for p in resp.critical_speeds:
    say(f"{resp.probes[p.probe]}: peak {p.amplitude:.3e} m at {p.speed * RPM:.0f} rpm, "
        f"amplification factor {p.amplification:.1f}")
# -

# Checks: the peaks of the response lie at the Campbell diagram's critical speeds (a lightly
# damped mode peaks where its damped frequency crosses 1x), and every mode is stable here.

# +
crit = np.array([c.speed for c in table.critical_speeds])
if not QUICK:
    for p in resp.critical_speeds:
        assert np.min(np.abs(crit - p.speed)) < 5e-3 * p.speed, (p, crit)
assert np.all(table.stable)
# -
