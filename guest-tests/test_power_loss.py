"""Power loss with ext4 on a write-cache-on ncq-disk (docs/faults.md).

Boot 1 makes an ext4 file system, writes files one by one, each fsync'd
(dd conv=fsync) and its checksum printed on the console, while fio keeps
eight random reads queued beyond the file system (the drive destages its
write cache only when its queue runs empty or the cache fills, so what it
acknowledged from the cache stays there for a while, as under a busy
server's load).  Then it writes 128 KiB at sector TRIGGER (outside the
file system); a powercut fault rule on that sector cuts the power when
the write completes: the drive's unflushed data is lost (those sectors get
their old contents back) and QEMU quits.  The cut point is a guest action,
so under icount the whole run is deterministic.  Boot 2, on the same
image, mounts (journal recovery), unmounts, runs e2fsck -fn and checks
every file.

- barriers on (ext4's default): fsck is clean and every fsync'd file is
  intact; the cut lost only the trigger write, as each fsync flushed.
- barriers off (nobarrier): fsync no longer flushes the drive's cache, so
  fsync'd data is lost: a file is missing or wrong, or fsck finds errors.
  That is the expected result.
"""
import re

import pytest

import ncqfiles
from ncqguest import Guest, GuestError, Workload

TRIGGER = 1900032           # sector; the file system ends at 512 MiB,
                            # the background reads cover 600 MiB-1 GiB
TRIGGER_SECTORS = 256
FILES = 40

WRITER = r"""
mount -t ext4 -o {opts} /dev/sda /mnt || {{ echo MOUNT-FAILED; exit 1; }}
# A reader keeps eight random reads queued, as a busy server does: the
# drive destages its write cache only when its queue runs empty, so what
# it acknowledged from the cache stays there (direct 128 KiB reads beyond
# the file system, at 600 MiB-1 GiB)
fio --name=reader --filename=/dev/sda --rw=randread --bs=128k --direct=1 \
    --ioengine=libaio --iodepth=8 --offset=600m --size=400m \
    --time_based --runtime=3600 --randrepeat=1 >/dev/null 2>&1 &
{write}echo CUT
dd if=/dev/zero of=/dev/sda bs=128k count=1 seek=$(({trigger} / 256)) \
    oflag=direct 2>/dev/null
echo NOT-CUT
"""


def power_cut_run(tmp_path, opts):
    mkfs = "mkfs.ext4 -q -F /dev/sda 512M\n"
    device = f"ncq-disk,model=st3400620as,faults=powercut@{TRIGGER}:writes"
    g1 = Guest(tmp_path / "cut", device=device, disk_size="1G")
    with pytest.raises(GuestError, match="guest sent no results"):
        g1.run(Workload(script=mkfs + WRITER.format(
            opts=opts, write=ncqfiles.write_sh(FILES), trigger=TRIGGER)))
    console = (g1.workdir / "console.log").read_text(errors="replace")
    stderr = (g1.workdir / "qemu.stderr").read_text(errors="replace")
    assert "CUT" in console and "NOT-CUT" not in console
    written = ncqfiles.sums(console)
    assert len(written) == FILES
    m = re.search(r"power cut; (\d+) sectors in (\d+) ranges", stderr)
    assert m, stderr
    lost = int(m.group(1))

    g2 = Guest(tmp_path / "check", disk=g1.disk)
    res = g2.run(Workload(script=ncqfiles.check_sh("/dev/sda", FILES)))
    fsck = ncqfiles.fsck_status(res.output)
    damaged = ncqfiles.damaged(written, ncqfiles.sums(res.output))
    return lost, fsck, damaged, res


def test_barriers_keep_fsynced_files(tmp_path):
    lost, fsck, damaged, res = power_cut_run(tmp_path, "barrier=1")
    # the trigger write, acknowledged from the cache, is lost with the cut
    assert lost >= TRIGGER_SECTORS
    assert fsck == 0, res.files["fsck.txt"].decode(errors="replace")
    assert damaged == []


def test_nobarrier_loses_fsynced_data(tmp_path):
    lost, fsck, damaged, res = power_cut_run(tmp_path, "nobarrier")
    # more than the trigger: file system writes were still in the cache
    assert lost > TRIGGER_SECTORS, lost
    # the expected result without barriers: fsync'd data did not survive
    assert damaged or fsck != 0, (
        f"nothing lost: fsck {fsck}\n"
        + res.files["fsck.txt"].decode(errors="replace"))
