"""ncq-fit-probe's refusals that need no disk: each is one line on stderr
and a non-zero exit, before the probe touches any device.  (A mounted or
held disk is refused in the guest: guest-tests/test_fit.py.)"""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    out = tmp_path_factory.mktemp("probe") / "ncq-fit-probe"
    srcs = sorted(str(p) for p in (ROOT / "tools/ncq-fit").glob("probe-*.c"))
    subprocess.run(["cc", "-O2", "-pthread", "-o", str(out), *srcs, "-lm"],
                   check=True)
    return str(out)


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    return r.returncode, lines


def test_budget_too_short(probe):
    rc, lines = _run([probe, "/dev/null", "--minutes", "1"])
    assert rc == 2 and len(lines) == 1
    assert "too short for even a coarse fit" in lines[0]


def test_no_device(probe):
    rc, lines = _run([probe])
    assert rc == 2 and len(lines) == 1 and "no device given" in lines[0]


def test_not_a_block_device(probe, tmp_path):
    f = tmp_path / "plain"
    f.write_bytes(b"x")
    rc, lines = _run([probe, str(f), "--minutes", "2"])
    assert rc == 1 and len(lines) == 1
    assert "is not a block device" in lines[0]


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv")
def test_not_root(probe):
    rc, lines = _run(["setpriv", "--reuid=65534", "--regid=65534",
                      "--clear-groups", probe, "/dev/null", "--minutes", "2"])
    assert rc == 1 and len(lines) == 1 and lines[0].startswith(
        "ncq-fit-probe: not root")


def test_fit_refuses_other_files(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "rev", "done_ns": [1, 2]}\n{"type": "zo')
    r = subprocess.run([str(ROOT / "tools/ncq-fit/ncq-fit"), "fit", str(bad),
                        "--out", str(tmp_path / "o")], capture_output=True,
                       text=True)
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1
    assert "not a JSON record" in r.stderr


@pytest.mark.parametrize("value", ["-5", "abc", "inf", "nan"])
def test_fit_refuses_a_host_share_that_is_not_a_time(tmp_path, value):
    r = subprocess.run([str(ROOT / "tools/ncq-fit/ncq-fit"), "fit",
                        str(tmp_path / "s.jsonl"), "--out",
                        str(tmp_path / "o"), f"--host-us={value}"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert "--host-us" in r.stderr and "not a time in us" in r.stderr
    assert not (tmp_path / "o").exists()
