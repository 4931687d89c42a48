"""The RAID soak's smoke run (docs/soak.md; the long run is
scripts/soak.sh --minutes N): two boots on md RAID-5 over four 128 MiB
ncq-disks, 15 s of workload each with faults and firmware changes over
QMP, the first ending in a power cut of every drive.  Nothing that was
fsync'd may be lost, e2fsck must be clean after the cut, and md must
have resynced.  It takes 2 to 4 min of wall clock on the 2-core machine,
so it runs with the long scenarios (NCQ_LONG_SCENARIOS=1): the README's
test command keeps within its 30 minutes, and test_raid_power.py,
test_raid_slow_hang.py and test_raid.py cover its parts there."""
import os

import pytest

import ncqsoak


@pytest.mark.skipif(not os.environ.get("NCQ_LONG_SCENARIOS"),
                    reason="long: set NCQ_LONG_SCENARIOS=1 to run it")
def test_raid_soak_smoke(tmp_path):
    soak = ncqsoak.Soak(tmp_path, minutes=0.5, round_s=15, seed=1,
                        member_mib=128)
    t = soak.run()
    print("\n" + t.summary())
    assert t.rounds == 2
    assert t.errors == [], t.summary()
    assert t.cuts == 1 and t.resyncs == 1, t.summary()
    assert t.files_synced > 0 and t.files_verified > 0, t.summary()
    assert t.qmp_changes > 0, t.summary()
