"""The RAID soak's smoke run (docs/soak.md; the long run is
scripts/soak.sh --minutes N): three boots on md RAID-5 over four
ncq-disks, 20 s of workload each with faults and firmware changes over
QMP, the first two ending in a power cut of every drive.  Nothing that
was fsync'd may be lost, e2fsck must be clean after every cut, and md
must have resynced after each."""
import ncqsoak


def test_raid_soak_smoke(tmp_path):
    soak = ncqsoak.Soak(tmp_path, minutes=1, round_s=20, seed=1)
    t = soak.run()
    print("\n" + t.summary())
    assert t.rounds == 3
    assert t.errors == [], t.summary()
    assert t.cuts == 2 and t.resyncs == 2, t.summary()
    assert t.files_synced > 0 and t.files_verified > 0, t.summary()
    assert t.qmp_changes > 0, t.summary()
