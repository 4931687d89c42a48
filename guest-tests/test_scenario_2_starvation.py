"""Scenario 2 (docs/scenarios.md): a far reader among 20 near readers on
the Fujitsu MAX3036RC: its response time spikes at the starvation
time-out T (within 2 %), starves far longer without a time-out, and shows
no spike under FCFS."""

from scenarios import s2_starvation


def test_scenario_2_starvation(tmp_path_factory):
    result = s2_starvation.run(tmp_path_factory.mktemp("s2"))
    print("\n" + "\n".join(s2_starvation.figures(result)))
    fails = s2_starvation.check(result)
    assert not fails, "\n".join(fails)
