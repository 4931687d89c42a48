"""TRIM (ATA DATA SET MANAGEMENT) as Linux meets it (docs/device.md).

The hard disks modelled here predate TRIM: IDENTIFY word 169 says so and
Linux sends them no discards.  The SSD model has it, and a TRIM completes
at the model's deadline like a media command, so runs that discard stay
deterministic: before, QEMU completed DSM from a bottom half, at a point of
the guest's run that depended on the host, and two identical runs drifted
apart from the first TRIM on (mkfs.ext4 discards the whole device).

Three boots, two at a time: the SSD twice (the second started 1.1 s
later), the hard disk once.  Each makes an ext4 file system, mounts it
with -o discard, writes files with fsync, deletes half of them (online
discards among the queued writes) and unmounts.
"""

import concurrent.futures
import time

import pytest

import ncqguest
from ncqguest import Workload, read_trace

DISCARD_MAX = "/sys/block/sda/queue/discard_max_bytes"

SCRIPT = r"""
set -e
echo "discard_max $(cat /sys/block/sda/queue/discard_max_bytes)"
mkfs.ext4 -q -F /dev/sda
mount -t ext4 -o discard /dev/sda /mnt
i=1
while [ $i -le 16 ]; do
    yes "file $i" | head -c $((65536 * i)) | dd of=/mnt/f$i bs=64k \
        conv=fsync 2>/dev/null
    i=$((i + 1))
done
rm /mnt/f1 /mnt/f3 /mnt/f5 /mnt/f7 /mnt/f9 /mnt/f11 /mnt/f13 /mnt/f15
sync
echo "left $(ls /mnt | grep -c '^f')"
umount /mnt
"""

BOOTS = {
    "ssd-a": "intel-530",
    "ssd-b": "intel-530",
    "hdd": "st3400620as",
}


def _boot(workdir, name):
    trace = workdir / f"{name}.trace"
    guest = ncqguest.Guest(
        workdir / name,
        device=f"ncq-disk,model={BOOTS[name]},trace={trace}",
        disk_size="1G", timeout_s=400)
    if name == "ssd-b":
        time.sleep(1.1)     # another second of host time than ssd-a
    res = guest.run(Workload(script=SCRIPT, collect=(DISCARD_MAX,)))
    assert res.status == 0, f"{name}: workload failed:\n{res.output}"
    return res, trace


@pytest.fixture(scope="module")
def boots(tmp_path_factory, qemu_build, guest_image):
    workdir = tmp_path_factory.mktemp("trim")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = {n: pool.submit(_boot, workdir, n) for n in BOOTS}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def test_hard_disk_has_no_trim(boots):
    res, trace = boots["hdd"].result()
    assert res.collected[DISCARD_MAX] == "0"
    assert "left 8" in res.output
    _, records = read_trace(trace)
    assert not [r for r in records if r["op"] == "O"]


def test_ssd_trims_through_the_model_deterministically(boots):
    a, ta = boots["ssd-a"].result()
    b, tb = boots["ssd-b"].result()
    assert int(a.collected[DISCARD_MAX]) > 0
    assert "left 8" in a.output
    _, records = read_trace(ta)
    trims = [r for r in records if r["op"] == "O"]
    # mkfs's discard of the whole device, and the deletions' online ones
    assert len(trims) >= 2, len(trims)
    assert ta.read_bytes() == tb.read_bytes(), \
        "device traces of two identical runs with TRIM differ"
    print(f"\n{len(trims)} TRIM commands among {len(records)} trace records;"
          f" the two runs' traces are identical")
