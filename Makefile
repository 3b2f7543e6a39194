# dolfinx_mbs: set-up, demo and tests on a fresh Debian 12 machine (run as root, or with sudo).
#   make demo    install what is missing, then run the default demo (2 MPI ranks)
#   make test    install what is missing, then the test suite serially and under mpirun -n 2
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
NP ?= 2
APT_PKGS := python3-dolfinx-real python3-slepc4py-real python3-gmsh python3-dolfinx-mpc \
            python3-pytest python3-scipy python3-tqdm python3-matplotlib python3-venv openmpi-bin
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1
# waiting ranks yield the core instead of spinning (matters when other work shares the cores)
export OMPI_MCA_mpi_yield_when_idle := 1
MPIRUN := mpirun -n $(NP)
PYTEST := -m pytest -q -p no:cacheprovider

.PHONY: setup demo test test-serial test-mpi validate bench test-dolfinx09 clean

setup: $(VENV)/.installed

$(VENV)/.system-ok:
	@if ! /usr/bin/python3 -c "import dolfinx, slepc4py, gmsh, pytest, scipy" 2>/dev/null; then \
	  echo "Installing FEniCSx from Debian (one minute)"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(APT_PKGS); \
	fi
	@[ -d $(VENV) ] || /usr/bin/python3 -m venv --system-site-packages $(VENV)
	@touch $@

$(VENV)/.installed: $(VENV)/.system-ok pyproject.toml
	$(PY) -m pip install -q --no-build-isolation --no-deps -e .
	@touch $@

demo: setup
	$(MPIRUN) $(PY) demos/rotating_rod.py

test: setup
	$(MAKE) --no-print-directory test-serial test-mpi

test-serial: setup
	$(PY) $(PYTEST) tests

test-mpi: setup
	timeout 1800 $(MPIRUN) $(PY) -m mpi4py $(PYTEST) -m "not serial and not slow" tests

validate: setup
	$(PY) $(PYTEST) -m slow tests || [ $$? = 5 ]  # 5: no slow test collected
	$(PY) docs/validation.py > docs/validation.md

bench: setup
	$(PY) bench/frame_update.py --sizes 1e4,1e5

# DOLFINx 0.9 (Debian 13) in a chroot: several minutes the first time, 3.3 GB
test-dolfinx09:
	scripts/trixie_chroot.sh

clean:
	rm -rf $(VENV) build *.egg-info
