"""Scenario 5 (docs/scenarios.md): interleaved sequential readers under
bfq (default slice_idle) and none at queue_depth 1 and 31: throughput,
request sizes and seeks between readers, on the drive as built (no TRIM)
and advertising TRIM.  bfq's idling wins at depth 1 (in the regime the
start phase picks) and is lost at depth 31; advertising TRIM changes the
commands nowhere and the drive time only by the platter's phase.

Long (several guest boots): runs only with NCQ_LONG_SCENARIOS=1."""

import os

import pytest

import scenarios as sc
from scenarios import s5_sched

pytestmark = pytest.mark.skipif(
    not os.environ.get("NCQ_LONG_SCENARIOS"),
    reason="long scenario: set NCQ_LONG_SCENARIOS=1 to run it")


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The scenario's run, shared by the two tests of this file."""
    return s5_sched.run(tmp_path_factory.mktemp("s5"))


def test_scenario_5_sched(result):
    print("\n" + "\n".join(s5_sched.figures(result)))
    fails = s5_sched.check(result)
    assert not fails, "\n".join(fails)


def test_scenario_5_matches_report(result):
    """The committed docs/report/s5.json is what this code produces."""
    diffs = sc.report_differences(s5_sched, result)
    assert not diffs, "\n".join(diffs)
