# # Your own DOLFINx loop, spinning: the moving-frame forms added to a stock elastodynamics script
#
# A steel cantilever (1 m x 0.1 m x 0.04 m, clamped at x = 0) under a tip traction, integrated
# in time by a plain DOLFINx script written the way the DOLFINx elastodynamics tutorials write
# it: UFL residual in the generalized-alpha form, `ufl.lhs`/`ufl.rhs`, one linear solve per
# step, the Newmark updates of velocity and acceleration by hand. Here the parameters are
# alpha_m = alpha_f = 1/2, gamma = 1/2, beta = 1/4: Newmark's average acceleration (no numerical
# dissipation) in the tutorial's generalized-alpha form.
#
# The same script is then made to spin: the cantilever is a blade on a hub that spins up about
# z from rest to Omega = 100 rad/s (Kane-Ryan-Banerjee ramp, `frames.SpinUp`). In its rotating
# frame the equations gain the Coriolis, spin-softening and angular-acceleration terms and the
# frame-inertia load (docs/theory.md section 2). The plugin supplies them as UFL forms
# (`dolfinx_mbs.forms`) and the frame's state as UFL constants (`frame.constants(mesh)`); the
# script's solver loop stays its own. The whole change to the stock script:
#
# ```diff
# +import dolfinx_mbs as mbs
# +frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=100.0, ramp_time=T_ramp)
# +c = frame.constants(domain)
# +F = mbs.forms
#  res = m(avg(a_old, a_new, alpha_m), w) + k(avg(u_old, du, alpha_f), w) - l_ext(w)
# +u_a, v_a = avg(u_old, du, alpha_f), avg(v_old, v_new, alpha_f)
# +res += (F.gyroscopic(rho, c.omega, v_a, w) + F.spin_softening(rho, c.omega, u_a, w)
# +        + F.angular_acceleration(rho, c.alpha, u_a, w)
# +        - F.frame_inertia_load(rho, c.omega, c.alpha, c.a_O, X, w))
#  for n in range(steps):
#      t_a = (n + 1 - alpha_f) * dt
# +    c.update(t_a)                    # the frame state at the stage time
# -    (the step matrix assembled once before the loop)
# +    (the step matrix re-assembled: it now depends on omega(t) and alpha(t))
# ```
#
# The demo then checks the script against the plugin's own route (`Body`, `Model`,
# `model.integrate`, the same mesh and scheme). The frequencies at full speed computed from the
# script's own matrices agree with `model.natural_frequencies` to 2e-11 serially and 1.0e-10
# on 2 ranks (asserted: 5e-10; both solved to a residual of 1e-13, and a tighter one changes
# nothing). The tip histories agree to 3e-10 of the largest tip deflection after 150 steps
# (asserted: 1e-9): that is the script's own round-off, not a difference of the schemes: the
# script's acceleration update divides by beta dt^2 = 1e-6, and writing it in another order
# with another LU changes the script's history by the same amount (measured: 3.3e-10 and
# 5.7e-10 from the plugin's).
#
# Run: `mpirun -n 2 python demos/spinning_cantilever_ufl.py` (`MBS_DEMO_QUICK=1`: fewer steps).

# +
import os

import numpy as np
import ufl
from dolfinx import fem
from dolfinx import mesh as dmesh
from dolfinx.fem import petsc as fpetsc
from mpi4py import MPI  # first: DOLFINx's PyPI wheel loads its MPI through mpi4py
from petsc4py import PETSc

import dolfinx_mbs as mbs
from dolfinx_mbs import compat

comm = MPI.COMM_WORLD
quick = os.environ.get("MBS_DEMO_QUICK") == "1"
# -

# ## The stock script: mesh, material, loads, generalized-alpha in UFL

# +
L, B, H = 1.0, 0.1, 0.04
domain = dmesh.create_box(comm, [np.zeros(3), np.array([L, B, H])], [20, 4, 2],
                          dmesh.CellType.hexahedron)
E, nu, rho = 210e9, 0.3, 7800.0
T_ramp = 0.2
dt = 2e-3
steps = 20 if quick else 150

V = compat.vector_space(domain, 1)
fdim = domain.topology.dim - 1
root = dmesh.locate_entities_boundary(domain, fdim, lambda x: np.isclose(x[0], 0.0))
bc = fem.dirichletbc(np.zeros(3, dtype=compat.scalar_type),
                     fem.locate_dofs_topological(V, fdim, root), V)
tip = dmesh.locate_entities_boundary(domain, fdim, lambda x: np.isclose(x[0], L))
tags = dmesh.meshtags(domain, fdim, np.sort(tip).astype(np.int32),
                      np.full(len(tip), 1, dtype=np.int32))
ds = ufl.Measure("ds", domain=domain, subdomain_data=tags)


def tip_traction(t):
    """Flapwise (z) traction on the tip face, ramped in with the spin (Pa)."""
    return np.array([0.0, 0.0, -2e5 * min(t / T_ramp, 1.0)])


traction = fem.Constant(domain, np.zeros(3, dtype=compat.scalar_type))
mu, lmbda = E / (2 * (1 + nu)), E * nu / ((1 + nu) * (1 - 2 * nu))


def eps(w):
    return ufl.sym(ufl.grad(w))


def sigma(w):
    return 2 * mu * eps(w) + lmbda * ufl.tr(eps(w)) * ufl.Identity(3)


def m(a, w):
    return rho * ufl.inner(a, w) * ufl.dx


def k(u, w):
    return ufl.inner(sigma(u), eps(w)) * ufl.dx


def l_ext(w):
    return ufl.inner(traction, w) * ds(1)


alpha_m = alpha_f = 0.5
gamma, beta = 0.5, 0.25
du, w = ufl.TrialFunction(V), ufl.TestFunction(V)
u, u_old, v_old, a_old = (fem.Function(V) for _ in range(4))


def avg(x_old, x_new, alpha):
    return alpha * x_old + (1 - alpha) * x_new


a_new = (du - u_old - dt * v_old) / (beta * dt**2) - (1 - 2 * beta) / (2 * beta) * a_old
v_new = v_old + dt * ((1 - gamma) * a_old + gamma * a_new)
res = m(avg(a_old, a_new, alpha_m), w) + k(avg(u_old, du, alpha_f), w) - l_ext(w)
# -

# ## The spinning additions

# +
frame = mbs.frames.SpinUp(axis=(0, 0, 1), final_rate=100.0, ramp_time=T_ramp)
c = frame.constants(domain)
F = mbs.forms
X = ufl.SpatialCoordinate(domain)
u_a, v_a = avg(u_old, du, alpha_f), avg(v_old, v_new, alpha_f)
res += (F.gyroscopic(rho, c.omega, v_a, w) + F.spin_softening(rho, c.omega, u_a, w)
        + F.angular_acceleration(rho, c.alpha, u_a, w)
        - F.frame_inertia_load(rho, c.omega, c.alpha, c.a_O, X, w))
# -

# ## The script's own time loop

# +
a_form, l_form = fem.form(ufl.lhs(res)), fem.form(ufl.rhs(res))
A = fpetsc.create_matrix(a_form)
b = compat.create_vector(l_form)
solver = PETSc.KSP().create(comm)
solver.setType("preonly")
solver.getPC().setType("lu")
solver.getPC().setFactorSolverType("mumps")

# the tip node (x = L, y = z = 0): its owner reads u_z there
tip_node = fem.locate_dofs_geometrical(V, lambda x: np.isclose(x[0], L) & np.isclose(x[1], 0.0)
                                       & np.isclose(x[2], 0.0))
tip_node = tip_node[tip_node < V.dofmap.index_map.size_local]
bs = V.dofmap.index_map_bs


def tip_uz(f):
    val = f.x.array[bs * tip_node[0] + 2] if len(tip_node) else 0.0
    return comm.allreduce(val, op=MPI.SUM)


history = []
for n in range(steps):
    t_a = (n + 1 - alpha_f) * dt
    c.update(t_a)
    traction.value = tip_traction(t_a)
    A.zeroEntries()
    fpetsc.assemble_matrix(A, a_form, bcs=[bc])
    A.assemble()
    solver.setOperators(A)
    with b.localForm() as bl:
        bl.set(0.0)
    fpetsc.assemble_vector(b, l_form)
    fpetsc.apply_lifting(b, [a_form], [[bc]])
    b.ghostUpdate(addv=PETSc.InsertMode.ADD, mode=PETSc.ScatterMode.REVERSE)
    fpetsc.set_bc(b, [bc])
    solver.solve(b, compat.petsc_vec(u))
    u.x.scatter_forward()
    an = (u.x.array - u_old.x.array - dt * v_old.x.array) / (beta * dt**2) \
        - (1 - 2 * beta) / (2 * beta) * a_old.x.array
    v_old.x.array[:] = v_old.x.array + dt * ((1 - gamma) * a_old.x.array + gamma * an)
    a_old.x.array[:] = an
    u_old.x.array[:] = u.x.array
    history.append(tip_uz(u))
history = np.array(history)
if comm.rank == 0:
    print(f"script: {steps} steps of {dt:g} s, tip u_z at t = {steps * dt:g} s: "
          f"{history[-1]:.6e} m")
# -

# ## Frequencies at full speed from the script's matrices
#
# After the ramp the frame spins steadily at 100 rad/s. The script's mass, Coriolis and
# effective stiffness (K + K_omega) at that state, with the clamp as identity rows in K and
# zero rows in M and G (their eigenvalues are infinite), go to the plugin's gyroscopic
# eigensolver (SLEPc, shift-and-invert about 0).

# +
c.update(2 * T_ramp)
du_, w_ = ufl.TrialFunction(V), ufl.TestFunction(V)
K_s = fpetsc.assemble_matrix(fem.form(k(du_, w_) + F.spin_softening(rho, c.omega, du_, w_)),
                             bcs=[bc])
K_s.assemble()
M_s = fpetsc.assemble_matrix(fem.form(m(du_, w_)), [bc], 0.0)  # 0 on the clamped rows
M_s.assemble()
G_s = fpetsc.assemble_matrix(fem.form(F.gyroscopic(rho, c.omega, du_, w_)), [bc], 0.0)
G_s.assemble()
# both eigen-solves below read SLEPc options with the prefix mbs_modal_: converge them to 1e-13
PETSc.Options()["mbs_modal_pep_tol"] = 1e-13
w_script = mbs.modal.gyroscopic_frequencies(K_s, G_s, M_s, 4)
# -

# ## The same blade through the plugin's Body and Model

# +
body = mbs.Body(domain, mbs.materials.LinearElastic(E=E, nu=nu, density=rho), frame, degree=1)
body.add_traction(tip_traction, where=lambda x: np.isclose(x[0], L))
model = mbs.Model([body])
model.clamp(body, lambda x: np.isclose(x[0], 0.0))
result = model.integrate(t_end=steps * dt, dt=dt, spectral_radius=1.0,
                         probes=[(body, (L, 0.0, 0.0))], energy=False, progress=False)
tip_model = np.asarray(result.probes)[1:, 0, 2]
w_model = model.natural_frequencies(t=2 * T_ramp, n=4, gyroscopic=True)
PETSc.Options().delValue("mbs_modal_pep_tol")

d_tip = np.abs(history - tip_model).max() / np.abs(tip_model).max()
d_w = np.abs(w_script / w_model - 1).max()
if comm.rank == 0:
    print(f"tip history, script vs model.integrate: max difference {d_tip:.1e} "
          f"(relative to max |u_z| = {np.abs(tip_model).max():.3e} m)")
    print("frequencies at 100 rad/s [rad/s], script:", np.round(w_script, 4))
    print("                                   model: ", np.round(w_model, 4),
          f" (largest relative difference {d_w:.1e})")
assert d_tip < 1e-9, d_tip
assert d_w < 5e-10, d_w
# -
