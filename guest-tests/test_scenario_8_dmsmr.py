"""Scenario 8 (docs/scenarios.md): drive-managed SMR's media cache.
The smoke run (the README's test command) uses scenario 8's variant of
the ST8000AS0002 with a small cache: random 4 KiB writes fast, then
collapsed behind band cleanings, the cache's map and space as the model
gives them, idle cleaning after the idle delay, a RAID-1 rebuild far
slower onto the DM-SMR drive than onto a CMR one.  The full run, with the
shipped model, and its comparison with the committed report: opt-in with
NCQ_LONG_SCENARIOS=1."""

import os

import pytest

import scenarios as sc
from scenarios import s8_dmsmr

LONG = bool(os.environ.get("NCQ_LONG_SCENARIOS"))


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    return s8_dmsmr.run(tmp_path_factory.mktemp("s8-smoke"), smoke=True)


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    return s8_dmsmr.run(tmp_path_factory.mktemp("s8"))


def test_scenario_8_smoke(smoke):
    print("\n" + "\n".join(s8_dmsmr.figures(smoke)))
    fails = s8_dmsmr.check(smoke)
    assert not fails, "\n".join(fails)


@pytest.mark.skipif(not LONG, reason="long scenario: set "
                    "NCQ_LONG_SCENARIOS=1 to run")
def test_scenario_8_dmsmr(full):
    print("\n" + "\n".join(s8_dmsmr.figures(full)))
    fails = s8_dmsmr.check(full)
    assert not fails, "\n".join(fails)


@pytest.mark.skipif(not LONG, reason="long scenario: set "
                    "NCQ_LONG_SCENARIOS=1 to run")
def test_scenario_8_matches_report(full):
    """The committed docs/report/s8.json is what this code produces."""
    diffs = sc.report_differences(s8_dmsmr, full)
    assert not diffs, "\n".join(diffs)
