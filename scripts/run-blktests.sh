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
#   --test-timeout S          blktests' TIMEOUT: the most one test's fio runs (default 30)
#   -h, --help                this text
#
# Defaults: --kernel 6.1, --device ncq-disk,model=st3400620as, --disk-size
# 1G (a zoned model: its capacity, which the device requires), --smp 4
# (block/022 wants 2), --memory 1G (3G with zbd tests: zbd/009, 010 and
# 012 load a 1 GiB scsi_debug disk), --timeout 3600, --out
# ./blktests-results (where blktests' results/ go).
#
# Prints each test's verdict as blktests does ("block/005 ... [passed]"), a
# test that stopped without one as "[no verdict]" (counted as failed), then
# "blktests: N passed, N failed, N not run".  Exit status 0 when nothing
# failed, 1 when a test failed, 2 when the run itself did not complete.
# docs/kernel-testing.md ("blktests") has a walk-through, docs/conformance.md
# the results on ncq-disk.
set -euo pipefail
SUITE_HERE=$(cd "$(dirname "$0")" && pwd)
SUITE_ROOT=$(cd "$SUITE_HERE/.." && pwd)
SUITE_TOOL=run-blktests
. "$SUITE_HERE/lib/suite.sh"
die() { suite_die "$@"; }
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; suite_help; exit "${1:-0}"; }

SUITE_SMP=4 SUITE_MEMORY= SUITE_OUT=$PWD/blktests-results
TEST_TIMEOUT=30
ARGS=()
while [ $# -gt 0 ]; do
    suite_option "$@"
    if [ "$SUITE_SHIFT" -gt 0 ]; then shift "$SUITE_SHIFT"; continue; fi
    case "$1" in
        --test-timeout)
            [ $# -ge 2 ] || die "$1 needs a value (--help)"
            TEST_TIMEOUT=$2; shift 2 ;;
        -h | --help) usage 0 ;;
        -*) echo "$SUITE_TOOL: unknown option: $1" >&2; usage 2 >&2 ;;
        *) ARGS+=("$1"); shift ;;
    esac
done
# the guest harness (qemu.qmp) runs under the project's venv
. "$SUITE_HERE/lib/venv.sh" || exit 2
[ ${#ARGS[@]} -ge 1 ] || { echo "$SUITE_TOOL: CHECKOUT missing" >&2; usage 2 >&2; }
CHECKOUT=${ARGS[0]}
TESTS=("${ARGS[@]:1}")
[ ${#TESTS[@]} -gt 0 ] || TESTS=(block scsi)
[ -f "$CHECKOUT/check" ] && [ -d "$CHECKOUT/tests" ] \
    || die "$CHECKOUT is no blktests checkout (no ./check and tests/): git clone https://github.com/osandov/blktests and pass its directory"
for t in "${TESTS[@]}"; do
    case "$t" in *[!a-z0-9/_-]*) die "test '$t': want a group (block) or a test (block/005)" ;; esac
    [ -e "$CHECKOUT/tests/$t" ] || die "test '$t': no tests/$t in $CHECKOUT"
done
suite_check
# 1G, or a zoned model's capacity: the device refuses an image of another size
suite_disk_size --zoned
[ -n "$SUITE_DISK_SIZE" ] || SUITE_DISK_SIZE=1G
if [ -z "$SUITE_MEMORY" ]; then
    SUITE_MEMORY=1G
    for t in "${TESTS[@]}"; do case "$t" in zbd*) SUITE_MEMORY=3G ;; esac; done
fi
PACKAGES=()
for t in "${TESTS[@]}"; do
    # zbd's tests make dm-linear/dm-zoned targets (dmsetup), f2fs (its
    # crc32 comes with it: images/module-closure.py) and btrfs
    case "$t" in zbd*) PACKAGES+=(--package dmsetup --package f2fs-tools
        --module f2fs --module dm-mod --module dm-zoned --module dm-crypt); break ;; esac
done
case "$TEST_TIMEOUT" in '' | *[!0-9]* | 0) die "--test-timeout wants seconds, got '$TEST_TIMEOUT'" ;; esac
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
suite_build --add "$WORK/tree:/opt/blktests" --package udev --package xfsprogs \
    --package pciutils --package bsdextrautils ${PACKAGES[@]+"${PACKAGES[@]}"}
exec 9>&-

# 3. the run: the tests ./check should report (a group's every test, for
# the ones it drops without a word: a requires() that fails in the shell
# itself)
EXPECTED=$(for t in "${TESTS[@]}"; do
    if [ -d "$CHECKOUT/tests/$t" ]; then
        (cd "$CHECKOUT/tests" && ls -d "$t"/[0-9][0-9][0-9])
    else
        echo "$t"
    fi
done | tr '\n' ' ')
suite_run suites.blktests --expected "$EXPECTED" -- "${TESTS[@]}"
