"""fsync'd files written before a power cut and checked after it: the
guest shell both power-cut tests run (test_power_loss.py on one drive,
test_raid_power.py on an md array) and the parser of what it prints.

The writer writes files /mnt/f1 ... /mnt/fN one by one, each fsync'd
(dd conv=fsync) and of a size that varies with its number (4 to 28 KiB,
so files share blocks differently), and prints one line
`SUM f<i> <md5>` per file once dd has returned: a file with such a line
was acknowledged as durable.  After the reboot the check replays the
journal (a mount and umount), runs e2fsck -fn (its report in
$RESULTS/fsck.txt, its exit status on a line `FSCK <n>`), mounts
read-only and prints the same lines, with `missing` for a file that is
gone.
"""
import re

_SUM = re.compile(r"^SUM (f\d+) (\S+)$", re.M)
_FSCK = re.compile(r"^FSCK (\d+)$", re.M)


def write_sh(files):
    """Guest shell: write and fsync /mnt/f1 ... /mnt/f<files>, ext4 on
    /mnt already mounted."""
    return f"""i=1
while [ $i -le {files} ]; do
    yes "file $i" | head -c $((4096 * (i % 7 + 1))) |
        dd of=/mnt/f$i bs=4k conv=fsync 2>/dev/null
    echo "SUM f$i $(md5sum </mnt/f$i | cut -d' ' -f1)"
    i=$((i + 1))
done
"""


def check_sh(dev, files):
    """Guest shell: recover, fsck and checksum the ext4 on dev after the
    cut; leaves it mounted read-only on /mnt (exits 0 at once, with a
    line MOUNT-FAILED, when it does not mount)."""
    return f"""mount -t ext4 {dev} /mnt && umount /mnt
e2fsck -fn {dev} >$RESULTS/fsck.txt 2>&1
echo "FSCK $?"
mount -t ext4 -o ro {dev} /mnt || {{ echo MOUNT-FAILED; exit 0; }}
i=1
while [ $i -le {files} ]; do
    if [ -f /mnt/f$i ]; then
        echo "SUM f$i $(md5sum </mnt/f$i | cut -d' ' -f1)"
    else
        echo "SUM f$i missing"
    fi
    i=$((i + 1))
done
"""


def sums(text):
    """{file name: md5 or "missing"} from the SUM lines in text."""
    return dict(_SUM.findall(text))


def fsck_status(text):
    """e2fsck's exit status from check_sh's output."""
    m = _FSCK.search(text)
    if m is None:
        raise AssertionError("no FSCK line: the check did not run e2fsck")
    return int(m.group(1))


def damaged(written, after):
    """The fsync'd files (written: sums before the cut) whose contents
    after the reboot differ or are gone."""
    return sorted(f for f, s in written.items() if after.get(f) != s)
