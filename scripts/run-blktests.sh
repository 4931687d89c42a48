#!/bin/bash
# Run blktests (the Linux block layer's test suite) from your own checkout in
# a guest whose TEST_DEVS is an ncq-disk drive, and tell what passed.
#
#   scripts/run-blktests.sh [options] CHECKOUT [TESTS...]
#
# CHECKOUT is a blktests tree (git clone of osandov/blktests); TESTS are what
# its ./check takes: groups (block, scsi, zbd) or tests (block/005); default
# "block scsi".  The zbd group wants a host-managed drive: --device
# ncq-disk,model=wd-hc620 (its capacity is then the disk's size; zbd also
# gets dmsetup, f2fs-tools and the f2fs and dm modules in the image).
# The checkout is copied and built (make: its src/ helpers)
# under $NCQ_CACHE/blktests/, added to the guest image at /opt/blktests with
# what it needs (images/build-image.sh --add, --package), and run there as
# root with TEST_DEVS=(/dev/sda), the ncq-disk.
#
#   --debian bookworm|trixie  the guest's kernel: Debian 12's 6.1 (default) or
#                             Debian 13's 6.12
#   --device LINE             the drive's -device line without drive=/bus=/id=
#                             (default: ncq-disk,model=st3400620as)
#   --disk-size SIZE          the drive's capacity (default 1G; a zoned model's
#                             capacity, from its model file: it needs exactly it)
#   --smp N                   guest CPUs (default 4: block/022 wants 2)
#   --memory SIZE             guest RAM (default 1G, 3G with zbd tests: zbd/009,
#                             010 and 012 load a 1 GiB scsi_debug disk)
#   --test-timeout S          blktests' TIMEOUT: the most one test's fio runs (default 30)
#   --timeout S               the whole run's bound in guest seconds (default 3600)
#   --package NAME            one more Debian package in the image (repeatable)
#   --module NAME             one more kernel module in the image (repeatable)
#   --output DIR              where blktests' results/ go (default ./blktests-results)
#   -h, --help                this text
#
# Prints each test's verdict as blktests does ("block/005 ... [passed]"), a
# test that stopped without one as "[no verdict]" (counted as failed), then
# "blktests: N passed, N failed, N not run".  Exit status 0 when nothing
# failed, 1 when a test failed, 2 when the run itself did not complete.
# docs/kernel-testing.md ("blktests") has a walk-through, docs/conformance.md
# the results on ncq-disk.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { echo "run-blktests: error: $*" >&2; exit 2; }
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit "${1:-0}"; }

DEBIAN=bookworm DEVICE=ncq-disk,model=st3400620as DISK_SIZE= SMP=4 MEMORY=
TEST_TIMEOUT=30 TIMEOUT=3600 OUTPUT=$PWD/blktests-results
PACKAGES=()
ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --debian | --device | --disk-size | --smp | --memory | --test-timeout | --timeout | --package | --module | --output)
            [ $# -ge 2 ] || die "$1 needs a value (--help)"
            case "$1" in
                --debian) DEBIAN=$2 ;; --device) DEVICE=$2 ;; --disk-size) DISK_SIZE=$2 ;;
                --smp) SMP=$2 ;; --memory) MEMORY=$2 ;; --test-timeout) TEST_TIMEOUT=$2 ;;
                --timeout) TIMEOUT=$2 ;; --package) PACKAGES+=(--package "$2") ;;
                --module) PACKAGES+=(--module "$2") ;;
                --output) OUTPUT=$2 ;;
            esac
            shift 2 ;;
        -h | --help) usage 0 ;;
        -*) echo "run-blktests: unknown option: $1" >&2; usage 2 >&2 ;;
        *) ARGS+=("$1"); shift ;;
    esac
done
# the guest harness (qemu.qmp) below runs under the project's venv
. "$HERE/lib/venv.sh" || exit 2
[ ${#ARGS[@]} -ge 1 ] || { echo "run-blktests: CHECKOUT missing" >&2; usage 2 >&2; }
CHECKOUT=${ARGS[0]}
TESTS=("${ARGS[@]:1}")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(block scsi)
[ -f "$CHECKOUT/check" ] && [ -d "$CHECKOUT/tests" ] \
    || die "$CHECKOUT is no blktests checkout (no ./check and tests/): git clone https://github.com/osandov/blktests and pass its directory"
for t in "${TESTS[@]}"; do
    case "$t" in *[!a-z0-9/_-]*) die "test '$t': want a group (block) or a test (block/005)" ;; esac
    [ -e "$CHECKOUT/tests/$t" ] || die "test '$t': no tests/$t in $CHECKOUT"
done
if [ -z "$DISK_SIZE" ]; then
    # 1G, or a zoned model's capacity (model=NAME or model-file=PATH of
    # --device): the device refuses an image of another size
    DISK_SIZE=$("$HERE/model-bytes.sh" --zoned "$DEVICE") || exit 2
    [ -n "$DISK_SIZE" ] || DISK_SIZE=1G
fi
if [ -z "$MEMORY" ]; then
    MEMORY=1G
    for t in "${TESTS[@]}"; do case "$t" in zbd*) MEMORY=3G ;; esac; done
fi
for t in "${TESTS[@]}"; do
    # zbd's tests make dm-linear/dm-zoned targets (dmsetup), f2fs (which asks
    # the crypto API for "crc32": crc32_generic, no modules.dep entry) and btrfs
    case "$t" in zbd*) PACKAGES+=(--package dmsetup --package f2fs-tools
        --module f2fs --module crc32_generic --module dm-mod --module dm-zoned
        --module dm-crypt); break ;; esac
done
case "$SMP" in '' | *[!0-9]* | 0) die "--smp wants a number of CPUs, got '$SMP'" ;; esac
for v in "$TEST_TIMEOUT" "$TIMEOUT"; do
    case "$v" in '' | *[!0-9]* | 0) die "--timeout/--test-timeout want seconds, got '$v'" ;; esac
done
command -v make >/dev/null && command -v gcc >/dev/null && command -v g++ >/dev/null \
    || die "make, gcc and g++ are needed to build blktests' helpers: apt-get install build-essential"

CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}
# 1. a private copy of the checkout, built
CHECKOUT=$(cd "$CHECKOUT" && pwd)
WORK=$CACHE/blktests/$(echo "$CHECKOUT" | sha256sum | cut -c1-12)
mkdir -p "$WORK"
# one run at a time prepares a checkout's copy and image (the guests run in parallel)
exec 9>"$WORK/.lock"
flock 9
rm -rf "$WORK/tree"
mkdir -p "$WORK/tree"
(cd "$CHECKOUT" && tar --exclude=./.git --exclude=./results --exclude=./config -cf - .) | tar -C "$WORK/tree" -xf -
echo "run-blktests: building $CHECKOUT's helpers (make, log in $WORK/make.log)" >&2
nice -n 5 make -C "$WORK/tree" -j2 >"$WORK/make.log" 2>&1 \
    || die "make in a copy of $CHECKOUT failed; the end of $WORK/make.log: $(tail -3 "$WORK/make.log" | tr '\n' ' ')"
# blktests' config: the drive
printf '%s\n' "TEST_DEVS=(/dev/sda)" "TIMEOUT=$TEST_TIMEOUT" >"$WORK/tree/config"

# 2. QEMU and the image: blktests, udevadm (its scripts 'udevadm settle'),
# xfs_io (xfsprogs), setpci (pciutils), column (bsdextrautils: ./check's table)
if [ -z "${NCQ_QEMU_BUILD:-}" ]; then
    NCQ_QEMU_BUILD=$("$HERE/build-qemu.sh" | tail -1) || die "QEMU build failed"
fi
NCQ_IMAGE_DIR=$("$ROOT/images/build-image.sh" --debian "$DEBIAN" \
    --add "$WORK/tree:/opt/blktests" --package udev --package xfsprogs \
    --package pciutils --package bsdextrautils "${PACKAGES[@]}" | tail -1) || die "guest image build failed"
export NCQ_QEMU_BUILD NCQ_IMAGE_DIR
exec 9>&-

# 3. the run
mkdir -p "$OUTPUT"
# the guest-tests package root (pyproject.toml) for the Python below
export PYTHONPATH="$(python3 "$ROOT/scripts/pyrun.py" --path)"
# the tests ./check should report: a group's every test, for the ones it
# drops without a word (a requires() that fails in the shell itself)
NCQ_EXPECTED=$(for t in "${TESTS[@]}"; do
    if [ -d "$CHECKOUT/tests/$t" ]; then
        (cd "$CHECKOUT/tests" && ls -d "$t"/[0-9][0-9][0-9])
    else
        echo "$t"
    fi
done | tr '\n' ' ')
export NCQ_EXPECTED
exec python3 - "$ROOT" "$OUTPUT" "$DEVICE" "$DISK_SIZE" "$SMP" "$MEMORY" "$TIMEOUT" "${TESTS[@]}" <<'PY'
import io
import os
import re
import sys
import tarfile
from pathlib import Path

root, output, device, disk_size, smp, memory, timeout = sys.argv[1:8]
tests = sys.argv[8:]
import ncqguest
import ncqsuite

# blktests prints "block/005 => sda (...)   [passed]" per test, then its
# indented details (runtime, the reason of a "not run"); a failure also
# leaves results/<dev>/<test>.out.bad and .full
VERDICT = re.compile(r"^(\S+/\d+)\b.*\[(passed|failed|not run)\]\s*$")
# a test's first line: its name and description, before the verdict
STARTED = re.compile(r"^(\S+/\d+)( => \S+)? \(")
script = f"""
cd /opt/blktests
# what systemd would have mounted: configfs (null_blk's devices), cgroup2
modprobe configfs && mount -t configfs none /sys/kernel/config
mount -t cgroup2 none /sys/fs/cgroup
./check -o $RESULTS/blktests {' '.join(tests)}
echo "check-exit $?"
"""
out = Path(output)
r = ncqsuite.run("run-blktests", ncqsuite.workdir("blktests"), out,
                 ncqguest.Workload(script=script, timeout_s=int(timeout)),
                 rename=lambda n: n[len("blktests/"):]
                 if n.startswith("blktests/") else None,
                 device=device, disk_size=disk_size, memory=memory,
                 smp=int(smp), snapshot=False,
                 timeout_s=int(timeout) * 3 + 600)
counts = {"passed": 0, "failed": 0, "not run": 0}
lines = r.output.replace("\r", "\n").splitlines()
started = {m.group(1) for m in map(STARTED.match, lines) if m}
seen = set()
for i, line in enumerate(lines):
    m = VERDICT.match(line)
    if not m:
        continue
    seen.add(m.group(1))
    counts[m.group(2)] += 1
    print(line.rstrip())
    # the indented lines after a verdict: its runtime, the reason it did
    # not run, the diff of a failure
    for extra in lines[i + 1:]:
        if not extra.startswith(("    ", "\t")):
            break
        print(extra.rstrip())
# A test whose script stopped with an error has no verdict line (./check
# goes on with the next): a failure, with its .out in the results
for name in sorted(started - seen):
    counts["failed"] += 1
    print(f"{name} [no verdict: the test stopped; see {out}/*/{name}.out "
          "and .full]")
# A test ./check never named: it dropped it before its first line (e.g.
# a requires() whose shell arithmetic failed); not run, said so
for name in os.environ.get("NCQ_EXPECTED", "").split():
    if name not in started | seen:
        counts["not run"] += 1
        print(f"{name} [not run: ./check printed nothing for it; see "
              f"{out}/output.txt]")
total = sum(counts.values())
print(f"blktests: {counts['passed']} passed, {counts['failed']} failed, "
      f"{counts['not run']} not run (results in {out})")
ncqsuite.finish("run-blktests", r.status, total, counts["failed"], out,
                suite="blktests")
PY
