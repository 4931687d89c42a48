"""ncq-disk as an unmodified Linux guest sees it: NCQ and NCQ priority
detection, the queue depth Linux sets reaching the drive, deterministic
runs under -icount, reordering by the firmware policy, write cache + flush
with verified data.  (Bad configurations: test_bad_input.py.)

Guest boots are the expensive part (about 15 s each under TCG), so the
module starts four boots at once on a two-worker pool and each test waits
for the boots it reads.  Every boot has the full 400 GB ST3400620AS (a
sparse qcow2), the device trace on, and a fixed guest RTC date:

  sptf-a, sptf-b  identical (b starts 1.1 s later): policy=sptf; the script
                  checks NCQ priority, runs 4 KiB randread iodepth 32 at
                  queue_depth 4 (region A) and 32 (region B), over the full
                  stroke (region D), then randwrite + fsync + crc32c verify
                  (region C)
  fcfs            policy=fcfs, ncq-prio=off; the region B and D jobs
  qd8-notiming    queue-depth=8, timing=off; the region B and D jobs

The fio regions keep each phase's commands apart in the device trace
(by LBA), away from the partition-table reads at boot (LBA 0 and the end).
"""

import concurrent.futures
import statistics
import subprocess
import time

import pytest

import ncqguest
from ncqguest import Workload, fio_json, read_trace

SECTOR = 512
MiB = 1 << 20
REGION_A = (128 * MiB, 256 * MiB)      # (offset, size) queue_depth 4 reads
REGION_B = (384 * MiB, 256 * MiB)      # queue_depth 32 reads
REGION_C = (640 * MiB, 2 * MiB)        # writes + verify
# The whole ST3400620AS (781,422,768 sectors; a sparse qcow2) so that a
# phase can seek over the full stroke: region D is all of it past 1 GiB,
# short of the last MiB (the partition-table reads at boot).
CAPACITY = 781422768
REGION_D = (1024 * MiB, CAPACITY * SECTOR - 1024 * MiB - MiB)
READ_IOS_FULL = 600
READ_IOS_QD4 = 800
READ_IOS_QD32 = 1500
WRITE_BLOCKS = REGION_C[1] // 4096     # 512 writes, each read back
FSYNC_EVERY = 32

DEV = "/sys/block/sda/device"


def fio_randread(region, ios):
    return ncqguest.FIO_GLOBAL + f"""[randread]
rw=randread
offset={region[0]}
size={region[1]}
number_ios={ios}
"""


FIO_WRITE_VERIFY = ncqguest.FIO_GLOBAL + f"""[randwrite-verify]
rw=randwrite
offset={REGION_C[0]}
size={REGION_C[1]}
fsync={FSYNC_EVERY}
end_fsync=1
verify=crc32c
do_verify=1
verify_fatal=1
"""

RUN_FIO = "fio --output-format=json --output=$RESULTS/{0}.json {0}.fio\n"

# Shared by the two identical sptf boots.
SCRIPT_MAIN = f"""
set -e
echo "prio_supported $(cat {DEV}/ncq_prio_supported)"
if echo 1 > {DEV}/ncq_prio_enable; then echo "prio_enable_write ok"; \
else echo "prio_enable_write failed"; fi
echo "prio_enable $(cat {DEV}/ncq_prio_enable)"
echo 0 > {DEV}/ncq_prio_enable
echo none > /sys/block/sda/queue/scheduler
echo 4 > {DEV}/queue_depth
echo "queue_depth_set $(cat {DEV}/queue_depth)"
{RUN_FIO.format("qd4")}
echo 32 > {DEV}/queue_depth
echo "queue_depth_set $(cat {DEV}/queue_depth)"
{RUN_FIO.format("qd32")}
{RUN_FIO.format("full")}
{RUN_FIO.format("write")}
"""

# fcfs and qd8-notiming boots: the same region-B job as the sptf boots.
SCRIPT_QD32 = f"""
set -e
echo "prio_supported $(cat {DEV}/ncq_prio_supported)"
if echo 1 > {DEV}/ncq_prio_enable 2>/dev/null; then \
echo "prio_enable_write ok"; else echo "prio_enable_write failed"; fi
echo none > /sys/block/sda/queue/scheduler
{RUN_FIO.format("qd32")}
{RUN_FIO.format("full")}
"""

FILES = {"qd4.fio": fio_randread(REGION_A, READ_IOS_QD4),
         "full.fio": fio_randread(REGION_D, READ_IOS_FULL),
         "qd32.fio": fio_randread(REGION_B, READ_IOS_QD32),
         "write.fio": FIO_WRITE_VERIFY}

BOOTS = {
    "sptf-a": ("policy=sptf", SCRIPT_MAIN),
    "sptf-b": ("policy=sptf", SCRIPT_MAIN),
    "fcfs": ("policy=fcfs,ncq-prio=off", SCRIPT_QD32),
    "qd8-notiming": ("queue-depth=8,timing=off", SCRIPT_QD32),
}


class Boot:
    """One finished guest run: its Result, trace path and parsed trace."""

    def __init__(self, name, guest, result, trace, started, ended):
        self.name = name
        self.guest = guest
        self.res = result
        self.trace = trace
        self.wall_s = ended - started
        if trace.exists():
            self.header, self.records = read_trace(trace)
        else:
            self.header, self.records = None, None

    def lines(self, key):
        """Values of the script's 'key value' output lines, in order."""
        return [line.split(None, 1)[1] for line in self.res.output.splitlines()
                if line.startswith(key + " ")]

    def region(self, region, op="R"):
        lo = region[0] // SECTOR
        hi = (region[0] + region[1]) // SECTOR
        return [r for r in self.records
                if r["op"] == op and lo <= r["lba"] < hi]


def _boot(workdir, name):
    props, script = BOOTS[name]
    trace = workdir / f"{name}.trace"
    # A fixed RTC date: with -rtc clock=vm alone the guest's date is the
    # host's, and runs started in different seconds differ.
    guest = ncqguest.Guest(
        workdir / name,
        device=f"ncq-disk,model=st3400620as,{props},trace={trace}",
        disk_size=str(CAPACITY * SECTOR), timeout_s=400,
        rtc_base=ncqguest.FIXED_RTC_BASE)
    if name == "sptf-b":
        time.sleep(1.1)     # start in another second of host time than -a
    t0 = time.monotonic()
    res = guest.run(Workload(script=script, files=FILES,
                             collect=(f"{DEV}/queue_depth",
                                      f"{DEV}/ncq_prio_supported")))
    return Boot(name, guest, res, trace, t0, time.monotonic())


@pytest.fixture(scope="module")
def boots(tmp_path_factory, qemu_build, guest_image):
    """name -> Future[Boot]; all four boots start at once (two at a time)."""
    workdir = tmp_path_factory.mktemp("device")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = {n: pool.submit(_boot, workdir, n) for n in BOOTS}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def get(boots, name):
    b = boots[name].result()
    assert b.res.status == 0, f"{name}: workload failed:\n{b.res.output}"
    return b


def latencies_ms(records):
    return [(r["complete_ns"] - r["arrival_ns"]) / 1e6 for r in records]


# 1 ---------------------------------------------------------------------


def test_ncq_and_ncq_priority_detected(boots):
    on = get(boots, "sptf-a")
    assert "NCQ (depth 32)" in on.res.dmesg, on.res.dmesg
    assert "Features: NCQ-prio" in on.res.dmesg
    assert on.lines("prio_supported") == ["1"]
    assert on.lines("prio_enable_write") == ["ok"]
    assert on.lines("prio_enable") == ["1"]

    off = get(boots, "fcfs")                       # ncq-prio=off
    assert "NCQ (depth 32)" in off.res.dmesg
    assert "NCQ-prio" not in off.res.dmesg
    assert off.lines("prio_supported") == ["0"]
    assert off.res.collected[f"{DEV}/ncq_prio_supported"] == "0"
    # libata refuses to enable priority the drive does not advertise
    assert off.lines("prio_enable_write") == ["failed"]


# 2 ---------------------------------------------------------------------


def test_queue_depth_from_sysfs_reaches_the_drive(boots):
    """queue_len in the trace counts the commands already in the drive when
    a command arrives, not counting itself (model.c: queue_len_at_arrival =
    outstanding before the increment; the first command of an idle drive
    has 0), so Linux's queue_depth N allows at most N - 1."""
    b = get(boots, "sptf-a")
    assert b.lines("queue_depth_set") == ["4", "32"]
    assert fio_json(b.res, "qd4.json")["jobs"][0]["read"]["total_ios"] \
        == READ_IOS_QD4
    qd4 = b.region(REGION_A)
    qd32 = b.region(REGION_B)
    # the block layer may merge two adjacent 4 KiB reads: count sectors
    assert sum(r["sectors"] for r in qd4) == READ_IOS_QD4 * 8
    assert sum(r["sectors"] for r in qd32) == READ_IOS_QD32 * 8
    max4 = max(r["queue_len"] for r in qd4)
    max32 = max(r["queue_len"] for r in qd32)
    iops4 = fio_json(b.res, "qd4.json")["jobs"][0]["read"]["iops"]
    iops32 = fio_json(b.res, "qd32.json")["jobs"][0]["read"]["iops"]
    print(f"\nmax queue_len: queue_depth 4 -> {max4}, 32 -> {max32}; "
          f"IOPS {iops4:.1f} and {iops32:.1f}")
    assert max4 == 3
    assert max32 == 31


def test_queue_depth_property_sets_linux_queue_depth(boots):
    b = get(boots, "qd8-notiming")
    assert "NCQ (depth 8)" in b.res.dmesg, b.res.dmesg
    assert b.res.collected[f"{DEV}/queue_depth"] == "8"
    if b.records:               # timing=off may write no records
        assert max(r["queue_len"] for r in _qd32(b)) == 7


def test_queue_depth_8_keeps_ncq_on(boots):
    """queue-depth=8 (the README's and demo.sh --help's example): libata
    numbers NCQ tags round-robin over the AHCI port's 32 whatever the
    drive's depth, and only keeps at most 8 outstanding (docs/device.md,
    "Queue depth below 32").  The drive takes every tag, so fio at
    iodepth 32 runs without one failed command and NCQ stays on (it used
    to end in "NCQ disabled due to excessive errors" on 6.1)."""
    b = get(boots, "qd8-notiming")
    dmesg = b.res.dmesg
    assert "NCQ disabled" not in dmesg, dmesg
    assert "failed command" not in dmesg, dmesg
    assert "NCQ (depth 8)" in dmesg, dmesg
    assert b.res.collected[f"{DEV}/queue_depth"] == "8"
    for name, ios in (("qd32.json", READ_IOS_QD32),
                      ("full.json", READ_IOS_FULL)):
        out = fio_json(b.res, name)
        assert out["global options"]["iodepth"] == "32"
        job = out["jobs"][0]
        assert job["error"] == 0, job
        assert job["read"]["total_ios"] == ios, job["read"]


# 3 ---------------------------------------------------------------------


def _fio_stable(job):
    """What must be identical between two deterministic runs: error,
    counts, guest-clock runtimes and the latency distributions (slat, clat,
    lat, with clat's full percentile dict).  Left out: fio's
    'time'/'timestamp'/'timestamp_ms' (a date, from the guest's RTC) and
    'usr_cpu'/'sys_cpu'/'ctx' (CPU accounting, not what is tested)."""
    out = {"job_runtime": job["job_runtime"], "error": job["error"]}
    for d in ("read", "write", "sync"):
        if d not in job:
            continue
        sec = job[d]
        out[d] = {k: sec[k] for k in sec
                  if k in ("total_ios", "io_bytes", "runtime", "iops", "bw",
                           "short_ios", "drop_ios", "lat_ns", "clat_ns",
                           "slat_ns")}
    return out


def test_identical_runs_are_identical(boots):
    """Two boots with identical settings, run at the same time on two
    cores, the second started 1.1 s later (so host timing and the host's
    date differ): the whole device trace (boot, reads at queue_depth 4 and
    32, writes, FLUSHes, verify reads) and fio's figures agree to the
    nanosecond."""
    a = get(boots, "sptf-a")
    b = get(boots, "sptf-b")
    ta, tb = a.trace.read_bytes(), b.trace.read_bytes()
    assert len(a.records) >= READ_IOS_QD4 + READ_IOS_QD32 + 2 * WRITE_BLOCKS
    assert ta == tb, "device traces of two identical runs differ"
    for name in ("qd4.json", "qd32.json", "write.json"):
        ja = fio_json(a.res, name)["jobs"][0]
        jb = fio_json(b.res, name)["jobs"][0]
        assert _fio_stable(ja) == _fio_stable(jb), name
        assert ja["read"]["clat_ns"]["percentile"] \
            == jb["read"]["clat_ns"]["percentile"], name
    assert a.res.output == b.res.output
    last = max(r["complete_ns"] for r in a.records)
    q = fio_json(a.res, "qd32.json")["jobs"][0]["read"]["clat_ns"]
    print(f"\n{len(a.records)} trace records ({len(ta)} bytes) identical, "
          f"last completion at {last / 1e9:.2f} s of guest time; qd32 clat "
          f"mean {q['mean']:.0f} ns, p99 {q['percentile']['99.000000']} ns "
          f"in both runs")
    print(f"wall time per boot (two at once on 2 cores): {a.wall_s:.1f} s "
          f"and {b.wall_s:.1f} s for {last / 1e9:.1f} s of guest time")


def test_fsync_reaches_the_model_as_flush(boots):
    """Each fsync is a FLUSH CACHE that goes through the model (an F record
    in the trace) and no command times out in the guest."""
    b = get(boots, "sptf-a")
    flushes = [r for r in b.records if r["op"] == "F"]
    writes = b.region(REGION_C, op="W")
    print(f"\n{len(flushes)} F records, destage time max "
          f"{max((r['transfer_ns'] for r in flushes), default=0) / 1e6:.1f}"
          f" ms; {sum(r['sectors'] for r in writes) // 8} of {WRITE_BLOCKS} "
          f"writes traced")
    assert len(flushes) >= WRITE_BLOCKS // FSYNC_EVERY - 1
    # every write went through the model (queued: NCQ stayed on) ...
    assert sum(r["sectors"] for r in writes) == WRITE_BLOCKS * 8
    # ... and no command timed out
    assert "failed command" not in b.res.dmesg
    assert "NCQ disabled" not in b.res.dmesg


# 4 ---------------------------------------------------------------------


def _qd32(boot):
    recs = boot.region(REGION_B)
    assert sum(r["sectors"] for r in recs) == READ_IOS_QD32 * 8
    return recs


def test_sptf_reorders_and_fcfs_does_not(boots):
    sptf = get(boots, "sptf-a")
    fcfs = get(boots, "fcfs")
    s, f = _qd32(sptf), _qd32(fcfs)
    # FCFS: media accesses complete in arrival order; only a read-cache
    # hit (served from the buffer at once) may overtake queued misses
    misses = [r for r in f if r["cache"] == "miss"]
    hits = len(f) - len(misses)
    assert [r["arrival_ns"] for r in misses] \
        == sorted(r["arrival_ns"] for r in misses)
    assert hits < len(f) // 50
    assert all(r["delay_count"] <= hits for r in f)
    assert sum(r["delay_count"] > 0 for r in f) <= 31 * hits
    assert max(r["queue_len"] for r in f) == 31      # it was queued, deep
    # SPTF at depth 32: most commands are overtaken by later ones
    overtaken = sum(r["delay_count"] > 0 for r in s)
    lat_s, lat_f = latencies_ms(s), latencies_ms(f)
    print(f"\nsptf: {overtaken}/{len(s)} overtaken, max delay_count "
          f"{max(r['delay_count'] for r in s)}, drive latency median "
          f"{statistics.median(lat_s):.1f} ms max {max(lat_s):.1f} ms")
    print(f"fcfs: {sum(r['delay_count'] > 0 for r in f)}/{len(f)} "
          f"overtaken ({hits} cache hits), drive latency median "
          f"{statistics.median(lat_f):.1f} ms max {max(lat_f):.1f} ms")
    assert overtaken > len(s) // 2
    assert max(r["delay_count"] for r in s) > 31
    assert max(lat_s) > 2 * max(lat_f)               # the starved tail


def test_sptf_beats_fcfs_over_the_full_stroke(boots):
    """Random reads over the whole 400 GB disk at queue depth 32: SPTF
    serves more than FCFS (targets: Yu et al. Table V), and so it does
    over the 256 MiB of region B, where every seek is short and only
    rotation differs (the firmware plans with a settle allowance,
    plan_settle_ms in st3400620as.ncqm, so its picks do not miss their
    sector)."""
    sptf = get(boots, "sptf-a")
    fcfs = get(boots, "fcfs")
    full = {n: fio_json(b.res, "full.json")["jobs"][0]["read"]
            for n, b in (("sptf", sptf), ("fcfs", fcfs))}
    short = {n: fio_json(b.res, "qd32.json")["jobs"][0]["read"]["iops"]
             for n, b in (("sptf", sptf), ("fcfs", fcfs))}
    recs = {n: b.region(REGION_D) for n, b in (("sptf", sptf),
                                                ("fcfs", fcfs))}
    rot = {n: statistics.mean(r["rotate_ns"] for r in recs[n]) / 1e6
           for n in recs}
    seek = {n: statistics.mean(r["seek_ns"] for r in recs[n]) / 1e6
            for n in recs}
    short_rot = {n: statistics.mean(r["rotate_ns"] for r in _qd32(b)) / 1e6
                 for n, b in (("sptf", sptf), ("fcfs", fcfs))}
    print(f"\nfull stroke, qd32: sptf {full['sptf']['iops']:.1f} IOPS "
          f"(mean seek {seek['sptf']:.2f} ms, rotation {rot['sptf']:.2f} ms)"
          f", fcfs {full['fcfs']['iops']:.1f} IOPS (seek "
          f"{seek['fcfs']:.2f} ms, rotation {rot['fcfs']:.2f} ms)")
    print(f"256 MiB span, qd32: sptf {short['sptf']:.1f} IOPS (rotation "
          f"{short_rot['sptf']:.2f} ms), fcfs {short['fcfs']:.1f} IOPS "
          f"(rotation {short_rot['fcfs']:.2f} ms)")
    for n in recs:
        assert sum(r["sectors"] for r in recs[n]) == READ_IOS_FULL * 8
        assert full[n]["total_ios"] == READ_IOS_FULL
    assert full["sptf"]["iops"] > 1.3 * full["fcfs"]["iops"]
    assert seek["sptf"] < seek["fcfs"] / 2
    assert short["sptf"] > short["fcfs"]
    assert short_rot["sptf"] < short_rot["fcfs"]


def test_timing_off_completes_without_model_delay(boots):
    """timing=off: completion as soon as host I/O is done, like ide-hd.
    The device then writes the trace header but no records (the model is
    not consulted), which is checked too."""
    b = get(boots, "qd8-notiming")
    sptf = get(boots, "sptf-a")
    job = fio_json(b.res, "qd32.json")["jobs"][0]
    assert job["read"]["total_ios"] == READ_IOS_QD32
    iops_t = fio_json(sptf.res, "qd32.json")["jobs"][0]["read"]["iops"]
    print(f"\ntiming=off: {job['read']['iops']:.0f} IOPS vs {iops_t:.0f} "
          f"with the st3400620as model; {len(b.records)} trace records")
    assert job["read"]["iops"] > 5 * iops_t
    assert b.header["model"] == "st3400620as"
    if b.records:
        recs = _qd32(b)
        assert all(r["seek_ns"] == 0 and r["rotate_ns"] == 0 for r in recs)


# 5 ---------------------------------------------------------------------


def test_write_cache_fsync_and_verify(boots):
    """randwrite with fsync every 32 writes and a final fsync, then every
    block read back and checked (crc32c, verify_fatal), with timing on, in
    both sptf boots.  (Whether the fsyncs went through the model is
    test_fsync_reaches_the_model_as_flush.)"""
    for name in ("sptf-a", "sptf-b"):
        b = get(boots, name)
        assert "Write cache: enabled" in b.res.dmesg
        job = fio_json(b.res, "write.json")["jobs"][0]
        assert job["error"] == 0
        assert job["write"]["total_ios"] == WRITE_BLOCKS
        # verify=crc32c, verify_fatal=1: every block read back, intact
        assert job["read"]["total_ios"] == WRITE_BLOCKS
        assert job["read"]["io_bytes"] == REGION_C[1]
        # fio counts the fsyncs after writes 32, 64, ... 480 (15); the one
        # at the end of the job is end_fsync's
        assert job["sync"]["total_ios"] >= WRITE_BLOCKS // FSYNC_EVERY - 1
        writes = b.region(REGION_C, op="W")
        hits = sum(r["cache"] == "hit" for r in writes)
        print(f"\n{name}: {job['write']['total_ios']} writes ({hits} traced "
              f"as write-cache hits), {job['sync']['total_ios']} fsyncs "
              f"(max {job['sync']['lat_ns']['max'] / 1e9:.2f} s), "
              f"{job['read']['total_ios']} blocks verified")
        assert hits == len(writes) > 0               # write-back cache on


# 6: bad input at startup is in test_bad_input.py


REPLAY_JOB = """
[global]
filename=/dev/sda
direct=1
ioengine=libaio
bs=4k
randrepeat=1
size=2G
[writes]
rw=randwrite
iodepth=8
number_ios=300
fsync=32
[reads]
stonewall
rw=randread
iodepth=32
number_ios=600
"""


def test_guest_trace_replays_in_ncq_sim(make_guest, ncq_sim, tmp_path):
    """A trace captured in a guest run (queued reads and writes, the
    write-back cache, FLUSH CACHE from fsync), replayed through ncq-sim with
    the same model and seed, gives every command the same completion time.
    The sptf boots' drive and disk, so the run restores their snapshot
    instead of booting one of its own (a boot is most of a run's cost)."""
    dev_trace = tmp_path / "device.trace"
    sim_trace = tmp_path / "sim.trace"
    res = make_guest(device=f"ncq-disk,model=st3400620as,"
                     f"{BOOTS['sptf-a'][0]},trace={dev_trace}",
                     disk_size=str(CAPACITY * SECTOR)).run(
                         Workload(fio=REPLAY_JOB))
    assert res.status == 0, res.output
    subprocess.run([str(ncq_sim), "--replay", str(dev_trace), "--seed", "1",
                    "--trace", str(sim_trace), "--quiet"], check=True,
                   capture_output=True)

    def completions(path):
        rows = [line.split(",") for line in path.read_text().splitlines()
                if line[:1].isdigit()]
        # arrival, op, lba identify a command; complete_ns is column 8
        return {(int(r[6]), r[1], int(r[2])): int(r[8]) for r in rows}

    dev, sim = completions(dev_trace), completions(sim_trace)
    ops = {k[1] for k in dev}
    assert {"R", "W", "F"} <= ops, ops
    assert len(dev) >= 900
    differ = [(k, dev[k], sim.get(k)) for k in dev if sim.get(k) != dev[k]]
    assert not differ, f"{len(differ)} of {len(dev)} differ, first {differ[:3]}"
