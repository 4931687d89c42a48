"""Command Duration Limits (ACS-5) seen from Linux 6.12 (docs/cdl.md).

One boot of a guest on ncq-disk with cdl=on runs every step in turn:
libata's view of the feature (cdl_supported, cdl_enable), descriptors
written with WRITE LOG EXT through sg_raw's ATA PASS-THROUGH and read back
by the kernel, a descriptor page with a reserved field refused, reads with
duration limit hints (the image's cdl-hint helper sets the I/O priority
hint, as fio 3.36's cmdprio_hint would) under a best-effort load, and the
abort (0xF) and complete-unavailable (0xD) policies on reads the drive
retries for 200 ms (injected slow sectors).  Each test checks its step,
on the guest's output and on the device's trace.
"""
import re
import struct

import pytest

import ncqguest
from ncqguest import Guest, Workload, read_trace

LIMITED_MS = 100        # read descriptor 1: total time limit, policy 0h
SHORT_MS = 20           # descriptors 2 (abort) and 3 (unavailable)
ABORT_LBA = 1000000     # sectors the drive retries for 200 ms
UNAVAIL_LBA = 2000000
FAULTS = (f"slow@{ABORT_LBA}+8:delay=200ms;"
          f"slow@{UNAVAIL_LBA}+8:delay=200ms")
ETIME = 62              # what the block layer returns for a CDL miss


def _kernel_has_cdl():
    release = ncqguest.image_manifest().get("kernel_release", "")
    m = re.match(r"(\d+)\.(\d+)", release)
    return bool(m) and (int(m[1]), int(m[2])) >= (6, 5)


pytestmark = pytest.mark.skipif(
    not _kernel_has_cdl(),
    reason="the image's kernel has no CDL support (6.5 and later have it; "
    "images/build-image.sh --debian trixie builds 6.12)")


def _desc(total_us=0, policy=0):
    """A descriptor with a total time limit (ACS-5 log 18h layout)."""
    b = bytearray(32)
    struct.pack_into("<I", b, 0, policy)        # total time policy: 3:0
    struct.pack_into("<I", b, 16, total_us)
    return bytes(b)


def _page(read_descs):
    b = bytearray(512)
    for i, d in enumerate(read_descs):
        b[64 + 32 * i:96 + 32 * i] = d
    return bytes(b)


GOOD = _page([_desc(LIMITED_MS * 1000, 0x0),
              _desc(SHORT_MS * 1000, 0xF),
              _desc(SHORT_MS * 1000, 0xD)])
BAD = bytearray(GOOD)
BAD[64 + 32 * 3 + 24] = 1           # descriptor 4: a reserved byte set

# ATA PASS-THROUGH(16): WRITE LOG EXT (PIO data-out) and READ LOG EXT
# (PIO data-in) of one page of log LL, page PP
WRITE_LOG = "85 0b 06 00 00 00 01 00 {ll} 00 {pp} 00 00 00 3f 00"
READ_LOG = "85 09 0e 00 00 00 01 00 {ll} 00 {pp} 00 00 00 2f 00"

SCRIPT = r"""
S=/sys/block/sda/device
D=/dev/sda
rawrite() { sg_raw -s 512 -i $1 $D WRITE_LOG >/dev/null 2>&1; }
rawread() { sg_raw -r 512 -o $1 $D $2 >/dev/null 2>&1; }
echo "cdl_supported $(cat $S/cdl_supported)"
echo "cdl_enable_boot $(cat $S/cdl_enable)"
rawrite /workload/good.bin; echo "write_good $?"
rawrite /workload/bad.bin; echo "write_bad $?"
rawread /results/log18.bin "READ_LOG_18"; echo "read_log $?"
# SET FEATURES (write cache) makes libata revalidate: it reads log 18h again
hdparm -W1 $D >/dev/null 2>&1
sleep 1
# the kernel's copy: MODE SENSE(10), control page 0Ah subpage 07h (T2A)
sg_raw -r 264 -o /results/t2a.bin $D 5a 00 0a 07 00 00 00 01 08 00 \
    >/dev/null 2>&1; echo "t2a $?"
echo 1 > $S/cdl_enable; echo "cdl_enable_on $(cat $S/cdl_enable)"
rawread /results/settings_on.bin "READ_LOG_30_4"
echo 0 > $S/cdl_enable; echo "cdl_enable_off $(cat $S/cdl_enable)"
rawread /results/settings_off.bin "READ_LOG_30_4"
echo 1 > $S/cdl_enable
# limited reads (hint 1) and, for comparison, reads without a hint, each
# beside the same best-effort load
for hint in 1 0; do
    fio --name=be$hint --filename=$D --rw=randread --bs=4k --direct=1 \
        --ioengine=libaio --iodepth=31 --runtime=3 --time_based \
        --randseed=7 --output-format=json --output=/results/be$hint.json \
        >/dev/null 2>&1 &
    sleep 0.5
    cdl-hint $hint --read $D 40 > /results/hint$hint.txt
    wait
done
dmesg -c > /dev/null
cdl-hint 2 --read $D 1 1 ABORT_LBA; dmesg -c > /results/abort.dmesg
cdl-hint 3 --read $D 1 1 UNAVAIL_LBA; dmesg -c > /results/unavail.dmesg
echo done
"""


def _script():
    s = SCRIPT.replace("WRITE_LOG", WRITE_LOG.format(ll="18", pp="00"))
    s = s.replace("READ_LOG_18", READ_LOG.format(ll="18", pp="00"))
    s = s.replace("READ_LOG_30_4", READ_LOG.format(ll="30", pp="04"))
    s = s.replace("ABORT_LBA", str(ABORT_LBA))
    return s.replace("UNAVAIL_LBA", str(UNAVAIL_LBA))


def _reads(text):
    """cdl-hint --read's lines: [(latency_us, errno)]"""
    return [(int(m[1]), int(m[2]))
            for m in re.finditer(r"^read \d+ (\d+) (\d+)$", text, re.M)]


@pytest.fixture(scope="module")
def run(tmp_path_factory, qemu_build, guest_image):
    work = tmp_path_factory.mktemp("cdl")
    trace = work / "device.trace"
    guest = Guest(work, disk_size="64G",
                  device=f"ncq-disk,model=st3400620as,cdl=on,"
                  f"faults={FAULTS},trace={trace}",
                  extra_args=["-trace", "ncq_disk_cdl_*"])
    res = guest.run(Workload(script=_script(),
                             files={"good.bin": GOOD, "bad.bin": bytes(BAD)}))
    assert "done" in res.output, res.output[-2000:]
    steps = dict(re.findall(r"^(\S+) (\S+)$", res.output, re.M))
    res.qemu_stderr = (work / "qemu.stderr").read_text(errors="replace")
    _, res.trace = read_trace(trace)
    return res, steps


def test_dump(run, tmp_path_factory):
    res, steps = run
    import json, os
    out = "/tmp/cdlrun/dump"
    os.makedirs(out, exist_ok=True)
    open(f"{out}/output.txt", "w").write(res.output)
    open(f"{out}/dmesg.txt", "w").write(res.dmesg)
    open(f"{out}/stderr.txt", "w").write(res.qemu_stderr)
    for k, v in res.files.items():
        open(f"{out}/{k}", "wb").write(v)
    json.dump(res.trace, open(f"{out}/trace.json", "w"))
