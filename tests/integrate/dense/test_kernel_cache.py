"""The compiled kernels' disk cache is keyed to every file whose code or constants they hold
(:data:`~dolfinx_mbs.integrate.dense.coupled_kernels.KERNEL_SOURCES`): numba keys a cached
kernel to its own file alone, and a kernel of ``joint_kernels`` compiled against an older
``coupled_kernels`` would otherwise be loaded after an edit of the latter (an editable
install after ``git pull``)."""

from __future__ import annotations

import ast
import importlib
import shutil
from pathlib import Path

import pytest

from dolfinx_mbs.integrate.dense import coupled_kernels, joint_kernels

ROOT = Path(coupled_kernels.__file__).resolve().parents[2]


def test_stamp_follows_every_source(tmp_path):
    """A change to any one of the files changes the stamp; the same contents give the same."""
    for rel in coupled_kernels.KERNEL_SOURCES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    base = coupled_kernels.sources_stamp(root=tmp_path)
    assert base == coupled_kernels.sources_stamp()
    for rel in coupled_kernels.KERNEL_SOURCES:
        text = (tmp_path / rel).read_text()
        (tmp_path / rel).write_text(text + "\n# edited\n")
        assert coupled_kernels.sources_stamp(root=tmp_path) != base, rel
        (tmp_path / rel).write_text(text)
    assert coupled_kernels.sources_stamp(root=tmp_path) == base
    (tmp_path / coupled_kernels.KERNEL_SOURCES[-1]).unlink()
    assert coupled_kernels.sources_stamp(root=tmp_path) is None


@pytest.mark.skipif(not coupled_kernels.COMPILED, reason="numba is not installed")
def test_kernels_are_cached_under_the_stamp():
    """Every compiled kernel of both modules (the leaves too) is cached under the joint
    stamp, in the places numba's own cache would use."""
    stamp = coupled_kernels.sources_stamp()
    kernels = [joint_kernels.stage, joint_kernels.maggi_run, joint_kernels.rows_into,
               coupled_kernels.residual, coupled_kernels.newton, coupled_kernels.hinge_state,
               coupled_kernels._rigid, coupled_kernels._body]
    for k in kernels:
        locator = k._cache._impl.locator
        assert locator.get_source_stamp() == stamp, k
        assert Path(locator.get_cache_path()).is_dir()


def test_sources_cover_the_constants_the_kernels_read():
    """The package's modules the kernel modules import names from are in the sources, but
    where every name is a class (which compiled code cannot take: used from Python only)."""
    sources = {ROOT / rel for rel in coupled_kernels.KERNEL_SOURCES}
    kernel_files = [ROOT / rel for rel in coupled_kernels.KERNEL_SOURCES[:2]]
    for path in kernel_files:
        tree = ast.parse(path.read_text())
        for node in tree.body:      # module level (TYPE_CHECKING blocks are ``if`` nodes)
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("dolfinx_mbs")):
                continue
            mod = importlib.import_module(node.module)
            names = [getattr(mod, a.name) for a in node.names]
            if Path(mod.__file__).resolve() in sources:
                continue
            assert all(isinstance(v, type) for v in names), (path.name, node.module)
