#!/bin/bash
# The RAID soak (issue 17; docs/soak.md): md RAID-5 on four ncq-disks
# under ext4, mixed faults (slow, unc, hang) and firmware changes over
# QMP, a power cut of every drive at the end of each round, every fsync'd
# file checked after each cut.  Prints a summary block; exits 1 if any
# fsync'd byte was lost or anything else went wrong.
#
#   scripts/soak.sh [--minutes N] [--round-seconds S] [--seed N] [--workdir DIR]
#
# --minutes: guest time to run, boots and checks included (default 120;
# rounds run until the guests' time reaches it); --round-seconds: guest
# seconds of workload per boot, each boot but the last ending in a power
# cut (default 300); --workdir: where the images and the rounds' logs go
# (default: a new directory under $TMPDIR, kept).  Uses $NCQ_QEMU_BUILD
# and $NCQ_IMAGE_DIR if set, else builds them (scripts/build-qemu.sh,
# images/build-image.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
minutes=120 round_s=300 seed=1 workdir=
usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; }
while [ $# -gt 0 ]; do
    case $1 in
    --minutes) minutes=${2:?--minutes needs a number}; shift 2 ;;
    --round-seconds) round_s=${2:?--round-seconds needs a number}; shift 2 ;;
    --seed) seed=${2:?--seed needs a number}; shift 2 ;;
    --workdir) workdir=${2:?--workdir needs a directory}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "soak: unknown option '$1'; scripts/soak.sh --help lists them" >&2; exit 2 ;;
    esac
done
[[ $minutes =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "soak: --minutes '$minutes' is not a number of minutes, e.g. --minutes 10" >&2; exit 2; }
[[ $round_s =~ ^[0-9]+$ ]] && [ "$round_s" -ge 10 ] || { echo "soak: --round-seconds '$round_s' must be a whole number of seconds, at least 10" >&2; exit 2; }
# the soak's Python (qemu.qmp) runs under the project's venv
. "$ROOT/scripts/lib/venv.sh" || exit 2
workdir=${workdir:-$(mktemp -d "${TMPDIR:-/tmp}/ncq-soak.XXXXXX")}
echo "soak: $minutes min of guest time in rounds of $round_s s; files in $workdir" >&2
cd "$ROOT/guest-tests"
exec python3 - "$workdir" "$minutes" "$round_s" "$seed" <<'PY'
import sys
import ncqsoak
workdir, minutes, round_s, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
soak = ncqsoak.Soak(workdir, minutes, round_s=round_s, seed=seed,
                    log=lambda m: print(m, file=sys.stderr, flush=True))
totals = soak.run()
print(totals.summary())
sys.exit(1 if totals.errors else 0)
PY
