"""Scenario 4 (docs/scenarios.md): NCQ priority: a real-time reader among
best-effort readers on the ST3400620AS gets lower latency when Linux sets
the PRIO bit and the firmware honours it, and none when the firmware
ignores it or the device does not advertise it.

Long (several guest boots): runs only with NCQ_LONG_SCENARIOS=1."""

import os

import pytest

import scenarios as sc
from scenarios import s4_prio

pytestmark = pytest.mark.skipif(
    not os.environ.get("NCQ_LONG_SCENARIOS"),
    reason="long scenario: set NCQ_LONG_SCENARIOS=1 to run it")


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The scenario's run, shared by the two tests of this file."""
    return s4_prio.run(tmp_path_factory.mktemp("s4"))


def test_scenario_4_prio(result):
    print("\n" + "\n".join(s4_prio.figures(result)))
    fails = s4_prio.check(result)
    assert not fails, "\n".join(fails)


def test_scenario_4_matches_report(result):
    """The committed docs/report/s4.json is what this code produces."""
    diffs = sc.report_differences(s4_prio, result)
    assert not diffs, "\n".join(diffs)
