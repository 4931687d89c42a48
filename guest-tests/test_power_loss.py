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
so under icount the whole run is deterministic.  Boot 2, one for both
runs' images (each on its own drive), mounts each (journal recovery),
unmounts, runs e2fsck -fn and checks every file.

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


def power_cut(workdir, opts):
    """Boot 1 on a new image: the files written, then the cut.  Returns
    (the image, {file: md5} as written, sectors lost)."""
    mkfs = "mkfs.ext4 -q -F /dev/sda 512M\n"
    device = f"ncq-disk,model=st3400620as,faults=powercut@{TRIGGER}:writes"
    g1 = Guest(workdir / "cut", device=device, disk_size="1G")
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
    return g1.disk, written, int(m.group(1))


# ext4's mount options of the two cut runs
OPTS = {"barrier": "barrier=1", "nobarrier": "nobarrier"}
SECOND_SERIAL = "NOBARRIER"


@pytest.fixture(scope="module")
def cuts(tmp_path_factory):
    """Both cut runs, then boot 2 once for both images: the barrier run's
    as sda, the nobarrier run's as sdb (the same drive model); each check's
    output in its own results directory.  name -> (lost, fsck, damaged,
    its fsck.txt)."""
    work = tmp_path_factory.mktemp("powerloss")
    runs = {name: power_cut(work / name, opts) for name, opts in OPTS.items()}
    second = runs["nobarrier"][0]
    extra = ["-drive", f"if=none,id=x0,file={second},format=qcow2",
             "-device", "ncq-disk,model=st3400620as,drive=x0,bus=ide.1,"
             f"id=extra0,serial={SECOND_SERIAL}"]
    # the second image's drive found by its serial number, not its name
    script = f"""for d in /sys/block/sd*; do
    s=$(tail -c +5 $d/device/vpd_pg80 | tr -d ' \\000')
    if [ "$s" = {SECOND_SERIAL} ]; then NB=/dev/${{d##*/}}; \
else B=/dev/${{d##*/}}; fi
done
echo "barrier $B nobarrier $NB"
"""
    for name, dev in (("barrier", "$B"), ("nobarrier", "$NB")):
        # a subshell per image: check_sh exits early when it cannot mount
        script += (f"mkdir -p $RESULTS/{name}\n"
                   f"(RESULTS=$RESULTS/{name}; "
                   f"{ncqfiles.check_sh(dev, FILES)}) "
                   f">$RESULTS/{name}/out.txt 2>&1\n"
                   "umount /mnt 2>/dev/null\n")
    g2 = Guest(work / "check", disk=runs["barrier"][0], extra_args=extra)
    res = g2.run(Workload(script=script))
    out = {}
    for name, (_, written, lost) in runs.items():
        text = res.files[f"{name}/out.txt"].decode(errors="replace")
        fsck = ncqfiles.fsck_status(text)
        damaged = ncqfiles.damaged(written, ncqfiles.sums(text))
        fsck_txt = res.files.get(f"{name}/fsck.txt", b"").decode(
            errors="replace")
        out[name] = (lost, fsck, damaged, fsck_txt)
    return out


def test_barriers_keep_fsynced_files(cuts):
    lost, fsck, damaged, fsck_txt = cuts["barrier"]
    # the trigger write, acknowledged from the cache, is lost with the cut
    assert lost >= TRIGGER_SECTORS
    assert fsck == 0, fsck_txt
    assert damaged == []


def test_nobarrier_loses_fsynced_data(cuts):
    lost, fsck, damaged, fsck_txt = cuts["nobarrier"]
    # more than the trigger: file system writes were still in the cache
    assert lost > TRIGGER_SECTORS, lost
    # the expected result without barriers: fsync'd data did not survive
    assert damaged or fsck != 0, f"nothing lost: fsck {fsck}\n" + fsck_txt
