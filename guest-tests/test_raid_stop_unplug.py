"""A RAID-1 member whose host writes fail under werror=stop is pulled
while the VM stands still, a fresh drive goes into its port, the VM goes
on, and md rebuilds onto the new drive (issue 37 item 1;
docs/power-and-unplug.md).

What a RAID user does when a drive's backend fails: QEMU stops the VM on
the failed write (query-status io-error, BLOCK_IO_ERROR), the operator
pulls that drive (device_del), plugs a new one into the same bay and
resumes (cont).  Before the fix, cont retried the failed write on the
drive that was gone, and QEMU died (SIGSEGV), or wrote the old data to
the drive plugged in meanwhile.

Member 1's drive sits on blkdebug, which fails every write covering one
sector of md's data area with EIO; the drive has werror=stop,rerror=stop.
The guest makes RAID-1 on two ncq-disks, writes a reference region
(fio verify=crc32c), then writes a region that covers that sector: the
VM stops.  The host checks the run state and the event, pulls the drive,
waits for DEVICE_DELETED, plugs a fresh drive whose image holds a known
pattern into the same port, and resumes.  The guest waits until md runs
degraded, verifies the region written across the failure and a fresh
region, reads the whole new drive (its checksum must be the pattern's:
no stale write landed), adds it to the array, waits for the recovery,
has md check the mirrors (no mismatch) and verifies every region again.
"""
import asyncio
import hashlib
import re

import ncqguest
import ncqmd
from ncqguest import Guest, Workload

SERIAL = "RSTOP"
MEMBER_MIB = 32
SECTOR = 512
# md's layout, fixed by the create options: member data from sector 2048
DATA_OFFSET = 2048
# the "during" region starts at 16 MiB of the array; blkdebug fails the
# writes that cover its first sector on member 1
DURING_MIB = 16
FAIL_SECTOR = DATA_OFFSET + DURING_MIB * 2048
FAILING, FRESH = "extra1", "extra2"

SCRIPT = r"""
md_setup
md_drives {serial} 2 || exit 1
MD_CREATE_OPTS="--assume-clean --data-offset=1M --bitmap=none"
md_create md0 1 2 $D0 $D1
echo "data-offset $(cat /sys/block/md0/md/dev-${{D1#/dev/}}/offset)"
FIO="fio --filename=/dev/md0 --direct=1 --ioengine=libaio --bs=64k \
    --iodepth=8 --rw=write --verify=crc32c"
region() {{  # region NAME OFFSET SIZE [fio options]: write and verify
    _n=$1 _o=$2 _s=$3
    shift 3
    $FIO --name=$_n --offset=$_o --size=$_s "$@" >>$RESULTS/fio.txt 2>&1
    echo "$_n status $?"
}}
verify() {{  # verify NAME OFFSET SIZE: the blocks region NAME wrote
    $FIO --name=$1 --offset=$2 --size=$3 --verify_only=1 --verify_fatal=1 \
        >>$RESULTS/fio.txt 2>&1
    echo "verify-$1$4 status $?"
}}
region ref 0 8m --do_verify=0
# member 1's host write fails here: the VM stops until the host resumes it
region during {during}m 1m --verify_fatal=1
n=0
until [ "$(cat /sys/block/md0/md/degraded)" = 1 ]; do
    n=$((n + 1))
    [ $n -lt 300 ] || {{ echo "degraded status 1"; break; }}
    sleep 1
done
md_record md0 degraded
region after 20m 4m --verify_fatal=1
verify ref 0 8m
# the drive the host plugged into member 1's port before cont
n=0
until NEW=$(disk {serial}2 2>/dev/null); do
    n=$((n + 1))
    [ $n -lt 300 ] || {{ echo "fresh status 1"; exit 1; }}
    sleep 1
done
echo "fresh $NEW sha256 $(dd if=$NEW bs=1M iflag=direct 2>/dev/null |
    sha256sum | cut -d' ' -f1)"
mdadm /dev/md0 --remove failed >>/results/mdadm.log 2>&1
echo "remove status $?"
mdadm /dev/md0 --add $NEW >>/results/mdadm.log 2>&1
echo "add status $?"
sleep 1
md_wait md0 600
echo check >/sys/block/md0/md/sync_action
sleep 1
md_wait md0 600
md_record md0 rebuilt
for r in "ref 0 8m" "during {during}m 1m" "after 20m 4m"; do
    verify $r -rebuilt
done
"""


def fresh_pattern():
    """The new drive's image: each sector names itself, so that a stray
    write anywhere changes the drive's checksum."""
    return b"".join(f"fresh drive sector {s:09d}\n".encode().ljust(
        SECTOR, b".") for s in range(MEMBER_MIB * 2048))


def raid_stop_guest(workdir):
    """The guest: member 0 on ide.1 (qcow2, healthy), member 1 on ide.2
    (raw on blkdebug, werror=stop,rerror=stop); returns it and the fresh
    drive's image."""
    members = workdir / "members"
    extra = ncqguest.multi_drive_args(members, ["ncq-disk,model=st3400620as"],
                                      disk_size=f"{MEMBER_MIB}M",
                                      serial_prefix=SERIAL)
    failing = members / "extra1.raw"
    with open(failing, "wb") as f:
        f.truncate(MEMBER_MIB << 20)
    rules = members / "fail-writes.conf"
    rules.write_text('[inject-error]\nevent = "write_aio"\nerrno = "5"\n'
                     f'sector = "{FAIL_SECTOR}"\n')
    extra += ["-drive", f"if=none,id=x1,file=blkdebug:{rules}:{failing},"
              "format=raw,werror=stop,rerror=stop",
              "-device", f"ncq-disk,model=st3400620as,drive=x1,bus=ide.2,"
              f"id={FAILING},serial={SERIAL}1"]
    fresh = members / "fresh.raw"
    fresh.write_bytes(fresh_pattern())
    guest = Guest(workdir / "guest", disk_size="64M", extra_args=extra,
                  snapshot=False, timeout_s=300)
    return guest, fresh


async def next_event(qmp, name, timeout_s=30, **data):
    """The next QMP event called name whose data has the items given
    (others are skipped)."""
    while True:
        ev = await asyncio.wait_for(qmp.events.get(), timeout_s)
        if ev["event"] == name and all(
                ev.get("data", {}).get(k) == v for k, v in data.items()):
            return ev


def pull_and_replace(fresh):
    """qmp_actions: wait until the VM stops on the I/O error, pull the
    failing drive, plug the fresh one into its port, resume.  Returns
    what the host saw."""
    async def actions(qmp):
        seen = {}
        while True:
            status = (await qmp.execute("query-status"))["status"]
            if status not in ("running", "prelaunch"):
                break
            await asyncio.sleep(0.05)
        seen["stopped"] = status
        seen["io_error"] = (await next_event(qmp, "BLOCK_IO_ERROR"))["data"]
        await qmp.execute("device_del", {"id": FAILING})
        seen["deleted"] = (await next_event(qmp, "DEVICE_DELETED",
                                             device=FAILING))["data"]
        for cmd in (f"drive_add 0 if=none,id=x2,file={fresh},format=raw",
                    f"device_add ncq-disk,model=st3400620as,drive=x2,"
                    f"bus=ide.2,id={FRESH},serial={SERIAL}2"):
            out = await qmp.execute("human-monitor-command",
                                    {"command-line": cmd})
            assert out.strip() in ("", "OK"), f"{cmd}: {out}"
        await qmp.execute("cont")
        seen["after_cont"] = (await qmp.execute("query-status"))["status"]
        return seen
    return actions


def test_failed_member_pulled_under_werror_stop(tmp_path):
    g, fresh = raid_stop_guest(tmp_path)
    expected = hashlib.sha256(fresh.read_bytes()).hexdigest()
    res = g.run(Workload(script=ncqmd.GUEST_SH + SCRIPT.format(
        serial=SERIAL, during=DURING_MIB)),
                qmp_actions=pull_and_replace(fresh))
    # QEMU ran on after cont and exited normally (Guest.run raises when
    # it dies, as it did with SIGSEGV before the fix)
    out, dmesg, seen = res.output, res.dmesg, res.qmp
    fio = res.files.get("fio.txt", b"").decode(errors="replace")
    assert res.status == 0, out[-3000:]
    assert seen["stopped"] == "io-error", seen
    assert seen["io_error"]["operation"] == "write" and \
        seen["io_error"]["action"] == "stop", seen
    assert seen["deleted"].get("device") == FAILING, seen
    assert seen["after_cont"] == "running", seen
    assert re.search(rf"^data-offset {DATA_OFFSET}$", out, re.M), out
    status = ncqmd.step_status(out)
    # every step passed: the array, each write and verify, the re-add
    failed = {k: v for k, v in status.items() if v != 0}
    assert not failed, f"{failed}\n{out[-3000:]}\n{fio[-3000:]}"
    for step in ("create-md0", "ref", "during", "after", "verify-ref",
                 "remove", "add", "verify-ref-rebuilt",
                 "verify-during-rebuilt", "verify-after-rebuilt"):
        assert step in status, f"{step} missing:\n{out[-3000:]}"
    # md failed the member and ran degraded on the other one
    deg = ncqmd.read_record(res, "degraded")
    assert deg["sysfs"]["degraded"] == "1", deg["text"]
    assert re.search(r"md/raid1:md0: (Disk failure on sd\w+|Operation "
                     r"continuing on 1 devices)", dmesg), dmesg[-3000:]
    # libata saw the drive go (the port's PhyRdy change and exchange)
    assert re.search(r"ata3: SError: \{[^}]*DevExch", dmesg), dmesg[-3000:]
    # nothing reached the fresh drive before md did: no stale retry
    m = re.search(r"^fresh (/dev/sd\w+) sha256 (\w+)$", out, re.M)
    assert m and m.group(2) == expected, out[-3000:]
    # md rebuilt onto it: two members in sync, no mismatch between them
    end = ncqmd.read_record(res, "rebuilt")
    assert end["sysfs"]["degraded"] == "0", end["text"]
    assert end["sysfs"]["mismatch_cnt"] == "0", end["text"]
    assert end["sysfs"]["last_sync_action"] == "check", end["text"]
    assert end["mdstat"]["md0"]["map"] == "UU", end["text"]
    print(f"\nio-error on {seen['io_error'].get('device')}, "
          f"fresh drive {m.group(1)}; {res.wall_s:.1f} s wall")
