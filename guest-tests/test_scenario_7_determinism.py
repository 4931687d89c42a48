"""Scenario 7 (docs/scenarios.md): scenario 1's guest booted twice gives
byte-identical device traces and identical fio results; the ratio of
guest time to wall time is printed.  Reuses scenario 1's boot when
test_scenario_1_depth.py ran first in the same pytest process."""

from scenarios import s7_determinism


def test_scenario_7_determinism(tmp_path_factory):
    result = s7_determinism.run(tmp_path_factory.mktemp("s7"))
    print("\n" + "\n".join(s7_determinism.figures(result)))
    fails = s7_determinism.check(result)
    assert not fails, "\n".join(fails)
