"""Fixtures of the validation tests: the standalone build's ncq-sim (the
ncq_sim_dir fixture of tests/repo/conftest.py, shared, not copied) and
every model's rows as `ncq-sim --validate MODEL --json` gives them."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

_REPO_TESTS = Path(__file__).resolve().parents[1] / "repo"
sys.path.insert(0, str(_REPO_TESTS))
_spec = importlib.util.spec_from_file_location("repo_conftest",
                                               _REPO_TESTS / "conftest.py")
_repo_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_repo_conftest)
ncq_sim_dir = _repo_conftest.ncq_sim_dir

from repopaths import ROOT  # noqa: E402  (after the path is set)


@pytest.fixture(scope="session")
def validated(ncq_sim_dir):
    """rows(model) -> {line of the figures file: the JSON row}, each
    model's rows computed once."""
    cache = {}

    def rows(model):
        if model not in cache:
            r = subprocess.run(
                [str(ncq_sim_dir / "ncq-sim"), "--validate", model, "--json"],
                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, timeout=300)
            assert r.returncode == 0, r.stderr.strip()
            cache[model] = {row["line"]: row for row in json.loads(r.stdout)}
        return cache[model]
    return rows
