"""A RAID-5 member made slow, then one that stops answering
(docs/raid.md).

One boot: md RAID-5 on four ncq-disks with a fifth as its spare, created
and resynced by mdadm in the guest (ncqmd.GUEST_SH).

1. Slow member.  fio reads the array at random (4 KiB, iodepth 32), the
   guest pauses (host_step) and the host makes member 2 slow over QMP
   (`slow@0+ALL:delay=...`: every command completes that much later and
   the mechanism stays busy as long, a drive retrying weak sectors); the
   same fio job runs again; the host clears the rule.  The array keeps
   working; fio's completion-latency percentiles of both runs are printed
   side by side.
2. A member that stops answering.  ext4 on the array, files written with
   fsync; the host gives member 1 `hang@0+ALL` (every read and write it is
   given never completes).  More files are written: libata's command
   timer expires, its error handler resets the link and retries, the
   retries time out too, the SCSI layer fails the writes, md fails the
   member and rebuilds onto the spare.  After the rebuild every file (old
   and new) is read back and checked, and md's "check" finds no mismatch.

The SCSI command timer of member 1 stays at Linux's 30 s: under -icount
sleep=off the guest's idle wait is nearly free in wall clock (docs/raid.md
has the figures); NCQ_RAID_SCSI_TIMEOUT=S sets it through sysfs.
NCQ_LONG_SCENARIOS=1 moves more data.
"""
import json
import os
import re

import pytest

import ncqmd
from ncqguest import Workload

LONG = os.environ.get("NCQ_LONG_SCENARIOS") == "1"
SERIAL = "RAIDB"
MEMBER_MIB = 128 if LONG else 48
ALL = MEMBER_MIB * 2048                    # sectors of a member
SLOW_MS = 20
# Linux's SCSI command timer (sd's default, 30 s) unless set; under
# -icount sleep=off the idle wait costs little wall clock (docs/raid.md:
# 42 s for the whole test with 5 s, 50 s with 30 s)
SCSI_TIMEOUT_S = int(os.environ.get("NCQ_RAID_SCSI_TIMEOUT", "30"))
FIO_IOS = 2000 if LONG else 600
FILES, FILE_KIB = (48, 1024) if LONG else (12, 128)
PERCENTILES = ("50.000000", "90.000000", "99.000000", "99.900000")

SCRIPT = r"""
md_setup
md_drives {serial} 5 || exit 1
MD_CREATE_OPTS="--chunk=64 --bitmap=none"
md_create md0 5 4 $D0 $D1 $D2 $D3 $D4
md_wait md0
md_record md0 synced
lat() {{   # lat NAME: random 4 KiB reads of the array
    fio --name=$1 --filename=/dev/md0 --rw=randread --bs=4k --direct=1 \
        --ioengine=libaio --iodepth=32 --number_ios={ios} --randrepeat=1 \
        --output-format=json --output=$RESULTS/$1.json >/dev/null 2>&1
    echo "fio-$1 status $?"
}}
lat base
host_step
lat slow
host_step
md_record md0 after-slow

mkdir -p /mnt/a
mkfs.ext4 -q -F /dev/md0 && mount /dev/md0 /mnt/a
echo "mount status $?"
md_write_files /mnt/a {files} {kib} /tmp/sums
echo {timeout} >/sys/block/${{D1#/dev/}}/device/timeout
host_step
echo "hang-start $(cut -d' ' -f1 /proc/uptime)"
mkdir -p /mnt/a/more
md_write_files /mnt/a/more {files} {kib} /tmp/more.sums
echo "hang-end $(cut -d' ' -f1 /proc/uptime)"
md_record md0 failed
md_wait md0
echo "rebuilt $(cut -d' ' -f1 /proc/uptime)"
md_record md0 rebuilt
md_drop_caches
md_verify_files /mnt/a /tmp/sums
md_verify_files /mnt/a/more /tmp/more.sums
umount /mnt/a
echo check >/sys/block/md0/md/sync_action
sleep 1
md_wait md0
md_record md0 checked
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("raid-slow-hang")
    guest, _ = ncqmd.member_guest(
        work, 5, f"{MEMBER_MIB}M", guest_disk="1G", seed=21,
        serial_prefix=SERIAL, pause=True, timeout_s=900)
    script = ncqmd.GUEST_SH + SCRIPT.format(
        serial=SERIAL, ios=FIO_IOS, files=FILES, kib=FILE_KIB,
        timeout=SCSI_TIMEOUT_S)
    res = guest.run(Workload(script=script), qmp_actions=ncqmd.at_pauses([
        ncqmd.fault_add("extra2", f"slow@0+{ALL}:delay={SLOW_MS}ms"),
        ncqmd.fault_clear("extra2"),
        ncqmd.fault_add("extra1", f"hang@0+{ALL}"),
    ]))
    assert res.status == 0, guest.tail()
    print(f"\nraid slow/hang: boot and workload took {res.wall_s:.1f} s of "
          f"wall clock")
    return res, ncqmd.step_status(res.output), ncqmd.drive_map(res.output)


def _clat_ms(res, name):
    job = json.loads(res.files[f"{name}.json"])["jobs"][0]
    assert job["error"] == 0
    clat = job["read"]["clat_ns"]
    out = {p: clat["percentile"][p] / 1e6 for p in PERCENTILES}
    out["mean"] = clat["mean"] / 1e6
    out["max"] = clat["max"] / 1e6
    out["iops"] = job["read"]["iops"]
    return out


def test_array_built(run):
    res, steps, drives = run
    assert steps["create-md0"] == 0 and steps["wait-md0"] == 0
    fields, devices = ncqmd.read_record(res, "synced")["detail"]
    assert fields["Raid Level"] == "raid5"
    assert int(fields["Active Devices"]) == 4
    assert int(fields["Spare Devices"]) == 1
    assert [d["state"] for d in devices] == ["active sync"] * 4 + ["spare"]


def test_slow_member_array_keeps_working(run):
    res, steps, _ = run
    assert steps["fio-base"] == 0 and steps["fio-slow"] == 0
    base, slow = _clat_ms(res, "base"), _clat_ms(res, "slow")
    print(f"\nRAID-5, 4 x st3400620as, fio 4 KiB random reads of /dev/md0, "
          f"iodepth 32, {FIO_IOS} I/Os; member 2 slow by {SLOW_MS} ms:")
    print(f"{'':10s} {'all healthy':>12s} {'member slow':>12s}")
    for k in ("iops", "mean") + PERCENTILES + ("max",):
        name = k if k in ("iops", "mean", "max") else f"p{float(k):g}"
        unit = "" if k == "iops" else " ms"
        print(f"{name:10s} {base[k]:12.1f} {slow[k]:12.1f}{unit}")
    # every read still completed, and the slow member shows in the tail
    assert slow["99.000000"] > base["99.000000"]
    assert slow["max"] >= SLOW_MS
    # slow is not failed: md kept all four members
    rec = ncqmd.read_record(res, "after-slow")
    assert rec["sysfs"]["degraded"] == "0"
    assert int(rec["detail"][0]["Failed Devices"]) == 0


def test_hang_libata_times_out_and_resets(run):
    """libata's messages for the hung member's port, and for no other."""
    res, _, _ = run
    port = ncqmd.port_map(res.output)[f"{SERIAL}1"]
    d = re.sub(r"^\[ *[\d.]+\] ", "", res.dmesg, flags=re.M)
    assert re.search(rf"{port}\.00: exception .* action 0x6 frozen\n"
                     rf"{port}\.00: failed command: WRITE FPDMA QUEUED", d)
    assert re.search(rf"{port}\.00: cmd .*\n.*Emask 0x4 \(timeout\)", d)
    assert re.search(rf"{port}: hard resetting link", d)
    assert re.search(rf"{port}: EH complete", d)
    # after repeated time-outs libata falls back as it does for a real
    # drive: NCQ off, then a slower link
    assert f"{port}.00: NCQ disabled due to excessive errors" in d
    others = set(re.findall(r"(ata\d+): hard resetting link", d)) - {port}
    assert not others, f"other ports were reset: {others}"


def test_hung_member_failed_and_rebuilt_onto_spare(run):
    res, steps, drives = run
    failed_dev = drives[f"{SERIAL}1"][5:]
    spare_dev = drives[f"{SERIAL}4"][5:]
    d = res.dmesg
    assert re.search(rf"md/raid:md0: Disk failure on {failed_dev}, "
                     r"disabling device", d), d[-3000:]
    assert "Operation continuing on 3 devices" in d
    # (6.12 says "recover" where 6.1 says "recovery")
    assert re.search(r"md: recovery? of RAID array md0", d)
    assert re.search(r"md: md0: recovery? done", d)
    failed = ncqmd.read_record(res, "failed")
    assert failed["mdstat"]["md0"]["members"][failed_dev]["flags"] == "F"
    rebuilt = ncqmd.read_record(res, "rebuilt")
    fields, devices = rebuilt["detail"]
    assert int(fields["Active Devices"]) == 4
    assert int(fields["Failed Devices"]) == 1
    assert rebuilt["mdstat"]["md0"]["map"] == "UUUU"
    by_dev = {x["device"]: x for x in devices}
    assert by_dev[f"/dev/{spare_dev}"]["state"] == "active sync"
    assert by_dev[f"/dev/{spare_dev}"]["raid_device"] == 1
    assert "faulty" in by_dev[f"/dev/{failed_dev}"]["state"]
    up = {k: float(v) for k, v in re.findall(
        r"^(hang-start|hang-end|rebuilt) ([\d.]+)$", res.output, re.M)}
    blocked = up["hang-end"] - up["hang-start"]
    failed_at = float(re.search(r"^\[ *([\d.]+)\] md/raid:md0: Disk "
                                r"failure", d, re.M).group(1))
    print(f"\nhung member (SCSI timeout {SCSI_TIMEOUT_S} s): md failed it "
          f"{failed_at - up['hang-start']:.1f} s of guest time after the "
          f"hang began; writes blocked {blocked:.1f} s; "
          f"{len(re.findall('hard resetting link', d))} link resets")


def test_data_verified_after_rebuild(run):
    res, steps, _ = run
    assert not [k for k in steps if k.startswith("write-")], steps
    oks, failed = ncqmd.verified(res.output)
    assert not failed, res.output
    assert oks == [FILES, FILES]
    checked = ncqmd.read_record(res, "checked")
    assert checked["sysfs"]["last_sync_action"] == "check"
    assert checked["sysfs"]["mismatch_cnt"] == "0"
