#!/bin/bash
# Install qemu-system-x86_64 (with ncq-disk), qemu-img, ncq-sim and the
# guest tools under a prefix, for use outside the checkout.
#
#   scripts/install.sh [--prefix DIR]      (default /opt/ncq-disk)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PREFIX=/opt/ncq-disk
die() { echo "install: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --prefix) PREFIX=$2; shift 2 ;;
    *) die "unknown option '$1' (known: --prefix DIR)" ;;
    esac
done
case $PREFIX in /*) ;; *) PREFIX=$(pwd)/$PREFIX ;; esac
# meson (ncq-sim's build) is the project's venv's
. "$HERE/lib/venv.sh" || exit 1

"$HERE/build-qemu.sh" --prefix "$PREFIX" --install >/dev/null \
    || die "QEMU build or install failed"
b=$ROOT/_build/install
meson setup --reconfigure "$b" --prefix "$PREFIX" -Dbenchmarks=false >/dev/null 2>&1 \
    || meson setup "$b" --prefix "$PREFIX" -Dbenchmarks=false >/dev/null \
    || die "meson setup of ncq-sim failed"
meson install -C "$b" --quiet >/dev/null || die "installing ncq-sim failed"
share=$PREFIX/share/ncq-disk
mkdir -p "$share"
cp -r "$ROOT/images" "$share/"
# the harness and the modules it imports (snapshots, the QEMU process)
cp "$ROOT/guest-tests/ncqguest.py" "$ROOT/guest-tests/ncqsnapshot.py" \
    "$ROOT/guest-tests/ncqqemu.py" "$share/"
echo "install: qemu-system-x86_64, qemu-img, ncq-sim in $PREFIX/bin; guest tools in $share"
