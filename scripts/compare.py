#!/usr/bin/env python3
"""Compare kernels, I/O schedulers, device lines and workloads on ncq-disk:
run a matrix of guest runs and write a side-by-side report
(docs/compare.md).  The work is done by guest-tests/compare/."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent
                       / "guest-tests"))

from compare.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
