"""The published-phenomena scenarios (docs/scenarios.md), one test pair
each: the scenario's checks hold (test_scenario), and the committed
docs/report/sN.json is what this code produces
(test_scenario_matches_report).
Each scenario's run, its figures, checks and report are its module in
guest-tests/scenarios; this file only runs them.

1 depth, 2 starvation, 7 determinism and 8 dmsmr's smoke run go in every
run; 3, 4, 5, 6 and 8's full run are long and run with
NCQ_LONG_SCENARIOS=1.  One file: scripts/test.sh's pytest-xdist
(--dist loadfile) runs the scenarios on one worker, one after the other,
and scenario 7 always reuses scenario 1's boot there."""

import json
import os

import pytest

import scenarios as sc
from scenarios import (s1_depth, s2_starvation, s3_draining, s4_prio,
                       s5_sched, s6_ssd_fairness, s7_determinism, s8_dmsmr)

LONG = bool(os.environ.get("NCQ_LONG_SCENARIOS"))

# (module, long: run only with NCQ_LONG_SCENARIOS=1)
SCENARIOS = [
    (s1_depth, False),
    (s2_starvation, False),
    (s3_draining, True),
    (s4_prio, True),
    (s5_sched, True),
    (s6_ssd_fairness, True),
    (s7_determinism, False),
    (s8_dmsmr, False),
]


def _name(mod):
    """s1_depth -> s1-depth: the test id."""
    return mod.__name__.rsplit(".", 1)[1].replace("_", "-")


def _param(mod, long):
    marks = [pytest.mark.skipif(
        not LONG, reason="long scenario: set NCQ_LONG_SCENARIOS=1 to run it")
    ] if long else []
    return pytest.param(mod, id=_name(mod), marks=marks)


PARAMS = [_param(mod, long) for mod, long in SCENARIOS]


@pytest.fixture(scope="module")
def result(request, tmp_path_factory):
    """One scenario's run, shared by its two tests.  Scenario 8 runs its
    smoke variant unless NCQ_LONG_SCENARIOS=1."""
    mod = request.param
    workdir = tmp_path_factory.mktemp(_name(mod).split("-")[0])
    if mod is s8_dmsmr:
        return mod.run(workdir, smoke=not LONG)
    return mod.run(workdir)


@pytest.mark.parametrize("result", PARAMS, indirect=True)
def test_scenario(result, request):
    mod = request.node.callspec.params["result"]
    print("\n" + "\n".join(mod.figures(result)))
    fails = mod.check(result)
    assert not fails, "\n".join(fails)


@pytest.mark.parametrize("result", PARAMS, indirect=True)
def test_scenario_matches_report(result, request):
    """The committed docs/report/sN.json is what this code produces (for
    scenario 8, when it is a run of the same kind, smoke or full)."""
    mod = request.node.callspec.params["result"]
    if mod is s8_dmsmr:
        saved = sc.REPORT_DIR / "s8.json"
        smoke = not LONG
        if saved.exists() and json.loads(
                saved.read_text()).get("smoke") != smoke:
            pytest.skip("docs/report/s8.json is a "
                        f"{'smoke' if not smoke else 'full'} run; this one "
                        f"is {'smoke' if smoke else 'full'}")
    diffs = sc.report_differences(mod, result)
    assert not diffs, "\n".join(diffs)
