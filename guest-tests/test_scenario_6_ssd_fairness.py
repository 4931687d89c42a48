"""Scenario 6 (docs/scenarios.md): NCQ conflict on the Intel 530 model: a
2-deep and a 32-deep 4 KiB random reader at NCQ length 8, 16, 32 under bfq
(slice_idle 0) and none; Jain's index over B_i / B_i,alone drops as the
NCQ grows.

Long (several guest boots): runs only with NCQ_LONG_SCENARIOS=1."""

import os

import pytest

import scenarios as sc
from scenarios import s6_ssd_fairness

pytestmark = pytest.mark.skipif(
    not os.environ.get("NCQ_LONG_SCENARIOS"),
    reason="long scenario: set NCQ_LONG_SCENARIOS=1 to run it")


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The scenario's run, shared by the two tests of this file."""
    return s6_ssd_fairness.run(tmp_path_factory.mktemp("s6"))


def test_scenario_6_ssd_fairness(result):
    print("\n" + "\n".join(s6_ssd_fairness.figures(result)))
    fails = s6_ssd_fairness.check(result)
    assert not fails, "\n".join(fails)


def test_scenario_6_matches_report(result):
    """The committed docs/report/s6.json is what this code produces."""
    diffs = sc.report_differences(s6_ssd_fairness, result)
    assert not diffs, "\n".join(diffs)
