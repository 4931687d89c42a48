#!/bin/bash
# Run zonefs-tools' test suite (tests/zonefs-tests.sh) from your own checkout
# in a guest whose /dev/sda is a host-managed ncq-disk drive, and tell what
# passed.
#
#   scripts/run-zonefs-tests.sh [options] CHECKOUT [TESTS...]
#
# CHECKOUT is a zonefs-tools tree (git clone of
# westerndigitalcorporation/zonefs-tools); TESTS are test numbers or ranges
# as its -t takes them (0010, 0040-0045); default: every test.  The
# checkout's mkzonefs and its test tools (tests/tools/zio, zopen) are built
# statically with gcc (no autotools needed) under $NCQ_CACHE/zonefs-tools/,
# added to the guest image with its tests/ at /opt/zonefs-tests, and the
# suite runs there as root against /dev/sda.
#
#   --short                   the suite's -s: leave out its long tests
#   -h, --help                this text
#
# Defaults: --kernel 6.12, --device ncq-disk,model=wd-hc620 (a model file
# with fewer zones: --device ncq-disk,model-file=PATH), --disk-size the
# model's capacity (a zoned drive needs exactly it), --memory 4G (test
# 0330's fio holds 8 zone-sized buffers; QEMU allocates the RAM the guest
# touches, so it costs the host no more), --smp 1, --timeout 7200, --out
# ./zonefs-tests-results (the suite's logs).
#
# Prints each test's verdict ("0010 PASS  mkzonefs (options)"), a skip with
# the reason the suite logged, then "zonefs-tests: N passed, N failed, N
# skipped".  Exit status 0 when nothing failed, 1 when a test failed, 2 when
# the run itself did not complete.  docs/smr.md has the results on ncq-disk.
set -euo pipefail
SUITE_HERE=$(cd "$(dirname "$0")" && pwd)
SUITE_ROOT=$(cd "$SUITE_HERE/.." && pwd)
SUITE_TOOL=run-zonefs-tests
. "$SUITE_HERE/lib/suite.sh"
die() { suite_die "$@"; }
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; suite_help; exit "${1:-0}"; }

SUITE_KERNEL=6.12 SUITE_DEVICE=ncq-disk,model=wd-hc620 SUITE_MEMORY=4G
SUITE_TIMEOUT=7200 SUITE_OUT=$PWD/zonefs-tests-results
SUITE_ARGS=()
ARGS=()
while [ $# -gt 0 ]; do
    suite_option "$@"
    if [ "$SUITE_SHIFT" -gt 0 ]; then shift "$SUITE_SHIFT"; continue; fi
    case "$1" in
        --short) SUITE_ARGS+=(-s); shift ;;
        -h | --help) usage 0 ;;
        -*) echo "$SUITE_TOOL: unknown option: $1" >&2; usage 2 >&2 ;;
        *) ARGS+=("$1"); shift ;;
    esac
done
# the guest harness (qemu.qmp) runs under the project's venv
. "$SUITE_HERE/lib/venv.sh" || exit 2
[ ${#ARGS[@]} -ge 1 ] || { echo "$SUITE_TOOL: CHECKOUT missing" >&2; usage 2 >&2; }
CHECKOUT=$(cd "${ARGS[0]}" 2>/dev/null && pwd) || die "${ARGS[0]}: no such directory"
[ -f "$CHECKOUT/tests/zonefs-tests.sh" ] && [ -f "$CHECKOUT/src/mkzonefs.c" ] \
    || die "$CHECKOUT is no zonefs-tools checkout (no tests/zonefs-tests.sh and src/mkzonefs.c): git clone https://github.com/westerndigitalcorporation/zonefs-tools and pass its directory"
for t in "${ARGS[@]:1}"; do
    case "$t" in
        [0-9][0-9][0-9][0-9] | [0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9]) ;;
        *) die "test '$t': want a test number (0010) or a range (0040-0045)" ;;
    esac
    for n in ${t/-/ }; do
        [ -f "$CHECKOUT/tests/scripts/$n.sh" ] || die "test '$n': no tests/scripts/$n.sh in $CHECKOUT"
    done
    SUITE_ARGS+=(-t "$t")
done
suite_check
# the model's capacity (model=NAME or model-file=PATH of --device)
suite_disk_size
command -v gcc >/dev/null || die "gcc is needed to build mkzonefs: apt-get install build-essential"
for h in blkid/blkid.h uuid/uuid.h; do
    echo "#include <$h>" | gcc -E - >/dev/null 2>&1 \
        || die "<$h> missing: apt-get install libblkid-dev uuid-dev (mkzonefs needs them)"
done

CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}
WORK=$CACHE/zonefs-tools/$(echo "$CHECKOUT" | sha256sum | cut -c1-12)
mkdir -p "$WORK"
exec 9>"$WORK/lock"
flock 9
rm -rf "$WORK/tree" "$WORK/bin"
mkdir -p "$WORK/tree" "$WORK/bin"
(cd "$CHECKOUT" && tar --exclude=./.git -cf - .) | tar -C "$WORK/tree" -xf -
version=$(git -C "$CHECKOUT" describe --always --dirty 2>/dev/null || echo unknown)
echo "run-zonefs-tests: building mkzonefs, zio and zopen of $CHECKOUT ($version; log in $WORK/build.log)" >&2
# what configure would give them: the version, and the GNU extensions
# (O_DIRECT) that AC_USE_SYSTEM_EXTENSIONS turns on
echo "#define PACKAGE_VERSION \"$version\"" >"$WORK/tree/src/config.h"
{
    nice -n 5 gcc -O2 -D_GNU_SOURCE -static -o "$WORK/bin/mkzonefs" \
        "$WORK/tree"/src/*.c -lblkid -luuid &&
        nice -n 5 gcc -O2 -static -o "$WORK/tree/tests/tools/zio" "$WORK/tree/tests/tools/zio.c" &&
        nice -n 5 gcc -O2 -static -o "$WORK/tree/tests/tools/zopen" "$WORK/tree/tests/tools/zopen.c"
} >"$WORK/build.log" 2>&1 \
    || die "building zonefs-tools failed; the end of $WORK/build.log: $(tail -3 "$WORK/build.log" | tr '\n' ' ')"

# the suite's tests use fio (in the image), blkzone (util-linux), mkfs.f2fs
# (f2fs-tools, with the f2fs module, whose crc32 comes with it) and dmsetup
suite_build --add "$WORK/bin:/opt/zonefs/bin" --add "$WORK/tree/tests:/opt/zonefs-tests" \
    --package f2fs-tools --package dmsetup --module f2fs
exec 9>&-

suite_run suites.zonefs -- ${SUITE_ARGS[@]+"${SUITE_ARGS[@]}"}
