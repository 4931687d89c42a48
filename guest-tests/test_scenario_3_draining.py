"""Scenario 3 (docs/scenarios.md): draining (20 queued reads, then one
far read) and the worst-case completion time falling as queue_depth is
limited.  Long: opt-in with NCQ_LONG_SCENARIOS=1."""

import os

import pytest

import scenarios as sc
from scenarios import s3_draining

pytestmark = pytest.mark.skipif(
    not os.environ.get("NCQ_LONG_SCENARIOS"),
    reason="long scenario: set NCQ_LONG_SCENARIOS=1 to run")


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The scenario's run, shared by the two tests of this file."""
    return s3_draining.run(tmp_path_factory.mktemp("s3"))


def test_scenario_3_draining(result):
    print("\n" + "\n".join(s3_draining.figures(result)))
    fails = s3_draining.check(result)
    assert not fails, "\n".join(fails)


def test_scenario_3_matches_report(result):
    """The committed docs/report/s3.json is what this code produces."""
    diffs = sc.report_differences(s3_draining, result)
    assert not diffs, "\n".join(diffs)
