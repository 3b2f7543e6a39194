import gc
import os

# A pytest-xdist worker is started by the controller after the controller's MPI_Init (this file
# imports mpi4py there too), and with Open MPI it inherits the controller's singleton variables
# (OMPI_MCA_ess=singleton, PMIX_SERVER_URI*, ...). An mpiexec started by a test from the worker
# with them exits 1 without a word. They are dropped here, before this process's MPI_Init.
if "PYTEST_XDIST_WORKER" in os.environ:
    for _key in list(os.environ):
        if _key.startswith(("PMIX_", "ORTE_", "OMPI_MCA_orte_", "OMPI_APP_CTX_")) or \
                _key in ("OMPI_MCA_ess", "OMPI_MCA_pmix"):
            del os.environ[_key]

import dolfinx.jit  # noqa: E402
import pytest  # noqa: E402
from mpi4py import MPI  # noqa: E402

# Tests run in two processes at once (pytest-xdist, make test-serial) can ask for the same form
# together: FFCx lets one compile it while the other waits for its module, by default 10 s,
# which a large form's compilation on a busy machine exceeds ("JIT compilation timed out").
# The wait here is 10 minutes (0.11 names the table ..._OPTIONS, 0.5 ..._PARAMETERS).
for _table in ("DOLFINX_DEFAULT_JIT_OPTIONS", "DOLFINX_DEFAULT_JIT_PARAMETERS"):
    _defaults = getattr(dolfinx.jit, _table, {})
    if "timeout" in _defaults:
        _defaults["timeout"] = (600, _defaults["timeout"][1])


def pytest_collection_modifyitems(config, items):
    if MPI.COMM_WORLD.size > 1:
        skip = pytest.mark.skip(reason="serial-only test")
        for item in items:
            if "serial" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def collective_cleanup():
    """Collective PETSc destructors must run on every rank at the same point. petsc4py defers
    the destruction of collected objects of parallel communicators to
    ``PETSc.garbage_cleanup(comm)``; this cleans those of COMM_WORLD. Those made on a model's
    meshes' and spaces' communicators are destroyed when the next model is made
    (:mod:`dolfinx_mbs.lifetime`; before, they stayed until the process ended, ~12
    communicators a model, and the Makefile split the 2-rank suite into processes)."""
    yield
    gc.collect()
    from petsc4py import PETSc

    if hasattr(PETSc, "garbage_cleanup"):
        PETSc.garbage_cleanup()
    MPI.COMM_WORLD.Barrier()


@pytest.fixture
def database():
    """The global options database; entries a test puts in it go afterwards."""
    from petsc4py import PETSc

    db = PETSc.Options()
    before = set(db.getAll())
    yield db
    for key in set(db.getAll()) - before:
        db.delValue(key)
