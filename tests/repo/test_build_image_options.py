"""images/build-image.sh's --add, --package and --module: what they accept, the one-
line errors of what they refuse, and the image hash (the output directory's
name) following what they add.  No image is built: --print-dir prints the
directory the inputs name.  A fake --kernel file and --no-default-packages
--host-fio keep apt out of every case but the --package ones."""
import shutil
import subprocess

import pytest

from repopaths import ROOT

SCRIPT = ROOT / "images" / "build-image.sh"


@pytest.fixture
def build(tmp_path):
    """build(*args) -> (status, output directory or '', stderr), with a
    private NCQ_CACHE (whose apt state holds only package resolutions)."""
    kernel = tmp_path / "bzImage"
    kernel.write_bytes(b"not a real kernel")
    env = {"NCQ_CACHE": str(tmp_path / "cache"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
           "LC_ALL": "C"}

    def run(*args, fast=True):
        cmd = [str(SCRIPT), "--print-dir", *args]
        if fast:
            cmd += ["--kernel", str(kernel), "--no-default-packages",
                    "--host-fio"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=300)
        out = p.stdout.strip().splitlines()
        return p.returncode, (out[-1] if out else ""), p.stderr
    return run


def error_line(stderr):
    lines = [x for x in stderr.splitlines() if "error:" in x]
    assert len(lines) == 1, stderr
    return lines[0]


def test_add_missing_source_is_one_line_naming_it(build, tmp_path):
    status, _, err = build("--add", str(tmp_path / "nope"))
    assert status == 1
    line = error_line(err)
    assert str(tmp_path / "nope") in line and "no such file" in line
    assert "--add SRC[:DEST]" in line


def test_add_refuses_a_dest_that_replaces_the_image(build, tmp_path):
    (tmp_path / "f").write_text("x")
    status, _, err = build("--add", f"{tmp_path / 'f'}:/usr/bin")
    assert status == 1
    assert "would replace a directory the image needs" in error_line(err)


def test_package_bad_name_is_one_line(build):
    status, _, err = build("--package", "Not_A_Name")
    assert status == 1
    assert "not a Debian package name" in error_line(err)


def test_module_bad_name_is_one_line(build):
    status, _, err = build("--module", "f2fs;rm")
    assert status == 1
    line = error_line(err)
    assert "--module 'f2fs;rm': not a module name" in line


def test_module_is_part_of_the_hash(build):
    _, base, _ = build()
    _, f2fs, _ = build("--module", "f2fs")
    _, again, _ = build("--module", "f2fs")
    _, two, _ = build("--module", "f2fs", "--module", "dm-zoned")
    assert base and f2fs and two
    assert len({base, f2fs, two}) == 3 and again == f2fs


def test_add_is_part_of_the_hash(build, tmp_path):
    prog = tmp_path / "tool"
    prog.write_text("#!/bin/sh\necho one\n")
    prog.chmod(0o755)
    tree = tmp_path / "suite"
    (tmp_path / "suite" / "sub").mkdir(parents=True)
    (tree / "sub" / "a").write_text("a")
    _, base, _ = build()
    _, with_prog, _ = build("--add", str(prog))
    _, again, _ = build("--add", str(prog))
    _, elsewhere, _ = build("--add", f"{prog}:/opt/tool")
    _, with_tree, _ = build("--add", str(prog), "--add", f"{tree}:/opt/suite")
    assert base and with_prog and elsewhere and with_tree
    assert len({base, with_prog, elsewhere, with_tree}) == 4
    assert with_prog == again
    prog.write_text("#!/bin/sh\necho two\n")
    _, changed, _ = build("--add", str(prog))
    assert changed != with_prog
    (tree / "sub" / "a").write_text("b")
    _, tree_changed, _ = build("--add", str(prog), "--add", f"{tree}:/opt/suite")
    assert tree_changed != with_tree


@pytest.mark.skipif(not shutil.which("apt-cache"), reason="needs apt")
def test_package_unknown_and_in_the_hash(build):
    """An unknown name stops with one line naming it; known ones (bc and
    time, with what they depend on) change the hash; their order does not
    (one apt resolution: the second is the cached answer)."""
    status, _, err = build("--package", "ncq-no-such-package")
    assert status == 1
    line = error_line(err)
    assert "--package ncq-no-such-package: no such package" in line
    assert "apt-cache search" in line
    _, base, _ = build()
    _, both, err = build("--package", "bc", "--package", "time")
    assert both and both != base, err
    _, swapped, _ = build("--package", "time", "--package", "bc")
    assert swapped == both
