"""Scenario 4 (docs/scenarios.md): NCQ priority: a real-time reader among
best-effort readers on the ST3400620AS gets lower latency when Linux sets
the PRIO bit and the firmware honours it, and none when the firmware
ignores it or the device does not advertise it.

Long (several guest boots): runs only with NCQ_LONG_SCENARIOS=1."""

import os

import pytest

from scenarios import s4_prio


@pytest.mark.skipif(not os.environ.get("NCQ_LONG_SCENARIOS"),
                    reason="long scenario: set NCQ_LONG_SCENARIOS=1 to run it")
def test_scenario_4_prio(tmp_path_factory):
    result = s4_prio.run(tmp_path_factory.mktemp("s4"))
    print("\n" + "\n".join(s4_prio.figures(result)))
    fails = s4_prio.check(result)
    assert not fails, "\n".join(fails)
