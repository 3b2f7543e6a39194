"""Many models one after another in one process (issue 16's communicator leak): a parameter
study's loop over spin speeds, each building a model, solving it and integrating it, must not
use up MPI communicators. Each model left ~12 behind on 2 ranks (the PETSc garbage of its
meshes' communicators, out of reach once DOLFINx freed them): MPICH has 2048, and a 2-rank
process aborted after ~170 models (``dolfinx_mbs.lifetime``)."""

import numpy as np
import pytest
from mpi4py import MPI

import dolfinx_mbs as mbs
from tests.models.rodmodel import axial_rod, rod_exact, tip_displacement

MPICH = "MPICH" in MPI.Get_library_version()
W1 = float(rod_exact(0.0, 1)[1][0])  # first axial frequency at rest (rad/s)


def free_communicators(limit: int = 4096) -> int:
    """How many more communicators this process can make (MPICH: 2048 context ids in all);
    ``limit`` where MPI has no such limit in reach."""
    made = []
    try:
        for _ in range(limit):
            made.append(MPI.COMM_SELF.Dup())
    except MPI.Exception:
        pass
    for c in made:
        c.Free()
    return len(made)


def one_study_point(omega: float) -> float:
    """A model at spin ``omega``: static solve (MUMPS: LU and the inertia's LDL^T), lowest
    frequency (SLEPc) and a short Hamilton run on the PETSc TS path; returns the relative
    error of the static tip elongation against the closed form."""
    model, body = axial_rod(MPI.COMM_WORLD, 3, omega, 3, None, 2)
    u0 = model.solve_static()
    tip = tip_displacement(body)
    w = model.natural_frequencies(n=1)
    r = model.integrate(t_end=3e-5, dt=1e-5, formulation="hamiltonian", u0=u0,
                        progress=False, stepper="ts")
    assert r.steps == 3
    tip_ex, w_ex = rod_exact(omega, 1)
    assert abs(w[0] / w_ex[0] - 1.0) < 1e-3, (omega, w, w_ex)
    return abs(tip / tip_ex - 1.0)


@pytest.mark.skipif(not MPICH, reason="counts MPICH's communicators (2048 context ids)")
def test_a_loop_of_models_releases_its_communicators():
    """A loop over 8 spin speeds after 2 warm-up models: the communicators in use after the
    loop are those after the warm-up (within one model's worth: the last model's garbage is
    destroyed when the next model is made). Each point's static tip elongation within 1e-3
    of the closed form. Before the fix: ~12 more communicators a model on 2 ranks."""
    for omega in (0.1 * W1, 0.2 * W1):
        one_study_point(omega)
    before = free_communicators()
    # models of earlier tests that something still holds stay registered: count from here
    held = mbs.lifetime.registered()
    errors = [one_study_point(omega) for omega in np.linspace(0.05, 0.6, 8) * W1]
    after = free_communicators()
    assert max(errors) < 1e-3, errors
    assert before - after <= 12, (before, after)
    # the loop's models are released as the next is made: at most the last one stays
    assert mbs.lifetime.registered() <= held + 1, (held, mbs.lifetime.registered())


def test_forms_compiled_once_give_the_same_vectors():
    """A model made again reuses the compiled code of its Hamilton load forms
    (``compat.form``): the vectors pi_0 and h of a second rod (other mesh, other spin) equal
    those DOLFINx's ``fem.form`` makes of the same forms, to round-off."""
    from dolfinx import fem

    from dolfinx_mbs import compat
    from dolfinx_mbs.assembly.body_loads import assembled

    for n, omega in ((3, 0.1 * W1), (4, 0.3 * W1)):
        _, body = axial_rod(MPI.COMM_WORLD, n, omega, 3, None, 2)
        body.set_state(body.frame.state(0.0))
        for name, a in body.momentum_forms().items():
            mine, ref = compat.form(a), fem.form(a)
            v, w = (assembled(compat.create_vector(f), f) for f in (mine, ref))
            assert w.norm() > 0.0, name
            assert (v - w).norm() <= 1e-13 * w.norm(), (n, name, (v - w).norm(), w.norm())
