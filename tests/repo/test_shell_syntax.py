"""Every shell script of the project parses (bash -n): a script that only
a long guest run reaches (the suite runners) must not wait for one to
show a syntax error."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def scripts():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "*.sh",
                          ".ci/run", "scripts/qtest-ncq-as-ide-hd"],
                         capture_output=True, text=True, check=True).stdout
    return [ROOT / p for p in out.split()]


def test_every_shell_script_parses():
    found = scripts()
    assert len(found) > 10
    bad = {}
    for f in found:
        if not f.read_text().startswith("#!/bin/bash") and \
                not f.read_text().startswith("#!/usr/bin/env bash"):
            continue
        r = subprocess.run(["bash", "-n", str(f)], capture_output=True,
                           text=True)
        if r.returncode:
            bad[str(f.relative_to(ROOT))] = r.stderr.strip()
    assert not bad, bad
