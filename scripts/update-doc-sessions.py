#!/usr/bin/env python3
"""Refresh the `$ ncq-sim ...` sessions of the docs after a timing change:

    scripts/update-doc-sessions.py [--check] [DOC.md ...]

The work is done by tests/repo/docsessions.py (beside mdblocks.py, the
parser it shares with tests/repo/test_docs.py); this runs
`python3 -m docsessions` with the checkout's package roots
(scripts/pyrun.py, pyproject.toml)."""

import pyrun

if __name__ == "__main__":
    pyrun.run_module("docsessions")
