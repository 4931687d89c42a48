#!/bin/bash
# Run every client nobody here wrote on an ncq-disk drive in one guest boot,
# and print what each printed (docs/conformance.md is made of this output).
#
#   scripts/run-conformance.sh [options]
#
# One guest boots on the drive and runs scripts/conformance-guest.sh: hdparm
# (-I, -i, -W, -C, -y, -S, -Y), smartctl (-i, -a, -x, the log directories,
# -l gplog,0, smartlog,0, sataphy, devstat, xerror, scterc and
# scterc,70,70, scttempsts, scttemp, selftest, and every SMART log the
# directory lists), sg3-utils (sg_inq, sg_vpd, sg_readcap, sg_sat_identify,
# sg_sat_read_gplog of every log and page the GP directory lists, with and
# without --dma), fio (4 KiB random reads through libaio at iodepth 1, 8 and
# 32), blktrace/blkparse while fio reads 8 deep, and libata at queue_depth
# 1, 8 and 32 (sysfs) under fio at iodepth 32.  cdl-tools (cdladm and the
# maker's test suite) have their own runner, scripts/run-cdl-tools.sh
# (docs/cdl.md).
#
#   --kernel 6.1|6.12         the guest's kernel: Debian 12's 6.1 (default)
#                             or Debian 13's 6.12 (images/build-image.sh
#                             --debian trixie)
#   --device LINE             the drive's -device line without drive=/bus=/id=
#                             (default: ncq-disk,model=seagate-exos-x18)
#   --disk-size SIZE          the drive's capacity (default 64G, sparse)
#   --output DIR              where each step's output goes (default
#                             ./conformance-<kernel>)
#   --brief                   print each step's first lines only
#   -h, --help                this text
#
# Prints each step ("== NAME (exit N)" and what the client printed), the
# per-log lines of sg_sat_read_gplog and SMART READ LOG, the drive's view of
# each libata queue depth (the most commands it held, from its trace), and a
# last line "conformance: N problems" naming each: a client's "not
# supported" for something the drive claims, a log it lists that does not
# read the same both ways, a libata error or NCQ turned off, a queue depth
# not honoured.  Exit status 0 with no problem, 1 with one, 2 when the run
# itself did not complete.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { echo "run-conformance: error: $*" >&2; exit 2; }
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit "${1:-0}"; }

KERNEL=6.1 DEVICE=ncq-disk,model=seagate-exos-x18 DISK_SIZE=64G BRIEF=0
OUTPUT=
while [ $# -gt 0 ]; do
    case "$1" in
        --kernel | --device | --disk-size | --output)
            [ $# -ge 2 ] || die "$1 needs a value (--help)"
            case "$1" in
                --kernel) KERNEL=$2 ;; --device) DEVICE=$2 ;;
                --disk-size) DISK_SIZE=$2 ;; --output) OUTPUT=$2 ;;
            esac
            shift 2 ;;
        --brief) BRIEF=1; shift ;;
        -h | --help) usage 0 ;;
        *) echo "run-conformance: unknown argument: $1" >&2; usage 2 >&2 ;;
    esac
done
# the guest harness (qemu.qmp) below runs under the project's venv
. "$HERE/lib/venv.sh" || exit 2
case "$KERNEL" in
    6.1) DEBIAN=bookworm ;;
    6.12) DEBIAN=trixie ;;
    *) die "--kernel wants 6.1 or 6.12, got '$KERNEL'" ;;
esac
OUTPUT=${OUTPUT:-$PWD/conformance-$KERNEL}

if [ -z "${NCQ_QEMU_BUILD:-}" ]; then
    NCQ_QEMU_BUILD=$("$HERE/build-qemu.sh" | tail -1) || die "QEMU build failed"
fi
if [ -z "${NCQ_IMAGE_DIR:-}" ]; then
    NCQ_IMAGE_DIR=$("$ROOT/images/build-image.sh" --debian "$DEBIAN" | tail -1) \
        || die "guest image build failed"
fi
export NCQ_QEMU_BUILD NCQ_IMAGE_DIR
mkdir -p "$OUTPUT"

# the guest-tests package root (pyproject.toml) for the Python below
export PYTHONPATH="$(python3 "$ROOT/scripts/pyrun.py" --path)"
exec python3 - "$ROOT" "$OUTPUT" "$DEVICE" "$DISK_SIZE" "$BRIEF" <<'PY'
import re
import sys
from pathlib import Path

root, output, device, disk_size, brief = sys.argv[1:6]
import ncqguest
import ncqsuite

out = Path(output)
work = ncqsuite.workdir("conformance")
trace = work / "drive.trace"
script = (Path(root) / "scripts" / "conformance-guest.sh").read_text()
r = ncqsuite.run("run-conformance", work, out,
                 ncqguest.Workload(script=script, timeout_s=1800),
                 device=f"{device},trace={trace}", disk_size=disk_size,
                 memory="1G", snapshot=False, timeout_s=3600)

release = ncqguest.image_manifest().get("kernel_release", "?")
print(f"run-conformance: {device} on Linux {release}; each step's output "
      f"in {out}")
problems = []
unclaimed = set()
# the logs the drive lists (smartctl -l directory: GPL and SMART)
directory = r.files.get("smartctl-directory.txt", b"").decode()
listed = {int(a, 16) for a in re.findall(r"^0x([0-9a-f]{2}) ", directory,
                                         re.M)}
steps = re.findall(r"^step (\S+) exit (\d+)$", r.output, re.M)
for name, rc in steps:
    text = r.files.get(f"{name}.txt", b"").decode(errors="replace")
    lines = text.rstrip("\n").splitlines()
    print(f"\n== {name} (exit {rc})")
    print("\n".join(lines[:12] if brief == "1" else lines))
    if brief == "1" and len(lines) > 12:
        print(f"   ... {len(lines) - 12} more lines in {out}/{name}.txt")
    if name.startswith("smartctl"):
        for line in lines:
            # "... (GP Log 0x0c) not supported": a problem only for a log
            # the drive lists; any other "not supported" or failed read is
            m = re.search(r"Log 0x([0-9a-f]{2})\) not supported", line)
            if m and int(m[1], 16) not in listed:
                unclaimed.add(line.strip())
            elif re.search(r"not supported|^(Read|Write) .*failed|FAILED!",
                           line):
                problems.append(f"{name}: {line.strip()}")
other = [line for line in r.output.splitlines()
         if not re.match(r"step \S+ exit \d+$", line)]
print("\n== guest's own lines")
print("\n".join(other))
for line in other:
    m = re.match(r"gplog (\S+) (\d+) (\d+) (\d+) (\w+)$", line)
    # E1h (SCT data transfer) holds data only after an SCT command that
    # has some; reading it otherwise is refused, both ways alike
    if m and m[1] != "e1h" and m.groups()[2:] != ("0", "0", "same"):
        problems.append(f"sg_sat_read_gplog: {line}")
    m = re.match(r"smartlog (\S+) exit (\d+) (\d+)$", line)
    if m and (m[2] != "0" or m[3] != "0"):
        problems.append(f"smartctl -l smartlog: {line}")
m = re.search(r"^dmesg_bad (\d+)$", r.output, re.M)
if not m or m[1] != "0":
    problems.append("libata: errors in dmesg (dmesg-libata.txt)")

# the drive's view of each libata queue depth: fio's regions are 1 GiB
# each (region 5: queue_depth 1, 6: 8, 7: 32); queue_len counts the
# commands already in the drive when one arrives
if trace.exists():
    _, recs = ncqguest.read_trace(trace)
    print("\n== the drive's trace: most commands held per phase")
    gib = (1 << 30) // 512
    # a drive of queue-depth=N: Linux sets queue_depth N at boot and
    # never more, so no phase holds more than N
    m = re.search(r"^boot_queue_depth (\d+)$", r.output, re.M)
    most = int(m[1]) if m else 32
    for region, what, want in ((1, "fio iodepth 1", 1), (2, "fio iodepth 8", 8),
                               (3, "fio iodepth 32", 32),
                               (4, "blktrace, fio iodepth 8", 8),
                               (5, "libata queue_depth 1", 1),
                               (6, "libata queue_depth 8", 8),
                               (7, "libata queue_depth 32", 32)):
        rs = [x for x in recs if x["op"] == "R"
              and region * gib <= x["lba"] < (region + 1) * gib]
        held = max((x["queue_len"] for x in rs), default=-1) + 1
        want = min(want, most)
        print(f"{what}: {len(rs)} reads, at most {held} in the drive")
        if not rs or held != want:
            problems.append(f"{what}: the drive held at most {held} "
                            f"commands, not {want}")
print()
for line in sorted(unclaimed):
    print(f"not claimed (the drive lists no such log): {line}")
for p in problems:
    print(f"problem: {p}")
print(f"conformance: {len(problems)} problems "
      f"({len(steps)} steps, Linux {release}, {device})")
sys.exit(1 if problems else 0)
PY
