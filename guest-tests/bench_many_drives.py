#!/usr/bin/env python3
"""What each added ncq-disk costs in wall clock (not a test: pytest
collects test_*.py only).  Prints a table; docs/raid.md (bench_many_drives.py)
records a run.

For N in 1, 2, 4, 8, 12 (--drives): one guest with N ncq-disks
(st3400620as, each its own seed): its own disk on q35's first AHCI port
and N-1 more on the other ports and added ich9-ahci controllers
(ncqguest.multi_drive_args).  The guest boots, prints a marker, runs one
fio process with a job per drive (4 KiB random reads, iodepth 32,
libaio, direct, scheduler none) for a fixed guest time (--runtime,
time_based), prints a second marker, and ends.  The host notes when
each marker appears (bench_device.marker_watch), so the boot (QEMU start
to the first marker) and the fio part are timed apart, in wall clock and
in QEMU's CPU time (which other load on the host disturbs less).  Every run boots (multi-drive guests take no
snapshot).

    export NCQ_QEMU_BUILD=... NCQ_IMAGE_DIR=...
    python3 guest-tests/bench_many_drives.py [--runtime 5] [--rounds 1]
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import ncqguest
from bench_device import marker_watch
from ncqguest import Guest, Workload, fio_json

SCRIPT = r"""
set -e
job=/tmp/all.fio
printf '[global]\ndirect=1\nioengine=libaio\nbs=4k\niodepth=32\n' >$job
printf 'rw=randread\nrandrepeat=1\ntime_based=1\nruntime=%s\n' {runtime} >>$job
for d in /sys/block/sd*; do
    echo none >$d/queue/scheduler
    printf '[%s]\nfilename=/dev/%s\n' ${{d##*/}} ${{d##*/}} >>$job
done
echo "BENCH-FIO-START $(cut -d' ' -f1 /proc/uptime)"
fio --output-format=json --output=$RESULTS/fio.json $job
echo "BENCH-FIO-END $(cut -d' ' -f1 /proc/uptime)"
"""


def run_one(workdir, drives, runtime):
    dev = "ncq-disk,model=st3400620as"
    extra = ncqguest.multi_drive_args(
        workdir / "extra", [f"{dev},seed={100 + i}"
                            for i in range(1, drives)], disk_size="1G")
    guest = Guest(workdir / "guest", device=f"{dev},seed=100",
                  disk_size="1G", extra_args=extra, snapshot=False,
                  timeout_s=1800)
    t0 = time.monotonic()
    res = guest.run(Workload(script=SCRIPT.format(runtime=runtime)),
                    qmp_actions=marker_watch(guest.workdir / "console.log"))
    if res.status != 0:
        raise RuntimeError(f"{drives} drives: workload failed\n{res.output}")
    jobs = fio_json(res)["jobs"]
    if len(jobs) != drives:
        raise RuntimeError(f"{drives} drives, but fio ran {len(jobs)} jobs")
    up = dict(line.split() for line in res.output.splitlines()
              if line.startswith("BENCH-FIO-"))
    return {
        "boot_s": res.qmp["BENCH-FIO-START"] - t0,
        "boot_cpu_s": res.qmp["cpu:BENCH-FIO-START"],
        "fio_s": res.qmp["BENCH-FIO-END"] - res.qmp["BENCH-FIO-START"],
        "total_s": res.wall_s,
        "fio_cpu_s": res.qmp["cpu:BENCH-FIO-END"] -
        res.qmp["cpu:BENCH-FIO-START"],
        "guest_s": float(up["BENCH-FIO-END"]) - float(up["BENCH-FIO-START"]),
        "iops": sum(j["read"]["iops"] for j in jobs),
        "ios": sum(j["read"]["total_ios"] for j in jobs),
    }


def slope(xs, ys):
    """Least-squares slope of ys over xs."""
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / \
        sum((x - mx) ** 2 for x in xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--drives", default="1,2,4,8,12",
                    help="drive counts, comma separated (default 1,2,4,8,12)")
    ap.add_argument("--runtime", type=int, default=5,
                    help="fio's guest seconds per run (default 5)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs per drive count; medians are shown")
    ap.add_argument("--workdir", help="keep the runs here")
    args = ap.parse_args()
    counts = [int(x) for x in args.drives.split(",")]

    print(f"QEMU build: {ncqguest.qemu_build_dir()}")
    print(f"guest image: {ncqguest.image_dir()}")
    print(f"host: {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="ncq-bench-many-") as tmp:
        base = Path(args.workdir or tmp)
        for r in range(args.rounds):
            for n in counts:
                m = run_one(base / f"n{n}-r{r}", n, args.runtime)
                rows.setdefault(n, []).append(m)
                print(f"round {r + 1}, {n:2d} drives: boot {m['boot_s']:5.1f}"
                      f" s (QEMU CPU {m['boot_cpu_s']:.1f} s), fio {m['fio_s']:5.1f} s wall for "
                      f"{m['guest_s']:.1f} s guest ({m['ios']} I/Os, QEMU "
                      f"CPU {m['fio_cpu_s']:.1f} s), total {m['total_s']:.1f}"
                      f" s  (host load {os.getloadavg()[0]:.1f})", flush=True)
    med = {n: {k: statistics.median(m[k] for m in ms)
               for k in ms[0]} for n, ms in rows.items()}
    print(f"\nfio: 4 KiB random reads, iodepth 32, {args.runtime} s of guest "
          f"time on every drive at once; medians of {args.rounds} round(s)")
    print("| drives | boot wall (s) | boot QEMU CPU (s) | fio wall (s) | "
          "wall s per guest s | I/Os (all drives) | guest IOPS | "
          "fio QEMU CPU (s) | total wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in counts:
        m = med[n]
        print(f"| {n} | {m['boot_s']:.1f} | {m['boot_cpu_s']:.1f} | "
              f"{m['fio_s']:.1f} | {m['fio_s'] / m['guest_s']:.2f} | "
              f"{m['ios']:.0f} | {m['iops']:.0f} | {m['fio_cpu_s']:.1f} | "
              f"{m['total_s']:.1f} |")
    if len(counts) > 1:
        for k, what in (("boot_s", "boot, wall"), ("boot_cpu_s",
                        "boot, QEMU CPU"), ("fio_s", "fio part, wall"),
                        ("fio_cpu_s", "fio part, QEMU CPU"),
                        ("total_s", "boot and run, wall")):
            print(f"per added drive ({what}): "
                  f"{slope(counts, [med[n][k] for n in counts]):+.2f} s")


if __name__ == "__main__":
    main()
