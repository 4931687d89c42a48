#!/bin/bash
# Fetch the pinned QEMU source from Debian's source archive, verify it and
# unpack it into the cache (never into the tracked tree).
#
#   scripts/fetch-qemu.sh [--tarball PATH] [--accept-newer]
#
# Prints the path of the pristine unpacked tree on the last line of stdout.
# --tarball PATH    use a local orig tarball instead of the archive (it must
#                   still match the pinned sha256 unless --accept-newer).
# --accept-newer    the pinned point release has left the archive: take the
#                   newest 10.0.y trixie offers; the build then checks that
#                   the project's patches still apply.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/qemu.pin"
CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}
DL=$CACHE/dl
mkdir -p "$DL"

die() { echo "fetch-qemu: $*" >&2; exit 1; }

tarball= accept_newer=0
while [ $# -gt 0 ]; do
    case $1 in
    --tarball) tarball=$2; shift 2 ;;
    --accept-newer) accept_newer=1; shift ;;
    *) die "unknown option '$1' (known: --tarball PATH, --accept-newer)" ;;
    esac
done

command -v apt-get >/dev/null || die "apt-get not found; run scripts/install-deps.sh on Debian 12"
command -v dpkg-source >/dev/null || die "dpkg-source missing; run scripts/install-deps.sh (package dpkg-dev)"

debian_tar=
if [ -n "$tarball" ]; then
    [ -r "$tarball" ] || die "cannot read tarball '$tarball'"
    orig=$tarball
else
    orig=$DL/$QEMU_ORIG_TARBALL
    if [ ! -f "$orig" ] || [ ! -f "$DL/.got-$QEMU_DEB_VERSION" ]; then
        want="qemu=$QEMU_DEB_VERSION"
        if [ $accept_newer = 1 ]; then
            want="qemu/trixie"
        fi
        ( cd "$DL" && apt-get source --download-only -qq "$want" >/dev/null 2>"$DL/apt.err" ) || {
            if grep -qi -e "Unable to find a source package" -e "Can not find version" \
                    -e "Unable to find" -e "404" "$DL/apt.err"; then
                newest=$(apt-cache showsrc qemu 2>/dev/null | awk '/^Version: 1:10\.0\./ {print $2}' | sort -V | tail -1)
                die "pinned QEMU $QEMU_DEB_VERSION has left Debian's archive (newest 10.0.y there: ${newest:-none}); rerun with --accept-newer to build it after the patches are checked, or --tarball PATH for a local copy"
            fi
            die "apt-get source failed ($(tail -1 "$DL/apt.err")); does /etc/apt/sources.list.d/ncq-disk-trixie-src.sources exist? run scripts/install-deps.sh"
        }
        if [ $accept_newer = 1 ]; then
            orig=$(ls -t "$DL"/qemu_10.0.*+ds.orig.tar.xz | head -1)
        else
            touch "$DL/.got-$QEMU_DEB_VERSION"
        fi
    fi
    debian_tar=$(ls -t "$DL"/qemu_10.0.*debian.tar.xz 2>/dev/null | head -1)
fi

sum=$(sha256sum "$orig" | cut -d' ' -f1)
if [ "$sum" != "$QEMU_ORIG_SHA256" ]; then
    [ $accept_newer = 1 ] || die "checksum mismatch for $(basename "$orig"): got $sum, pinned $QEMU_ORIG_SHA256; refusing to build (use --accept-newer only for a newer 10.0.y you mean to take)"
    echo "fetch-qemu: taking $(basename "$orig") (sha256 $sum) instead of the pin" >&2
fi

ver=$(basename "$orig" | sed -e 's/^qemu_//' -e 's/\.orig\.tar\.xz$//')
src=$CACHE/src/qemu-$ver-$sum
if [ ! -f "$src/.unpacked" ]; then
    rm -rf "$src"; mkdir -p "$src"
    tar -xJf "$orig" -C "$src" --strip-components=1
    # Debian's fix for the firmware blobs removed from the +ds tarball.
    if [ -n "$debian_tar" ]; then
        tar -xJf "$debian_tar" -C "$src" debian/patches/skip-unpack-edk2-blobs.patch
        patch -s -d "$src" -p1 < "$src/debian/patches/skip-unpack-edk2-blobs.patch" \
            || die "Debian's skip-unpack-edk2-blobs.patch did not apply"
        rm -rf "$src/debian"
    else
        patch -s -d "$src" -p1 < "$HERE/../patches/debian/skip-unpack-edk2-blobs.patch" \
            || die "skip-unpack-edk2-blobs.patch did not apply"
    fi
    touch "$src/.unpacked"
fi
echo "$src"
