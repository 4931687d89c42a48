# Sourced (not run) by every script that runs Python: puts the project's
# venv (scripts/install-venv.sh makes it; scripts/install-deps.sh runs that)
# first on PATH, so that `python3`, `meson` and pytest are the venv's, and
# so are the python QEMU's configure finds and every child's.  Debian's own
# python3 has none of the project's Python dependencies (and refuses pip).
#
#   . "$HERE/lib/venv.sh" || exit 1      in a script
#   . scripts/lib/venv.sh                in your shell, for your own runs
#
# The venv: $NCQ_VENV, default ${NCQ_CACHE:-~/.cache/ncq-disk}/venv.  It is
# exported, so a child given another NCQ_CACHE (a private build cache)
# keeps this venv.  Returns 1 with a one-line error naming the fix when
# the venv is missing or its python no longer runs.

NCQ_VENV=${NCQ_VENV:-${NCQ_CACHE:-$HOME/.cache/ncq-disk}/venv}
if ! "$NCQ_VENV/bin/python3" -c '' 2>/dev/null; then
    # named as the sourcing script names itself in its errors ("build-qemu")
    _venv_me=${0##*/}
    echo "${_venv_me%.sh}: no working Python venv at $NCQ_VENV; run scripts/install-deps.sh (as root; scripts/install-venv.sh alone if the apt packages are there)" >&2
    unset _venv_me
    return 1
fi
export NCQ_VENV
# first, and once: a script run by another finds it there already
case $PATH: in
"$NCQ_VENV/bin:"*) ;;
*) export PATH="$NCQ_VENV/bin:$PATH" ;;
esac
