"""A case from a TOML file: one body (mesh, material, frame), its constraints and loads, and the
analyses to run (static, frequencies, Campbell, transient), built with the package's public
API (:class:`~dolfinx_mbs.Body`, :class:`~dolfinx_mbs.Model`) as a script would.

    case = Case("rod.toml", overrides=[("parameters.A", 4e-5)])
    results = case.run(MPI.COMM_WORLD)          # {"static": {...}, "frequencies": {...}, ...}

The file (``demos/cases/*.toml`` are examples; README "Studies from the command line")::

    [parameters]            # named numbers; any string value elsewhere is an expression of them
    L = 1.0
    A = 2e-5
    [mesh]                  # type: box, rectangle, file (a .msh or committed mesh), gmsh (.geo)
    type = "box"
    size = ["L", "sqrt(A)", "sqrt(A)"]
    cells = [10, 1, 1]
    [material]              # law: a class of dolfinx_mbs.materials, its arguments as keys
    law = "LinearElastic"
    E = 210e9
    nu = 0.0
    density = "1 / (A * L)"
    [frame]                 # type: ConstantSpin, SpinUp, Planar, Prescribed, their arguments;
    type = "ConstantSpin"   # expressions of t become functions of time (Planar's theta, omega)
    rate = 15.0
    [body]
    degree = 2
    [[clamp]]               # where: an expression of x, y, z; or facets = "root" (a file's group)
    where = "near(x, 0)"
    [[load]]                # body_force, traction (+ where/facets) or point + force; local
    traction = ["1e3 / A * sin(200 * t)", 0, 0]
    where = "near(x, L)"
    [analysis.static]
    probes = {tip = ["L", 0, 0]}
    [analysis.frequencies]
    n = 3
    [analysis.transient]    # t_end, dt, probes, ...; output = "out/run" writes CSV and fields
    t_end = 0.01
    dt = 1e-5

Every key is checked before anything is built: an unknown one raises :class:`CaseError` naming
the file, the line and the key (with the nearest known key). The analyses live in
:mod:`dolfinx_mbs.cli.analyses`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dolfinx_mbs.cli import analyses
from dolfinx_mbs.cli.build import build
from dolfinx_mbs.cli.casefile import CaseError
from dolfinx_mbs.cli.reader import ANALYSES, FRAMES, MATERIALS, CaseReader

if TYPE_CHECKING:
    from mpi4py import MPI

__all__ = ["Case", "CaseError", "MATERIALS", "FRAMES", "ANALYSES"]


class Case(CaseReader):
    """A case file, checked, with its parameters evaluated (a
    :class:`~dolfinx_mbs.cli.reader.CaseReader`: its arguments ``path`` and ``overrides``, its
    attributes and its errors), that builds its model and runs its analyses.
    """

    def build(self, comm: MPI.Comm) -> tuple:
        """The model of the case on ``comm``: ``(model, body, facet_tags, groups)`` (see
        :func:`dolfinx_mbs.cli.build.build`).

        Args:
            comm: the communicator.

        Returns:
            ``(model, body, facet_tags, groups)``.
        """
        return build(self, comm)

    def run(self, comm: MPI.Comm, progress: bool = False) -> analyses.CaseResults:
        """Build the case on ``comm`` and run its analyses (collective): the results, the same
        on every rank (see :func:`dolfinx_mbs.cli.analyses.run`).

        Args:
            comm: the communicator.
            progress: show a progress bar.

        Returns:
            The :class:`~dolfinx_mbs.cli.analyses.CaseResults` (``results["frequencies"]``
            as the dict it was; ``results.to_json()`` as the JSON file has it).
        """
        return analyses.run(self, comm, progress=progress)
