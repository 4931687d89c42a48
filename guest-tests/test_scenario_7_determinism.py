"""Scenario 7 (docs/scenarios.md): scenario 1's guest booted twice gives
byte-identical device traces and identical fio results; the ratio of
guest time to wall time is printed.  Reuses scenario 1's boot when
test_scenario_1_depth.py ran first in the same pytest process."""

import pytest

import scenarios as sc
from scenarios import s7_determinism


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The scenario's run, shared by the two tests of this file."""
    return s7_determinism.run(tmp_path_factory.mktemp("s7"))


def test_scenario_7_determinism(result):
    print("\n" + "\n".join(s7_determinism.figures(result)))
    fails = s7_determinism.check(result)
    assert not fails, "\n".join(fails)


def test_scenario_7_matches_report(result):
    """The committed docs/report/s7.json is what this code produces."""
    diffs = sc.report_differences(s7_determinism, result)
    assert not diffs, "\n".join(diffs)
