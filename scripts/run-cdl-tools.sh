#!/bin/bash
# Run Western Digital's Command Duration Limits test suite (cdl-tools'
# tests/cdl-tests.sh) from your own checkout in a Linux 6.12 guest on an
# ncq-disk drive with CDL, and tell what passed.
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
#   --device LINE             the drive's -device line without drive=/bus=/id=
#                             (default: ncq-disk,model=seagate-exos-x18,cdl=on)
#   --disk-size SIZE          the drive's capacity (default: the model's
#                             whole capacity, a sparse image: the suite's
#                             fio reads span the drive, so seeks are those
#                             of the real drive; a smaller image is a
#                             short-stroked drive whose accesses rarely
#                             miss the suite's 20 ms active time limits)
#   --timeout S               the whole run's bound in guest seconds (default 7200)
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
#   --output DIR              where the suite's logs go (default ./cdl-tools-results)
#   -h, --help                this text
#
# Prints each test's number, verdict and title ("0001 PASS    cdladm (get
# device information)"),
# then "cdl-tools: N passed, N failed, N skipped, N warnings".  Exit status 0
# when no test failed, 1 when one did (the suite's own script exits 0 either
# way), 2 when the run itself did not complete.  docs/cdl.md has the results
# on ncq-disk.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { echo "run-cdl-tools: error: $*" >&2; exit 2; }
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit "${1:-0}"; }

DEVICE=ncq-disk,model=seagate-exos-x18,cdl=on DISK_SIZE= TIMEOUT=7200 SHIFT=0
BACKEND=null
OUTPUT=$PWD/cdl-tools-results
SUITE_ARGS=()
ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --group | --test | --device | --disk-size | --timeout | --output | \
            --icount-shift | --backend)
            [ $# -ge 2 ] || die "$1 needs a value (--help)"
            case "$1" in
                --group)
                    case "$2" in '' | *[!0-9]*) die "--group wants a number, got '$2'" ;; esac
                    SUITE_ARGS+=(-g "$(printf %02d "$((10#$2))")") ;;
                --test)
                    case "$2" in '' | *[!0-9]*) die "--test wants a number, got '$2'" ;; esac
                    SUITE_ARGS+=(-t "$2") ;;
                --device) DEVICE=$2 ;; --disk-size) DISK_SIZE=$2 ;;
                --timeout) TIMEOUT=$2 ;; --output) OUTPUT=$2 ;;
                --icount-shift) SHIFT=$2 ;;
                --backend)
                    case "$2" in null | image) BACKEND=$2 ;;
                        *) die "--backend wants null or image, got '$2'" ;; esac ;;
            esac
            shift 2 ;;
        --quick) SUITE_ARGS+=(--quick); shift ;;
        -h | --help) usage 0 ;;
        -*) echo "run-cdl-tools: unknown option: $1" >&2; usage 2 >&2 ;;
        *) ARGS+=("$1"); shift ;;
    esac
done
# the guest harness (qemu.qmp) below runs under the project's venv
. "$HERE/lib/venv.sh" || exit 2
[ ${#ARGS[@]} -eq 1 ] || { echo "run-cdl-tools: give one CHECKOUT" >&2; usage 2 >&2; }
CHECKOUT=$(cd "${ARGS[0]}" 2>/dev/null && pwd) || die "${ARGS[0]}: no such directory"
[ -f "$CHECKOUT/tests/cdl-tests.sh" ] && [ -d "$CHECKOUT/src" ] \
    || die "$CHECKOUT is no cdl-tools checkout (no tests/cdl-tests.sh and src/): git clone https://github.com/westerndigitalcorporation/cdl-tools and pass its directory"
if [ -z "$DISK_SIZE" ]; then
    # the model's capacity (model=NAME or model-file=PATH of --device)
    DISK_SIZE=$("$HERE/model-bytes.sh" "$DEVICE") || exit 2
fi
case "$SHIFT" in [0-9] | 10) ;; *) die "--icount-shift wants 0 to 10, got '$SHIFT'" ;; esac
case "$TIMEOUT" in '' | *[!0-9]* | 0) die "--timeout wants seconds, got '$TIMEOUT'" ;; esac
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

# 2. QEMU and the 6.12 image with cdladm and the suite
if [ -z "${NCQ_QEMU_BUILD:-}" ]; then
    NCQ_QEMU_BUILD=$("$HERE/build-qemu.sh" | tail -1) || die "QEMU build failed"
fi
NCQ_IMAGE_DIR=$("$ROOT/images/build-image.sh" --debian trixie \
    --add "$CDLADM:/usr/bin/cdladm" --add "$WORK/tree/tests:/opt/cdl-tests" \
    --package lsscsi | tail -1) || die "guest image build failed"
exec 9>&-
export NCQ_QEMU_BUILD NCQ_IMAGE_DIR

# 3. the run
mkdir -p "$OUTPUT"
# the guest-tests package root (pyproject.toml) for the Python below
export PYTHONPATH="$(python3 "$ROOT/scripts/pyrun.py" --path)"
exec python3 - "$ROOT" "$OUTPUT" "$DEVICE" "$DISK_SIZE" "$TIMEOUT" "$SHIFT" \
    "$BACKEND" "${SUITE_ARGS[@]}" <<'PY'
import re
import shlex
import sys
from pathlib import Path

root, output, device, disk_size, timeout, shift, backend = sys.argv[1:8]
suite_args = sys.argv[8:]
import ncqguest
import ncqsuite

# "  Test 0001:  cdladm (get device information)  ... PASS" (colour codes
# around PASS and FAIL; a test that passed with a warning, its exit status
# 3, prints PASS in yellow, 93)
VERDICT = re.compile(r"^\s*Test (\d+):\s+(.*?)\s+\.\.\.\s+(?:\x1b\[([0-9;]*)m)?"
                     r"(PASS|FAILED|FAIL|SKIP|WARNING)")
script = f"""
cd /opt/cdl-tests
bash ./cdl-tests.sh {' '.join(shlex.quote(a) for a in suite_args)} \\
    --logdir $RESULTS/logs /dev/sda
echo "cdl-tests-exit $?"
"""
out = Path(output)
r = ncqsuite.run("run-cdl-tools", ncqsuite.workdir("cdl-tools"), out,
                 ncqguest.Workload(script=script, timeout_s=int(timeout)),
                 device=device, disk_size=disk_size, snapshot=False,
                 backend="null" if backend == "null" else "qcow2",
                 timeout_s=int(timeout) * 3 + 600, icount_shift=int(shift))
counts = {"PASS": 0, "FAILED": 0, "SKIP": 0, "WARNING": 0}
for line in r.output.splitlines():
    m = VERDICT.match(line)
    if m:
        verdict = "FAILED" if m.group(4) == "FAIL" else m.group(4)
        if verdict == "PASS" and m.group(3) == "93":
            verdict = "WARNING"
        counts[verdict] += 1
        print(f"{m.group(1)} {verdict:7} {m.group(2)}")
print(f"cdl-tools: {counts['PASS']} passed, {counts['FAILED']} failed, "
      f"{counts['SKIP']} skipped, {counts['WARNING']} warnings "
      f"(logs in {out})")
ncqsuite.finish("run-cdl-tools", r.status, sum(counts.values()),
                counts["FAILED"], out)
PY
