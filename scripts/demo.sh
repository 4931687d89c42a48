#!/bin/bash
# The main job, from a fresh Debian 12 machine (as root): install what is
# needed, build QEMU with ncq-disk and the guest image, boot an unmodified
# guest on -device ncq-disk,model=st3400620as, run a short fio job and
# print what the guest saw.  Arguments go to scripts/demo.py (--help).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { echo "demo: $*" >&2; exit 1; }

# --help needs nothing installed or built: answer it first.
for arg in "$@"; do
    case $arg in -h|--help) exec python3 "$HERE/demo.py" --help ;; esac
done

"$HERE/install-deps.sh" --apt-only >&2 || die "installing dependencies failed"
# The guest image (mostly a kernel package's download) builds beside the
# Python venv, the QEMU source's download and the QEMU build (both cores
# compiling).  NCQ_IMAGE_DIR set: boot that image (e.g. your own
# kernel's) instead.
image_out=$(mktemp)
trap 'rm -f "$image_out"' EXIT
image_pid=
if [ -z "${NCQ_IMAGE_DIR:-}" ]; then
    "$ROOT/images/build-image.sh" >"$image_out" &
    image_pid=$!
fi
"$HERE/fetch-qemu.sh" >/dev/null &
fetch_pid=$!
"$HERE/install-venv.sh" >&2 || die "installing the Python venv failed"
wait "$fetch_pid" || die "fetching the QEMU source failed"
# demo.py and the builds run under the project's venv
. "$HERE/lib/venv.sh" || exit 1
# One build, the whole series at once: proving that each patch builds on
# its own (the series walk) is the test command's job, not the demo's.
NCQ_QEMU_BUILD=$("$HERE/build-qemu.sh" | tail -1) || die "QEMU build failed"
if [ -n "$image_pid" ]; then
    wait "$image_pid" || die "guest image build failed"
    NCQ_IMAGE_DIR=$(tail -1 "$image_out")
fi
export NCQ_QEMU_BUILD NCQ_IMAGE_DIR
python3 "$HERE/demo.py" "$@"
