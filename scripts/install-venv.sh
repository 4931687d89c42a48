#!/bin/bash
# The project's Python environment: a venv made with Debian's python3
# (not pip into the system: Debian's python3 refuses that, PEP 668), holding
# the dependency group "tools" of pyproject.toml (meson, pytest, qemu.qmp,
# numpy, matplotlib, ...).  scripts/install-deps.sh runs it after apt-get;
# it needs no root.  Every script that runs Python puts the venv's bin first
# on PATH (scripts/lib/venv.sh); the programs in scripts/ and tools/ restart
# under its python (scripts/pyrun.py).
#
#   scripts/install-venv.sh
#
# The venv: $NCQ_VENV, default ${NCQ_CACHE:-~/.cache/ncq-disk}/venv.  Made
# from $PYTHON (default /usr/bin/python3, Debian's).  Quick when nothing
# changed: a stamp in the venv keys the requirement list and the python it
# was made from; pip runs only when either changed.  pip's output goes to
# $NCQ_VENV.log.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}
VENV=${NCQ_VENV:-$CACHE/venv}
# Debian's python3 by its path: the first python3 on PATH may be another
# (pyenv's), which would hide what a stock Debian does
PY=${PYTHON:-/usr/bin/python3}
STAMP=$VENV/.ncq-requirements
LOG=$VENV.log

die() { echo "install-venv: $*" >&2; exit 1; }

PY=$(command -v "$PY") \
    || die "${PYTHON:-/usr/bin/python3} not found; install Debian's python3 and python3-venv (scripts/install-deps.sh, as root), or set PYTHON"
# The oldest python the project runs on is pyproject.toml's requires-python
# (">=3.11": tomllib, which reads that file, came with 3.11; Debian 12 has
# 3.11, 13 has 3.13).  An older python has no tomllib: said so here.
"$PY" -c 'import tomllib' 2>/dev/null \
    || die "$PY is Python $("$PY" -c 'import sys; print(sys.version.split()[0])'); pyproject.toml's requires-python asks for 3.11 or later (Debian 12's python3 is 3.11)"
# Debian splits venv's pip bootstrap (ensurepip) into python3-venv; without
# it `python3 -m venv` makes a venv with no pip and says so only on its own
"$PY" -c 'import ensurepip, venv' 2>/dev/null \
    || die "$PY cannot make a venv with pip: Debian's python3-venv is missing; run scripts/install-deps.sh as root (or apt-get install python3-venv)"

# The requirement list: pyproject.toml's [dependency-groups] tools (PEP 735),
# one specifier a line, after checking [project] requires-python against
# $PY.  Read here rather than by pip (`pip install --group` needs pip 25.1;
# the venv's pip is the one Debian's python3 bundles).
reqs=$("$PY" - "$ROOT/pyproject.toml" <<'PY'
import re
import sys
import tomllib
with open(sys.argv[1], "rb") as f:
    conf = tomllib.load(f)
want = conf.get("project", {}).get("requires-python", "")
m = re.fullmatch(r">=\s*(\d+)\.(\d+)", want.strip())
if not m:
    sys.exit(f"pyproject.toml's [project] requires-python is {want!r}; "
             "install-venv.sh reads only the form '>=X.Y'")
if sys.version_info[:2] < (int(m[1]), int(m[2])):
    sys.exit(f"{sys.executable} is Python {sys.version.split()[0]}; "
             f"pyproject.toml's requires-python asks for {want}")
group = conf.get("dependency-groups", {}).get("tools")
if not group or not all(isinstance(r, str) for r in group):
    sys.exit("pyproject.toml has no [dependency-groups] tools = [...] list")
print("\n".join(group))
PY
) || die "no usable requirement list in $ROOT/pyproject.toml (the line above says why); restore it from git"
mapfile -t req_list <<<"$reqs"
# What the venv must match: the list, and the python it is made from (a
# Debian upgrade from 3.11 to 3.13 leaves a venv whose packages the new
# python does not see).
base=$("$PY" -c 'import sys; print(sys.executable, "%d.%d" % sys.version_info[:2])')
key=$(printf '%s\n' "$base" "$reqs" | sha256sum | cut -c1-16)

# venv_python_ok: the venv's python runs, is the base's version and has pip
venv_python_ok() {
    "$VENV/bin/python3" -c 'import sys, pip; sys.exit("%d.%d" % sys.version_info[:2] != sys.argv[1])' \
        "${base##* }" 2>/dev/null
}

# one install at a time: checkouts that share the cache share the venv
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9
if [ "$(cat "$STAMP" 2>/dev/null)" = "$key" ] && venv_python_ok; then
    echo "install-venv: $VENV up to date"
    exit 0
fi

if ! venv_python_ok; then
    # --clear: what a venv of another python left is of no use
    "$PY" -m venv --clear "$VENV" >"$LOG" 2>&1 \
        || die "'$PY -m venv $VENV' failed: $(tail -1 "$LOG")"
fi
rm -f "$STAMP"

echo "install-venv: installing ${req_list[*]} into $VENV (pip; log $LOG)"
if ! "$VENV/bin/python3" -m pip install --disable-pip-version-check \
        --no-input --progress-bar off "${req_list[@]}" >"$LOG" 2>&1; then
    # pip's own verdict: its last error line (or its last line)
    last=$(grep -E '^(ERROR|error):' "$LOG" | tail -1 || true)
    [ -n "$last" ] || last=$(tail -1 "$LOG")
    # pip retries a connection it cannot make (5 times by default), then
    # says only that no version matches: the retries' warnings name the
    # real cause
    if grep -qE 'NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|ConnectTimeoutError|ReadTimeoutError|ProxyError|SSLError' "$LOG"; then
        die "pip could not reach PyPI (check the network, or the proxy: https_proxy); pip said: $last; full log: $LOG"
    fi
    die "pip install into $VENV failed; pip said: $last; full log: $LOG"
fi
echo "$key" >"$STAMP"
echo "install-venv: $VENV ready"
