"""The standalone build's ncq-sim as a pytest fixture, shared by the
repository checks (tests/repo), the validation tests and the fit tests:
each conftest imports ncq_sim_dir from here (tests/repo is a package root,
pyproject.toml)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from repopaths import ROOT


def ncq_sim_binary():
    """The standalone build's ncq-sim: $NCQ_MODEL_BUILD or _build/model,
    set up and built with meson when it is missing, brought up to date
    (a doc must match the code checked out).  RuntimeError when it cannot
    be built."""
    build = Path(os.environ.get("NCQ_MODEL_BUILD", ROOT / "_build" / "model"))
    if not build.is_absolute():
        build = ROOT / build
    binary = build / "tools" / "ncq-sim" / "ncq-sim"
    if not (build / "build.ninja").exists():
        if not shutil.which("meson"):
            raise RuntimeError(f"no model build at {build} and no meson to "
                               "make one; run: meson setup _build/model")
        subprocess.run(["meson", "setup", str(build)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", str(build), "tools/ncq-sim/ncq-sim"],
                   check=True, stdout=subprocess.DEVNULL)
    if not binary.exists():
        raise RuntimeError(f"{binary} was not built")
    return binary


@pytest.fixture(scope="session")
def ncq_sim_dir():
    """Folder holding the standalone build's ncq-sim (ncq_sim_binary())."""
    try:
        return ncq_sim_binary().parent
    except RuntimeError as e:
        pytest.fail(str(e))
