"""Scenario 2 (docs/scenarios.md): a far reader among 20 near readers on
the Fujitsu MAX3036RC: its response time spikes at the starvation
time-out T (within 2 %), starves far longer without a time-out, and shows
no spike under FCFS."""

import pytest

import scenarios as sc
from scenarios import s2_starvation


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The scenario's run, shared by the two tests of this file."""
    return s2_starvation.run(tmp_path_factory.mktemp("s2"))


def test_scenario_2_starvation(result):
    print("\n" + "\n".join(s2_starvation.figures(result)))
    fails = s2_starvation.check(result)
    assert not fails, "\n".join(fails)


def test_scenario_2_matches_report(result):
    """The committed docs/report/s2.json is what this code produces."""
    diffs = sc.report_differences(s2_starvation, result)
    assert not diffs, "\n".join(diffs)
