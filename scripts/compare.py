#!/usr/bin/env python3
"""Compare kernels, I/O schedulers, device lines and workloads on ncq-disk:
run a matrix of guest runs and write a side-by-side report
(docs/compare.md).  The work is done by the package compare
(guest-tests/compare/); this runs `python3 -m compare` with the
checkout's package roots (scripts/pyrun.py, pyproject.toml)."""

import pyrun

if __name__ == "__main__":
    pyrun.run_module("compare")
