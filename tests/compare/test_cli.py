"""The command's bad input: one line on stderr, exit 2, before any guest
or QEMU build is needed (NCQ_QEMU_BUILD points nowhere here)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

GOOD = """kernels = ["6.1"]
schedulers = ["none"]
devices = ["ncq-disk,model=st3400620as"]
workloads = ["random-readers"]
"""


def run(tmp_path, *args):
    env = dict(os.environ, NCQ_QEMU_BUILD=str(tmp_path / "no-build"))
    return subprocess.run([sys.executable, str(ROOT / "scripts/compare.py"),
                           *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("text,args,words", [
    ("colour = 2\n" + GOOD, (), "unknown key 'colour'"),
    (GOOD.replace("random-readers", "random-reader"), (),
     "unknown workload 'random-reader'"),
    (GOOD.replace('"6.1"', '"5.4"'), (), "kernel '5.4' is neither"),
    (GOOD, ("--shard", "3/2"), "--shard '3/2'"),
    (GOOD, ("--baseline", "nothere.json"), "not a readable results.json"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, text, args, words):
    m = tmp_path / "m.toml"
    m.write_text(text)
    p = run(tmp_path, m, *[tmp_path / a if a.endswith(".json") else a
                           for a in args])
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    err = p.stderr.strip()
    assert "\n" not in err and err.startswith("compare: ")
    assert words in err


def test_matrix_and_merge_exclude_each_other(tmp_path):
    p = run(tmp_path)
    assert p.returncode == 2 and "give a matrix file" in p.stderr
