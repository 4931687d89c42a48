"""Scenario 3 (docs/scenarios.md): draining (20 queued reads, then one
far read) and the worst-case completion time falling as queue_depth is
limited.  Long: opt-in with NCQ_LONG_SCENARIOS=1."""

import os

import pytest

from scenarios import s3_draining


@pytest.mark.skipif(not os.environ.get("NCQ_LONG_SCENARIOS"),
                    reason="long scenario: set NCQ_LONG_SCENARIOS=1 to run")
def test_scenario_3_draining(tmp_path_factory):
    result = s3_draining.run(tmp_path_factory.mktemp("s3"))
    print("\n" + "\n".join(s3_draining.figures(result)))
    fails = s3_draining.check(result)
    assert not fails, "\n".join(fails)
