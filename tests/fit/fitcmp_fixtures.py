"""Fixtures of the fit-compare and simulate() tests (tools/ncq-fit),
imported by name by the test files that use them: the standalone build's
ncq-sim (tests/repo/ncqsimbuild.py's ncq_sim_dir, shared, not copied), and
copies of shipped models with one parameter changed."""
import re
from pathlib import Path

import pytest

from ncqsimbuild import ncq_sim_dir  # noqa: F401  (a fixture, used by name)

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "ncq-fit"
MODELS = ROOT / "hw" / "ide" / "ncq-model" / "models"


@pytest.fixture(scope="session")
def ncq_sim(ncq_sim_dir):
    return ncq_sim_dir / "ncq-sim"


def model_value(text, key):
    """The number of `key = value` in a parameter file's text."""
    m = re.search(rf"^\s*{re.escape(key)}\s*=\s*([0-9.]+)", text, re.M)
    assert m, f"no {key} in the model file"
    return float(m.group(1))


@pytest.fixture
def model_copy(tmp_path):
    """model_copy(model, {key: factor}) -> path of a copy of the shipped
    model's file with each key's value multiplied by its factor."""
    def make(model, factors):
        text = (MODELS / f"{model}.ncqm").read_text()
        for key, f in factors.items():
            old = model_value(text, key)
            new = old * f
            new_s = str(int(round(new))) if float(old).is_integer() \
                else f"{new:.6g}"
            text, n = re.subn(rf"^(\s*{re.escape(key)}\s*=\s*)[0-9.]+",
                              lambda m: m.group(1) + new_s, text, flags=re.M)
            assert n == 1, f"{key}: {n} lines"
        path = tmp_path / f"{model}-changed.ncqm"
        path.write_text(text)
        return path
    return make
