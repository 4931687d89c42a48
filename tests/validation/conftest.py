"""Fixtures of the validation tests: the standalone build's ncq-sim (the
ncq_sim_dir fixture of tests/repo/ncqsimbuild.py, shared, not copied) and
every model's rows as `ncq-sim --validate MODEL --json` gives them."""
import json
import subprocess

import pytest

from ncqsimbuild import ncq_sim_dir  # noqa: F401  (a fixture, used by name)
from repopaths import ROOT


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
