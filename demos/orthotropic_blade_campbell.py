# # Campbell diagram of a twisted composite blade on a spinning hub, with prestress
#
# A carbon/epoxy blade (span 0.3 m, chord 0.05 m, 4 mm thick, pretwisted 30 degrees root to
# tip) is read from the committed gmsh mesh `meshes/twisted_blade.msh` with its tagged root
# face, clamped there to a hub of radius 0.05 m that spins about z. The fibres run along the
# span: an orthotropic law with E2 = E3 and G12 = G13 is transversely isotropic about the
# fibres, so the twist of the section (a rotation about the fibre axis) leaves the law
# unchanged and the material axes are the body axes.
#
# `stiffening="prestress"` adds the geometric stiffness of the centrifugal stress, and
# `model.campbell` tracks the four lowest branches over the speeds. The lowest branch is the
# first flapwise mode (out of the plane of rotation); for a slender cantilever its frequency
# follows Southwell's law w^2 = w0^2 + K Omega^2. The demo fits K on the computed branch, checks
# that the law holds at the other speeds, and compares K with the Euler-Bernoulli value for a
# uniform untwisted cantilever on a hub of radius r, K = 1.185 + 1.572 r / L (the first flap
# mode's low-speed slope of the beam with the tension N(x) = rho A Omega^2 ((L^2 - x^2) / 2 +
# r (L - x)), Hermite cubics, 80 elements: `tests/models/ebbeam.py`); the twist and the blade's
# width make the two differ by a few per cent (measured: 3.5 %).
#
# The first four mode shapes are drawn at rest and at the top speed (`mbs.plot.mode_shapes`).
#
# Run: `mpirun -n 2 python demos/orthotropic_blade_campbell.py` (`MBS_DEMO_QUICK=1`: fewer
# speeds). Output: `out/orthotropic_blade_campbell.csv` and `.png`, the mode shapes
# `out/blade_modes_<speed>.png` (with PyVista).

# +
import os

import numpy as np
from mpi4py import MPI

import dolfinx_mbs as mbs
from dolfinx_mbs import meshes

comm = MPI.COMM_WORLD
quick = os.environ.get("MBS_DEMO_QUICK") == "1"
# -

# ## Mesh, law, frame

# +
mesh, cell_tags, facet_tags = meshes.read("twisted_blade", comm)
span, r_hub = 0.3, 0.05
material = mbs.materials.Orthotropic(E=(140e9, 10e9, 10e9), nu=(0.3, 0.3, 0.4),
                                     G=(5e9, 5e9, 10e9 / (2 * 1.4)), density=1600.0)
frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=0.0, origin=(-r_hub, 0.0, 0.0))
body = mbs.Body(mesh, material, frame, degree=2, name="blade", stiffening="prestress")
model = mbs.Model([body])
model.clamp(body, facets=(facet_tags, meshes.ROOT))
# -

# ## Campbell sweep

# +
w0 = model.natural_frequencies(n=4)
speeds = np.linspace(0.0, 2.0 * w0[0], 5 if quick else 11)
table = model.campbell(speeds, n=4)
os.makedirs("out", exist_ok=True)
table.to_csv("out/orthotropic_blade_campbell.csv")
try:
    table.plot("out/orthotropic_blade_campbell.png")
    mbs.plot.show("out/orthotropic_blade_campbell.png")
except ImportError:  # matplotlib is optional
    pass
flap = np.asarray(table.frequencies)[:, 0]
K = (flap[-1] ** 2 - flap[0] ** 2) / speeds[-1] ** 2
law = np.sqrt(flap[0] ** 2 + K * speeds**2)
K_beam = 1.185 + 1.572 * r_hub / span
if comm.rank == 0:
    print("speeds [rad/s]          ", np.round(speeds, 1))
    print("first branch [rad/s]    ", np.round(flap, 2))
    print(f"Southwell fit K = {K:.4f} (uniform Euler-Bernoulli cantilever on this hub: "
          f"{K_beam:.4f}); largest deviation from the law "
          f"{np.abs(flap / law - 1).max():.1e}")
assert np.abs(flap / law - 1).max() < 1e-2
assert abs(K / K_beam - 1) < 0.1, (K, K_beam)
# -

# ## Mode shapes at rest and at the top speed
#
# The blade's first four modes, each at the phase of its largest motion and colored by its
# displacement relative to the largest (the undeformed blade in gray): the first is the
# flapwise bending whose stiffening the sweep followed. At speed the frame is the spinning
# one and the modes are complex (Coriolis couples the in-plane motions); the pictures show
# how little the shapes change while the frequencies rise. The frequencies of the kept shapes
# are the sweep's at rest and at the top speed.

# +
for speed in (0.0, speeds[-1]):
    spun = mbs.Body(mesh, material, mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=speed,
                                                            origin=(-r_hub, 0.0, 0.0)),
                    degree=2, name="blade", stiffening="prestress")
    spun_model = mbs.Model([spun])
    spun_model.clamp(spun, facets=(facet_tags, meshes.ROOT))
    m = spun_model.modes(n=4, damping=False, shapes=True)
    row = np.asarray(table.frequencies)[np.argmin(np.abs(speeds - speed))]
    assert np.allclose(m.frequencies, np.sort(row), rtol=1e-6), (m.frequencies, row)
    try:
        path = f"out/blade_modes_{speed:.0f}.png"
        mbs.plot.mode_shapes(m, path, columns=4, labels=[
            f"{f / (2 * np.pi):.1f} Hz at {speed:.0f} rad/s" for f in m.frequencies],
            window_size=(1200, 330))
        mbs.plot.show(path)
    except ImportError as err:  # PyVista is optional
        if comm.rank == 0:
            print(f"no mode shape pictures: {err}")
# -
