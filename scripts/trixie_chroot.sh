#!/usr/bin/env bash
# Build (once) a Debian 13 chroot with DOLFINx 0.9 and run the test suite of this checkout inside it.
# Usage: scripts/trixie_chroot.sh [ROOT]   (default ROOT: /var/tmp/dolfinx_mbs-trixie)
set -euo pipefail
ROOT=${1:-${TRIXIE_ROOT:-/var/tmp/dolfinx_mbs-trixie}}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PKGS="python3-dolfinx-real python3-slepc4py-real python3-dolfinx-mpc python3-gmsh python3-pytest python3-tqdm python3-matplotlib python3-pip openmpi-bin"

if [ ! -e "$ROOT/.dolfinx_mbs_ready" ]; then
    command -v debootstrap >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
    [ -e "$ROOT/etc/debian_version" ] || debootstrap --variant=minbase trixie "$ROOT" http://deb.debian.org/debian
    mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
    chroot "$ROOT" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS"
    touch "$ROOT/.dolfinx_mbs_ready"
fi
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
mkdir -p "$ROOT/src"
mountpoint -q "$ROOT/src" || mount --bind "$SRC" "$ROOT/src"
trap 'umount "$ROOT/src" 2>/dev/null || true' EXIT
[ "${SETUP_ONLY:-0}" = 1 ] && exit 0
chroot "$ROOT" env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    HOME=/root PYTHONPATH=/src bash -c "cd /src && python3 -c 'import dolfinx; print(\"DOLFINx\", dolfinx.__version__)' && python3 -m pytest -q -p no:cacheprovider tests && mpirun -n 2 python3 -m mpi4py -m pytest -q -p no:cacheprovider -m 'not serial' tests"
