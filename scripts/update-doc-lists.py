#!/usr/bin/env python3
"""Rewrite the docs' generated lists (the README's built-in models) from
the code they copy:

    scripts/update-doc-lists.py [--check]

The work is done by tests/repo/doclists.py, which names the blocks; this
runs `python3 -m doclists` with the checkout's package roots
(scripts/pyrun.py, pyproject.toml)."""

import pyrun

if __name__ == "__main__":
    pyrun.run_module("doclists")
