#!/bin/bash
# Install everything ncq-disk needs on a Debian 12 machine, from Debian's
# archive and PyPI only.  Run as root.  Safe to run again: it skips what is
# already present.  The Python packages go into the project's venv
# (scripts/install-venv.sh), never into the system's python3: Debian's
# refuses pip (PEP 668), and the venv works the same on Debian 12 and 13.
set -euo pipefail

die() { echo "install-deps: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get needs it); try: sudo $0"
command -v apt-get >/dev/null || die "apt-get not found; this script targets Debian 12"

# clang_major: the major version of the release's default clang (Debian
# 12: 14, Debian 13: 19), whose libFuzzer runtime the fuzz build needs
clang_major() {
    local codename
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    case $codename in
    bookworm) echo 14 ;;
    trixie) echo 19 ;;
    *) die "Debian release '${codename:-unknown}' is not one this script knows (bookworm, trixie): add its clang version to clang_major()" ;;
    esac
}
CLANG_MAJOR=$(clang_major)

APT_PKGS=(
    # QEMU build
    build-essential pkg-config git ccache ninja-build flex bison
    libglib2.0-dev libpixman-1-dev libfdt-dev zlib1g-dev
    xz-utils dpkg-dev
    # The project's Python venv (scripts/install-venv.sh): Debian's python3,
    # its venv/pip bootstrap, and the CA list pip's HTTPS to PyPI trusts
    # (Debian's pip reads /etc/ssl/certs/ca-certificates.crt)
    python3 python3-venv ca-certificates
    # Run-time firmware for the guest (qboot, option ROMs)
    qemu-system-data seabios
    # Fuzzing (scripts/fuzz.sh): clang with libFuzzer's runtime, whose
    # package carries the release's clang version (below)
    clang "libclang-rt-$CLANG_MAJOR-dev"
    # Guest image inputs
    busybox-static kmod fio hdparm smartmontools sg3-utils blktrace cpio zstd
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

# its own error names the cause (no python3-venv, PyPI unreachable, ...);
# --apt-only leaves it to the caller (the demo runs it beside its downloads)
if [ "${1:-}" != --apt-only ]; then
    "$(dirname "$0")/install-venv.sh" || exit 1
fi
echo "install-deps: ok"
