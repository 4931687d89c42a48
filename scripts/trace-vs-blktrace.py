#!/usr/bin/env python3
"""The worked example of docs/kernel-testing.md: one guest run with
blktrace on /dev/sda while fio reads at random, 8 deep, under mq-deadline;
prints the block layer's view (blkparse: D = issued to the driver, C =
completed) next to the drive's (the device trace: arrival, dispatch by the
firmware, completion, delay count, reason) for the same requests, matched
by sector.

    python3 scripts/trace-vs-blktrace.py [--rows 12] [--keep DIR]
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import pyrun  # scripts/: the package roots, pyproject.toml
pyrun.ensure()
import ncqguest  # noqa: E402
from ncqguest import Guest, Workload, read_trace  # noqa: E402

JOB = ncqguest.FIO_GLOBAL + """[r]
rw=randread
iodepth=8
number_ios=400
"""
SCRIPT = """echo mq-deadline > /sys/block/sda/queue/scheduler
blktrace -d /dev/sda -o - > /tmp/bt.bin &
bt=$!
sleep 1
fio --output-format=json --output=$RESULTS/fio.json /workload/job.fio
sleep 1
kill -INT $bt
wait $bt
blkparse -q -i - -f "%a %T.%9t %S %N %d\\n" < /tmp/bt.bin > $RESULTS/blkparse.txt
"""


def blk_events(text):
    """{(sector, action): [time s, ...]} for D and C events of reads."""
    ev = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 5 or f[0] not in ("D", "C") or "R" not in f[4]:
            continue
        ev.setdefault((int(f[2]), f[0]), []).append(float(f[1]))
    return ev


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=12)
    ap.add_argument("--keep", metavar="DIR", help="keep the run's files")
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="ncq-bt-"))
    trace = work / "device.trace"
    g = Guest(work / "guest", device=f"ncq-disk,model=st3400620as,"
              f"trace={trace}", disk_size=str(781422768 * 512))
    res = g.run(Workload(script=SCRIPT, files={"job.fio": JOB}))
    if res.status != 0:
        sys.exit(f"workload failed ({res.status}):\n{res.output}")
    ev = blk_events(res.files["blkparse.txt"].decode())
    _, recs = read_trace(trace)
    reads = [r for r in recs if r["op"] == "R" and r["sectors"] == 8]
    rows = []
    for r in reads:
        d, c = ev.get((r["lba"], "D")), ev.get((r["lba"], "C"))
        if not d or not c or len(d) != 1 or len(c) != 1:
            continue        # not a unique match
        rows.append((r, (c[0] - d[0]) * 1e3))
    print(f"{len(reads)} reads in the device trace, {len(rows)} matched "
          f"one D and one C of blkparse by sector\n")
    print("| sector | blktrace D->C ms | drive arrival->complete ms | "
          "waited in the drive ms | seek+rotate ms | queue_len | "
          "delay_count | reason |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for r, blk_ms in rows[len(rows) // 2:len(rows) // 2 + args.rows]:
        drive = (r["complete_ns"] - r["arrival_ns"]) / 1e6
        wait = (r["dispatch_ns"] - r["arrival_ns"]) / 1e6
        pos = (r["seek_ns"] + r["rotate_ns"]) / 1e6
        print(f"| {r['lba']} | {blk_ms:.3f} | {drive:.3f} | {wait:.3f} | "
              f"{pos:.3f} | {r['queue_len']} | {r['delay_count']} | "
              f"{r['reason']} |")
    diff = [blk - (r["complete_ns"] - r["arrival_ns"]) / 1e6
            for r, blk in rows]
    print(f"\nblktrace D->C minus drive latency over {len(rows)} reads: "
          f"median {statistics.median(diff):.3f} ms, "
          f"min {min(diff):.3f} ms, max {max(diff):.3f} ms")
    print(f"reads the drive served out of arrival order (delay_count > 0): "
          f"{sum(r['delay_count'] > 0 for r in reads)} of {len(reads)}; "
          f"largest delay_count {max(r['delay_count'] for r in reads)}")
    print(f"files: {work}")


if __name__ == "__main__":
    main()
