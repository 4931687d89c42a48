"""The "timeout mismatch" of the linux-raid wiki, and SCT Error Recovery
Control curing it (docs/faults.md, "Error recovery time and SCT Error
Recovery Control").

Two md RAID-1 arrays of st3400620as drives whose firmware retries an
unrecoverable sector for 150 s (`recovery=150s`, a desktop drive's deep
recovery: an estimate from the wiki's "over two minutes"); the second
mirror of each is write-mostly, so md reads from the first.  After the
resyncs the host gives each first mirror an unrecoverable sector (`unc`
over QMP, at a host_step), then the guest reads the arrays raw:

- md1's first mirror has ERC set to 7 s (`smartctl -l scterc,70,70`): the
  drive gives up after 7 s with UNC, md reads the other mirror, writes
  the sector back (the drive reallocates it) and keeps the member.
- md0's first mirror has no ERC: Linux's 30 s command timer fires first,
  libata resets the link, the drive, still retrying, does not answer
  IDENTIFY, libata disables it, and md fails the member; the array goes
  on degraded.

Both reads return the right data.  One boot, all in virtual time.
"""
import json
import re

import pytest

import ncqmd
from ncqguest import Workload

SERIAL = "ERC"
MEMBER = "16M"
DEVICE = "ncq-disk,model=st3400620as,recovery=150s"
DATA_OFFSET = 2048          # --data-offset=1M
BAD = DATA_OFFSET + 100     # on each first mirror: md sector 100
RAW_KIB = 256

SCRIPT = r"""
md_setup
md_drives {serial} 4 || exit 1
for m in 0 1; do
    a=$(eval echo \$D$((2 * m))) b=$(eval echo \$D$((2 * m + 1)))
    mdadm --create /dev/md$m --run --metadata=1.2 --level=1 \
        --raid-devices=2 --bitmap=none --data-offset=1M \
        $a --write-mostly $b >>/results/mdadm.log 2>&1
    echo "create-md$m status $?"
done
md_wait md0
md_wait md1
smartctl -l scterc,70,70 $D2 >$RESULTS/erc-set.txt
echo "erc-set status $?"
smartctl -l scterc $D0 >$RESULTS/erc-d0.txt
smartctl -l scterc $D2 >$RESULTS/erc-d2.txt
smartctl -A --json $D2 >$RESULTS/smart-before.json
md_drop_caches
for m in 0 1; do
    echo "raw-before-md$m $(dd if=/dev/md$m bs=4k count={blocks} \
        iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
done
host_step
t() {{ cut -d' ' -f1 /proc/uptime; }}
for m in 1 0; do
    t0=$(t)
    echo "raw-after-md$m $(dd if=/dev/md$m bs=4k count={blocks} \
        iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)"
    echo "time-md$m $t0 $(t)"
    md_record md$m after-md$m
done
smartctl -A --json $D2 >$RESULTS/smart-after.json
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("raid-erc")
    guest, _ = ncqmd.member_guest(
        work, 4, MEMBER, guest_disk="64M", seed=21, serial_prefix=SERIAL,
        pause=True, timeout_s=900, device=DEVICE)
    script = ncqmd.GUEST_SH + SCRIPT.format(serial=SERIAL,
                                            blocks=RAW_KIB // 4)

    async def both(qmp):
        for dev in ("extra0", "extra2"):
            await ncqmd.fault_add(dev, f"unc@{BAD}+1")(qmp)

    res = guest.run(Workload(script=script),
                    qmp_actions=ncqmd.at_pauses([both]))
    assert res.status == 0, guest.tail()
    print(f"raid-erc: boot and workload took {res.wall_s:.1f} s of wall "
          "clock")
    return res, ncqmd.step_status(res.output), ncqmd.drive_map(res.output)


def _raw(res, when, m):
    return re.search(rf"^raw-{when}-md{m} (\w+)$", res.output,
                     re.M).group(1)


def _took(res, m):
    t0, t1 = re.search(rf"^time-md{m} (\S+) (\S+)$", res.output,
                       re.M).groups()
    return float(t1) - float(t0)


def test_arrays_built(run):
    res, steps, drives = run
    for k in ("create-md0", "create-md1", "wait-md0", "wait-md1",
              "erc-set"):
        assert steps.get(k) == 0, (k, steps)
    assert len(drives) == 4
    assert "Read: Disabled" in res.files["erc-d0.txt"].decode()
    assert re.search(r"Read:\s+70 \(7\.0 seconds\)",
                     res.files["erc-d2.txt"].decode())


def test_erc_member_kept_and_sector_rewritten(run):
    res, _, drives = run
    member = drives[f"{SERIAL}2"][5:]
    assert _raw(res, "before", 1) == _raw(res, "after", 1)
    # UNC 7 s after the read reached the drive; no time-out, no reset
    assert re.search(rf"I/O error, dev {member}, sector {BAD} ", res.dmesg)
    assert re.search(rf"md/raid1:md1: read error corrected \(8 sectors at "
                     rf"{BAD // 8 * 8} on {member}\)", res.dmesg)
    # md's fix_read_error tries the failing mirror once more before it
    # reads the other one: two UNCs, each 7 s after it reached the drive
    ages = re.findall(rf"sd \d+:0:0:0: \[{member}\] tag#\d+ FAILED .* "
                      r"cmd_age=(\d+)s", res.dmesg)
    assert ages == ["7", "7"], ages
    took = _took(res, 1)
    print(f"md1 (ERC 7 s): the raw read took {took:.2f} s of guest time")
    assert 14 <= took < 16, took
    rec = ncqmd.read_record(res, "after-md1")
    assert rec["sysfs"]["degraded"] == "0"
    assert rec["mdstat"]["md1"]["map"] == "UU"
    before = json.loads(res.files["smart-before.json"])
    after = json.loads(res.files["smart-after.json"])
    realloc = {a["id"]: a["raw"]["value"]
               for a in after["ata_smart_attributes"]["table"]}[5]
    assert realloc == {a["id"]: a["raw"]["value"] for a in
                       before["ata_smart_attributes"]["table"]}[5] + 1


def test_member_without_erc_failed(run):
    res, _, drives = run
    member = drives[f"{SERIAL}0"][5:]
    port = re.search(rf"^drive {SERIAL}0 /dev/sd\w+ (ata\d+)$", res.output,
                     re.M).group(1)
    assert _raw(res, "before", 0) == _raw(res, "after", 0)
    # Linux's command timer, then IDENTIFY unanswered, then given up
    assert re.search(rf"{port}\.00: failed command: READ FPDMA QUEUED",
                     res.dmesg)
    assert re.search(r"Emask 0x4 \(timeout\)", res.dmesg)
    assert re.search(rf"{port}\.00: failed to IDENTIFY", res.dmesg)
    assert re.search(rf"{port}\.00: disable device", res.dmesg)
    assert re.search(rf"md/raid1:md0: Disk failure on {member}, disabling "
                     "device", res.dmesg)
    took = _took(res, 0)
    print(f"md0 (no ERC): the raw read took {took:.2f} s of guest time")
    print("\n".join(ln for ln in res.dmesg.splitlines()
                    if re.search(rf"{port}\.00: (disable|failed to)|"
                                 r"md/raid1:md0: Disk failure", ln)))
    assert took >= 30, took
    rec = ncqmd.read_record(res, "after-md0")
    assert rec["sysfs"]["degraded"] == "1"
    assert rec["mdstat"]["md0"]["map"] in ("_U", "U_")
