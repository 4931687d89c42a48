#!/usr/bin/env python3
"""Run the checkout's Python programs with its package roots importable.

The roots are pyproject.toml's one list ([tool.pytest.ini_options]
pythonpath: guest-tests, tools/ncq-fit, tests/repo); pytest reads the same
list for the tests.  Nothing edits sys.path (tests/repo/test_packages.py):

  python3 scripts/pyrun.py MODULE [ARGS...]
      runs `python3 -m MODULE ARGS...` with the roots on PYTHONPATH, e.g.
      `python3 scripts/pyrun.py compare --help`;
  import pyrun; pyrun.ensure()
      at the top of a program in scripts/ (its own folder is importable):
      when the roots are not importable yet, the program is started again
      with them on PYTHONPATH (once);
  pyrun.env(), pyrun.ROOTS
      the environment a child Python needs, and the roots themselves.

With the roots on PYTHONPATH (`export PYTHONPATH=$(python3 scripts/pyrun.py
--path)`) every module runs as `python3 -m`, e.g. `python3 -m ncqfit`.

The interpreter: the project's Python dependencies live in its venv
(scripts/install-venv.sh makes it, at $NCQ_VENV, default
${NCQ_CACHE:-~/.cache/ncq-disk}/venv), not in Debian's python3, which
refuses pip.  A program started by a python of no venv (Debian's
`python3`, the shebangs' `/usr/bin/env python3`) restarts under the
venv's python; one started in a venv (the project's, or yours) stays
there.  Either way its children find that venv's bin first on PATH and
NCQ_VENV naming it, as scripts/lib/venv.sh sets them for the shell
scripts.
"""

import functools
import os
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MARK = "NCQ_PYRUN"


def _roots():
    """pyproject.toml's [tool.pytest.ini_options] pythonpath, as paths."""
    try:
        with open(REPO / "pyproject.toml", "rb") as f:
            conf = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        sys.exit(f"pyrun: cannot read {REPO / 'pyproject.toml'}: {e}; "
                 "restore it from git")
    roots = (conf.get("tool", {}).get("pytest", {}).get("ini_options", {})
             .get("pythonpath"))
    if not roots or not all(isinstance(r, str) for r in roots):
        sys.exit("pyrun: pyproject.toml has no [tool.pytest.ini_options] "
                 "pythonpath = [...] list; restore it from git")
    return tuple(REPO / r for r in roots)


ROOTS = _roots()


def venv():
    """The project's venv (scripts/lib/venv.sh reads the same variables)."""
    if os.environ.get("NCQ_VENV"):
        return Path(os.environ["NCQ_VENV"])
    cache = (os.environ.get("NCQ_CACHE") or
             os.path.join(os.path.expanduser("~"), ".cache", "ncq-disk"))
    return Path(cache) / "venv"


@functools.cache
def interpreter():
    """(python, its venv): this python when it runs in a venv, else the
    project's venv's when there is one, else this python (venv None)."""
    if sys.prefix != sys.base_prefix:
        return sys.executable, Path(sys.prefix)
    py = venv() / "bin" / "python3"
    if os.access(py, os.X_OK):
        return str(py), venv()
    print(f"pyrun: no Python venv at {venv()}; run scripts/install-deps.sh "
          f"(carrying on with {sys.executable}, which may lack the "
          "project's packages)", file=sys.stderr)
    return sys.executable, None


def _venv_first(e, v):
    """Give environment `e` venv `v`: its bin first on PATH, NCQ_VENV."""
    if v is None:
        return
    b = str(v / "bin")
    old = e.get("PATH", os.defpath)
    if not old.startswith(b + os.pathsep):
        e["PATH"] = b + os.pathsep + old
    e["NCQ_VENV"] = str(v)


def path(existing=None):
    """The PYTHONPATH value: the roots, then `existing`."""
    parts = [str(r) for r in ROOTS]
    if existing:
        parts.append(existing)
    return os.pathsep.join(parts)


def env(base=None):
    """A copy of `base` (default os.environ) with the roots first on
    PYTHONPATH, and the venv the programs run under first on PATH."""
    e = dict(os.environ if base is None else base)
    e["PYTHONPATH"] = path(e.get("PYTHONPATH"))
    _venv_first(e, interpreter()[1])
    return e


def _importable():
    here = {Path(p).resolve() for p in sys.path if p}
    return all(r in here for r in ROOTS)


def ensure():
    """Start this program again under the venv's python (interpreter())
    with the roots on PYTHONPATH, unless it runs under it already and the
    roots are importable (installed, or PYTHONPATH set)."""
    python, v = interpreter()
    if python == sys.executable and _importable():
        _venv_first(os.environ, v)      # for the children
        return
    if os.environ.get(MARK):
        sys.exit(f"pyrun: after a restart, still not under {python} "
                 f"with {', '.join(map(str, ROOTS))} on sys.path")
    e = env()
    e[MARK] = "1"
    os.execve(python, [python] + sys.argv, e)


def run_module(module, args=None):
    """Replace this process by `python3 -m module args` with the roots,
    under the venv's python (interpreter())."""
    args = sys.argv[1:] if args is None else args
    python = interpreter()[0]
    os.execve(python, [python, "-m", module] + list(args), env())


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--path":
        print(path())
        return 0
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: python3 scripts/pyrun.py MODULE [ARGS...] | --path")
    run_module(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
