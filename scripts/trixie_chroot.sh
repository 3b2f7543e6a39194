#!/usr/bin/env bash
# Build (once) a Debian 13 chroot with DOLFINx 0.9 and run the test suite of this checkout inside it:
# serially, then under mpirun -n 2 (markers as in the Makefile: not slow / not serial and not slow).
# Usage: scripts/trixie_chroot.sh [ROOT]   (default ROOT: /var/tmp/dolfinx_mbs-trixie)
#   SETUP_ONLY=1   build if needed and leave proc, sys and src mounted for interactive use
#                  (chroot ROOT, then cd /src); otherwise nothing stays mounted after the run.
#   PYTEST_ADDOPTS is passed through (e.g. PYTEST_ADDOPTS="-x -k frames").
#   TRIXIE_TIMEOUT (default 900): seconds after which each pytest run is killed; a test that fails
#                  on one rank only leaves the others waiting in a collective forever.
set -euo pipefail
ROOT=${1:-${TRIXIE_ROOT:-/var/tmp/dolfinx_mbs-trixie}}
ROOT=$(cd "$ROOT" 2>/dev/null && pwd || echo "$ROOT")
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PKGS="python3-dolfinx-real python3-slepc4py-real python3-dolfinx-mpc python3-gmsh python3-pytest python3-scipy python3-tqdm python3-matplotlib python3-h5py python3-adios2-serial python3-pip openmpi-bin"

# A test run gets a private mount namespace: concurrent runs (also from other checkouts) neither
# unmount each other's /src nor test the wrong checkout, and the mounts vanish with the run.
if [ "${SETUP_ONLY:-0}" != 1 ] && [ -z "${_TRIXIE_PRIVATE_NS:-}" ] \
        && unshare --mount --propagation private true 2>/dev/null; then
    export _TRIXIE_PRIVATE_NS=1
    exec unshare --mount --propagation private bash "${BASH_SOURCE[0]}" "$@"
fi

MOUNTED=()
cleanup() {
    local i
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do umount "${MOUNTED[i]}" 2>/dev/null || true; done
}
# mnt DIR MOUNT-ARGS...: mount at ROOT/DIR unless something already is (a private namespace
# always mounts src: the one inherited may be another checkout's).
mnt() {
    local dst=$ROOT/$1
    shift
    mkdir -p "$dst"
    if mountpoint -q "$dst" && { [ -z "${_TRIXIE_PRIVATE_NS:-}" ] || [ "$dst" != "$ROOT/src" ]; }; then
        return 0
    fi
    mount "$@" "$dst"
    [ "${SETUP_ONLY:-0}" = 1 ] || MOUNTED+=("$dst")
}
trap cleanup EXIT

# the marker holds the package list it was built with: a longer list installs the rest
if [ "$(cat "$ROOT/.dolfinx_mbs_ready" 2>/dev/null)" != "$PKGS" ]; then
    command -v debootstrap >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
    [ -e "$ROOT/etc/debian_version" ] || debootstrap --variant=minbase trixie "$ROOT" http://deb.debian.org/debian
    mnt proc -t proc proc
    chroot "$ROOT" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS"
    echo "$PKGS" > "$ROOT/.dolfinx_mbs_ready"
fi
mnt proc -t proc proc
mnt sys -t sysfs sysfs          # hwloc (used by mpirun) reads the CPU topology there
mnt dev/shm --bind /dev/shm     # shared-memory transport between the MPI ranks
mnt src --bind "$SRC"
if [ "${SETUP_ONLY:-0}" = 1 ]; then
    echo "$ROOT ready; /src is $(findmnt -n -o SOURCE "$ROOT/src" 2>/dev/null || echo "$SRC")"
    exit 0
fi

# A clean environment: nothing from the host (venv, PETSC_DIR, PYTHONPATH, ...) leaks in. No .pyc
# files from the chroot's Python in the shared checkout. MPI: one node, so only self + shared memory
# (the TCP transport only adds "Unable to find reachable pairing" noise).
ENV=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
     TERM="${TERM:-dumb}" PYTHONPATH=/src PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PYTEST_ADDOPTS="${PYTEST_ADDOPTS:-}"
     OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
     OMPI_MCA_btl=self,sm OMPI_MCA_mpi_yield_when_idle=1)
PYTEST="-m pytest -q -p no:cacheprovider"
TMO="timeout -k 10 ${TRIXIE_TIMEOUT:-900}"
# Under MPI, rank 0 reports; the other ranks' reports are shown only if the run fails (read from
# files: a failing pytest ends in MPI_Abort under "python3 -m mpi4py", which kills the ranks).
QUIET_RANKS='r=${OMPI_COMM_WORLD_RANK:-0}; [ "$r" = 0 ] && exec "$@"; exec "$@" >"$LOGS/rank$r.log" 2>&1'
chroot "$ROOT" "${ENV[@]}" bash -c "
    set -e; cd /src
    python3 -c 'import dolfinx; print(\"DOLFINx\", dolfinx.__version__)'
    $TMO python3 $PYTEST tests
    export LOGS=\$(mktemp -d)
    $TMO mpirun -n 2 bash -c '$QUIET_RANKS' _ python3 -m mpi4py $PYTEST -m 'not serial and not slow' tests \\
        || { s=\$?; [ \$s != 124 ] || echo \"mpirun killed after ${TRIXIE_TIMEOUT:-900} s\"; for f in \$LOGS/rank*.log; do echo \"----- \${f##*/} -----\"; cat \"\$f\"; done; rm -rf \$LOGS; exit \$s; }
    rm -rf \$LOGS
"
