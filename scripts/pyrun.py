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
"""

import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MARK = "NCQ_PYRUN"


def _roots():
    text = (REPO / "pyproject.toml").read_text()
    m = re.search(r"^pythonpath\s*=\s*\[([^\]]*)\]", text, re.M)
    if not m:
        sys.exit("pyrun: pyproject.toml has no pythonpath = [...] line")
    return tuple(REPO / x for x in re.findall(r'"([^"]+)"', m.group(1)))


ROOTS = _roots()


def path(existing=None):
    """The PYTHONPATH value: the roots, then `existing`."""
    parts = [str(r) for r in ROOTS]
    if existing:
        parts.append(existing)
    return os.pathsep.join(parts)


def env(base=None):
    """A copy of `base` (default os.environ) with the roots first on
    PYTHONPATH."""
    e = dict(os.environ if base is None else base)
    e["PYTHONPATH"] = path(e.get("PYTHONPATH"))
    return e


def _importable():
    here = {Path(p).resolve() for p in sys.path if p}
    return all(r in here for r in ROOTS)


def ensure():
    """Start this program again with the roots on PYTHONPATH unless they
    are importable already (installed, or PYTHONPATH set)."""
    if _importable():
        return
    if os.environ.get(MARK):
        sys.exit(f"pyrun: {', '.join(map(str, ROOTS))} still not on "
                 "sys.path after a restart with PYTHONPATH set")
    e = env()
    e[MARK] = "1"
    os.execve(sys.executable, [sys.executable] + sys.argv, e)


def run_module(module, args=None):
    """Replace this process by `python3 -m module args` with the roots."""
    args = sys.argv[1:] if args is None else args
    os.execve(sys.executable, [sys.executable, "-m", module] + list(args),
              env())


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--path":
        print(path())
        return 0
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: python3 scripts/pyrun.py MODULE [ARGS...] | --path")
    run_module(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
