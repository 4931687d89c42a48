"""RAID-1 members whose host writes fail under werror=stop, pulled while
the VM stands still: the VM goes on, md runs degraded, and a fresh drive
plugged in before cont is rebuilt onto (issue 37 item 1;
docs/power-and-unplug.md).

What a RAID user does when a drive's backend fails: QEMU stops the VM on
the failed write (query-status io-error, BLOCK_IO_ERROR), the operator
pulls that drive (device_del), perhaps plugs a new one into the same bay,
and resumes (cont).  Before the fix, cont retried the failed write on
the drive that was gone, and QEMU died (SIGSEGV), or wrote the old data
to the drive plugged in meanwhile.

Members 1 and 2 sit on blkdebug, each failing with EIO the writes that
cover one sector of md's data area, its own; their drives have
werror=stop,rerror=stop.  The guest makes RAID-1 on three ncq-disks and
writes a reference region (fio verify=crc32c), then:

1. writes a region over member 1's sector with queued commands (WRITE
   FPDMA QUEUED; AHCI halts the slot): the VM stops.  The host checks
   the run state and the event, pulls member 1, waits for
   DEVICE_DELETED and resumes.  libata finds the link down, md fails
   the member; the guest waits until md runs degraded.  Before the fix,
   QEMU died at this cont.
2. writes a region over member 2's sector, member 2 at queue depth 1
   (WRITE DMA; the IDE core keeps the retry): the VM stops again.  The
   host pulls member 2 and plugs a fresh drive, whose image holds a
   known pattern, into the same port before it resumes.  libata finds
   another drive there, md fails member 2 and runs on member 0 alone.
   Before the fix, cont ran the retry on the fresh drive: the old write
   landed there.

The guest then writes and verifies a fresh region, reads the whole new
drive (its checksum must be the pattern's: no stale write landed), adds
it to the array, waits for the recovery, has md check the mirrors (no
mismatch) and verifies every region again.
"""
import asyncio
import hashlib
import re

import ncqguest
import ncqmd
from ncqguest import Guest, Workload

SERIAL = "RSTOP"
MEMBER_MIB = 12
SECTOR = 512
# md's layout, fixed by the create options: member data from sector 2048
DATA_OFFSET = 2048
# member N (1, 2) fails the writes that cover the first sector of the
# region at FAIL_MIB[N] MiB of the array, on AHCI port ide.<N + 1>
FAIL_MIB = {1: 2, 2: 4}
AFTER_MIB = 6
FRESH = "extra3"

SCRIPT = r"""
md_setup
md_drives {serial} 3 || exit 1
MD_CREATE_OPTS="--assume-clean --data-offset=1M --bitmap=none"
md_create md0 1 3 $D0 $D1 $D2
echo "data-offset $(cat /sys/block/md0/md/dev-${{D1#/dev/}}/offset)"
FIO="fio --filename=/dev/md0 --direct=1 --ioengine=libaio --bs=64k \
    --iodepth=8 --rw=write --verify=crc32c"
region() {{  # region NAME MIB [fio options]: write 1 MiB at MIB MiB
    _n=$1 _o=$2
    shift 2
    $FIO --name=$_n --offset=${{_o}}m --size=1m "$@" >>$RESULTS/fio.txt 2>&1
    echo "$_n status $?"
}}
verify() {{  # verify NAME MIB [SUFFIX]: the blocks region NAME wrote
    $FIO --name=$1 --offset=${{2}}m --size=1m --verify_only=1 \
        --verify_fatal=1 >>$RESULTS/fio.txt 2>&1
    echo "verify-$1$3 status $?"
}}
md_until() {{  # md_until FILE VALUE: until md0's sysfs FILE reads VALUE
    _k=0
    until [ "$(cat /sys/block/md0/md/$1)" = "$2" ]; do
        _k=$((_k + 1))
        [ $_k -lt 600 ] || {{ echo "until-$1-$2 status 1"; return 1; }}
        sleep 1
    done
}}
region ref 0 --do_verify=0
# member 1's host write fails: the VM stops until the host pulls it
region fail1 {fail1} --verify_fatal=1
md_until degraded 1 && md_record md0 degraded-1
verify ref 0
# member 2's, one command at a time (no NCQ): the host pulls it and
# plugs a fresh drive in its place
echo 1 >/sys/block/${{D2#/dev/}}/device/queue_depth
region fail2 {fail2} --verify_fatal=1
md_until degraded 2 && md_record md0 degraded-2
region after {after} --verify_fatal=1
n=0
until NEW=$(disk {serial}3 2>/dev/null); do
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
# the recovery ends when the fresh drive is in sync: one member missing
md_until degraded 1
echo check >/sys/block/md0/md/sync_action
md_until last_sync_action check
md_wait md0 600
md_record md0 rebuilt
for r in "ref 0" "fail1 {fail1}" "fail2 {fail2}" "after {after}"; do
    verify $r -rebuilt
done
"""


def fresh_pattern():
    """The fresh drive's image: each sector names itself, so that a stray
    write anywhere changes the drive's checksum."""
    return b"".join(f"fresh drive sector {s:09d}\n".encode().ljust(
        SECTOR, b".") for s in range(MEMBER_MIB * 2048))


def failing_member_args(members, n):
    """-drive and -device of member n: a raw image on blkdebug that fails
    the writes covering member sector DATA_OFFSET + FAIL_MIB[n] MiB
    (reads of it work: ncq-disk reads what a write will replace)."""
    image = members / f"extra{n}.raw"
    with open(image, "wb") as f:
        f.truncate(MEMBER_MIB << 20)
    rules = members / f"fail-writes{n}.conf"
    sector = DATA_OFFSET + FAIL_MIB[n] * 2048
    rules.write_text('[inject-error]\nevent = "write_aio"\niotype = "write"\n'
                     f'errno = "5"\nsector = "{sector}"\n')
    return ["-drive", f"if=none,id=x{n},file=blkdebug:{rules}:{image},"
            "format=raw,werror=stop,rerror=stop",
            "-device", f"ncq-disk,model=st3400620as,drive=x{n},"
            f"bus=ide.{n + 1},id=extra{n},serial={SERIAL}{n}"]


def raid_stop_guest(workdir):
    """The guest: member 0 on ide.1 (qcow2, healthy), members 1 and 2 on
    ide.2 and ide.3 (failing_member_args); returns it and the fresh
    drive's image."""
    members = workdir / "members"
    extra = ncqguest.multi_drive_args(members, ["ncq-disk,model=st3400620as"],
                                      disk_size=f"{MEMBER_MIB}M",
                                      serial_prefix=SERIAL)
    for n in FAIL_MIB:
        extra += failing_member_args(members, n)
    fresh = members / "fresh.raw"
    fresh.write_bytes(fresh_pattern())
    guest = Guest(workdir / "guest", disk_size="64M", extra_args=extra,
                  snapshot=False, timeout_s=300)
    return guest, fresh


async def next_event(qmp, name, timeout_s=60, **data):
    """The next QMP event called name whose data has the items given
    (others are skipped)."""
    while True:
        ev = await asyncio.wait_for(qmp.events.get(), timeout_s)
        if ev["event"] == name and all(
                ev.get("data", {}).get(k) == v for k, v in data.items()):
            return ev


async def pull_when_stopped(qmp, n, plug=()):
    """Wait until the VM stops on member n's I/O error, pull member n,
    run the monitor commands plug, resume; return what the host saw."""
    seen = {}
    while True:
        status = (await qmp.execute("query-status"))["status"]
        if status != "running":
            break
        await asyncio.sleep(0.05)
    seen["stopped"] = status
    # (an assertion here ends the run: QEMU is killed, pytest shows it)
    assert status == "io-error", \
        f"the VM stopped in state {status}, not on member {n}'s I/O error"
    seen["io_error"] = (await next_event(qmp, "BLOCK_IO_ERROR",
                                         device=f"x{n}"))["data"]
    await qmp.execute("device_del", {"id": f"extra{n}"})
    seen["deleted"] = (await next_event(qmp, "DEVICE_DELETED",
                                        device=f"extra{n}"))["data"]
    for cmd in plug:
        out = await qmp.execute("human-monitor-command",
                                {"command-line": cmd})
        assert out.strip() in ("", "OK"), f"{cmd}: {out}"
    await qmp.execute("cont")
    seen["after_cont"] = (await qmp.execute("query-status"))["status"]
    return seen


def host_steps(fresh):
    """qmp_actions: pull member 1; then pull member 2 and plug the fresh
    drive into its port (ide.3) before cont."""
    plug = (f"drive_add 0 if=none,id=x3,file={fresh},format=raw",
            f"device_add ncq-disk,model=st3400620as,drive=x3,bus=ide.3,"
            f"id={FRESH},serial={SERIAL}3")

    async def actions(qmp):
        from qemu.qmp import QMPError

        seen = []
        try:
            seen.append(await pull_when_stopped(qmp, 1))
            seen.append(await pull_when_stopped(qmp, 2, plug))
        except QMPError:
            # QEMU went away (it died at cont before the fix): Guest.run
            # reports its exit status and stderr
            pass
        return seen
    return actions


def test_failed_members_pulled_under_werror_stop(tmp_path):
    g, fresh = raid_stop_guest(tmp_path)
    expected = hashlib.sha256(fresh.read_bytes()).hexdigest()
    script = SCRIPT.format(serial=SERIAL, fail1=FAIL_MIB[1],
                           fail2=FAIL_MIB[2], after=AFTER_MIB)
    # QEMU runs on after each cont and exits normally (Guest.run raises
    # when it dies, as it did with SIGSEGV before the fix)
    res = g.run(Workload(script=ncqmd.GUEST_SH + script),
                qmp_actions=host_steps(fresh))
    out, dmesg = res.output, res.dmesg
    assert res.status == 0, out[-3000:]
    assert len(res.qmp) == 2, res.qmp
    for seen in res.qmp:
        assert seen["stopped"] == "io-error", seen
        assert seen["io_error"]["operation"] == "write", seen
        assert seen["io_error"]["action"] == "stop", seen
        assert seen["after_cont"] == "running", seen
    assert re.search(rf"^data-offset {DATA_OFFSET}$", out, re.M), out
    # every step passed: the array, each write and verify, the re-add
    status = ncqmd.step_status(out)
    failed = {k: v for k, v in status.items() if v != 0}
    fio = res.files.get("fio.txt", b"").decode(errors="replace")
    assert not failed, f"{failed}\n{out[-3000:]}\n{fio[-3000:]}"
    for step in ("create-md0", "ref", "fail1", "verify-ref", "fail2",
                 "after", "remove", "add", "verify-ref-rebuilt",
                 "verify-fail1-rebuilt", "verify-fail2-rebuilt",
                 "verify-after-rebuilt"):
        assert step in status, f"{step} missing:\n{out[-3000:]}"
    # md failed each pulled member in turn
    for k in (1, 2):
        rec = ncqmd.read_record(res, f"degraded-{k}")
        assert rec["sysfs"]["degraded"] == str(k), rec["text"]
    assert len(re.findall(r"md/raid1:md0: Disk failure on sd\w+", dmesg)) \
        == 2, dmesg[-3000:]
    # libata saw member 1's port empty, and another drive in member 2's;
    # the command that failed was queued on 1, not on 2
    ports = ncqmd.port_map(out)
    one, two = ports[f"{SERIAL}1"], ports[f"{SERIAL}2"]
    assert f"{one}.00: failed command: WRITE FPDMA QUEUED" in dmesg, \
        dmesg[-3000:]
    assert f"{two}.00: failed command: WRITE DMA\n" in dmesg, dmesg[-3000:]
    assert re.search(rf"{one}: SATA link down", dmesg), dmesg[-3000:]
    assert re.search(rf"{two}: SError: {{[^}}]*DevExch", dmesg), \
        dmesg[-3000:]
    assert f"{two}.00: serial number mismatch '{SERIAL}2' != " \
        f"'{SERIAL}3'" in dmesg, dmesg[-3000:]
    # nothing reached the fresh drive before md did: no stale retry
    m = re.search(r"^fresh (/dev/sd\w+) sha256 (\w+)$", out, re.M)
    assert m and m.group(2) == expected, out[-3000:]
    # md rebuilt onto it: the mirrors agree (md's check found no mismatch)
    end = ncqmd.read_record(res, "rebuilt")
    assert end["sysfs"]["degraded"] == "1", end["text"]
    assert end["sysfs"]["mismatch_cnt"] == "0", end["text"]
    assert end["sysfs"]["last_sync_action"] == "check", end["text"]
    assert end["mdstat"]["md0"]["map"].count("U") == 2, end["text"]
    print(f"\nfresh drive {m.group(1)}; {res.wall_s:.1f} s of wall clock "
          "in QEMU")
