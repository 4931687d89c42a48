"""Command Duration Limits (ACS-5) seen from Linux 6.12 (docs/cdl.md).

One boot of a guest on the model that declares CDL (seagate-exos-x18, a
current 7200 rpm enterprise SATA drive; cdl=auto takes the model's
`cdl = yes`) runs every step in turn:
libata's view of the feature (cdl_supported, cdl_enable), descriptors
written with WRITE LOG EXT through sg_raw's ATA PASS-THROUGH and read back
by the kernel, a descriptor page with a reserved field refused, reads with
duration limit hints (the image's cdl-hint helper sets the I/O priority
hint, as fio 3.36's cmdprio_hint would) under a best-effort load, and the
abort (0xF) and complete-unavailable (0xD) policies on reads the drive
retries for 200 ms (injected slow sectors).  Each test checks its step,
on the guest's output and on the device's trace.

Linux 6.12 fails a command whose limit was missed under either policy
with ETIME (scsi_check_sense() maps the sense ABORTED COMMAND 2Eh/0xh and
COMPLETED 55h/0Ah to a duration limit error), and quietly: libata and sd
print nothing for it, so the tests find the sense in the errno, and
libata's reading of log 10h or 0Fh in the device's trace events.

A second boot checks that cdl=on gives CDL to a model that does not declare
it (st3400620as: CDL detected, a policy-0xF miss aborts with ETIME) and
that cdl=off takes it from the one that does.
"""
import re
import struct

import pytest

import ncqguest
from ncqguest import Guest, Workload, read_trace

LIMITED_MS = 100        # read descriptor 1: total time limit, policy 0h
SHORT_MS = 20           # descriptors 2 (abort) and 3 (unavailable)
# sectors the drive retries for 200 ms, off the path of the limited reads
# (cdl-hint --read's default stride from sector 0: 1000000, 2000000...)
ABORT_LBA = 1500000
UNAVAIL_LBA = 2500000
# the same with NCQ off (queue depth 1): READ DMA EXT, descriptors 4 and 5
NQ_ABORT_LBA = 3500000
NQ_UNAVAIL_LBA = 4500000
FAULTS = ";".join(f"slow@{lba}+8:delay=200ms" for lba in
                  (ABORT_LBA, UNAVAIL_LBA, NQ_ABORT_LBA, NQ_UNAVAIL_LBA))
ETIME = 62              # what the block layer returns for a CDL miss
CDL_MODEL = "seagate-exos-x18"      # the shipped model that declares CDL


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


def _active_desc(active_us, policy):
    """A descriptor with a max active time (policy in bits 7:4)."""
    b = bytearray(32)
    struct.pack_into("<I", b, 0, policy << 4)
    struct.pack_into("<I", b, 4, active_us)
    return bytes(b)


def _page(read_descs):
    b = bytearray(512)
    for i, d in enumerate(read_descs):
        b[64 + 32 * i:96 + 32 * i] = d
    return bytes(b)


GOOD = _page([_desc(LIMITED_MS * 1000, 0x0),
              _desc(SHORT_MS * 1000, 0xF),
              _desc(SHORT_MS * 1000, 0xD),
              _active_desc(SHORT_MS * 1000, 0xF),
              _active_desc(SHORT_MS * 1000, 0xD)])
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
        --ioengine=libaio --iodepth=31 --runtime=4 --time_based --norandommap \
        --randseed=7 --output-format=json --output=/results/be$hint.json \
        >/dev/null 2>&1 &
    # start once the best-effort reads fill the queue
    while [ "$(awk '{print $1}' /sys/block/sda/inflight)" -lt 24 ]; do
        sleep 0.05
    done
    # other sectors for each run: none of them in the drive's buffer
    cdl-hint $hint --read $D 40 1000003 $((hint ? 0 : 250000)) \
        > /results/hint$hint.txt
    wait
done
dmesg -c > /dev/null
cdl-hint 2 --read $D 1 1 ABORT_LBA; dmesg -c > /results/abort.dmesg
cdl-hint 3 --read $D 1 1 UNAVAIL_LBA; dmesg -c > /results/unavail.dmesg
# NCQ off: READ DMA EXT with the index in FEATURE; libata asks for the
# sense with REQUEST SENSE DATA EXT
echo 1 > $S/queue_depth; echo "queue_depth_1 $(cat $S/queue_depth)"
cdl-hint 4 --read $D 1 1 NQ_ABORT_LBA; dmesg -c > /results/nq_abort.dmesg
cdl-hint 5 --read $D 1 1 NQ_UNAVAIL_LBA; dmesg -c > /results/nq_unavail.dmesg
echo done
"""


def _script():
    s = SCRIPT.replace("WRITE_LOG", WRITE_LOG.format(ll="18", pp="00"))
    s = s.replace("READ_LOG_18", READ_LOG.format(ll="18", pp="00"))
    s = s.replace("READ_LOG_30_4", READ_LOG.format(ll="30", pp="04"))
    s = s.replace("NQ_ABORT_LBA", str(NQ_ABORT_LBA))
    s = s.replace("NQ_UNAVAIL_LBA", str(NQ_UNAVAIL_LBA))
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
    # The image spans nearly the whole drive (14 TiB of its 14.55; qcow2
    # is sparse): random reads seek across the platters as on the real
    # drive, where a 64 GB image would keep them in its outermost 0.4 %.
    guest = Guest(work, disk_size="14T",
                  device=f"ncq-disk,model={CDL_MODEL},"
                  f"faults={FAULTS},trace={trace}",
                  extra_args=["-trace", "ncq_disk_cdl_*",
                              "-trace", "ncq_disk_read_log"])
    res = guest.run(Workload(script=_script(),
                             files={"good.bin": GOOD, "bad.bin": bytes(BAD)}))
    assert "done" in res.output, res.output[-2000:]
    steps = dict(re.findall(r"^(\S+) (\S+)$", res.output, re.M))
    res.qemu_stderr = (work / "qemu.stderr").read_text(errors="replace")
    _, res.trace = read_trace(trace)
    return res, steps



def _ranks(trace, cdl):
    return [r for r in trace if r["cdl"] == cdl]


def test_cdl_supported(run):
    res, steps = run
    assert steps["cdl_supported"] == "1"
    assert steps["cdl_enable_boot"] == "0"


def test_cdl_enable_toggles(run):
    """sysfs cdl_enable follows, and so does the drive's CDL enabled bit
    (IDENTIFY DEVICE data log, Current Settings page, qword 1 bit 21)."""
    res, steps = run
    assert steps["cdl_enable_on"] == "1"
    assert steps["cdl_enable_off"] == "0"
    on = struct.unpack_from("<Q", res.files["settings_on.bin"], 8)[0]
    off = struct.unpack_from("<Q", res.files["settings_off.bin"], 8)[0]
    assert on >> 63 and off >> 63, "the settings qword is valid"
    assert on & (1 << 21) and not off & (1 << 21)
    assert "SET FEATURES 0x0d on 1" in res.qemu_stderr
    assert "SET FEATURES 0x0d on 0" in res.qemu_stderr


def test_descriptors_written_and_read_by_the_kernel(run):
    """The page written is the page the drive gives back, and after a
    revalidation the kernel's T2A mode page carries its limits (in units
    of 10 ms).  6.12's libata takes every descriptor's policies from the
    log's first dword (the header) rather than the descriptor's own, so
    only the limits are compared."""
    res, steps = run
    assert steps["write_good"] == "0"
    assert res.files["log18.bin"] == GOOD
    assert steps["t2a"] == "0"
    t2a = res.files["t2a.bin"]
    page = 8 + int.from_bytes(t2a[6:8], "big")     # after the header
    assert t2a[page + 1] == 0x07, "subpage 07h (T2A)"
    guideline = [int.from_bytes(t2a[page + 8 + 32 * i + 10:
                                    page + 8 + 32 * i + 12], "big")
                 for i in range(7)]
    assert guideline == [LIMITED_MS // 10, SHORT_MS // 10,
                         SHORT_MS // 10, 0, 0, 0, 0]


def test_reserved_field_refused(run):
    """A page with a reserved byte set: ABRT, and the drive keeps the
    page it had (read back after the refused write)."""
    res, steps = run
    assert steps["write_bad"] != "0"
    assert res.files["log18.bin"] == GOOD
    assert "log refused: read descriptor 4: reserved fields set" in \
        res.qemu_stderr


def test_limited_reads_within_limit_while_best_effort_starve(run):
    """Beside 31 best-effort random reads in flight, reads with hint 1
    (total time limit 100 ms) complete within it; the same reads without
    a hint wait far longer, and the best-effort reads wait longest."""
    res, steps = run
    limited = _reads(res.files["hint1.txt"].decode())
    plain = _reads(res.files["hint0.txt"].decode())
    assert len(limited) == 40 and len(plain) == 40
    assert all(err == 0 for _, err in limited + plain)
    worst_limited = max(lat for lat, _ in limited) / 1000
    worst_plain = max(lat for lat, _ in plain) / 1000
    assert worst_plain > 2 * LIMITED_MS, worst_plain
    be = ncqguest.fio_json(res, "be1.json")["jobs"][0]["read"]
    assert be["clat_ns"]["max"] / 1e6 > 5 * LIMITED_MS
    # the drive saw the hint: CDL index 1, every one within its limit
    drive = [r for r in _ranks(res.trace, 1) if r["lba"] not in
             (ABORT_LBA, UNAVAIL_LBA)]
    assert len(drive) >= 40
    assert {r["cdl_outcome"] for r in drive} == {"met"}
    assert max(r["complete_ns"] - r["arrival_ns"] for r in drive) <= \
        LIMITED_MS * 1e6



def test_abort_policy(run):
    """Policy 0xF: the drive aborts the read at its 20 ms limit (an NCQ
    error); libata reads log 10h, whose sense fails the read with ETIME."""
    res, steps = run
    lat, err = _reads(res.output)[0]
    assert err == ETIME
    rec, = [r for r in _ranks(res.trace, 2) if r["lba"] == ABORT_LBA]
    assert rec["cdl_outcome"] == "abort-active"
    assert rec["complete_ns"] - rec["arrival_ns"] == SHORT_MS * 10**6
    assert re.search(r"tag \d+ CDL index 2: abort-active\n"
                     r"(.*\n)*?.*READ LOG (DMA )?EXT log 0x10", res.qemu_stderr)


def test_unavailable_policy(run):
    """Policy 0xD: the drive completes the read at its 20 ms limit with
    sense DATA CURRENTLY UNAVAILABLE; libata reads the Sense Data for
    Successful NCQ Commands log (0Fh), and the read fails with ETIME."""
    res, steps = run
    lat, err = _reads(res.output)[1]
    assert err == ETIME
    rec, = [r for r in _ranks(res.trace, 3) if r["lba"] == UNAVAIL_LBA]
    assert rec["cdl_outcome"] == "unavailable"
    assert rec["complete_ns"] - rec["arrival_ns"] <= SHORT_MS * 10**6
    assert re.search(r"READ LOG (DMA )?EXT log 0x0f page 0x00 count 2\n"
                     r".*Successful NCQ Commands read, tags 0x0*"
                     f"{1 << rec['tag']:x}\n", res.qemu_stderr)



def test_non_queued_policies(run):
    """NCQ off (queue depth 1, cdl-tools' group 05): READ DMA EXT with the
    index in FEATURE, max active time 20 ms.  Abort (Fh) ends it with
    ERR and status bit 1, complete-unavailable (Dh) with bit 1 alone;
    libata reads the sense with REQUEST SENSE DATA EXT (DEVICE A0h, no
    LBA bit) and both reads fail with ETIME.  Before the drive answered
    in the LBA field whatever the LBA bit, the Fh read failed with EIO
    (sense NOT READY D6h/30h, dmesg) and the Dh read succeeded."""
    res, steps = run
    assert steps["queue_depth_1"] == "1"
    reads = _reads(res.output)
    assert [err for _, err in reads[2:4]] == [ETIME, ETIME], reads
    for lba, outcome in ((NQ_ABORT_LBA, "abort-active"),
                         (NQ_UNAVAIL_LBA, "unavailable")):
        rec, = [r for r in res.trace if r["lba"] == lba]
        assert rec["cdl_outcome"] == outcome
        assert rec["complete_ns"] - rec["arrival_ns"] <= SHORT_MS * 10**6
    for f in ("nq_abort.dmesg", "nq_unavail.dmesg"):
        assert b"Not Ready" not in res.files[f], res.files[f]

# cdl=on on a model without CDL, cdl=off on the one with it: sda is
# st3400620as with cdl=on, sdb seagate-exos-x18 with cdl=off.
ANY_SCRIPT = r"""
D=/dev/sda
echo "sda_cdl_supported $(cat /sys/block/sda/device/cdl_supported)"
echo "sdb_cdl_supported $(cat /sys/block/sdb/device/cdl_supported)"
echo sda_model $(cat /sys/block/sda/device/model)
echo sdb_model $(cat /sys/block/sdb/device/model)
sg_raw -s 512 -i /workload/good.bin $D WRITE_LOG >/dev/null 2>&1
echo "write_good $?"
echo 1 > /sys/block/sda/device/cdl_enable
echo "cdl_enable_on $(cat /sys/block/sda/device/cdl_enable)"
cdl-hint 2 --read $D 1 1 ABORT_LBA
echo done
"""


@pytest.fixture(scope="module")
def any_model(tmp_path_factory, qemu_build, guest_image):
    work = tmp_path_factory.mktemp("cdl-any")
    trace = work / "device.trace"
    extra = ncqguest.multi_drive_args(
        work / "extra", [f"ncq-disk,model={CDL_MODEL},cdl=off"])
    guest = Guest(work / "guest", disk_size="64G", snapshot=False,
                  device=f"ncq-disk,model=st3400620as,cdl=on,"
                  f"faults={FAULTS},trace={trace}",
                  extra_args=extra)
    script = ANY_SCRIPT.replace("WRITE_LOG",
                                WRITE_LOG.format(ll="18", pp="00"))
    res = guest.run(Workload(script=script.replace("ABORT_LBA",
                                                   str(ABORT_LBA)),
                             files={"good.bin": GOOD}))
    assert "done" in res.output, res.output[-2000:]
    steps = dict(re.findall(r"^(\S+) (\S+)$", res.output, re.M))
    _, res.trace = read_trace(trace)
    return res, steps


def test_cdl_on_any_hard_disk_model(any_model):
    """st3400620as declares no CDL; with cdl=on libata finds it, the
    descriptors are taken, and a policy-0xF miss is aborted at its limit
    and reaches the program as ETIME."""
    res, steps = any_model
    assert steps["sda_model"] == "ST3400620AS"
    assert steps["sda_cdl_supported"] == "1"
    assert steps["write_good"] == "0"
    assert steps["cdl_enable_on"] == "1"
    lat, err = _reads(res.output)[0]
    assert err == ETIME
    rec, = [r for r in _ranks(res.trace, 2) if r["lba"] == ABORT_LBA]
    assert rec["cdl_outcome"] == "abort-active"
    assert rec["complete_ns"] - rec["arrival_ns"] == SHORT_MS * 10**6


def test_cdl_off_removes_it(any_model):
    """cdl=off: the model that declares CDL shows none to the kernel."""
    res, steps = any_model
    assert steps["sdb_model"].startswith("ST16000NM000J")
    assert steps["sdb_cdl_supported"] == "0"
