#!/bin/bash
# The newcomer's wait, measured: the demo and the test command each from
# an empty cache, in a fresh clone of HEAD, as a new user or a fresh CI
# runner meets them.  Prints both wall times (and the test command's step
# table and summary line).  A benchmark, not a test: it asserts nothing.
#
#   scripts/bench-ci.sh [--demo] [--test] [--keep] [--caller-path]
#
# --demo / --test: only that one (default: both, the demo first, each
# from its own empty cache).  --keep: leave the temporary directories.
# Both commands run as on a stock Debian, whose only python3 is Debian's
# /usr/bin/python3: with PATH=$STOCK_PATH (below), after checking that
# no folder of it but /usr/bin and /bin holds a python3 (a pyenv's or a
# /usr/local one would hide what a new user meets).  --caller-path: with
# the caller's PATH instead.
# "Empty" means NCQ_CACHE (QEMU source, builds, images, snapshots, the
# Python environment), ccache's and pip's caches, all in a new temporary
# directory; the Debian packages scripts/install-deps.sh installs are
# the machine's and stay installed (the first run on a new machine also
# pays their download: about a minute here).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
die() { echo "bench-ci: $*" >&2; exit 1; }

demo=0 test=0 keep=0 caller_path=0
while [ $# -gt 0 ]; do
    case $1 in
    --demo) demo=1; shift ;;
    --test) test=1; shift ;;
    --keep) keep=1; shift ;;
    --caller-path) caller_path=1; shift ;;
    *) die "unknown option '$1' (known: --demo, --test, --keep, --caller-path)" ;;
    esac
done
[ $((demo + test)) -gt 0 ] || demo=1 test=1

# Debian's default PATH for root (/etc/profile, login.defs' ENV_SUPATH)
STOCK_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ $caller_path = 0 ]; then
    IFS=: read -ra path_dirs <<<"$STOCK_PATH"
    for p in "${path_dirs[@]}"; do
        case $p in /usr/bin | /bin) continue ;; esac
        for py in "$p"/python3 "$p"/python3.*; do
            [ -e "$py" ] && [[ $py != *-config ]] \
                && die "$py would come before Debian's /usr/bin/python3 on the stock PATH; move it away or pass --caller-path"
        done
    done
    [ -x /usr/bin/python3 ] || die "no /usr/bin/python3: apt-get install python3 python3-venv"
    export PATH=$STOCK_PATH
    # pyenv's own variables would point a stray shim back at its python
    unset PYENV_VERSION PYENV_ROOT VIRTUAL_ENV PYTHONPATH PYTHONHOME
fi
# an empty cache holds no venv: none of the caller's either
unset NCQ_VENV

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
echo "bench-ci: python3 on PATH: $(command -v python3 || echo none) ($(python3 --version 2>&1)); PATH=$PATH"
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
