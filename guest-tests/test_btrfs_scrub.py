"""btrfs raid1 on two ncq-disks, one of which returns corrupt data for a
few sectors without an error (the corrupt fault kind, docs/faults.md):
a scrub finds the bad copy by its checksum, rewrites it from the good
mirror, and the write heals the drive's sectors (issue 17).

The guest makes btrfs raid1 (data and metadata) on sdb and sdc, writes a
file, unmounts, and finds where the file's first 4 KiB lie on sdb (the
file's extent in the fs tree, its chunk's stripe on devid 1, both from
`btrfs inspect-internal dump-tree`).  It prints that sector; the host
adds `corrupt@LBA+8` to sdb's drive over QMP while the guest stands
still (host_step), and the guest checks that a direct read of those
sectors now returns other bytes than before (the fault is on), mounts,
and runs `btrfs scrub start -B`.  Asserted: scrub counts
corrected errors and no uncorrectable one, the file reads back right
(page cache dropped), and a direct read of the drive's sectors returns
the original bytes again (the scrub's write healed them), while the rule
is still in place, and the rule's counters (read at a last host_step,
not by polling: a fast run could end between two polls) count its hits.
"""
import re

import ncqmd
from ncqguest import Workload

SCRIPT = r"""
modprobe btrfs
mkfs.btrfs -q -f -d raid1 -m raid1 /dev/sdb /dev/sdc || { echo MKFS-FAILED; exit 1; }
btrfs device scan >/dev/null 2>&1
mount -t btrfs -o device=/dev/sdb,device=/dev/sdc /dev/sdb /mnt || { echo MOUNT-FAILED; exit 1; }
yes "btrfs raid1 data" | head -c 1048576 >/mnt/f1
sync
echo "FILESUM $(md5sum </mnt/f1 | cut -d' ' -f1)"
ino=$(ls -i /mnt/f1 | awk '{print $1}')
umount /mnt
btrfs inspect-internal dump-tree -t 5 /dev/sdb >$RESULTS/fs-tree.txt 2>&1
btrfs inspect-internal dump-tree -t chunk /dev/sdb >$RESULTS/chunk-tree.txt 2>&1
# the file's first extent: its logical address
logical=$(awk -v key="($ino EXTENT_DATA 0)" '
    index($0, key) { hit = 1; next }
    hit && /extent data disk byte/ { print $5; exit }' $RESULTS/fs-tree.txt)
# the chunk holding it, and its stripe on devid 1 (sdb)
phys=$(awk -v L="$logical" '
    /CHUNK_ITEM/ { s = $0; sub(/.*CHUNK_ITEM /, "", s); sub(/\).*/, "", s); start = s + 0 }
    /^[ \t]*length / { len = $2 + 0 }
    /stripe [0-9]+ devid 1 offset/ {
        if (L + 0 >= start && L + 0 < start + len) { printf "%d\n", $6 + (L - start); exit }
    }' $RESULTS/chunk-tree.txt)
[ -n "$phys" ] || { echo MAP-FAILED "$logical"; exit 1; }
lba=$((phys / 512))
raw() { dd if=/dev/sdb bs=512 skip=$lba count=8 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1; }
before=$(raw)
echo "RAW-BEFORE $before"
echo "CORRUPT-AT $lba"
host_step
echo "RAW-CORRUPT $(raw)"
mount -t btrfs -o device=/dev/sdb,device=/dev/sdc /dev/sdb /mnt || { echo MOUNT-FAILED; exit 1; }
btrfs scrub start -B /mnt >$RESULTS/scrub.txt 2>&1
echo "SCRUB-EXIT $?"
btrfs scrub status /mnt >$RESULTS/scrub-status.txt 2>&1
btrfs device stats /mnt >$RESULTS/device-stats.txt 2>&1
sync
echo 3 >/proc/sys/vm/drop_caches
echo "FILESUM-AFTER $(md5sum </mnt/f1 | cut -d' ' -f1)"
umount /mnt
echo "RAW-AFTER $(raw)"
host_step
"""


def steps(console, drive="extra0"):
    """The host's two steps: add the corrupt rule at the sector the guest
    printed (the guest stands still meanwhile), and at the end read the
    rule's counters.  Returns the steps for ncqmd.at_pauses and a dict
    that holds the rule text once the first step ran."""
    seen = {}

    async def add_fault(qmp):
        m = await ncqmd.console_line(console, r"^CORRUPT-AT (\d+)")
        seen["rule"] = f"corrupt@{m.group(1)}+8"
        return await qmp.execute("ncq-disk-fault-add",
                                 {"id": drive, "rules": seen["rule"]})

    async def counters(qmp):
        return await qmp.execute("query-ncq-disk-faults", {"id": drive})
    return [add_fault, counters], seen


def test_btrfs_raid1_scrub_repairs_corrupt_sectors(tmp_path):
    g, console = ncqmd.member_guest(tmp_path, 2, "512M", pause=True)
    host_steps, seen = steps(console)
    res = g.run(Workload(script=ncqmd.GUEST_SH + SCRIPT),
                qmp_actions=ncqmd.at_pauses(host_steps))
    out = res.output
    assert res.status == 0, out[-3000:]
    assert len(res.qmp) == 2, out[-3000:]
    rule, counters = seen["rule"], res.qmp[1]
    before = re.search(r"^RAW-BEFORE (\S+)", out, re.M).group(1)
    corrupt = re.search(r"^RAW-CORRUPT (\S+)", out, re.M).group(1)
    after = re.search(r"^RAW-AFTER (\S+)", out, re.M).group(1)
    scrub = res.files["scrub.txt"].decode(errors="replace")
    status = res.files["scrub-status.txt"].decode(errors="replace")
    corrected = int(re.search(r"Corrected:\s+(\d+)", status).group(1))
    uncorrectable = int(re.search(r"Uncorrectable:\s+(\d+)",
                                  status).group(1))
    print(f"\nbtrfs scrub on {rule}: corrected {corrected}, "
          f"uncorrectable {uncorrectable}; rule counters {counters}\n"
          f"{scrub}")
    # the drive returned altered bytes while the fault was on...
    assert corrupt != before
    # ...scrub found the bad copy and rewrote it from the mirror
    assert re.search(r"^SCRUB-EXIT 0$", out, re.M), scrub
    assert corrected >= 1 and uncorrectable == 0, status
    # the file reads back right
    filesum = re.search(r"^FILESUM (\S+)", out, re.M).group(1)
    assert re.search(rf"^FILESUM-AFTER {filesum}$", out, re.M), out[-2000:]
    # and the drive's sectors read right again: the write healed them
    assert after == before
    assert counters and counters[0]["kind"] == "corrupt"
    assert counters[0]["hits"] >= 1
