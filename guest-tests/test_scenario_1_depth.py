"""Scenario 1 (docs/scenarios.md): throughput rises with NCQ depth within
+-10 % of Yu et al.'s Table V, the median response time falls and the
worst case grows.  Shares its boot with scenario 7 when both run in one
pytest process."""

from scenarios import s1_depth


def test_scenario_1_depth(tmp_path_factory):
    result = s1_depth.run(tmp_path_factory.mktemp("s1"))
    print("\n" + "\n".join(s1_depth.figures(result)))
    fails = s1_depth.check(result)
    assert not fails, "\n".join(fails)
