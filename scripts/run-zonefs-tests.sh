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
#   --debian bookworm|trixie  the guest's kernel: Debian 13's 6.12 (default)
#                             or Debian 12's 6.1
#   --device LINE             the drive's -device line without drive=/bus=/id=
#                             (default: ncq-disk,model=wd-hc620); a model file
#                             with fewer zones: ncq-disk,model-file=PATH
#   --disk-size SIZE          the drive's capacity (default: the model's, from
#                             its model file; a zoned drive needs exactly it)
#   --short                   the suite's -s: leave out its long tests
#   --memory SIZE             guest RAM (default 4G: test 0330's fio holds 8
#                             zone-sized buffers; QEMU allocates the RAM the
#                             guest touches, so it costs the host no more)
#   --timeout S               the whole run's bound in guest seconds (default 7200)
#   --output DIR              where the suite's logs go (default ./zonefs-tests-results)
#   -h, --help                this text
#
# Prints each test's verdict ("0010 PASS  mkzonefs (options)"), a skip with
# the reason the suite logged, then "zonefs-tests: N passed, N failed, N
# skipped".  Exit status 0 when nothing failed, 1 when a test failed, 2 when
# the run itself did not complete.  docs/smr.md has the results on ncq-disk.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { echo "run-zonefs-tests: error: $*" >&2; exit 2; }
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit "${1:-0}"; }

DEBIAN=trixie DEVICE=ncq-disk,model=wd-hc620 DISK_SIZE= TIMEOUT=7200 MEMORY=4G
OUTPUT=$PWD/zonefs-tests-results
SUITE_ARGS=()
ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --debian | --device | --disk-size | --timeout | --output | --memory)
            [ $# -ge 2 ] || die "$1 needs a value (--help)"
            case "$1" in
                --debian) DEBIAN=$2 ;; --device) DEVICE=$2 ;;
                --disk-size) DISK_SIZE=$2 ;; --timeout) TIMEOUT=$2 ;;
                --output) OUTPUT=$2 ;; --memory) MEMORY=$2 ;;
            esac
            shift 2 ;;
        --short) SUITE_ARGS+=(-s); shift ;;
        -h | --help) usage 0 ;;
        -*) echo "run-zonefs-tests: unknown option: $1" >&2; usage 2 >&2 ;;
        *) ARGS+=("$1"); shift ;;
    esac
done
# the guest harness (qemu.qmp) below runs under the project's venv
. "$HERE/lib/venv.sh" || exit 2
[ ${#ARGS[@]} -ge 1 ] || { echo "run-zonefs-tests: CHECKOUT missing" >&2; usage 2 >&2; }
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
case "$DEBIAN" in bookworm | trixie) ;; *) die "--debian wants bookworm or trixie, got '$DEBIAN'" ;; esac
case "$TIMEOUT" in '' | *[!0-9]* | 0) die "--timeout wants seconds, got '$TIMEOUT'" ;; esac
if [ -z "$DISK_SIZE" ]; then
    # the model's capacity (model=NAME or model-file=PATH of --device)
    DISK_SIZE=$("$HERE/model-bytes.sh" "$DEVICE") || exit 2
fi
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

if [ -z "${NCQ_QEMU_BUILD:-}" ]; then
    NCQ_QEMU_BUILD=$("$HERE/build-qemu.sh" | tail -1) || die "QEMU build failed"
fi
# the suite's tests use fio (in the image), blkzone (util-linux), mkfs.f2fs
# (f2fs-tools, with the f2fs module and crc32_generic, which f2fs asks the
# crypto API for) and dmsetup
NCQ_IMAGE_DIR=$("$ROOT/images/build-image.sh" --debian "$DEBIAN" \
    --add "$WORK/bin:/opt/zonefs/bin" --add "$WORK/tree/tests:/opt/zonefs-tests" \
    --package f2fs-tools --package dmsetup --module f2fs --module crc32_generic | tail -1) \
    || die "guest image build failed"
exec 9>&-
export NCQ_QEMU_BUILD NCQ_IMAGE_DIR

mkdir -p "$OUTPUT"
# the guest-tests package root (pyproject.toml) for the Python below
export PYTHONPATH="$(python3 "$ROOT/scripts/pyrun.py" --path)"
exec python3 - "$ROOT" "$OUTPUT" "$DEVICE" "$DISK_SIZE" "$TIMEOUT" "$MEMORY" \
    "${SUITE_ARGS[@]}" <<'PY'
import re
import shlex
import sys
from pathlib import Path

root, output, device, disk_size, timeout, memory = sys.argv[1:7]
suite_args = sys.argv[7:]
import ncqguest
import ncqsuite

# "  Test 0010: mkzonefs (options)    ... PASS" (PASS and FAIL in colour)
VERDICT = re.compile(r"^\s*Test (\d+):\s+(.*?)\s+\.\.\.\s+(?:\x1b\[[0-9;]*m)?"
                     r"(PASS|FAIL|skip)")
script = f"""
export PATH=/opt/zonefs/bin:$PATH
# test 0401 runs 'sudo fallocate': the guest runs everything as root, and
# has no sudo (its PAM set-up does not run in the image)
printf '#!/bin/sh\nexec "$@"\n' >/opt/zonefs/bin/sudo && chmod 755 /opt/zonefs/bin/sudo
# what systemd would have mounted: configfs (null_blk's devices)
modprobe configfs && mount -t configfs none /sys/kernel/config
cd /opt/zonefs-tests
bash ./zonefs-tests.sh {' '.join(shlex.quote(a) for a in suite_args)} \\
    -g $RESULTS/logs /dev/sda
echo "zonefs-tests-exit $?"
"""
out = Path(output)
r = ncqsuite.run("run-zonefs-tests", ncqsuite.workdir("zonefs-tests"), out,
                 ncqguest.Workload(script=script, timeout_s=int(timeout)),
                 device=device, disk_size=disk_size, snapshot=False,
                 memory=memory, timeout_s=int(timeout) * 3 + 600)
counts = {"PASS": 0, "FAIL": 0, "skip": 0}
logs = {name: data.decode(errors="replace") for name, data in r.files.items()}
for line in r.output.splitlines():
    m = VERDICT.match(line)
    if not m:
        continue
    num, desc, verdict = m.groups()
    counts[verdict] += 1
    print(f"{num} {verdict.upper():5} {desc}")
    if verdict != "PASS":
        # the reason the test logged: exit_skip's " --> skipped: ..." or
        # the last lines before FAILED
        log = logs.get(f"logs/{num}.log", "").splitlines()
        why = [ln for ln in log if "skipped:" in ln] if verdict == "skip" \
            else [ln for ln in log if ln.strip()][-4:]
        for ln in why:
            print(f"      {ln.strip()}")
print(f"zonefs-tests: {counts['PASS']} passed, {counts['FAIL']} failed, "
      f"{counts['skip']} skipped (logs in {out})")
ncqsuite.finish("run-zonefs-tests", r.status, sum(counts.values()),
                counts["FAIL"], out)
PY
