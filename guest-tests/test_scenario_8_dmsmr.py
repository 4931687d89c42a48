"""Scenario 8 (docs/scenarios.md): drive-managed SMR's media cache.
By default (the README's test command) the smoke run: scenario 8's
variant of the ST8000AS0002 with a small cache: random 4 KiB writes fast,
then collapsed behind band cleanings, the cache's map and space as the
model gives them, idle cleaning after the idle delay, a RAID-1 rebuild
far slower onto the DM-SMR drive than onto a CMR one.  With
NCQ_LONG_SCENARIOS=1 the full run, the shipped model's 250,000-entry map
(long: see docs/scenarios.md).  The committed report is compared with the
run of its own kind (its `smoke` field)."""

import json
import os

import pytest

import scenarios as sc
from scenarios import s8_dmsmr

SMOKE = not os.environ.get("NCQ_LONG_SCENARIOS")


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """The scenario's run, shared by the two tests of this file."""
    return s8_dmsmr.run(tmp_path_factory.mktemp("s8"), smoke=SMOKE)


def test_scenario_8_dmsmr(result):
    print("\n" + "\n".join(s8_dmsmr.figures(result)))
    fails = s8_dmsmr.check(result)
    assert not fails, "\n".join(fails)


def test_scenario_8_matches_report(result):
    """The committed docs/report/s8.json is what this code produces, when
    it is a run of the same kind (smoke or full)."""
    saved = sc.REPORT_DIR / "s8.json"
    if saved.exists() and json.loads(saved.read_text()).get("smoke") != SMOKE:
        pytest.skip("docs/report/s8.json is a "
                    f"{'smoke' if not SMOKE else 'full'} run; this one is "
                    f"{'smoke' if SMOKE else 'full'}")
    diffs = sc.report_differences(s8_dmsmr, result)
    assert not diffs, "\n".join(diffs)
