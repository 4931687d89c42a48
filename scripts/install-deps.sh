#!/bin/bash
# Install everything ncq-disk needs on a Debian 12 machine, from Debian's
# archive and PyPI only.  Run as root.  Safe to run again: it skips what is
# already present.
set -euo pipefail

die() { echo "install-deps: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get needs it); try: sudo $0"
command -v apt-get >/dev/null || die "apt-get not found; this script targets Debian 12"

APT_PKGS=(
    # QEMU build
    build-essential pkg-config git ccache ninja-build flex bison
    libglib2.0-dev libpixman-1-dev libfdt-dev zlib1g-dev python3-venv
    xz-utils dpkg-dev
    # Run-time firmware for the guest (qboot, option ROMs)
    qemu-system-data seabios
    # Fuzzing (scripts/fuzz.sh): clang with libFuzzer's runtime
    clang libclang-rt-14-dev
    # Guest image inputs
    busybox-static kmod fio hdparm smartmontools sg3-utils blktrace cpio
    mdadm btrfs-progs
    # The test suite (scripts/test.sh stops its background build with pgrep)
    procps
)

# trixie's source archive carries the pinned QEMU 10.0.x
SRC_LIST=/etc/apt/sources.list.d/ncq-disk-trixie-src.sources
if [ ! -f "$SRC_LIST" ]; then
    cat > "$SRC_LIST" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

missing=()
for p in "${APT_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "ok installed" >/dev/null \
        || missing+=("$p")
done
# The source index must exist even when every package is installed.
if [ ${#missing[@]} -gt 0 ] || ! ls /var/lib/apt/lists/*trixie*Sources* >/dev/null 2>&1; then
    apt-get update -qq || die "apt-get update failed: is Debian's archive reachable?"
fi
if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null \
        || die "apt-get install failed for: ${missing[*]}"
fi

PY=${PYTHON:-python3}
"$PY" -m pip --version >/dev/null 2>&1 || die "$PY has no pip; install python3-pip"
"$PY" -m pip install -q --disable-pip-version-check \
    "meson==1.5.*" pycotap "qemu.qmp==0.0.6" pytest "pytest-xdist>=3.5,<4" numpy matplotlib \
    || die "pip install failed: is PyPI reachable?"
echo "install-deps: ok"
