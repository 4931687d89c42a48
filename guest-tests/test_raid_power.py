"""A power cut of every drive of an md array during writes, write caches
on (issue 17; docs/power-and-unplug.md).

Boot 1 puts md RAID (RAID-5 on four ncq-disks, or RAID-1 on two) under
ext4, writes files one by one, each fsync'd (dd conv=fsync) and its
checksum printed, while a background writer keeps direct (O_DIRECT, never
fsync'd) writes going to other files and fio keeps random reads queued
on the array (a drive destages its cache when its queue runs empty), so
the drives' write caches hold data no flush covered.  Then it writes to sector TRIGGER of the guest's
own disk (sda, outside the array), where a powercut rule pulls the
machine's plug: every ncq-disk of the machine loses what its cache held
at that same virtual instant and QEMU quits (each drive says on stderr
how many sectors never reached its media).  The cut point is a guest
action, so under icount the run is deterministic.

Boot 2, on the same images, assembles the array (md finds it was not shut
down cleanly and resyncs it), waits for the resync, mounts (journal
recovery), runs e2fsck -fn, and checks every fsync'd file's checksum.
The unsynced files may be lost or torn; the test reports how many were.

The smoke test (RAID-5 on 4 drives) runs in the README's test command;
the RAID-1 variant with more files runs with NCQ_LONG_SCENARIOS=1.
"""
import os
import re

import pytest

import ncqfiles
import ncqguest
from ncqguest import Guest, GuestError, Workload

TRIGGER = 8192                  # sector of sda, the guest's own disk
GUEST_DISK = "64M"
MEMBER_SIZE = "128M"
CUT_LINE = re.compile(r"ncq-disk (\S+): power cut; (\d+) sectors in "
                      r"(\d+) ranges never reached the media")

WRITER = r"""
modprobe raid456 2>/dev/null; modprobe raid1 2>/dev/null
mdadm --create /dev/md0 --run --quiet --level={level} \
    --raid-devices={n} --assume-clean {members} || {{ echo MDADM-FAILED; exit 1; }}
mkfs.ext4 -q -F /dev/md0 || {{ echo MKFS-FAILED; exit 1; }}
mount -t ext4 /dev/md0 /mnt || {{ echo MOUNT-FAILED; exit 1; }}
# Random reads keep the members' queues busy, as a busy server does: a
# drive destages its write cache when its queue runs empty, so what it
# acknowledged from the cache stays there meanwhile
fio --name=reader --filename=/dev/md0 --rw=randread --bs=64k --direct=1 \
    --ioengine=libaio --iodepth=16 --time_based --runtime=3600 \
    --randrepeat=1 >/dev/null 2>&1 &
# direct writes that nobody flushes: they sit in the drives' write caches
( i=0; while :; do
    yes "unsynced $i" | dd of=/mnt/u$((i % 6)) bs=64k count=4 \
        iflag=fullblock oflag=direct 2>/dev/null
    i=$((i + 1))
  done ) &
{write}echo "STATE $(cat /sys/block/md0/md/array_state)"
echo CUT
dd if=/dev/zero of=/dev/sda bs=4k count=1 seek=$(({trigger} / 8)) \
    oflag=direct 2>/dev/null
echo NOT-CUT
"""

ASSEMBLE = r"""
modprobe raid456 2>/dev/null; modprobe raid1 2>/dev/null
mdadm --assemble /dev/md0 {members} 2>&1 || echo ASSEMBLE-FAILED
echo "SYNC-ACTION $(cat /sys/block/md0/md/sync_action)"
cat /proc/mdstat
mdadm --wait /dev/md0
echo "AFTER $(cat /sys/block/md0/md/sync_action) $(cat /sys/block/md0/md/array_state)"
echo "DEGRADED $(cat /sys/block/md0/md/degraded)"
"""
UNSYNCED = r"""for f in /mnt/u*; do echo "UNSYNCED $f $(wc -c <$f)"; done
"""


def cuts(stderr):
    """{device id: lost sectors} from QEMU's stderr after a power cut."""
    return {m.group(1): int(m.group(2)) for m in CUT_LINE.finditer(stderr)}


def raid_power_cut(tmp_path, level, n, files):
    extra = ncqguest.multi_drive_args(
        tmp_path / "members", ["ncq-disk,model=st3400620as"] * n,
        disk_size=MEMBER_SIZE)
    members = " ".join(f"/dev/sd{chr(ord('b') + i)}" for i in range(n))
    device = f"ncq-disk,model=st3400620as,faults=powercut@{TRIGGER}:writes"
    g1 = Guest(tmp_path / "cut", device=device, disk_size=GUEST_DISK,
               extra_args=extra, snapshot=False)
    with pytest.raises(GuestError, match="guest sent no results"):
        g1.run(Workload(script=WRITER.format(
            level=level, n=n, members=members,
            write=ncqfiles.write_sh(files), trigger=TRIGGER)))
    console = (g1.workdir / "console.log").read_text(errors="replace")
    stderr = (g1.workdir / "qemu.stderr").read_text(errors="replace")
    assert "CUT" in console and "NOT-CUT" not in console, g1.tail()
    written = ncqfiles.sums(console)
    assert len(written) == files, g1.tail()
    lost = cuts(stderr)

    g2 = Guest(tmp_path / "check", disk=g1.disk, extra_args=extra,
               snapshot=False)
    check = (ASSEMBLE.format(members=members)
             + ncqfiles.check_sh("/dev/md0", files) + UNSYNCED)
    res = g2.run(Workload(script=check))
    damaged = ncqfiles.damaged(written, ncqfiles.sums(res.output))
    return lost, written, damaged, res


def check_cut(tmp_path, level, n, files):
    lost, written, damaged, res = raid_power_cut(tmp_path, level, n, files)
    out = res.output
    # Every drive of the machine lost power at once: the guest's disk
    # and each member said what its cache lost.
    assert sorted(lost) == ["disk0"] + [f"extra{i}" for i in range(n)], lost
    members_lost = sum(v for k, v in lost.items() if k != "disk0")
    # the direct writes were still in the members' caches
    assert members_lost > 0, lost
    assert "ASSEMBLE-FAILED" not in out, out[-3000:]
    # md saw an unclean shutdown and resynced the array
    assert re.search(r"^SYNC-ACTION resync$", out, re.M), out[-3000:]
    assert re.search(r"^AFTER idle (clean|active)", out, re.M), out[-3000:]
    assert "DEGRADED 0" in out, out[-3000:]
    fsck = ncqfiles.fsck_status(out)
    assert fsck == 0, res.files["fsck.txt"].decode(errors="replace")
    assert damaged == [], damaged
    unsynced = re.findall(r"^UNSYNCED (\S+) (\d+)$", out, re.M)
    print(f"\nraid{level} on {n} drives: {len(written)} fsync'd files "
          f"intact; sectors lost per drive {lost}; unsynced files after "
          f"the cut {[(f.rsplit('/', 1)[1], int(s)) for f, s in unsynced]}")


def test_raid5_power_cut_keeps_fsynced_files(tmp_path):
    check_cut(tmp_path, 5, 4, files=12)


@pytest.mark.skipif(not os.environ.get("NCQ_LONG_SCENARIOS"),
                    reason="long: set NCQ_LONG_SCENARIOS=1 to run it")
def test_raid1_power_cut_keeps_fsynced_files(tmp_path):
    check_cut(tmp_path, 1, 2, files=60)
