#!/bin/bash
# The newcomer's wait, measured: the demo and the test command each from
# an empty cache, in a fresh clone of HEAD, as a new user or a fresh CI
# runner meets them.  Prints both wall times (and the test command's step
# table and summary line).  A benchmark, not a test: it asserts nothing.
#
#   scripts/bench-ci.sh [--demo] [--test] [--keep]
#
# --demo / --test: only that one (default: both, the demo first, each
# from its own empty cache).  --keep: leave the temporary directories.
# "Empty" means NCQ_CACHE (QEMU source, builds, images, snapshots, the
# Python environment), ccache's and pip's caches, all in a new temporary
# directory; the Debian packages scripts/install-deps.sh installs are
# the machine's and stay installed (the first run on a new machine also
# pays their download: about a minute here).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { echo "bench-ci: $*" >&2; exit 1; }

demo=0 test=0 keep=0
while [ $# -gt 0 ]; do
    case $1 in
    --demo) demo=1; shift ;;
    --test) test=1; shift ;;
    --keep) keep=1; shift ;;
    *) die "unknown option '$1' (known: --demo, --test, --keep)" ;;
    esac
done
[ $((demo + test)) -gt 0 ] || demo=1 test=1

# fresh WHAT: a clone of HEAD and an empty cache under a new directory
fresh() {
    local d
    d=$(mktemp -d "/var/tmp/ncq-bench-$1.XXXXXX")
    git clone -q "$ROOT" "$d/clone" || die "git clone of $ROOT failed"
    git -C "$d/clone" checkout -q "$(git -C "$ROOT" rev-parse HEAD)"
    mkdir -p "$d/cache"
    echo "$d"
}
# run_fresh DIR LOG COMMAND...: COMMAND in DIR's clone with DIR's caches;
# prints the wall time in seconds
run_fresh() {
    local d=$1 log=$2 t0 rc=0
    shift 2
    t0=$(date +%s)
    (cd "$d/clone" && env NCQ_CACHE="$d/cache" CCACHE_DIR="$d/cache/ccache" \
        PIP_CACHE_DIR="$d/cache/pip" "$@") >"$log" 2>&1 || rc=$?
    echo "$(($(date +%s) - t0)) $rc"
}
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

echo "bench-ci: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB, HEAD $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ)"
mkdir -p "$ROOT/_build"
dirs=()
if [ $demo = 1 ]; then
    d=$(fresh demo); dirs+=("$d")
    read -r s rc < <(run_fresh "$d" "$ROOT/_build/bench-ci-demo.log" scripts/demo.sh)
    echo "bench-ci: demo from nothing: $(mmss "$s") (exit $rc; log _build/bench-ci-demo.log)"
    grep -E "^(guest saw|fio|time):" "$ROOT/_build/bench-ci-demo.log" | sed 's/^/    /'
fi
if [ $test = 1 ]; then
    d=$(fresh test); dirs+=("$d")
    read -r s rc < <(run_fresh "$d" "$ROOT/_build/bench-ci-test.log" scripts/test.sh)
    echo "bench-ci: test command from nothing: $(mmss "$s") (exit $rc; log _build/bench-ci-test.log)"
    sed -n '/^step table/,$p' "$ROOT/_build/bench-ci-test.log" | sed 's/^/    /'
fi
if [ $keep = 0 ]; then
    rm -rf "${dirs[@]}"
fi
