"""Section 10 of the validation report (cyclic symmetry), computed here; ``docs/validation.py``
calls :func:`section`, and ``python docs/validation_cyclic.py`` prints the section alone.
"""

import pathlib
import sys
import time

import numpy as np
from mpi4py import MPI

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import dolfinx_mbs as mbs  # noqa: E402
from dolfinx_mbs import meshes  # noqa: E402
from tests.models import plates  # noqa: E402
from tests.models.wheels import sector_model, union_below, wheel_model  # noqa: E402

PLATE = dict(a=1.0, b=0.5, h=0.01, E=210e9, nu=0.3, rho=7850.0)


def _wheel_rows(out):
    out("| N | speed [rad/s] | stiffening, Coriolis | frequencies compared | max rel. difference "
        "| sector [s] | whole wheel [s] |")
    out("|---:|---:|---|---:|---:|---:|---:|")
    for n_sec, rate, stiff in ((6, 0.0, None), (7, 2500.0, "prestress"), (8, 2500.0, "prestress"),
                               (12, 2500.0, "prestress"), (6, 3000.0, "nonlinear")):
        spin = rate != 0.0
        t0 = time.perf_counter()
        model, body, sector, msh = sector_model(n_sec, rate, stiffening=stiff)
        per_k = {k: model.natural_frequencies(n=6, harmonic=k, gyroscopic=spin)
                 for k in sector.harmonics}
        ts = time.perf_counter() - t0
        union, _ = union_below(per_k, n_sec)
        t0 = time.perf_counter()
        wheel = mbs.cyclic.WheelMesh(msh, sector)
        wmodel, _ = wheel_model(wheel, rate, stiffening=stiff)
        whole = wmodel.natural_frequencies(n=len(union), gyroscopic=spin)
        tw = time.perf_counter() - t0
        err = np.abs(whole - union).max() / union.max()
        out(f"| {n_sec} | {rate:g} | {stiff or 'none'}, {'yes' if spin else 'no'} | "
            f"{len(union)} | {err:.1e} | {ts:.1f} | {tw:.1f} |")


def _condensed_rows(out):
    out("| N | speed [rad/s] | stiffening | frequencies compared | max rel. difference "
        "| at once [s] | one index at a time [s] |")
    out("|---:|---:|---|---:|---:|---:|---:|")
    for n_sec, rate, stiff in ((6, 0.0, None), (7, 2500.0, "prestress"),
                               (12, 2500.0, "prestress")):
        model, body, sector, msh = sector_model(n_sec, rate, stiffening=stiff)
        t0 = time.perf_counter()
        spec = model.harmonic_frequencies(n=6)
        tc = time.perf_counter() - t0
        assert set(spec.method) == {"condensed"}, spec.reason
        t0 = time.perf_counter()
        for k in sector.harmonics:
            model.natural_frequencies(n=6, harmonic=k)
        tk = time.perf_counter() - t0
        union, _ = union_below({int(k): w for k, w in zip(spec.harmonic, spec.frequencies)},
                               n_sec)
        wheel = mbs.cyclic.WheelMesh(msh, sector)
        wmodel, _ = wheel_model(wheel, rate, stiffening=stiff)
        whole = wmodel.natural_frequencies(n=len(union))
        err = np.abs(whole - union).max() / union.max()
        out(f"| {n_sec} | {rate:g} | {stiff or 'none'} | {len(union)} | {err:.1e} | "
            f"{tc:.1f} | {tk:.1f} |")


def _plate(cells):
    p = PLATE
    msh, _, ft = meshes.disk_sector(n_sectors=12, inner_radius=p["b"], outer_radius=p["a"],
                                    thickness=p["h"], cells=cells)
    sector = mbs.cyclic.Sector(12, low=(ft, meshes.LOW), high=(ft, meshes.HIGH))
    body = mbs.Body(msh, mbs.materials.LinearElastic(E=p["E"], nu=p["nu"], density=p["rho"]),
                    mbs.frames.ConstantSpin(rate=0.0), degree=2, cyclic=sector)
    model = mbs.Model([body])
    model.clamp(body, facets=(ft, meshes.BORE))
    dofs = body.V.dofmap.index_map.size_global * 3
    return [model.natural_frequencies(n=1, harmonic=k)[0] for k in range(7)], dofs


def section(out):
    """Append section 10 to the report through ``out``."""
    p = PLATE
    out()
    out("## 10. Cyclic symmetry: a wheel from one sector")
    out()
    out("A sector of an annular disk (bore 50 mm, rim 150 mm, 10 mm thick; 3 x 2 x 1 Q2 "
        "hexahedra mapped to the sector, clamped at the bore) against the whole wheel meshed "
        "as one body (the same sector mesh turned N times and merged, `cyclic.WheelMesh`): "
        "every frequency of the wheel below the sector lists' common top (the 6 lowest of each "
        "harmonic index k = 0 ... floor(N/2); each 0 < k < N/2 a pair of the wheel), "
        "`tests/cyclic/test_wheel.py`, which also runs on 2 ranks and on DOLFINx 0.5.2:")
    out()
    _wheel_rows(out)
    out()
    out("Every harmonic index at once, `model.harmonic_frequencies(n=6)` "
        "(`dolfinx_mbs.cyclic.condensed`: the sector's interior factored once, its Schur "
        "complement on the cut faces, a dense face operator per index, Lanczos for all indices "
        "in lock step), against the same whole wheel without the Coriolis coupling "
        "(`tests/cyclic/test_condensed.py`, also on 2 ranks; the times on these small sectors "
        "include, in the first column, the model's set-up: the prestress; the 24-blade "
        "wheel's in `bench/results/cyclic.md`):")
    out()
    _condensed_rows(out)
    out()
    out("A thin annular plate clamped at its bore b and free at its rim a (b/a = 0.5, "
        f"h/a = {p['h'] / p['a']:g}, nu = {p['nu']}) from a sector of 12 (curved Q2 "
        "hexahedra of `meshes.disk_sector`, one through the thickness), the lowest frequency of "
        "each harmonic index k = n, against the first root of Kirchhoff's characteristic "
        "determinant in Bessel functions J_n, Y_n, I_n, K_n (clamped: W = W' = 0; free: the "
        "radial moment and the Kirchhoff shear zero; `tests/models/plates.py`, its roots "
        "checked against the plate's ODE shot from the clamped edge to 1e-9), as "
        "lambda^2 a^2 = w a^2 (rho h / D)^(1/2):")
    out()
    coarse, nc = _plate((8, 6, 1))
    fine, nf = _plate((16, 12, 1))
    out(f"| n | Kirchhoff lambda^2 a^2 | {nc} dofs (8 x 6 cells) | error | {nf} dofs "
        "(16 x 12 cells) | error |")
    out("|---:|---:|---:|---:|---:|---:|")
    D = p["E"] * p["h"] ** 3 / (12 * (1 - p["nu"] ** 2))
    scale = p["a"] ** 2 * np.sqrt(p["rho"] * p["h"] / D)
    for n in range(7):
        ref = plates.roots(n, p["b"] / p["a"], p["nu"], 1)[0] ** 2
        out(f"| {n} | {ref:.4f} | {coarse[n] * scale:.4f} | {coarse[n] * scale / ref - 1:+.2%} "
            f"| {fine[n] * scale:.4f} | {fine[n] * scale / ref - 1:+.2%} |")
    out()
    out("The travelling direction of the sector's Campbell table (forward: along the spin) is "
        "checked against the phase lag of the whole wheel's own complex modes, an expanded "
        "sector mode against the wheel's quadratic eigenproblem, the k = 0 static state "
        "against the wheel's (`tests/cyclic/test_wheel.py`), and the Campbell table per "
        "harmonic index against independent solves at each speed "
        "(`tests/campbell/test_harmonics.py`). The cost per harmonic index: "
        "`bench/results/cyclic.md`.")


if __name__ == "__main__":
    lines = []
    section(lambda s="": lines.append(s))
    if MPI.COMM_WORLD.rank == 0:
        print("\n".join(lines))
