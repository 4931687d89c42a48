"""One drive of an md RAID-5 removed with QMP device_del while I/O runs
(issue 17; docs/power-and-unplug.md).

ich9-ahci ports take hot-plug (patch "hw/ide/ahci: hot-plug and
hot-unplug a drive on an ich9-ahci port"): device_del pulls the drive
out of its port at once (a surprise removal), the port signals the lost
link (PxSERR.DIAG.N/X, PxIS.PRCS/PCS), libata resets the link, finds no
device and detaches it; the commands that were in flight fail, and md
fails the member and runs degraded.

The guest makes RAID-5 on four ncq-disks (sdb-sde), writes a reference
region with checksummed blocks (fio verify=crc32c), starts a random
read/write load on another region, and asks the host to pull sdc.  The
host runs device_del on its drive and waits for DEVICE_DELETED.  The
guest waits until md counts a missing member, lets the load run on,
stops it, then writes and verifies a fresh region on the degraded array
and verifies the reference region (its blocks on the missing drive come
from parity).  Asserted: QEMU exits normally, the array is degraded by
one, the load saw no I/O error, both verifications pass, and libata saw
the link go down.
"""
import asyncio
import re

import ncqguest
import ncqmd
from ncqguest import Workload

SCRIPT = r"""
modprobe raid456
mdadm --create /dev/md0 --run --quiet --level=5 --raid-devices=4 \
    --assume-clean /dev/sdb /dev/sdc /dev/sdd /dev/sde || { echo MDADM-FAILED; exit 1; }
FIO="fio --filename=/dev/md0 --direct=1 --ioengine=libaio --randrepeat=1"
$FIO --name=ref --rw=write --bs=64k --iodepth=8 --offset=0 --size=48m \
    --verify=crc32c --do_verify=0 >/dev/null || echo REF-WRITE-FAILED
$FIO --name=load --rw=randrw --bs=16k --iodepth=16 --offset=64m --size=96m \
    --time_based --runtime=3600 --output-format=json \
    --output=$RESULTS/load.json &
load=$!
sleep 2
echo UNPLUG-NOW
n=0
until [ "$(cat /sys/block/md0/md/degraded)" = 1 ]; do
    n=$((n + 1))
    [ $n -lt 3000 ] || { echo NEVER-DEGRADED; break; }
    sleep 1
done
echo "DEGRADED-AFTER $n"
sleep 5
kill -INT $load
wait $load
echo "LOAD-EXIT $?"
$FIO --name=after --rw=write --bs=64k --iodepth=8 --offset=176m --size=32m \
    --verify=crc32c --do_verify=1 --verify_fatal=1 >$RESULTS/after.txt 2>&1
echo "AFTER-EXIT $?"
$FIO --name=ref --rw=read --bs=64k --iodepth=8 --offset=0 --size=48m \
    --verify=crc32c --verify_only=1 --verify_fatal=1 >$RESULTS/ref.txt 2>&1
echo "REF-EXIT $?"
cat /proc/mdstat
echo "DEGRADED $(cat /sys/block/md0/md/degraded)"
ls /sys/block | tr '\n' ' '; echo
"""


async def unplug_when_asked(qmp, console, drive="extra1"):
    """Wait for the guest's UNPLUG-NOW, device_del the drive, wait until
    QOM no longer has it; return the time it took (wall seconds)."""
    await ncqmd.console_line(console, r"UNPLUG-NOW")
    t0 = asyncio.get_running_loop().time()
    await qmp.execute("device_del", {"id": drive})
    while True:
        found = await qmp.execute("qom-list",
                                  {"path": "/machine/peripheral"})
        if drive not in [p["name"] for p in found]:
            break
        await asyncio.sleep(0.1)
    return asyncio.get_running_loop().time() - t0


def test_device_del_degrades_raid5_under_io(tmp_path):
    g, console = ncqmd.member_guest(tmp_path, 4, "128M")

    async def actions(qmp):
        return await unplug_when_asked(qmp, console)

    res = g.run(Workload(script=SCRIPT), qmp_actions=actions)
    out, dmesg = res.output, res.dmesg
    assert res.status == 0, out[-3000:]
    assert "REF-WRITE-FAILED" not in out and "NEVER-DEGRADED" not in out, \
        out[-3000:]
    assert re.search(r"^DEGRADED 1$", out, re.M), out[-3000:]
    # the load went on through the removal without an I/O error
    load = ncqguest.fio_json(res, "load.json")["jobs"][0]
    assert load["error"] == 0, load
    assert re.search(r"^AFTER-EXIT 0$", out, re.M), \
        res.files["after.txt"].decode(errors="replace")[-2000:]
    assert re.search(r"^REF-EXIT 0$", out, re.M), \
        res.files["ref.txt"].decode(errors="replace")[-2000:]
    # libata saw the link go, md failed the member
    assert re.search(r"ata\d+: SATA link down", dmesg), dmesg[-3000:]
    assert re.search(r"md/raid:md0: (Disk failure on sdc|Operation "
                     r"continuing on 3 devices)", dmesg), dmesg[-3000:]
    polls = re.search(r"DEGRADED-AFTER (\d+)", out).group(1)
    print(f"\ndevice_del took {res.qmp:.2f} s wall; load "
          f"{load['read']['io_bytes'] >> 20} MiB read, "
          f"{load['write']['io_bytes'] >> 20} MiB written; "
          f"{polls} polls (1 s of guest time each) to degrade")
