"""Soak: a long mixed workload with the firmware changed under it.

The guest runs phases of fio for a given span of guest time: random
reads over the whole stroke, random writes with fsync (FLUSH CACHE), and
a sequential writer that stamps its region with checksummed blocks, each
phase at another queue_depth (sysfs).  Meanwhile the host changes the
firmware policy, the starvation time-out and clustering over QMP every
few seconds.  At the end every stamped region is read back and verified.

Asserted: the workload and every fio run succeed, the verify pass finds
no bad block, libata logged no time-out, reset or failed command, the
drive is idle at the end (nothing hung), and the device trace, the
device's QMP counters and the guest's /proc/diskstats agree on how many
reads, writes and flushes there were.

By default a short soak (NCQ_SOAK_MINUTES=2 minutes of guest time, about
half a minute of wall time) runs; the issue's full soak is
NCQ_SOAK_MINUTES=30.
"""

import asyncio
import itertools
import os

import ncqguest
from ncqguest import Workload, read_trace

MINUTES = float(os.environ.get("NCQ_SOAK_MINUTES", "2"))
PHASE_S = 20                     # guest seconds per phase
DEPTHS = (32, 1, 8, 31, 4, 16)
STAMP_MB = 4                     # stamped (verified) region per phase
CAPACITY = 781422768

POLICIES = (
    {"policy": "fcfs"},
    {"policy": "sptf", "starvation-timeout-ns": 500_000_000},
    {"policy": "clook", "clustering": 0},
    {"policy": "aged-sptf", "aging-weight": 500},
    {"policy": "sstf", "clustering": 256},
    {"policy": "sptf", "starvation-timeout-ns": 0},
)


def phases():
    return max(1, int(MINUTES * 60 // PHASE_S))


def phase_job(i):
    """One phase: three concurrent jobs, all time-bounded in guest time
    except the stamping writer, which writes its region once."""
    stamp_off = 64 * (1 << 20) + i * STAMP_MB * (1 << 20)
    return f"""[global]
filename=/dev/sda
direct=1
ioengine=libaio
randrepeat=1
randseed={1000 + i}
[reads]
rw=randread
bs=4k
iodepth=16
offset=1G
size=350G
time_based=1
runtime={PHASE_S}
[writes]
rw=randwrite
bs=8k
iodepth=8
offset=2G
size=8G
fsync=16
time_based=1
runtime={PHASE_S}
[stamp]
rw=write
bs=64k
iodepth=4
offset={stamp_off}
size={STAMP_MB}M
verify=crc32c
do_verify=0
"""


def verify_job(n):
    return f"""[global]
filename=/dev/sda
direct=1
ioengine=libaio
bs=64k
iodepth=4
rw=read
verify=crc32c
verify_only=1
verify_fatal=1
[check]
offset={64 * (1 << 20)}
size={n * STAMP_MB}M
"""


def script(n):
    lines = ["#!/bin/sh", "echo none > /sys/block/sda/queue/scheduler"]
    for i in range(n):
        d = DEPTHS[i % len(DEPTHS)]
        lines += [
            f"echo {d} > /sys/block/sda/device/queue_depth",
            f"fio --output-format=json --output=$RESULTS/phase{i}.json "
            f"/workload/phase{i}.fio || echo PHASE-FAILED {i}",
        ]
    lines += [
        "fio --output-format=json --output=$RESULTS/verify.json "
        "/workload/verify.fio || echo VERIFY-FAILED",
        "sync",
        "cat /proc/diskstats > $RESULTS/diskstats",
        "echo soak-done",
    ]
    return "\n".join(lines) + "\n"


def test_soak(make_guest, tmp_path):
    n = phases()
    trace = tmp_path / "soak.trace"
    files = {f"phase{i}.fio": phase_job(i) for i in range(n)}
    files["verify.fio"] = verify_job(n)
    guest = make_guest(
        disk_size=str(CAPACITY * 512),
        device=f"ncq-disk,model=st3400620as,trace={trace}",
        timeout_s=int(600 + MINUTES * 60 * 2))

    async def churn(qmp):
        """Change the firmware every couple of seconds of wall time until
        QEMU goes away; return how many changes took effect and the last
        counters seen."""
        changes, info = 0, None
        for settings in itertools.cycle(POLICIES):
            try:
                await qmp.execute("ncq-disk-set", {"id": "disk0", **settings})
                changes += 1
                info = (await qmp.execute("query-ncq-disk",
                                          {"id": "disk0"}))[0]
            except Exception:
                break               # the guest is done and QEMU quit
            await asyncio.sleep(2)
        return changes, info

    res = guest.run(Workload(script=script(n), files=files),
                    qmp_actions=churn)
    changes, info = res.qmp
    assert res.status == 0, res.output[-3000:]
    assert "soak-done" in res.output
    assert "PHASE-FAILED" not in res.output, res.output[-3000:]
    assert "VERIFY-FAILED" not in res.output, res.output[-3000:]
    for bad in ("timeout", "hard resetting link", "failed command",
                "exception Emask", "I/O error"):
        d = res.dmesg_since_attach
        assert bad not in d, f"dmesg has '{bad}':\n{d[-3000:]}"

    _, recs = read_trace(trace)
    ops = {op: sum(r["op"] == op for r in recs) for op in "RWF"}
    verify = ncqguest.fio_json(res, "verify.json")["jobs"][0]
    verified_mb = verify["read"]["io_bytes"] / (1 << 20)
    guest_s = max(r["complete_ns"] for r in recs) / 1e9

    # /proc/diskstats of sda: reads, writes, flushes completed (requests)
    # since the disk appeared: the drive and its trace came with it (it is
    # plugged in at the snapshot point, or present from the boot), so the
    # partition scan's reads are in both.
    def sda(name):
        f = next(line.split() for line in res.files[name].decode()
                 .splitlines() if line.split()[2] == "sda")
        return [int(f[i]) for i in (3, 7, 18, 9)]
    reads, writes, flushes, written = sda("diskstats")
    w_sectors = sum(r["sectors"] for r in recs if r["op"] == "W")
    print(f"\nsoak: {n} phases, {guest_s:.0f} s of guest time in "
          f"{res.wall_s:.0f} s wall; {len(recs)} commands (R {ops['R']}, "
          f"W {ops['W']}, F {ops['F']}); {changes} firmware changes over "
          f"QMP; {verified_mb:.0f} MiB verified; guest diskstats R {reads} "
          f"W {writes} ({written} sectors; trace {w_sectors}) F {flushes}")
    assert guest_s >= n * PHASE_S
    assert verified_mb == n * STAMP_MB
    assert changes >= 2, "the firmware was never changed under the load"
    # The drive saw what Linux sent it.
    assert ops["R"] == reads, (ops, reads)
    # Linux flushes the cache once more at reboot, after diskstats was read.
    assert flushes <= ops["F"] <= flushes + 2, (ops["F"], flushes)
    # fsync on a block device sends an empty write with PREFLUSH: Linux
    # counts it as a write (of 0 sectors) and its flush as a flush, the
    # drive sees only the FLUSH CACHE.  So sectors must agree exactly and
    # the write count up to those empty writes.
    assert w_sectors == written, (w_sectors, written)
    assert ops["W"] <= writes <= ops["W"] + ops["F"], (ops, writes)
    # No command left behind: every accepted command completed.
    assert info is not None
    assert info["submitted"] >= info["completed-reads"] \
        + info["completed-writes"]
