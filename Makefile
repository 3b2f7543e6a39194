# dolfinx_mbs: set-up, demo and tests on a fresh machine (run as root, or with sudo for Debian's packages).
#   make demo    install what is missing, then run the default demo (2 MPI ranks)
#   make test    install what is missing, then the test suite serially and under mpirun -n 2
#   make lint    ruff and mypy on the package (settings in pyproject.toml)
# Route: with a Python >= 3.12 (on PATH or through pyenv), a venv with the PyPI wheel of DOLFINx 0.11
# (dolfinx-solver-real, MPICH); otherwise Debian's packages (DOLFINx 0.5.2, Open MPI).
#   make test-debian      the suite on Debian's DOLFINx 0.5.2 (Debian 12): serially, and on 2
#                         ranks the groups of MPI_GROUPS_DEBIAN (test-debian-all: every group)
#   make test-dolfinx09   the suite on DOLFINx 0.9 in a Debian 13 chroot
#   make docs             the site (Sphinx + MyST-NB, the demos executed) in docs/_build/html
#   make docs-check       the site opened in headless Chromium: figures load, no broken link
#   make test-3           the suite under mpirun -n 3 (an odd count: partitions 2 ranks hide)
SHELL := /bin/bash
NP ?= 2
PY312 := $(shell scripts/find_python.sh)
ROUTE ?= $(if $(PY312),wheel,debian)
WHEEL_VENV ?= .venv
DEBIAN_VENV ?= .venv-debian
APT_PKGS := python3-dolfinx-real python3-slepc4py-real python3-gmsh python3-dolfinx-mpc \
            python3-pytest python3-pytest-xdist python3-scipy python3-tqdm python3-matplotlib python3-h5py python3-venv openmpi-bin \
            python3-numba

ifeq ($(ROUTE),wheel)
VENV := $(WHEEL_VENV)
MPIRUN := $(VENV)/bin/mpirun -n $(NP)
else
VENV := $(DEBIAN_VENV)
MPIRUN := /usr/bin/mpirun -n $(NP)
endif
PY := $(VENV)/bin/python
PYTEST := -m pytest -q -p no:cacheprovider --durations=12

# Open MPI (Debian route) as root, more ranks than cores; MPICH ignores these
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1
# waiting ranks yield the core instead of spinning (matters when other work shares the cores)
export OMPI_MCA_mpi_yield_when_idle := 1
# pip's progress and index warnings are not the run's output
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: setup demo lint test test-serial test-mpi test-3 test-3-ci test-debian test-debian-all validate studies slider-crank bench bench-step bench-dense test-dolfinx09 version clean docs docs-setup docs-check

setup: $(VENV)/.installed

# --- route "wheel": DOLFINx 0.11 from PyPI in a venv of a Python >= 3.12
$(WHEEL_VENV)/.installed: pyproject.toml scripts/mpi_first.py
	@[ -n "$(PY312)" ] || { echo "no Python >= 3.12 found (PATH or pyenv): use ROUTE=debian"; exit 1; }
	@[ -x $(WHEEL_VENV)/bin/python ] || { echo "Creating $(WHEEL_VENV) with $(PY312) and DOLFINx 0.11 from PyPI (about a minute)"; \
	  $(PY312) -m venv $(WHEEL_VENV); }
	$(WHEEL_VENV)/bin/pip install -q -e ".[wheel,test,mesh,plot,fast]" --config-settings editable_mode=compat 2>&1 | grep -v "^WARNING: Location" || true
	@site=$$($(WHEEL_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_path('purelib'))") && \
	  cp scripts/mpi_first.py $$site/_dolfinx_mbs_mpi_first.py && \
	  echo "import _dolfinx_mbs_mpi_first" > $$site/_dolfinx_mbs_mpi_first.pth
	@$(WHEEL_VENV)/bin/python -c "import dolfinx" || { echo "set-up of $(WHEEL_VENV) failed"; exit 1; }
	@$(WHEEL_VENV)/bin/python -c "import dolfinx_mbs" || { echo "set-up of $(WHEEL_VENV) failed"; exit 1; }
	@touch $@

# --- route "debian": DOLFINx 0.5.2 from Debian 12, a venv that sees the system packages
$(DEBIAN_VENV)/.system-ok:
	@if ! /usr/bin/python3 -c "import dolfinx, slepc4py, gmsh, pytest, xdist, scipy, h5py, numba" 2>/dev/null; then \
	  echo "Installing FEniCSx from Debian (one minute)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_PKGS); \
	fi
	@[ -x $(DEBIAN_VENV)/bin/python ] || /usr/bin/python3 -m venv --system-site-packages $(DEBIAN_VENV)
	@touch $@

$(DEBIAN_VENV)/.installed: $(DEBIAN_VENV)/.system-ok pyproject.toml
	$(DEBIAN_VENV)/bin/python -m pip install -q --no-build-isolation --no-deps -e . --config-settings editable_mode=compat 2>&1 | grep -v "^WARNING: Location" || true
	@$(DEBIAN_VENV)/bin/python -c "import dolfinx_mbs" || { echo "set-up of $(DEBIAN_VENV) failed"; exit 1; }
	@touch $@

version: setup
	@$(PY) -c "import dolfinx_mbs, dolfinx; print('DOLFINx', dolfinx.__version__, 'in', '$(VENV)')"

demo: setup version
	$(MPIRUN) $(PY) demos/rotating_rod.py

# ruff (pyflakes, pycodestyle, isort, pydocstyle with the Google convention, X | None) and mypy
# on the package, in the route's venv; both installed there when missing
lint: setup
	@$(PY) -m ruff --version >/dev/null 2>&1 && $(PY) -m mypy --version >/dev/null 2>&1 || \
	  $(PY) -m pip install -q "ruff>=0.12" "mypy>=1.10" 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -m ruff check dolfinx_mbs
	$(PY) -m mypy

test: setup version
	$(MAKE) --no-print-directory test-serial test-mpi ROUTE=$(ROUTE)

# The serial suite in JOBS processes at once (pytest-xdist, a test file to a process; each
# process is one MPI rank of its own): both cores of CI work, the forms' first compilations
# too (tests/conftest.py lets a process wait for a form the other compiles, and drops the Open
# MPI singleton variables a worker inherits, with which an mpiexec a test starts would fail).
# JOBS=1, or no xdist: one process.
JOBS ?= 2
test-serial: setup
	$(PY) $(PYTEST) $$([ "$(JOBS)" -gt 1 ] && $(PY) -c "import xdist" 2>/dev/null \
	  && echo "-n $(JOBS) --dist loadfile") tests

# The 2-rank run is four processes: petsc4py defers the destruction of collected objects of
# parallel communicators, and the garbage of each test's meshes kept their communicators
# alive, so one process of many test files ran out of MPICH's communicators (2048). Since
# dolfinx_mbs.lifetime (each new Model destroys the garbage of the models gone) one process
# may do; the split is kept until a whole 2-rank suite has been run as one. Each process runs
# some folders of tests/ (one a part of the package, in the order of the flow), about the same
# number of tests each (183, 140, 136 and 103 on 2 ranks); a folder of tests in no group stops
# the run.
MPI_GROUPS := foundation+io+meshes+frames+materials+forms+bodies+assembly \
  constraints+reduction+systems+cyclic+static+modal+campbell integrate model+cli+plot+rotors+project
test-mpi: setup
	@[ -n "$(MPI_SUBSET)" ] || for d in tests/*/; do d=$${d#tests/}; d=$${d%/}; \
	  ls tests/$$d/test_*.py tests/$$d/*/test_*.py 2>/dev/null | grep -q . || continue; \
	  case "+$$(echo $(MPI_GROUPS) | tr ' ' '+')+" in *"+$$d+"*) ;; \
	    *) echo "tests/$$d is in no group of MPI_GROUPS"; exit 1;; esac; \
	done
	@for g in $(MPI_GROUPS); do \
	  dirs=$$(echo $$g | tr '+' ' ' | sed 's|[^ ]*|tests/&|g'); \
	  echo "== $(NP) ranks: $$dirs"; \
	  timeout 1800 $(MPIRUN) $(PY) -m mpi4py $(PYTEST) -m "not serial and not slow" $$dirs \
	    || exit $$?; \
	done

# the same files on 3 ranks (MPICH oversubscribes by itself; Open MPI by the variable above)
test-3: setup
	$(MAKE) --no-print-directory test-mpi ROUTE=$(ROUTE) NP=3

# CI's 3-rank run: a few quick files whose tests distribute data (points, output, meshes,
# errors raised on every rank, an eigensolve with a rank that owns no row, a coupled run's
# checkpoints and restarts through the driver); 3 ranks on CI's
# 2 cores are oversubscribed, so the whole 3-rank suite is make test-3
# (tests/integrate/test_checkpoint_ranks.py restarts on 3 ranks in the suite)
MPI3_CI_FILES := tests/io/test_evaluate.py tests/io/test_io.py tests/meshes/test_meshes.py \
  tests/model/test_errors.py tests/model/test_parallel.py tests/constraints/test_maggi.py \
  tests/bodies/test_loads.py tests/modal/test_spread.py \
  tests/integrate/test_checkpoint_coupled.py
test-3-ci: setup
	timeout -s KILL 1200 $(subst -n $(NP),-n 3,$(MPIRUN)) $(PY) -m mpi4py $(PYTEST) -m "not serial and not slow" $(MPI3_CI_FILES)

# Debian's DOLFINx 0.5.2: the whole suite serially, and on 2 ranks the groups where its stack
# differs in parallel (Open MPI; MUMPS 5.5 and SLEPc 3.18 in the eigensolvers, XDMF output):
# the foundation to the assembly (data distributed, files written) and the modal, rotor and
# model folders. The whole 2-rank suite on 0.5.2 is make test-debian-all (about 25 more
# minutes: CI's run of both versions in full would pass its 90).
MPI_GROUPS_DEBIAN := foundation+io+meshes+frames+materials+forms+bodies+assembly modal+rotors+model
test-debian:
	$(MAKE) --no-print-directory test ROUTE=debian MPI_GROUPS="$(MPI_GROUPS_DEBIAN)" MPI_SUBSET=1

test-debian-all:
	$(MAKE) --no-print-directory test ROUTE=debian

# --- the site, on the wheel's route: Debian's EGL (PyVista renders off-screen) and Chromium
# (the browser check), the package's docs extra in the venv
DOCS_APT := libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri
BROWSER_APT := chromium
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then echo "Installing from Debian: $$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

docs-setup: $(WHEEL_VENV)/.docs-installed

$(WHEEL_VENV)/.docs-installed: $(WHEEL_VENV)/.installed pyproject.toml
	$(call apt_install,$(DOCS_APT))
	$(WHEEL_VENV)/bin/pip install -q -e ".[wheel,test,mesh,plot,docs]" --config-settings editable_mode=compat 2>&1 | grep -v "^WARNING: Location" || true
	@$(WHEEL_VENV)/bin/python -c "import sphinx, myst_nb, pyvista" || { echo "docs set-up of $(WHEEL_VENV) failed"; exit 1; }
	@touch $@

# Warnings are errors, every page read again (-E: a second build after a failed one would not
# repeat the warnings of pages it has read); each demo runs once per change of its file
# (jupyter-cache), serially, without progress bars; BLAS threads would only compete for the cores.
docs: docs-setup
	cd docs && TQDM_DISABLE=1 OMP_NUM_THREADS=1 ../$(WHEEL_VENV)/bin/python -m sphinx -E -W --keep-going -b html -q . _build/html
	@echo "the site: docs/_build/html/index.html"

# the check builds the site with the demos' short versions (MBS_DEMO_QUICK=1, a cache of its
# own): the full ones take some 40 minutes from a clean checkout (the journal bearing's whip
# run alone about 20), more than CI has; make docs builds the site in full
# (docs/tests builds the site itself, with warnings as errors)
docs-check: docs-setup
	$(call apt_install,$(BROWSER_APT))
	MBS_DEMO_QUICK=1 TQDM_DISABLE=1 OMP_NUM_THREADS=1 $(WHEEL_VENV)/bin/python $(PYTEST) docs/tests

validate: setup
	$(PY) $(PYTEST) -m slow tests || [ $$? = 5 ]  # 5: no slow test collected
	$(PY) docs/validation.py > docs/validation.md

# seed 003's parameter studies through dolfinx-mbs sweep: docs/seed003_studies.md and .png
studies: setup
	$(PY) docs/seed003_studies.py

# the elastic slider-crank's convergence in mesh and step: docs/slider_crank.md (~30 min)
slider-crank: setup
	$(PY) docs/slider_crank.py

bench: setup
	$(PY) bench/frame_update.py --sizes 1e4,1e5

# the plugin against a raw DOLFINx + scipy Newmark script (KRB spin-up), bench/results/per_step.md
bench-step: setup
	$(PY) bench/krb_scipy.py

# seed 003's Table 3 study on the TS and dense paths, and the size behind DENSE_MAX,
# bench/results/dense.md
bench-dense: setup
	OMP_NUM_THREADS=1 $(PY) bench/dense.py

# DOLFINx 0.9 (Debian 13) in a chroot: several minutes the first time, 3.3 GB
test-dolfinx09:
	scripts/trixie_chroot.sh

clean:
	rm -rf $(WHEEL_VENV) $(DEBIAN_VENV) build *.egg-info
