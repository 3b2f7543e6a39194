"""The house's rules: imports between the package's parts only go down the flow; test modules
share builders through ``tests.models`` only.

Each part (a top-level module or a subpackage) has its place in :data:`FLOW`; a module may
import from its own part and from parts before it, never from a later one. The integration
backends (``integrate.ts``, ``integrate.sparse``, ``integrate.dense``) never import each other:
what two of them share lives in ``integrate`` itself. Read from the source, without importing it.
"""

import ast

import pytest

from tests.models import ROOT

PACKAGE = ROOT / "dolfinx_mbs"

#: the parts of the package in the order of the flow (a part imports only from those before it)
FLOW = ["compat", "checks", "records", "petsc_options", "lifetime", "io", "meshes", "frames", "materials",
        "forms", "bodies", "assembly", "constraints", "reduction", "systems", "cyclic", "static",
        "modal", "campbell", "rotors", "integrate", "model", "plot", "cli"]
BACKENDS = ("ts", "sparse", "dense")


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        yield path, rel.parts


def _imports(path):
    """The package's modules that ``path`` imports, as dotted parts after ``dolfinx_mbs``."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] != "dolfinx_mbs":
                continue
            if len(parts) == 1:  # from dolfinx_mbs import x, y
                for alias in node.names:
                    yield node.lineno, (alias.name,)
            else:
                yield node.lineno, tuple(parts[1:])
        elif isinstance(node, ast.ImportFrom) and node.level:
            yield node.lineno, ("<relative>",)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "dolfinx_mbs" and len(parts) > 1:
                    yield node.lineno, tuple(parts[1:])


def _violations():
    found = []
    for path, parts in _modules():
        if parts[0] == "__init__":   # the package's face: the user's names, from every part
            continue
        part = parts[0]
        assert part in FLOW, f"{'/'.join(parts)}: the part {part!r} has no place in FLOW"
        for line, target in _imports(path):
            where = f"{'/'.join(parts)}.py:{line}"
            if target == ("<relative>",):
                found.append(f"{where}: a relative import (the package imports absolutely)")
                continue
            if target[0] not in FLOW:
                found.append(f"{where}: imports {'.'.join(target)}, a part not in FLOW")
            elif FLOW.index(target[0]) > FLOW.index(part):
                found.append(f"{where}: {part} imports {'.'.join(target)}, up the flow")
            elif (part == target[0] == "integrate" and len(parts) > 2 and len(target) > 1
                  and parts[1] in BACKENDS and target[1] in BACKENDS and parts[1] != target[1]):
                found.append(f"{where}: backend {parts[1]} imports backend {target[1]}")
    return found


@pytest.mark.serial
def test_imports_go_down_the_flow():
    bad = _violations()
    assert not bad, "imports against the flow:\n" + "\n".join(bad)


@pytest.mark.serial
def test_every_subpackage_is_packaged():
    """pyproject.toml lists every subpackage (an installed, non-editable package has them all)."""
    text = (PACKAGE.parent / "pyproject.toml").read_text()
    for init in PACKAGE.rglob("__init__.py"):
        name = ".".join(("dolfinx_mbs",) + init.parent.relative_to(PACKAGE).parts)
        assert f'"{name}"' in text, f"{name} is missing from pyproject's packages"


@pytest.mark.serial
def test_tests_import_builders_only_from_models():
    """A test module imports what it shares with others from ``tests.models``, never from
    another test module (docs/architecture.md): a test file stays free to change alone."""
    bad = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            mods = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                    else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            bad += [f"{path.relative_to(ROOT)}:{node.lineno}: imports {m}" for m in mods
                    if m.split(".")[0] == "tests" and m.split(".")[:2] != ["tests", "models"]
                    and m.split(".")[-1].startswith("test_")]
    assert not bad, "test modules imported from another test module:\n" + "\n".join(bad)
