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
#   --brief                   print each step's first lines only
#   -h, --help                this text
#
# Defaults: --kernel 6.1, --device ncq-disk,model=seagate-exos-x18,
# --disk-size 64G (sparse), --memory 1G, --smp 1, --timeout 1800, --out
# ./conformance-<kernel>.
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
SUITE_HERE=$(cd "$(dirname "$0")" && pwd)
SUITE_ROOT=$(cd "$SUITE_HERE/.." && pwd)
SUITE_TOOL=run-conformance
. "$SUITE_HERE/lib/suite.sh"
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; suite_help; exit "${1:-0}"; }

SUITE_DEVICE=ncq-disk,model=seagate-exos-x18 SUITE_DISK_SIZE=64G SUITE_TIMEOUT=1800
BRIEF=()
while [ $# -gt 0 ]; do
    suite_option "$@"
    if [ "$SUITE_SHIFT" -gt 0 ]; then shift "$SUITE_SHIFT"; continue; fi
    case "$1" in
        --brief) BRIEF=(--brief); shift ;;
        -h | --help) usage 0 ;;
        *) echo "$SUITE_TOOL: unknown argument: $1" >&2; usage 2 >&2 ;;
    esac
done
# the guest harness (qemu.qmp) runs under the project's venv
. "$SUITE_HERE/lib/venv.sh" || exit 2
suite_check
SUITE_OUT=${SUITE_OUT:-$PWD/conformance-$(basename "$SUITE_KERNEL")}
suite_build
suite_run suites.conformance ${BRIEF[@]+"${BRIEF[@]}"}
