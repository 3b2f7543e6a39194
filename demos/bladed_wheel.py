# # A bladed wheel from one sector: Campbell diagrams per nodal diameter and the interference diagram
#
# A steel wheel of 24 blades: an annular disk (bore 50 mm, rim 200 mm, 20 mm thick) carrying
# 24 flat blades (100 mm long, 30 mm chord, 4 mm thick, staggered 30 degrees). The wheel is
# never meshed whole: one sector (a 15-degree slice of the disk with its blade, meshed with
# gmsh so that its two cut faces match node for node, `meshes.bladed_sector`) is the body,
# and `mbs.cyclic.Sector` says what the rest of the wheel is: 24 copies of it about z.
#
# A mode of the wheel has a harmonic index k = 0 ... 12 (its nodal diameters): sector j moves
# as the reference sector with the phase j k 2 pi / 24 (`docs/theory.md` section 10). Each k
# is a problem on the sector alone (for 0 < k < 12 on two copies of it, the cosine and sine
# parts), with the cut's rows eliminated by the Maggi reducer. The frame spins about the
# wheel's axis: centrifugal prestress (from the cyclic, k = 0, static problem), spin softening
# and Coriolis, which splits every pair of 0 < k < 12 into a forward and a backward travelling
# wave.
#
# Run: `mpirun -n 2 python demos/bladed_wheel.py`. Output in `out/`: the Campbell diagrams per
# nodal diameter `bladed_wheel_campbell.png` and `.csv`, the interference (ZZENF) diagram
# `bladed_wheel_zzenf.png`, a mode of the whole wheel `bladed_wheel_mode.png` (PyVista) and
# its fields `bladed_wheel_mode_wheel.bp` (ParaView; `.xdmf` on DOLFINx 0.5).

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
N = 24
RPM = np.linspace(0.0, 20000.0, 3 if QUICK else 5)
N_MODES = 4
HARMONICS = [0, 1] if QUICK else "all"   # the short version: two of the 13


def say(*a):
    if comm.rank == 0:
        print(*a, flush=True)


mesh, cells, facets = meshes.bladed_sector(comm, n_sectors=N, size=0.02 if QUICK else 0.01,
                                           blade_size=0.01 if QUICK else 0.006)
sector = mbs.cyclic.Sector(n_sectors=N, axis=(0, 0, 1), low=(facets, meshes.LOW),
                           high=(facets, meshes.HIGH))
steel = mbs.materials.LinearElastic(E=210e9, nu=0.3, density=7850.0)
wheel = mbs.Body(mesh, steel, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=0.0), degree=2,
                 name="wheel", stiffening="prestress", cyclic=sector)
model = mbs.Model([wheel])
model.clamp(wheel, facets=(facets, meshes.BORE), name="bore")
ndofs = wheel.V.dofmap.index_map.size_global * 3
say(f"one sector of {N}: {ndofs} dofs (the whole wheel would have about {N * ndofs}), "
    f"{comm.size} process(es)")
# -

# ## Frequencies at rest, per nodal diameter
#
# For 0 < k < 12 each frequency appears twice: the cosine and sine standing waves of the
# whole wheel's pair. The lowest family is the blades' first bending: at high k the disk
# hardly takes part and the frequencies gather at the clamped blade's.
# `harmonic_frequencies` gives every index from one factorization of the sector (its cut
# faces condensed once); `natural_frequencies(n, harmonic=k)` gives the same numbers one
# index at a time.

# +
t0 = time.perf_counter()
spectrum = model.harmonic_frequencies(n=4, harmonics=[1, 2] if QUICK else "all")
say(f"{len(spectrum.harmonic)} harmonic indices at once: {time.perf_counter() - t0:.1f} s "
    f"({', '.join(sorted(set(spectrum.method)))})")
for k, w in zip(spectrum.harmonic, spectrum.frequencies):
    say(f"k = {k:2d}:", np.round(w / (2 * np.pi), 1), "Hz")
# -

# ## Campbell diagrams per nodal diameter
#
# One sweep per harmonic index (13 of them; the test suite's short version takes two), with
# prestress, spin softening and Coriolis.
# `table.frequencies[speed, k, mode]` (rad/s, rotating frame) and `table.travelling` (+1 a
# wave travelling forward, along the spin; -1 backward; 0 standing).

# +
t0 = time.perf_counter()
table = model.campbell(RPM * np.pi / 30, n=N_MODES, harmonics=HARMONICS)
elapsed = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
say(f"{len(table.harmonic)} Campbell sweeps of {len(RPM)} speeds: {elapsed:.1f} s")
if comm.rank == 0:
    os.makedirs(OUT, exist_ok=True)
comm.Barrier()
table.to_csv(os.path.join(OUT, "bladed_wheel_campbell.csv"))
table.plot(os.path.join(OUT, "bladed_wheel_campbell.png"), engine_orders=range(1, 7),
           columns=5)
mbs.plot.show(os.path.join(OUT, "bladed_wheel_campbell.png"))
# -

# ## The interference diagram
#
# An engine order E (E upstream struts or vanes) excites only the harmonic index
# k = +/-E (mod 24), at E Omega in the rotating frame. The diagram draws each index's
# frequencies over the speeds, the engine orders' bands, and circles where they meet.

# +
mbs.plot.interference(table, os.path.join(OUT, "bladed_wheel_zzenf.png"),
                      engine_orders=range(1, 5))
mbs.plot.show(os.path.join(OUT, "bladed_wheel_zzenf.png"))
for c in table.interferences(range(1, 5)):
    kind = {1: "forward", -1: "backward", 0: "standing"}[c.travelling]
    say(f"engine order {c.order} meets k = {c.harmonic} (branch {c.mode}, {kind}) at "
        f"{c.speed * 30 / np.pi:.0f} rpm, {c.frequency / (2 * np.pi):.1f} Hz")
# -

# Checks: at rest the pairs of 0 < k < 12 are equal and standing; spinning, every pair is one
# forward and one backward wave; the engine orders' indices fold at N/2.

# +
hz = table.frequencies / (2 * np.pi)
two = (table.harmonic > 0) & (table.harmonic < N // 2)
assert np.allclose(hz[0][two][:, 0::2], hz[0][two][:, 1::2], rtol=1e-6), hz[0]
assert np.all(table.travelling[0] == 0)
top = table.travelling[-1][two]
assert np.all(np.sort(top, axis=1) == [-1, -1, 1, 1]), top
assert table.excited(25) == 1 and table.excited(23) == 1 and table.excited(36) == 12
say("checks passed")
# -

# ## A mode of the whole wheel
#
# The second family (the disk's two-nodal-diameter mode with the blades) at the top speed:
# the sector's complex mode (its cosine and sine copies) expanded to the 24 sectors, each
# turned and with its phase (`model.expand`), drawn with PyVista and written for ParaView.

# +
top_rate = float(RPM[-1] * np.pi / 30)
spun = mbs.Body(mesh, steel, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=top_rate),
                degree=2, name="wheel", stiffening="prestress", cyclic=sector)
spun_model = mbs.Model([spun])
spun_model.clamp(spun, facets=(facets, meshes.BORE), name="bore")
k = 2 if 2 in table.harmonic else 1
m = spun_model.modes(n=2, harmonic=k, shapes=True,
                     output=os.path.join(OUT, "bladed_wheel_mode"))
whole = spun_model.expand(m.shapes[0], harmonic=k)
say(f"k = {k} at {RPM[-1]:.0f} rpm: {np.round(m.frequencies / (2 * np.pi), 1)} Hz; the whole "
    f"wheel's mesh: {spun_model.wheel.wheel_mesh(0).n_nodes} nodes")
try:
    path = os.path.join(OUT, "bladed_wheel_mode.png")
    mbs.plot.mode_shapes([whole], path, labels=[
        f"k = {k}, {m.frequencies[0] / (2 * np.pi):.0f} Hz at {RPM[-1]:.0f} rpm"],
        scale=0.08, view="iso", window_size=(700, 560))
    mbs.plot.show(path)
except ImportError as err:  # PyVista is optional
    say(f"no picture: {err}")
# -
