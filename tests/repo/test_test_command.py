"""scripts/test.sh's arguments do what they say, read from its plan
(`--plan`: one "plan:" line a step, nothing installed, built or run): a
pytest selection runs the selected guest tests alone, on the kernels
that have any, with only the builds they need; --kernel chooses the
kernels, --with adds whole steps; --junitxml keeps both kernels' files."""
import os
import subprocess

import pytest

from repopaths import ROOT


def plan(*args):
    p = subprocess.run([str(ROOT / "scripts/test.sh"), "--plan", *args],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, NCQ_IMAGE_DIR=""))
    return p.returncode, p.stdout.splitlines(), p.stderr


def steps(lines, word):
    return [x for x in lines if word in x]


def test_whole_suite_plan_has_every_step():
    rc, lines, err = plan()
    assert rc == 0, err
    for word in ("qtests (scripts/run-qtests.sh)", "sanitizer chain",
                 "series walk", "model unit tests", "checkpatch",
                 "pytest tests/repo", "build the guest image (Debian 12",
                 "build the guest image (Debian 13"):
        assert steps(lines, word), (word, lines)
    assert "plan: guest tests on 6.1: pytest guest-tests" in lines
    assert steps(lines, "guest tests on 6.12: pytest guest-tests/test_")


def test_selection_runs_only_the_selected_guest_tests():
    rc, lines, err = plan("-k", "foundation")
    assert rc == 0, err
    for word in ("qtests", "sanitizer", "ASan", "walk", "unit tests",
                 "checkpatch", "pytest tests/", "Debian 13"):
        assert not steps(lines, word), (word, lines)
    assert "plan: guest tests on 6.1: pytest guest-tests -k foundation" \
        in lines
    # test_foundation.py is not among 6.12's files: that kernel is left out
    assert "plan: guest tests on 6.12: none selected (left out)" in lines
    assert steps(lines, "build QEMU (release)")
    assert steps(lines, "build the guest image (Debian 12, 6.1)")


def test_kernel_and_with_choose():
    rc, lines, err = plan("--kernel", "6.12", "-k", "identify",
                          "--with", "qtests")
    assert rc == 0, err
    assert not steps(lines, "6.1:") and not steps(lines, "Debian 12")
    assert steps(lines, "guest tests on 6.12: pytest guest-tests/test_")
    assert steps(lines, "qtests (scripts/run-qtests.sh)")
    assert not steps(lines, "sanitizer")
    # named files run as named, on each kernel
    rc, lines, err = plan("guest-tests/test_identify.py")
    assert "plan: guest tests on 6.1: pytest guest-tests/test_identify.py" \
        in lines
    assert "plan: guest tests on 6.12: pytest guest-tests/test_identify.py" \
        in lines


def test_junitxml_keeps_both_kernels_results():
    for form in (["--junitxml=_build/j.xml"], ["--junitxml", "_build/j.xml"]):
        rc, lines, err = plan(*form)
        assert rc == 0, err
        # a JUnit file selects nothing: the whole suite, as CI runs it
        assert steps(lines, "qtests (scripts/run-qtests.sh)")
        assert steps(lines, "sanitizer chain")
        on61 = steps(lines, "guest tests on 6.1:")[0]
        on612 = steps(lines, "guest tests on 6.12:")[0]
        assert "_build/j.xml" in on61 and "j-6.12.xml" not in on61
        assert "_build/j-6.12.xml" in on612 and "_build/j.xml" not in on612


@pytest.mark.parametrize("args, message", [
    (["--kernel", "7"], "--kernel wants 6.1, 6.12, both or an image "
     "directory"),
    (["--with", "bogus"], "--with bogus: no such step"),
])
def test_bad_arguments_are_one_line(args, message):
    rc, _, err = plan(*args)
    assert rc == 1
    assert err.count("\n") == 1 and message in err, err
