import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import ncqguest
import ncqsnapshot

_SESSION_OWNER = False


def pytest_configure(config):
    """A pytest run started alone is a session of the snapshot cache
    (ncqsnapshot.py): nothing it uses is pruned while it runs or at its
    end.  Under scripts/test.sh the session is the whole test command."""
    global _SESSION_OWNER
    if hasattr(config, "workerinput"):      # an xdist worker
        return
    if ncqsnapshot.session_start() is None:
        os.environ[ncqsnapshot.SESSION_ENV] = repr(time.time())
        _SESSION_OWNER = True


def pytest_unconfigure(config):
    if _SESSION_OWNER and not hasattr(config, "workerinput"):
        ncqsnapshot.prune(ncqsnapshot.root(ncqguest.CACHE),
                          protect_since=ncqsnapshot.session_start())


@pytest.fixture(scope="session")
def qemu_build():
    return ncqguest.qemu_build_dir()


@pytest.fixture(scope="session")
def guest_image():
    return ncqguest.image_dir()


@pytest.fixture
def make_guest(tmp_path, qemu_build, guest_image):
    """Factory: make_guest(device=..., ...) -> ncqguest.Guest in tmp_path."""
    count = 0

    def make(**kw):
        nonlocal count
        count += 1
        return ncqguest.Guest(tmp_path / f"guest{count}", **kw)
    return make


@pytest.fixture
def run_qemu(qemu_build, tmp_path):
    """Run qemu-system-x86_64 stopped (-S) with the given arguments, no
    guest boot.  With qmp=[(command, args), ...] the commands go over
    '-qmp stdio' followed by 'quit'; the parsed replies are returned as
    .replies on the CompletedProcess.  prefix=[...] runs QEMU under a
    wrapper command (e.g. setpriv)."""
    def run(*args, qmp=None, timeout=60, prefix=()):
        img = tmp_path / "probe.qcow2"
        if not img.exists():
            subprocess.run([str(qemu_build / "qemu-img"), "create", "-q",
                            "-f", "qcow2", str(img), "64M"], check=True)
        cmd = [*prefix, str(qemu_build / "qemu-system-x86_64"), "-M", "q35",
               "-nodefaults", "-display", "none", "-vga", "none",
               "-nic", "none", "-S",
               "-drive", f"if=none,id=d0,file={img},format=qcow2", *args]
        stdin = None
        if qmp is not None:
            cmd += ["-qmp", "stdio"]
            msgs = [{"execute": "qmp_capabilities"}]
            msgs += [{"execute": c, "arguments": a} for c, a in qmp]
            msgs += [{"execute": "quit"}]
            stdin = "".join(json.dumps(m) + "\n" for m in msgs)
        p = subprocess.run(cmd, input=stdin if stdin else "",
                           capture_output=True, text=True, timeout=timeout)
        p.replies = []
        if qmp is not None:
            for line in p.stdout.splitlines():
                obj = json.loads(line)
                if "return" in obj or "error" in obj:
                    p.replies.append(obj)
            # drop the replies to qmp_capabilities and quit
            p.replies = p.replies[1:1 + len(qmp)]
        return p
    return run


@pytest.fixture(scope="session")
def ncq_sim():
    """The ncq-sim binary of the standalone build (_build/model), built if
    it is missing."""
    root = Path(__file__).resolve().parent.parent
    build = root / "_build" / "model"
    if not (build / "build.ninja").exists():
        subprocess.run(["meson", "setup", str(build)], cwd=root, check=True,
                       capture_output=True)
    subprocess.run(["ninja", "-C", str(build), "tools/ncq-sim/ncq-sim"],
                   check=True, capture_output=True)
    return build / "tools" / "ncq-sim" / "ncq-sim"
