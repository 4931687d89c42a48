#!/bin/bash
# Run Western Digital's Command Duration Limits test suite (cdl-tools'
# tests/cdl-tests.sh) from your own checkout in a guest (Linux 6.12 by
# default: CDL needs 6.5 or later) on an ncq-disk drive with CDL, and tell
# what passed.
#
#   scripts/run-cdl-tools.sh [options] CHECKOUT
#
# CHECKOUT is a cdl-tools tree (git clone of westerndigitalcorporation/
# cdl-tools).  Its cdladm is built on the host (autotools when the host has
# them, else its src/*.c with gcc directly, static either way) and added to
# the guest image with the suite's tests/ (images/build-image.sh --add); the
# image's fio (Debian 13's 3.39) has cmdprio_hint, and bash, bc and GNU
# time are in the image; lsscsi is added (the suite tells an ATA drive by
# it, and skips its non-NCQ groups without it).  The suite then runs in the guest on /dev/sda.
#
#   --quick                   the suite's --quick (20 s fio runs, stop on error)
#   --group NN                only this group (repeatable; the suite's -g)
#   --test NNNN               only this test (repeatable; the suite's -t)
#   --icount-shift N          the guest CPU's speed: 2^N ns of guest time per
#                             instruction (default 0, about 1e9 a second: the
#                             suite bounds each fio run by its run time + 2 s
#                             "to start and exit the binary", which a guest
#                             CPU at the test harness's default, shift 3,
#                             125e6 a second, nearly uses up by itself)
#   --backend null|image      where the drive's data goes (default null:
#                             QEMU's null-co, reads give zeroes and writes
#                             are dropped, which the suite never notices: it
#                             checks latencies and errors, not data; the
#                             write groups' random writes over a 16 TB
#                             stroke would otherwise fill the host's disk at
#                             about 30 MB per guest second; image: a sparse
#                             qcow2 in the work directory)
#   -h, --help                this text
#
# Defaults: --kernel 6.12, --device ncq-disk,model=seagate-exos-x18,cdl=on,
# --disk-size the model's whole capacity (a sparse image: the suite's fio
# reads span the drive, so seeks are those of the real drive; a smaller
# image is a short-stroked drive whose accesses rarely miss the suite's
# 20 ms active time limits), --memory 512M, --smp 1, --timeout 7200, --out
# ./cdl-tools-results (the suite's logs).
#
# Prints each test's number, verdict and title ("0001 PASS    cdladm (get
# device information)"),
# then "cdl-tools: N passed, N failed, N skipped, N warnings".  Exit status 0
# when no test failed, 1 when one did (the suite's own script exits 0 either
# way), 2 when the run itself did not complete.  docs/cdl.md has the results
# on ncq-disk.
set -euo pipefail
SUITE_HERE=$(cd "$(dirname "$0")" && pwd)
SUITE_ROOT=$(cd "$SUITE_HERE/.." && pwd)
SUITE_TOOL=run-cdl-tools
. "$SUITE_HERE/lib/suite.sh"
die() { suite_die "$@"; }
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; suite_help; exit "${1:-0}"; }

SUITE_KERNEL=6.12 SUITE_DEVICE=ncq-disk,model=seagate-exos-x18,cdl=on
SUITE_TIMEOUT=7200 SUITE_MEMORY=512M SUITE_OUT=$PWD/cdl-tools-results
SHIFT=0 BACKEND=null
SUITE_ARGS=()
ARGS=()
while [ $# -gt 0 ]; do
    suite_option "$@"
    if [ "$SUITE_SHIFT" -gt 0 ]; then shift "$SUITE_SHIFT"; continue; fi
    case "$1" in
        --group | --test | --icount-shift | --backend)
            [ $# -ge 2 ] || die "$1 needs a value (--help)"
            case "$1" in
                --group)
                    case "$2" in '' | *[!0-9]*) die "--group wants a number, got '$2'" ;; esac
                    SUITE_ARGS+=(-g "$(printf %02d "$((10#$2))")") ;;
                --test)
                    case "$2" in '' | *[!0-9]*) die "--test wants a number, got '$2'" ;; esac
                    SUITE_ARGS+=(-t "$2") ;;
                --icount-shift) SHIFT=$2 ;;
                --backend)
                    case "$2" in null | image) BACKEND=$2 ;;
                        *) die "--backend wants null or image, got '$2'" ;; esac ;;
            esac
            shift 2 ;;
        --quick) SUITE_ARGS+=(--quick); shift ;;
        -h | --help) usage 0 ;;
        -*) echo "$SUITE_TOOL: unknown option: $1" >&2; usage 2 >&2 ;;
        *) ARGS+=("$1"); shift ;;
    esac
done
# the guest harness (qemu.qmp) runs under the project's venv
. "$SUITE_HERE/lib/venv.sh" || exit 2
[ ${#ARGS[@]} -eq 1 ] || { echo "$SUITE_TOOL: give one CHECKOUT" >&2; usage 2 >&2; }
CHECKOUT=$(cd "${ARGS[0]}" 2>/dev/null && pwd) || die "${ARGS[0]}: no such directory"
[ -f "$CHECKOUT/tests/cdl-tests.sh" ] && [ -d "$CHECKOUT/src" ] \
    || die "$CHECKOUT is no cdl-tools checkout (no tests/cdl-tests.sh and src/): git clone https://github.com/westerndigitalcorporation/cdl-tools and pass its directory"
suite_check
# the model's capacity (model=NAME or model-file=PATH of --device)
suite_disk_size
case "$SHIFT" in [0-9] | 10) ;; *) die "--icount-shift wants 0 to 10, got '$SHIFT'" ;; esac
command -v gcc >/dev/null || die "gcc is needed to build cdladm: apt-get install build-essential"

CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}
# 1. cdladm, built from a private copy of the checkout
WORK=$CACHE/cdl-tools/$(echo "$CHECKOUT" | sha256sum | cut -c1-12)
mkdir -p "$WORK"
# runs of one checkout share $WORK: one at a time until its image is built
exec 9>"$WORK/lock"
flock 9
rm -rf "$WORK/tree"
mkdir -p "$WORK/tree"
(cd "$CHECKOUT" && tar --exclude=./.git -cf - .) | tar -C "$WORK/tree" -xf -
version=$(git -C "$CHECKOUT" describe --always --dirty 2>/dev/null || echo unknown)
echo "run-cdl-tools: building cdladm of $CHECKOUT ($version; log in $WORK/build.log)" >&2
if command -v autoreconf >/dev/null && command -v make >/dev/null; then
    (cd "$WORK/tree" && ./autogen.sh && ./configure LDFLAGS=-static &&
        nice -n 5 make -j2) >"$WORK/build.log" 2>&1 \
        || die "building cdladm failed; the end of $WORK/build.log: $(tail -3 "$WORK/build.log" | tr '\n' ' ')"
    CDLADM=$WORK/tree/src/cdladm
else
    # no autotools: what configure would give it is its version
    echo "#define PACKAGE_VERSION \"$version\"" >"$WORK/tree/src/config.h"
    nice -n 5 gcc -O2 -static -o "$WORK/cdladm" "$WORK/tree"/src/*.c \
        >"$WORK/build.log" 2>&1 \
        || die "building cdladm failed; the end of $WORK/build.log: $(tail -3 "$WORK/build.log" | tr '\n' ' ')"
    CDLADM=$WORK/cdladm
fi

# 2. QEMU and the image with cdladm and the suite
suite_build --add "$CDLADM:/usr/bin/cdladm" --add "$WORK/tree/tests:/opt/cdl-tests" \
    --package lsscsi
exec 9>&-

# 3. the run
suite_run suites.cdl_tools --icount-shift "$SHIFT" --backend "$BACKEND" \
    -- ${SUITE_ARGS[@]+"${SUITE_ARGS[@]}"}
