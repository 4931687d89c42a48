#!/usr/bin/env python3
"""fit-compare: check a fitted model against the original, offline, in
ncq-sim (docs/ncq-fit.md, "Checking a fitted model").  The program is the
module fit_compare (tools/ncq-fit/fit_compare.py); this runs
`python3 -m fit_compare` with the checkout's package roots
(scripts/pyrun.py, pyproject.toml)."""
import os
import sys
from pathlib import Path

PYRUN = Path(__file__).resolve().parents[2] / "scripts" / "pyrun.py"
os.execv(sys.executable,
         [sys.executable, str(PYRUN), "fit_compare"] + sys.argv[1:])
