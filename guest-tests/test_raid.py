"""md RAID-5 on four ncq-disks and RAID-1 on two, built by mdadm in the
guest; then unrecoverable sectors on one RAID-5 member (docs/raid.md).

One boot, steps in turn (ncqmd.GUEST_SH's functions):

1. Both arrays are created and md makes their redundancy for real (a
   recovery onto the RAID-5's last member, a resync of the RAID-1), then
   get ext4 and files written with
   fsync.  The page cache is dropped, both arrays are stopped and assembled
   again, and every file's sha256 is checked.
2. The guest pauses (host_step); the host gives RAID-5 member 1 two
   unrecoverable sectors (`unc` rules over QMP), in two data chunks of the
   array's first stripes.  The guest reads the array's first MiBs
   raw: each read that meets a bad sector fails on that drive (UNC), md
   computes the data from the other three members, writes it back to the
   failing drive and reads it again.  The drive's SMART moves the sector
   from pending to reallocated (a write to a pending sector reallocates
   it, docs/smart.md).

Checked: the arrays' state after resync and re-assembly (mdadm --detail,
/proc/mdstat), the files, md's "read error corrected" lines naming the two
sectors, the member's corrected-error counter, the raw contents before and
after (same checksum), the array not degraded, and smartctl -A of the
member: Reallocated_Sector_Ct up by two, Current_Pending_Sector 0.

NCQ_LONG_SCENARIOS=1 makes the members, files and raw read larger.
"""
import json
import os
import re

import pytest

import ncqmd
from ncqguest import Workload

LONG = os.environ.get("NCQ_LONG_SCENARIOS") == "1"
SERIAL = "RAIDA"
MEMBER = "256M" if LONG else "48M"
FILES, FILE_KIB = (64, 1024) if LONG else (16, 128)
RAW_MIB = 64 if LONG else 4

# md's layout, fixed by the create options: data from member sector 2048,
# 64 KiB chunks, left-symmetric parity (stripe n's parity on member
# 3 - n % 4).  Member 1 holds data in stripes 1 and 5; each bad sector
# sits in one of them, in another 4 KiB page.
DATA_OFFSET = 2048
CHUNK = 128
BAD = [DATA_OFFSET + 1 * CHUNK + 40, DATA_OFFSET + 5 * CHUNK + 99]
UNC_RULES = ";".join(f"unc@{s}+1" for s in BAD)

SCRIPT = r"""
md_setup
md_drives {serial} 6 || exit 1
MD_CREATE_OPTS="--chunk=64 --data-offset=1M --bitmap=none"
md_create md0 5 4 $D0 $D1 $D2 $D3
MD_CREATE_OPTS="--data-offset=1M --bitmap=none"
md_create md1 1 2 $D4 $D5
md_wait md0
md_wait md1
md_record md0 r5-synced
md_record md1 r1-synced

mkdir -p /mnt/r5 /mnt/r1
mkfs.ext4 -q -F /dev/md0 && mount /dev/md0 /mnt/r5
echo "mount-r5 status $?"
mkfs.ext4 -q -F /dev/md1 && mount /dev/md1 /mnt/r1
echo "mount-r1 status $?"
md_write_files /mnt/r5 {files} {kib} /tmp/r5.sums
md_write_files /mnt/r1 {files} {kib} /tmp/r1.sums
umount /mnt/r5 /mnt/r1
md_drop_caches
md_reassemble md0 $D0 $D1 $D2 $D3
md_reassemble md1 $D4 $D5
md_record md0 r5-assembled
md_record md1 r1-assembled
mount /dev/md0 /mnt/r5 && mount /dev/md1 /mnt/r1
md_verify_files /mnt/r5 /tmp/r5.sums
md_verify_files /mnt/r1 /tmp/r1.sums
umount /mnt/r5

# unrecoverable sectors on member 1 of the RAID-5
echo "offset $(cat /sys/block/md0/md/dev-${{D1#/dev/}}/offset)"
smartctl -A --json $D1 >$RESULTS/smart-before.json
md_drop_caches
echo "raw-before $(dd if=/dev/md0 bs=1M count={raw} iflag=direct 2>/dev/null |
    sha256sum | cut -d' ' -f1)"
host_step
echo "raw-after $(dd if=/dev/md0 bs=1M count={raw} iflag=direct 2>/dev/null |
    sha256sum | cut -d' ' -f1)"
md_wait md0
smartctl -A --json $D1 >$RESULTS/smart-after.json
md_record md0 r5-unc
mount /dev/md0 /mnt/r5
md_drop_caches
md_verify_files /mnt/r5 /tmp/r5.sums
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("raid")
    guest, _ = ncqmd.member_guest(
        work, 6, MEMBER, guest_disk="1G", seed=11, serial_prefix=SERIAL,
        pause=True, timeout_s=900)
    script = ncqmd.GUEST_SH + SCRIPT.format(
        serial=SERIAL, files=FILES, kib=FILE_KIB, raw=RAW_MIB)
    res = guest.run(Workload(script=script), qmp_actions=ncqmd.at_pauses(
        [ncqmd.fault_add("extra1", UNC_RULES)]))
    assert res.status == 0, guest.tail()
    print(f"raid: boot and workload took {res.wall_s:.1f} s of wall clock")
    return res, ncqmd.step_status(res.output), ncqmd.drive_map(res.output)


def _ok(steps, *names):
    bad = {n: steps.get(n) for n in names if steps.get(n) != 0}
    assert not bad, f"steps failed: {bad}"


def _clean(record, level, members):
    fields, devices = record["detail"]
    assert fields["Raid Level"] == level
    assert fields["State"] in ("clean", "active"), fields["State"]
    assert int(fields["Active Devices"]) == members
    assert int(fields["Failed Devices"]) == 0
    assert [d["state"] for d in devices] == ["active sync"] * members
    assert record["sysfs"]["degraded"] == "0"
    assert record["sysfs"]["sync_action"] == "idle"


def test_arrays_built_and_resynced(run):
    res, steps, drives = run
    _ok(steps, "create-md0", "create-md1", "wait-md0", "wait-md1")
    assert len(drives) == 6
    r5 = ncqmd.read_record(res, "r5-synced")
    _clean(r5, "raid5", 4)
    assert r5["detail"][0]["Chunk Size"] == "64K"
    assert r5["mdstat"]["md0"]["map"] == "UUUU"
    assert sorted(r5["mdstat"]["md0"]["members"]) == \
        sorted(drives[f"{SERIAL}{i}"][5:] for i in range(4))
    r1 = ncqmd.read_record(res, "r1-synced")
    _clean(r1, "raid1", 2)
    assert r1["mdstat"]["md1"]["map"] == "UU"
    # md made the redundancy: mdadm creates a RAID-5 with its last member
    # missing and lets md recover onto it (computing parity from the
    # others, faster than a resync), and a RAID-1 not clean (a resync
    # copies the first mirror)
    assert re.search(r"md/raid:md0: raid level 5 active with 3 out of 4 "
                     r"devices", res.dmesg)
    # (6.12 says "recover" where 6.1 says "recovery")
    assert re.search(r"md: recovery? of RAID array md0", res.dmesg)
    assert re.search(r"md: md0: recovery? done", res.dmesg)
    assert re.search(r"md/raid1:md1: not clean -- starting background "
                     r"reconstruction", res.dmesg)
    assert re.search(r"md: md1: resync done", res.dmesg)


def test_files_survive_reassembly(run):
    res, steps, _ = run
    _ok(steps, "mount-r5", "mount-r1", "stop-md0", "assemble-md0",
        "stop-md1", "assemble-md1")
    assert not [k for k, v in steps.items() if k.startswith("write-")], steps
    _clean(ncqmd.read_record(res, "r5-assembled"), "raid5", 4)
    _clean(ncqmd.read_record(res, "r1-assembled"), "raid1", 2)
    oks, failed = ncqmd.verified(res.output)
    assert not failed, res.output
    # r5, r1 after re-assembly, r5 again after the bad sectors
    assert oks == [FILES, FILES, FILES]


def _attr(doc, ident):
    for a in doc["ata_smart_attributes"]["table"]:
        if a["id"] == ident:
            return a["raw"]["value"]
    raise KeyError(ident)


def test_unrecoverable_sectors_rewritten_from_redundancy(run):
    res, steps, drives = run
    member = drives[f"{SERIAL}1"][5:]
    assert re.search(r"^offset 2048$", res.output, re.M), \
        "the bad sectors assume data from member sector 2048"
    # the drive failed the reads: libata saw UNC at the injected sectors
    for s in BAD:
        assert re.search(rf"I/O error, dev {member}, sector {s} ",
                         res.dmesg), s
    # md rewrote each 4 KiB page from the other members and read it back
    fixed = re.findall(r"md/raid:md0: read error corrected \((\d+) sectors "
                       rf"at (\d+) on {member}\)", res.dmesg)
    assert sorted(int(at) for _, at in fixed) == [s // 8 * 8 for s in BAD]
    assert "NOT corrected" not in res.dmesg
    rec = ncqmd.read_record(res, "r5-unc")
    _clean(rec, "raid5", 4)
    assert rec["members"][f"dev-{member}"]["errors"] == \
        sum(int(n) for n, _ in fixed)
    before = re.search(r"^raw-before (\w+)$", res.output, re.M).group(1)
    after = re.search(r"^raw-after (\w+)$", res.output, re.M).group(1)
    assert before == after


def test_smart_shows_the_reallocation(run):
    res, _, _ = run
    before = json.loads(res.files["smart-before.json"])
    after = json.loads(res.files["smart-after.json"])
    print(f"member 1 SMART: Reallocated_Sector_Ct {_attr(before, 5)} -> "
          f"{_attr(after, 5)}, Current_Pending_Sector {_attr(before, 197)} "
          f"-> {_attr(after, 197)}")
    assert _attr(after, 5) == _attr(before, 5) + len(BAD)
    assert _attr(before, 197) == 0 and _attr(after, 197) == 0
