"""The project's Python modules are importable by name from the package
roots pyproject.toml lists (pytest's pythonpath; scripts/pyrun.py reads the
same list for the programs), so no file edits sys.path; and every program
a doc tells a user to run still starts, from any folder, without
PYTHONPATH."""
import os
import re
import subprocess
import sys
import tomllib

import pytest

from repopaths import ROOT

# sys.path changed in place: insert/append/extend/remove, or assigned to
PATH_EDIT = re.compile(r"\bsys\.path\s*(\.\s*(insert|append|extend|remove)"
                       r"\b|(\[[^\]]*\])?\s*[+]?=(?!=))")


def python_files():
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files"],
                           capture_output=True, text=True,
                           check=True).stdout.split()
    for rel in files:
        p = ROOT / rel
        if not p.is_file():
            continue
        if rel.endswith(".py"):
            yield rel, p
        elif os.access(p, os.X_OK):
            with open(p, "rb") as f:
                head = f.readline()
                body = head + f.read()
            # a Python program, or a shell script with Python inside
            # (the suite runners' `python3 - <<'PY'`)
            if b"python" in head or b"python3 -" in body:
                yield rel, p


def test_no_file_edits_sys_path():
    found = [f"{rel}:{n}: {line.strip()}"
             for rel, p in python_files()
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if PATH_EDIT.search(line.split("#")[0])]
    assert not found, (
        "sys.path edited (import by name from a package root of "
        "pyproject.toml instead; a program in scripts/ calls "
        "pyrun.ensure(), see scripts/pyrun.py):\n" + "\n".join(found))


def test_no_doc_shows_a_sys_path_edit():
    """The docs' Python examples import by name too."""
    found = []
    for doc in [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md")):
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if PATH_EDIT.search(line):
                found.append(f"{doc.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_path_edit_pattern_sees_each_form():
    p = "sys" + ".path"     # spelt so that this file does not match
    for line in (f"{p}.insert(0, str(HERE))", f"{p}.append(x)",
                 f"{p}[:0] = [x]", f"{p} += [x]", f"{p} = [x] + {p}",
                 f"{p} .extend(y)"):
        assert PATH_EDIT.search(line), line
    for line in (f"if p in {p}:", f"here = set({p})", f"{p} == old"):
        assert not PATH_EDIT.search(line), line


def roots():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return conf["tool"]["pytest"]["ini_options"]["pythonpath"]


def test_pyrun_reads_the_same_roots_as_pytest():
    got = subprocess.run([sys.executable, str(ROOT / "scripts/pyrun.py"),
                          "--path"], capture_output=True, text=True,
                         check=True).stdout.strip().split(os.pathsep)
    assert got == [str(ROOT / r) for r in roots()]
    for r in roots():
        assert (ROOT / r).is_dir(), r


# The programs the docs tell users to run, each as the docs write it
# (README.md, docs/*.md); `--help` imports everything the program needs.
PROGRAMS = [
    ["python3", "scripts/report.py"],
    ["scripts/compare.py"],
    ["tools/ncq-fit/ncq-fit"],
    ["tools/ncq-fit/fit-compare.py"],
    ["scripts/update-doc-sessions.py"],
    ["python3", "scripts/demo.py"],
    ["python3", "scripts/trace-vs-blktrace.py"],
    ["scripts/determinism-pairs.py"],
    ["scripts/check-unchanged.py"],
    ["python3", "guest-tests/bench_device.py"],
    ["python3", "guest-tests/bench_many_drives.py"],
    ["python3", "guest-tests/bench_snapshot.py"],
    ["python3", "scripts/pyrun.py", "compare"],
    ["python3", "scripts/pyrun.py", "fit_compare"],
]


@pytest.mark.parametrize("cmd", PROGRAMS, ids=" ".join)
def test_program_starts_from_any_folder(cmd, tmp_path):
    cmd = [sys.executable if c == "python3" else
           str(ROOT / c) if "/" in c else c for c in cmd]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run(cmd + ["--help"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("usage:"), (
        r.stdout[-500:] + r.stderr[-1500:])


def test_pyproject_describes_the_project():
    """pyproject.toml is a project description: its name, the version
    meson.build gives the model library, the oldest Python (tomllib's
    3.11, Debian 12's), and the venv's group."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = conf["project"]
    assert project["name"] == "ncq-disk"
    meson = re.search(r"^\s*version:\s*'([^']+)'",
                      (ROOT / "meson.build").read_text(), re.M)
    assert meson and project["version"] == meson[1]
    assert project["requires-python"] == ">=3.11"
    assert conf["dependency-groups"]["tools"]
    for d in conf["tool"]["pytest"]["ini_options"]["testpaths"]:
        assert (ROOT / d).is_dir(), d


def test_pyrun_reads_pyproject_as_toml(tmp_path):
    """pyrun.py parses pyproject.toml as TOML: a list over several lines
    with a comment in it, and the same key in another table, give the
    roots pytest would read."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "pyrun.py").write_text(
        (ROOT / "scripts" / "pyrun.py").read_text())
    (tmp_path / "pyproject.toml").write_text(
        '[tool.other]\npythonpath = ["wrong"]\n'
        '[tool.pytest.ini_options]\npythonpath = [\n'
        '    "a",  # the first\n    \'b/c\',\n]\n')
    got = subprocess.run([sys.executable, str(tmp_path / "scripts/pyrun.py"),
                          "--path"], capture_output=True, text=True,
                         check=True).stdout.strip().split(os.pathsep)
    assert got == [str(tmp_path / "a"), str(tmp_path / "b/c")]
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    r = subprocess.run([sys.executable, str(tmp_path / "scripts/pyrun.py"),
                        "--path"], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "no [tool.pytest.ini_options] " \
        "pythonpath" in r.stderr, r.stderr
