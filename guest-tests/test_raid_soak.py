"""The RAID soak's smoke run (docs/soak.md; the long run is
scripts/soak.sh --minutes N): two boots on md RAID-5 over four 128 MiB
ncq-disks, 15 s of workload each with faults and firmware changes over
QMP, the first ending in a power cut of every drive.  Nothing that was
fsync'd may be lost, e2fsck must be clean after the cut, and md must
have resynced."""
import ncqsoak


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
