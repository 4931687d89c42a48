"""scripts/install-venv.sh, the Python half of scripts/install-deps.sh, run
as on a Debian as installed: Debian's /usr/bin/python3, a PATH with no
other python, a private NCQ_CACHE and HOME.  It must make the venv there
and install into it, and leave the system's site-packages, the user's and
the system's script folder as they were: Debian's python3 refuses pip into
them (PEP 668), and a script that pip-installs with it (or forces it, or
uses --user) breaks on a stock Debian while a machine whose first python3
is another one (pyenv) hides it.

The list pip installs does not decide where pip writes, and the real one
needs PyPI and most of a minute of downloads and unpacking.  So the script
runs from a copy of the checkout's, beside a pyproject.toml whose "tools"
group is one small wheel this test makes (a module and a console script),
which pip reads from a folder with no index (PIP_NO_INDEX,
PIP_FIND_LINKS): offline, seconds, the script's own code path."""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from repopaths import ROOT

SCRIPT = ROOT / "scripts" / "install-venv.sh"
DEBIAN_PY = "/usr/bin/python3"
PROBE = "ncq_venv_probe"

pytestmark = pytest.mark.skipif(not os.access(DEBIAN_PY, os.X_OK),
                                reason="no /usr/bin/python3 (not Debian)")


def make_wheel(folder, version="1.0"):
    """A wheel of PROBE: a module and the console script ncq-venv-probe."""
    dist = f"{PROBE}-{version}.dist-info"
    files = {
        f"{PROBE}/__init__.py":
            "def main():\n    print('probe', __file__)\n",
        f"{dist}/METADATA":
            f"Metadata-Version: 2.1\nName: {PROBE}\nVersion: {version}\n",
        f"{dist}/WHEEL":
            "Wheel-Version: 1.0\nGenerator: test_venv\n"
            "Root-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/entry_points.txt":
            f"[console_scripts]\nncq-venv-probe = {PROBE}:main\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(
            hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(folder / f"{PROBE}-{version}-py3-none-any.whl",
                         "w") as z:
        for name, text in files.items():
            z.writestr(name, text)


@pytest.fixture
def stock(tmp_path):
    """run(*requirements, env=None) -> CompletedProcess of install-venv.sh
    in a tree of its own whose pyproject.toml lists `requirements`, as a
    stock Debian user runs it (env: run.env unless given); run.env and
    run.venv, where the venv goes."""
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    shutil.copy2(SCRIPT, tree / "scripts")
    make_wheel(tmp_path / "wheels")
    (tmp_path / "home").mkdir()
    base_env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C",
        "HOME": str(tmp_path / "home"), "NCQ_CACHE": str(tmp_path / "cache"),
        "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "wheels"),
        # no pip.conf of the machine's or the user's
        "PIP_CONFIG_FILE": os.devnull,
    }

    def run(*requirements, env=None, requires=">=3.11"):
        (tree / "pyproject.toml").write_text(
            f'[project]\nrequires-python = "{requires}"\n'
            "[dependency-groups]\ntools = " +
            json.dumps(list(requirements)) + "\n")
        return subprocess.run([str(tree / "scripts" / SCRIPT.name)],
                              env=env or base_env, capture_output=True,
                              text=True, timeout=120)
    run.env = base_env
    run.venv = tmp_path / "cache" / "venv"
    return run


def system_dirs(env):
    """Where a pip of Debian's python3 itself would write: the system's
    site-packages (dist-packages), the user's (under env's HOME), the
    scripts folder."""
    out = subprocess.run(
        [DEBIAN_PY, "-c", "import json, site, sysconfig; print(json.dumps("
         "site.getsitepackages() + [site.getusersitepackages(), "
         "sysconfig.get_path('scripts'), sysconfig.get_path('purelib')]))"],
        env=env, capture_output=True, text=True, check=True).stdout
    return sorted(set(json.loads(out)))


def listing(dirs):
    return {d: sorted(os.listdir(d)) if os.path.isdir(d) else None
            for d in dirs}


def test_venv_installs_into_the_cache_and_nowhere_else(stock):
    dirs = system_dirs(stock.env)
    before = listing(dirs)
    r = stock(f"{PROBE}==1.0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ready" in r.stdout.splitlines()[-1], r.stdout
    after = listing(dirs)

    # nothing of it anywhere Debian's python3 reads or runs from
    leaked = [f"{d}/{n}" for d in dirs for n in after[d] or []
              if n.replace("-", "_").startswith(PROBE)]
    assert not leaked, f"installed outside the venv: {leaked}"
    changed = {d: sorted(set(after[d] or []) ^ set(before[d] or []))
               for d in dirs if after[d] != before[d]}
    assert not changed, f"install-venv.sh changed system folders: {changed}"
    # ... but the module and the console script in the venv, which is
    # Debian's python's
    venv = stock.venv
    cfg = (venv / "pyvenv.cfg").read_text()
    assert "home = /usr/bin\n" in cfg, cfg
    p = subprocess.run([str(venv / "bin" / "ncq-venv-probe")], env=stock.env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    where = Path(p.stdout.split()[1]).resolve()
    assert where.is_relative_to(venv.resolve()), where

    # the second run finds it done: no pip
    t0 = time.monotonic()
    r = stock(f"{PROBE}==1.0")
    assert r.returncode == 0 and "up to date" in r.stdout, \
        r.stdout + r.stderr
    assert time.monotonic() - t0 < 10


def test_pip_errors_name_their_cause(stock):
    # a requirement no index has: pip's own last error line, and the log
    r = stock(f"{PROBE}==9.9")
    assert r.returncode != 0
    err = r.stderr.strip().splitlines()
    assert len(err) == 1, r.stderr
    assert "pip said: ERROR: No matching distribution found for " \
        f"{PROBE}==9.9" in err[0], err[0]
    assert "full log: " in err[0] and "reach PyPI" not in err[0], err[0]
    # an index that does not answer: said so, not "no matching version"
    # (pip's retries name the connection error; one is enough here)
    offline = {k: v for k, v in stock.env.items()
               if k in ("PIP_CONFIG_FILE",) or not k.startswith("PIP_")}
    r = stock(f"{PROBE}==1.0", env=dict(
        offline, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="1",
        PIP_TIMEOUT="5"))
    assert r.returncode != 0
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "pip could not reach PyPI" in err[0], r.stderr
    # and nothing is marked done after a failure
    assert not (stock.venv / ".ncq-requirements").exists()


def test_requires_python_is_read_from_pyproject(stock):
    """A requires-python above Debian's python3 stops install-venv.sh
    before pip, with one line naming both versions."""
    r = stock(f"{PROBE}==1.0", requires=">=3.99")
    assert r.returncode == 1
    err = r.stderr.strip().splitlines()
    assert any("requires-python asks for >=3.99" in line for line in err), \
        r.stderr
    assert not stock.venv.exists(), "a venv was made all the same"
