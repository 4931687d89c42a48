#!/bin/bash
# Run your own command line in a guest on an ncq-disk drive, with your
# files and packages in the image, and bring back what it printed, its
# exit status and the files it wrote: a suite that has no runner of its
# own, without writing Python.
#
#   scripts/run-in-guest.sh [options] [--] COMMAND [ARGS...]
#
# COMMAND runs in the guest as root (in / unless --cwd), its drive
# /dev/sda; for shell syntax give `sh -c '...'`.  Its output (stdout and
# stderr together) is printed and kept in OUT/output.txt, with the guest's
# dmesg.txt and console.txt; each --fetch PATH is copied from the guest
# into OUT/PATH (relative to /).  The exit status is the command's, or 2
# when the run itself did not complete.
#
#   --fetch PATH              a guest file or directory to bring back
#                             (repeatable)
#   --cwd DIR                 the guest directory the command starts in
#   --boot                    boot the guest for this run (default: restore
#                             the saved boot of this image and device line,
#                             made by the first run: later runs skip the boot)
#   -h, --help                this text
#
# Defaults: --kernel 6.1, --device ncq-disk,model=st3400620as,
# --disk-size 1G (a zoned model: its capacity), --memory 1G, --smp 1,
# --timeout 3600, --out ./run-in-guest-results.
# docs/kernel-testing.md ("Your own suite") walks through it.
set -euo pipefail
SUITE_HERE=$(cd "$(dirname "$0")" && pwd)
SUITE_ROOT=$(cd "$SUITE_HERE/.." && pwd)
SUITE_TOOL=run-in-guest
. "$SUITE_HERE/lib/suite.sh"
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; suite_help; exit "${1:-0}"; }

SUITE_OUT=$PWD/run-in-guest-results
FETCH=() CWD=/ SNAPSHOT=on
while [ $# -gt 0 ]; do
    suite_option "$@"
    if [ "$SUITE_SHIFT" -gt 0 ]; then shift "$SUITE_SHIFT"; continue; fi
    case $1 in
        --fetch | --cwd)
            [ $# -ge 2 ] || suite_die "$1 needs a value (--help)"
            case $1 in --fetch) FETCH+=(--fetch "$2") ;; --cwd) CWD=$2 ;; esac
            shift 2 ;;
        --boot) SNAPSHOT=off; shift ;;
        -h | --help) usage 0 ;;
        --) shift; break ;;
        -*) echo "$SUITE_TOOL: unknown option: $1" >&2; usage 2 >&2 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "$SUITE_TOOL: no COMMAND to run in the guest" >&2; usage 2 >&2; }
# the guest harness (qemu.qmp) runs under the project's venv
. "$SUITE_HERE/lib/venv.sh" || exit 2
suite_check
suite_disk_size --zoned
[ -n "$SUITE_DISK_SIZE" ] || SUITE_DISK_SIZE=1G
suite_build
suite_run suites.command ${FETCH[@]+"${FETCH[@]}"} --cwd "$CWD" \
    --snapshot "$SNAPSHOT" -- "$@"
