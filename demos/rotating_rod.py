# # The rotating rod of seed 003: centrifugal elongation and spin softening
#
# A rod of length $L = 1$ m, mass 1 kg, cross-section $A = 0.2$ cm$^2$ and $E = 210$ GPa
# spins about the $z$-axis through its root at $\Omega$ (seed 003, `shared/seeds/README.md`).
# With Poisson's ratio zero and the transverse displacement clamped, the rod moves axially
# only and docs/theory.md section 6 gives closed forms:
#
# - steady elongation, $\beta = \Omega\sqrt{\rho/E}$:
#   $u(x) = \sin\beta x / (\beta\cos\beta L) - x$, tip $u(L) = \tan(\beta L)/\beta - L$;
# - axial frequencies softened by the spin:
#   $\omega_n^2 = (E/\rho)\,((2n-1)\pi/2L)^2 - \Omega^2$, divergence at $\Omega = \omega_1(0)$.
#
# The demo builds the rod as a 3D hexahedral mesh and as a 2D plane-stress strip, in its
# rotating frame, and compares. Run it with `make demo`, or `mpirun -n 2 python demos/rotating_rod.py`.

# +
import numpy as np
from dolfinx import mesh as dmesh
from mpi4py import MPI

import dolfinx_mbs as mbs

comm = MPI.COMM_WORLD
L, A, E, mass = 1.0, 0.2e-4, 210e9, 1.0
rho = mass / (A * L)
side = np.sqrt(A)
w1_rest = np.pi / (2 * L) * np.sqrt(E / rho)
N_ELEMENTS = 20


def say(*args):
    if comm.rank == 0:
        print(*args, flush=True)


# -
# A model: the rod's mesh in its local frame, a material, the spinning frame, and clamps
# (root fixed, transverse components fixed everywhere, so the motion is purely axial).

# +
def rod_model(omega, dim):
    frame = mbs.frames.ConstantSpin(axis=(0, 0, 1), rate=omega)
    if dim == 3:
        mesh = dmesh.create_box(comm, [np.zeros(3), np.array([L, side, side])],
                                [N_ELEMENTS, 1, 1], dmesh.CellType.hexahedron)
        material = mbs.materials.LinearElastic(E=E, nu=0.0, density=rho)
    else:
        mesh = dmesh.create_rectangle(comm, [np.zeros(2), np.array([L, side])],
                                      [N_ELEMENTS, 1], dmesh.CellType.quadrilateral)
        material = mbs.materials.PlaneStress(E=E, nu=0.0, density=rho, thickness=side)
    body = mbs.Body(mesh, material, frame, degree=2)
    model = mbs.Model([body])
    model.clamp(body, lambda x: np.isclose(x[0], 0.0))
    model.clamp(body, lambda x: np.full(x.shape[1], True), components=range(1, dim))
    return model, body


def tip_elongation(body):
    V = body.V
    n = V.dofmap.index_map.size_local
    x = V.tabulate_dof_coordinates()[:n]
    ux = body.u.x.array[: n * body.gdim].reshape(n, body.gdim)[:, 0]
    vals = ux[np.isclose(x[:, 0], L)]
    return comm.allreduce(vals.sum(), op=MPI.SUM) / comm.allreduce(len(vals), op=MPI.SUM)


# -
# Closed forms, and the comparison for the seed's spin and for a spin close to divergence.

# +
def exact(omega, n=3):
    beta = omega * np.sqrt(rho / E)
    k = (2 * np.arange(1, n + 1) - 1) * np.pi / (2 * L)
    return np.tan(beta * L) / beta - L, np.sqrt(E / rho * k**2 - omega**2)


say(f"rod: L = {L} m, rho = {rho:.0f} kg/m^3, E = {E:.3g} Pa, w1(0) = {w1_rest:.2f} rad/s; "
    f"{N_ELEMENTS} P2 elements, {comm.size} MPI rank(s)")
rows = []
for omega in (15.0, 0.5 * w1_rest, 0.9 * w1_rest):
    tip_ex, w_ex = exact(omega)
    for dim in (3, 2):
        model, body = rod_model(omega, dim)
        model.solve_static()
        tip = tip_elongation(body)
        w = model.natural_frequencies(n=3)
        rows.append((omega, dim, tip, tip_ex, w, w_ex))
        say(f"\nOmega = {omega:8.2f} rad/s ({omega / w1_rest:.2f} w1(0)), {dim}D mesh")
        say(f"  tip elongation  FE {tip:.9e} m   exact {tip_ex:.9e} m   "
            f"rel. error {abs(tip / tip_ex - 1):.1e}")
        for i in range(3):
            say(f"  w{i + 1}  FE {w[i]:12.4f} rad/s   exact {w_ex[i]:12.4f} rad/s   "
                f"rel. error {abs(w[i] / w_ex[i] - 1):.1e}")
# -

# Every figure above is computed; the largest relative error is the demo's verdict.

worst = max(max(abs(r[2] / r[3] - 1), np.max(np.abs(r[4] / r[5] - 1))) for r in rows)
say(f"\nlargest relative error against the closed forms: {worst:.2e}")
assert worst < 1e-3, "FE results disagree with the closed forms"
