"""Time integration of the Maggi-reduced equations of motion with PETSc TS.

Three formulations (``docs/theory.md`` sections 2 and 4), each on a typed system
(:meth:`dolfinx_mbs.Model.system`, :mod:`dolfinx_mbs.systems`; q the independent coordinates);
their residuals and Jacobians are in :mod:`dolfinx_mbs.integrate.ts.second_order` and
:mod:`dolfinx_mbs.integrate.ts.first_order`, and what a run records
(energies, probes, reactions, CSV, field files, progress) are observers
(:mod:`dolfinx_mbs.integrate.observers`):

* ``"second-order"``: M q'' + C q' + K q = f, as an I2 function; TSALPHA2 (generalized-alpha)
  by default, spectral radius settable.
* ``"first-order"``: y = (q, v): q' - v = 0, M v' + C v + K q = f, for any implicit TS
  (default TSTHETA, theta = 1/2 with endpoint: Crank-Nicolson). With velocity constraints
  (:meth:`dolfinx_mbs.Model.constrain_velocity`) y = (q, w), w the independent velocities:
  q' - A_n w - a_n = 0, M_w w' + C_w w + K_w q = f_w (:mod:`dolfinx_mbs.systems.velocity`); the
  only formulation that takes them.
* ``"hamiltonian"``: y = (q, p) with p the generalized momentum: M q' + G_p q + pi_0 - p = 0,
  p' + (G_p + D) q' + (K + K_omega) q + h - f_a = 0; the block "mass" [[M, 0], [G_p, I]], no
  inverse of M is formed. Default: implicit midpoint (TSTHETA, theta = 1/2, no endpoint), which
  conserves the Jacobi integral of a steadily spinning body.

Every step is one linear solve: the equations are linear in the unknowns, so the TS's
nonlinear solver is a single Newton step with one residual evaluation (``-mbs_snes_type
newtonls`` restores PETSc's Newton, e.g. to watch its residuals). Bodies with
``stiffening="nonlinear"`` (St Venant-Kirchhoff) add A^T n(Delta) to the residual and
A^T K_n(Delta) A to the Jacobian; such models step with PETSc's Newton (``newtonls``), the
tangent formed at every iteration. The TS reads the PETSc options
database with the prefix ``mbs_`` (``-mbs_ts_type bdf``,
``-mbs_ts_adapt_type basic``, ``-mbs_ts_alpha_radius 0.8``, ``-mbs_ksp_type``...). Linear
solves default to a direct LU factorization (MUMPS); the first-order and Hamilton step systems
go through their exact Schur complement on n unknowns (PCFIELDSPLIT, the eliminated block being
a I). With ``-mbs_pc_type gamg`` the second-order Jacobian, or the 2n forms' Schur complement
(then solved by GMRES, :mod:`dolfinx_mbs.integrate.step_solvers`), carries the bodies' rigid-body
modes
as GAMG's near null space. For constraints that fix whole nodes the
second-order residual uses the node-block form of the inertia terms
(:func:`dolfinx_mbs.integrate.state_products.second_order_residual`): two matrix products instead
of three.

:func:`integrate` checks its arguments, groups them (:class:`~dolfinx_mbs.integrate.stepper.
RunSpec`: what the stepping reads; :class:`~dolfinx_mbs.integrate.config.Recording`: what the
observers read), lets :mod:`dolfinx_mbs.integrate.choice` pick and make the stepper
(:class:`~dolfinx_mbs.integrate.stepper.Stepper`: PETSc TS, the sparse path, the dense, exact
or batched dense paths) and hands both to the driver (:func:`dolfinx_mbs.integrate.driver.
drive`), which owns the observers, the checkpoints, the errors and the files whatever steps.
It takes the run's options as one :class:`~dolfinx_mbs.integrate.config.RunConfig`;
:meth:`dolfinx_mbs.Model.integrate` keeps the flat keywords as its short form and builds the
config from them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from dolfinx_mbs.integrate import checkpoint
from dolfinx_mbs.integrate.choice import choose, make
from dolfinx_mbs.integrate.config import Recording, RunConfig, step_callback
from dolfinx_mbs.integrate.dense.exact import LoadBasis
from dolfinx_mbs.integrate.driver import Result, drive
from dolfinx_mbs.integrate.step_solvers import multigrid
from dolfinx_mbs.integrate.stepper import RunSpec
from dolfinx_mbs.petsc_options import SolverOptions
from dolfinx_mbs.systems.films import has_films

if TYPE_CHECKING:
    from dolfinx_mbs.integrate.config import RunSystem
    from dolfinx_mbs.systems.drives import Drives

__all__ = ["integrate", "Result", "FORMULATIONS"]

log = logging.getLogger(__name__)

#: the formulations a run takes (``integrate(..., formulation=)``)
FORMULATIONS = ("second-order", "first-order", "hamiltonian")


def integrate(system: RunSystem, config: RunConfig, drives: Drives | None = None) -> Result:
    """Integrate ``system`` from ``config.t0`` to ``config.t_end``.

    ``config`` (:class:`~dolfinx_mbs.integrate.config.RunConfig`) holds the run's options in
    parts; :meth:`dolfinx_mbs.Model.integrate` makes it of its keywords, whose names are
    those below (the part that holds each in brackets).

    Args:
        system: the typed system of the formulation (``model.system(formulation,
            constraints)``; :meth:`dolfinx_mbs.Model.integrate` makes it).
        config: the run's options, by the keyword that sets each (the part that holds it
            in brackets):

            * ``t_end``: final time (s).
            * ``dt``: time step (s); the initial one when adaptivity is switched on by options.
            * ``formulation`` (scheme): ``"second-order"``, ``"first-order"`` or ``"hamiltonian"``.
            * ``t0`` (initial): initial time.
            * ``u0`` (initial): initial displacement (relative to the frame): None (zero), a
              Function per body, or a PETSc Vec in full or reduced layout.
            * ``v0`` (initial): initial velocity (relative to the frame), as ``u0``.
            * ``p0`` (initial): initial generalized momentum (Hamilton's form only; replaces v0), as
              u0.
            * ``probes`` (observers): points of the first body, or (body, point) pairs, to record u
              at.
            * ``output`` (output.stem): file stem: ``<output>.csv`` gets time, probes and energies
              row by row, and ``<output>_<body>.bp`` (VTX; ``.xdmf`` on DOLFINx 0.5, see
              :class:`dolfinx_mbs.io.FieldFile`) the displacement (body frame) and the global
              motion.
            * ``output_every`` (output.every): write the fields every this many steps (the CSV gets
              every step).
            * ``spectral_radius`` (scheme): generalized-alpha's high-frequency spectral radius
              (second-order only).
            * ``progress`` (output): show a progress bar (rank 0) when tqdm is available.
            * ``options`` (solver): PETSc options for this run, without the prefix, e.g.
              ``{"ts_type": "bdf", "ts_adapt_type": "basic"}``; they override the options database,
              and are in it only while the run's solvers read it (when they are set up), never while
              a callback runs. Options PETSc reads at the end of a solve (the ``*_view`` family)
              have to go in the database.
            * ``prefix`` (solver): PETSc options prefix of the TS.
            * ``reactions`` (observers): True (every constraint) or a list of constraints whose
              resultant forces are recorded at every step (``Result.reactions``, global components,
              also in the CSV; ``Result.reactions_frame``, the body frame's components).
            * ``energy`` (observers): record the energies (2-3 mat-vecs a step, shared with the
              residual); False leaves ``Result.energy`` empty.
            * ``callback`` (observers): ``callback(state)``, called at every output time with a
              :class:`~dolfinx_mbs.integrate.config.StepState` whose ``u`` and ``v`` are the full
              displacement and velocity (PETSc Vecs in the full layout, valid during the call),
              collectively on every rank (``callback(t, u, v)``: deprecated).
            * ``checkpoint_every`` (checkpoints.every): write the state needed to continue every
              this many steps, and at the end, into ``<output>.ckpt``
              (:mod:`dolfinx_mbs.integrate.checkpoint`); needs ``output``.
            * ``restart`` (checkpoints): continue from the last checkpoint of ``output`` (same
              ranks, model and formulation; ``t0``, ``u0``, ``v0``, ``p0`` come from it and ``dt``
              is its next step): the CSV and field files keep their rows up to the checkpoint's time
              and get the new ones appended; the result holds the history from the checkpoint on.
            * ``stability`` (observers): ``"warn"`` (default), ``"error"`` or ``"off"``: the frames'
              state is checked for divergence at the first step and whenever it changed (every tenth
              step or less often, at most about 50 checks a run; one factorization of the stiffness
              each, or, when the step solver is multigrid (``pc_type gamg``), the lowest eigenvalues
              by LOBPCG preconditioned with GAMG instead, :mod:`dolfinx_mbs.integrate.stability`);
              an unstable state gives an
              :class:`~dolfinx_mbs.integrate.stability.InstabilityWarning` (or raises
              :class:`~dolfinx_mbs.integrate.stability.InstabilityError`) naming the time, the
              growth rate and where the mode moves most, listed in ``Result.instabilities``.
            * ``stepper`` (scheme): ``"ts"``: PETSc TS; ``"dense"``: the same schemes on the
              operators gathered densely on every rank (:mod:`dolfinx_mbs.integrate.dense.stepper`:
              TS's steps to round-off; linear systems, no multipliers, velocity rows or
              checkpoints); ``"exact"``: a constant frame state's exact solution at the steps
              (matrix exponential), whatever ``dt``; ``"linear"``: the TS path's steps (TSALPHA2, or
              Hamilton's implicit midpoint) on the sparse operators of a constant frame state
              without TS (:mod:`dolfinx_mbs.integrate.sparse.alpha2`,
              :mod:`dolfinx_mbs.integrate.sparse.midpoint`: one factorization, one pass over the
              mass a step; second-order and hamiltonian forms, no reactions or checkpoints; its step
              solver reads the ``ksp_``, ``pc_`` and ``mat_`` options under ``prefix``, e.g.
              ``-mbs_pc_type gamg``); ``"auto"``: ``"dense"`` up to
              :data:`dolfinx_mbs.integrate.choice.DENSE_MAX` unknowns (``DENSE_MAX_VARYING`` where
              frames change in time), ``"linear"`` above it where that applies, when no checkpoint
              and no PETSc option under ``prefix`` is given, or only the step solver's (then
              ``"linear"`` where it applies, whatever the size), else ``"ts"``. The log (INFO) says
              which.
            * ``load_degree`` (scheme): the dense paths fit the loads of a constant frame state on
              polynomials of degree <= ``load_degree`` and the sines and cosines of
              ``load_frequencies``: ``"exact"`` needs the fit (an error otherwise), ``"dense"``
              assembles no load per step where it holds.
            * ``load_frequencies`` (scheme): the angular frequencies (rad/s) of the dense paths'
              load fit.
        drives: a :class:`dolfinx_mbs.systems.drives.Drives` (``Model.integrate(...,
            drives=True)`` makes it): the force and torque that drive each prescribed frame,
            recorded at every step in ``Result.frames`` (``force``, ``torque``, global
            components, the torque about the frame's origin) and the CSV; on the TS path.

    SIGTERM and SIGINT during the run finish the step in progress, write a checkpoint (when
    ``checkpoint_every`` is given), close every file and raise SystemExit (SIGTERM) or
    KeyboardInterrupt (SIGINT) on every rank; the former handlers are restored after the run.

    Returns:
        A :class:`Result`; each body's ``u`` holds the final displacement.

    Raises:
        ValueError: bad arguments (on every rank).
        RuntimeError: a step failed; the message gives the time and PETSc's reason.
    """
    sch, ini, out, obs = config.scheme, config.initial, config.output, config.observers
    formulation = sch.formulation or "second-order"
    options = None if config.solver.options is None else dict(config.solver.options)
    prefix = config.solver.prefix
    if sch.spectral_radius is not None:
        if formulation != "second-order":
            raise ValueError("spectral_radius applies to the second-order formulation only")
        options = dict(options or {}, ts_alpha_radius=sch.spectral_radius)
    if ini.p0 is not None and formulation != "hamiltonian":
        raise ValueError("p0 (initial momentum) applies to the hamiltonian formulation only")
    if has_films(system) and (formulation != "second-order" or
                              getattr(system, "films", None) is None):
        raise ValueError(f"a model with fluid-film bearings (Model.bearing(journal=)) runs "
                         f"with formulation='second-order' and constraints='maggi' (their "
                         f"nonlinear force), got formulation {formulation!r} on a "
                         f"{type(system).__name__}")
    if obs.drives != (drives is not None):
        raise ValueError("observers.drives is True but no drives were given (Model.integrate("
                         "..., drives=True) makes them)" if obs.drives else
                         "drives were given but observers.drives is False: give "
                         "Observers(drives=True) with them")
    ckpt = checkpoint.arguments(out.stem, config.checkpoints, formulation, ini.given(),
                                options, prefix)
    run = RunSpec(formulation=formulation, t0=config.t0, t_end=config.t_end, dt=config.dt,
                  spectral_radius=sch.spectral_radius, options=options, prefix=prefix,
                  reactions=obs.reactions, energy=obs.energy,
                  load_basis=LoadBasis(sch.load_degree, sch.load_frequencies),
                  checkpoints=ckpt.every is not None or ckpt.restart,
                  drives=drives is not None)
    path = choose(system, run, sch.stepper)
    if formulation not in getattr(system, "formulations", ()):
        raise ValueError(f"formulation {formulation!r} does not apply to a "
                         f"{type(system).__name__} (it takes {system.formulations})")
    callback = None if obs.callback is None else step_callback(obs.callback, "t, u, v")
    rec = Recording(probes=obs.probes, output=out.stem, output_every=out.every,
                    progress=out.progress, reactions=obs.reactions, energy=obs.energy,
                    callback=callback, stability=obs.stability,
                    multigrid=multigrid(SolverOptions(prefix, {}, options)), drives=drives)
    try:
        return drive(system, make(system, run, path), run, rec, ini.given(), ckpt.restart,
                     ckpt.every)
    except checkpoint.Interrupted as e:
        raise e.exit() from None
