"""docs/layout.md names every module of the package, and only modules that exist.

The table's first column names a part (a top-level module or a subpackage, dotted for a
backend: ``integrate.ts``) and, in parentheses, its modules: a plain name is a module of that
part, a dotted one (``with `frames.stationary```) a module of another part it draws on. Every
module file of ``dolfinx_mbs`` (a subpackage counts by its own name, its ``__init__`` being its
face) must be named there, and every name there must be a module or a subpackage. Read from
the files, without importing the package.
"""

import re

import pytest

from tests.models import ROOT

PACKAGE = ROOT / "dolfinx_mbs"
LAYOUT = ROOT / "docs" / "layout.md"


def _modules():
    """Dotted names (after ``dolfinx_mbs``) of the package's modules and subpackages."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:   # (the package's own __init__: the user's face, no part)
            out.add(".".join(parts))
    return out


def _named():
    """What the table's first column names: {dotted name: the row's part}."""
    named = {}
    for line in LAYOUT.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        cell = line.split("|")[1]
        part = re.match(r"\s*`([^`]+)`", cell).group(1)
        named[part] = part
        inner = re.search(r"\((.*)\)", cell)
        for name in re.findall(r"`([^`]+)`", inner.group(1) if inner else ""):
            named[name if "." in name else f"{part}.{name}"] = part
    return named


@pytest.mark.serial
def test_layout_names_every_module():
    named = _named()
    assert named, f"{LAYOUT.relative_to(ROOT)} has no table of parts"
    missing = sorted(_modules() - set(named))
    assert not missing, (f"modules missing from {LAYOUT.relative_to(ROOT)} (add them to their "
                         "part's row with their role): " + ", ".join(missing))


@pytest.mark.serial
def test_layout_names_only_modules_that_exist():
    modules = _modules()
    gone = sorted(f"{name} (row {part})" for name, part in _named().items()
                  if name not in modules)
    assert not gone, (f"{LAYOUT.relative_to(ROOT)} names modules that do not exist: "
                      + ", ".join(gone))
