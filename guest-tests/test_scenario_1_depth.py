"""Scenario 1 (docs/scenarios.md): throughput rises with NCQ depth within
+-10 % of Yu et al.'s Table V, the median response time falls and the
worst case grows.  Shares its boot with scenario 7 when both run in one
pytest process."""

import pytest

import scenarios as sc
from scenarios import s1_depth


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The scenario's run, shared by the two tests of this file."""
    return s1_depth.run(tmp_path_factory.mktemp("s1"))


def test_scenario_1_depth(result):
    print("\n" + "\n".join(s1_depth.figures(result)))
    fails = s1_depth.check(result)
    assert not fails, "\n".join(fails)


def test_scenario_1_matches_report(result):
    """The committed docs/report/s1.json is what this code produces."""
    diffs = sc.report_differences(s1_depth, result)
    assert not diffs, "\n".join(diffs)
