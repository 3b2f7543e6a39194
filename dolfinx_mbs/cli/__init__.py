"""The ``dolfinx-mbs`` command and what it runs: case files (TOML, checked keys, safe
expressions), the model built from a case through the public API, its analyses, and sweeps of
its parameters (in-process or as MPI jobs). ``python -m dolfinx_mbs.cli`` runs the command.

The command line is a user of the public API, like a script: nothing below it imports it.
"""

from dolfinx_mbs.cli.case import Case, CaseError
from dolfinx_mbs.cli.main import main, parser

__all__ = ["Case", "CaseError", "main", "parser"]
