#!/usr/bin/env python3
"""Benchmarks of the ncq-disk device in a booted Linux guest (not a test:
pytest collects test_*.py only).  Prints figures; docs/benchmarks.md
records a run.

1. Emulation overhead: ncq-disk,timing=off against stock ide-hd on the same
   AHCI port, same QEMU build, same fio job (4 KiB random reads, iodepth 32,
   libaio, O_DIRECT, scheduler none, same number of I/Os).  Boots alternate
   ide-hd / ncq-disk for --rounds rounds; medians are reported.  First
   under plain TCG (no -icount: fio's IOPS is real-time throughput), then
   under -icount (deterministic guest time; fio's IOPS is per guest second,
   and the wall time of the fio part is reported too).

2. Faster than real time: with timing on (the st3400620as model) under
   -icount sleep=off, a disk-bound fio run; the guest prints markers around
   fio on the console and the host notes when each appears, so the wall
   time of the fio part is measured directly and compared with the guest
   time fio ran (its job_runtime, cross-checked with /proc/uptime).

3. What power-loss=on costs: with timing on, every guest write first reads
   the old contents of its sectors from the image (synchronously, so a
   power cut can restore what never reached the media).  The same random
   write job with power-loss=on and =off, alternating: guest-time figures
   must be equal (the read is host work only); the wall time of the fio
   part shows the cost.

    export NCQ_QEMU_BUILD=... NCQ_IMAGE_DIR=...
    python3 guest-tests/bench_device.py [--rounds 3] [--ios 20000]
"""

import argparse
import asyncio
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import ncqguest
from ncqguest import Guest, Workload, fio_json

JOB = ncqguest.FIO_GLOBAL + """[randread]
rw=randread
size=1G
number_ios={ios}
"""

WRITE_JOB = ncqguest.FIO_GLOBAL + """[{name}]
rw={rw}
bs={bs}
size=1G
number_ios={ios}
"""

SCRIPT = """
set -e
echo none > /sys/block/sda/queue/scheduler
echo "BENCH-FIO-START $(cut -d' ' -f1 /proc/uptime)"
fio --output-format=json --output=$RESULTS/fio.json /workload/job.fio
echo "BENCH-FIO-END $(cut -d' ' -f1 /proc/uptime)"
"""

DEVICES = {
    "ide-hd": "ide-hd",
    "ncq-disk": "ncq-disk,model=st3400620as,timing=off",
}


def qemu_cpu_s(workdir):
    """CPU seconds (user + system) used so far by the QEMU whose command
    line names @workdir, or None."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            if str(workdir).encode() not in cmd or b"qemu-system" not in cmd:
                continue
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1]
            f = f.split()
            return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return None


def marker_watch(console):
    """qmp_actions coroutine: host monotonic times at which the console
    shows BENCH-FIO-START and BENCH-FIO-END (polled every 5 ms), and
    QEMU's CPU time at each ("cpu:" + key)."""
    async def watch(qmp):
        seen = {}
        while len(seen) < 4:
            try:
                text = console.read_text(errors="replace")
            except FileNotFoundError:
                text = ""
            for key in ("BENCH-FIO-START", "BENCH-FIO-END"):
                if key not in seen and key + " " in text:
                    seen[key] = time.monotonic()
                    seen["cpu:" + key] = qemu_cpu_s(console.parent)
            await asyncio.sleep(0.005)
        return seen
    return watch


def run_one(workdir, device, ios, icount, timeout_s=900, job_text=None,
            op="read"):
    guest = Guest(workdir, device=device, disk_size="1G", icount=icount,
                  timeout_s=timeout_s, rtc_base=ncqguest.FIXED_RTC_BASE)
    job_text = job_text or JOB.format(ios=ios)
    # QEMU's CPU time (the runs are one at a time: the children's delta)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = guest.run(Workload(script=SCRIPT, files={"job.fio": job_text}),
                    qmp_actions=marker_watch(guest.workdir / "console.log"))
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.status != 0:
        raise RuntimeError(f"{device}: workload failed\n{res.output}")
    job = fio_json(res)["jobs"][0]
    if job[op]["total_ios"] != ios:
        raise RuntimeError(f"{device}: {job[op]['total_ios']} I/Os")
    up = {}
    for line in res.output.splitlines():
        if line.startswith("BENCH-FIO-"):
            k, v = line.split()
            up[k] = float(v)
    return {
        "iops": job[op]["iops"],
        "guest_s": job["job_runtime"] / 1000.0,
        "uptime_s": up["BENCH-FIO-END"] - up["BENCH-FIO-START"],
        "fio_wall_s": res.qmp["BENCH-FIO-END"] - res.qmp["BENCH-FIO-START"],
        "boot_wall_s": res.wall_s,
        "cpu_s": (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime),
        "fio_cpu_s": res.qmp["cpu:BENCH-FIO-END"] -
        res.qmp["cpu:BENCH-FIO-START"],
        "clat_p50_us": job[op]["clat_ns"]["percentile"]["50.000000"]
        / 1000,
    }


def overhead(base, ios, rounds, icount):
    mode = "icount" if icount else "TCG, no icount"
    print(f"\n== timing=off ncq-disk vs ide-hd, {mode}: 4 KiB randread, "
          f"iodepth 32, libaio, direct, scheduler none, {ios} I/Os, "
          f"{rounds} rounds alternating", flush=True)
    got = {d: [] for d in DEVICES}
    for r in range(rounds):
        order = list(DEVICES) if r % 2 == 0 else list(reversed(DEVICES))
        for d in order:
            m = run_one(base / f"{'ic' if icount else 'tcg'}-{d}-{r}",
                        DEVICES[d], ios, icount)
            got[d].append(m)
            print(f"round {r + 1} {d:9s} {m['iops']:9.0f} IOPS  clat p50 "
                  f"{m['clat_p50_us']:7.0f} us  fio {m['guest_s']:6.2f} s "
                  f"guest / {m['fio_wall_s']:6.2f} s wall  (boot+run "
                  f"{m['boot_wall_s']:.1f} s, host load "
                  f"{os.getloadavg()[0]:.1f})", flush=True)
    med = {d: statistics.median(m["iops"] for m in got[d]) for d in got}
    wall = {d: statistics.median(m["fio_wall_s"] for m in got[d])
            for d in got}
    print(f"median IOPS: ide-hd {med['ide-hd']:.0f}, ncq-disk "
          f"{med['ncq-disk']:.0f}; ncq-disk/ide-hd = "
          f"{100 * med['ncq-disk'] / med['ide-hd']:.1f} %")
    print(f"median fio wall time: ide-hd {wall['ide-hd']:.2f} s, ncq-disk "
          f"{wall['ncq-disk']:.2f} s; ide-hd/ncq-disk = "
          f"{100 * wall['ide-hd'] / wall['ncq-disk']:.1f} %")
    best = {d: max(m["iops"] for m in got[d]) for d in got}
    print(f"best IOPS (least disturbed by other host load): ide-hd "
          f"{best['ide-hd']:.0f}, ncq-disk {best['ncq-disk']:.0f}; "
          f"ncq-disk/ide-hd = {100 * best['ncq-disk'] / best['ide-hd']:.1f} %",
          flush=True)


def faster_than_real_time(base, ios, rounds):
    print(f"\n== timing on (st3400620as, sptf), icount "
          f"{ncqguest.ICOUNT}: 4 KiB randread, iodepth 32, {ios} I/Os over "
          f"1 GiB", flush=True)
    ratios = []
    for r in range(rounds):
        m = run_one(base / f"timed-{r}",
                    "ncq-disk,model=st3400620as", ios, True)
        # the same interval on both clocks: the markers around fio
        ratios.append(m["uptime_s"] / m["fio_wall_s"])
        print(f"round {r + 1}: {m['iops']:.1f} IOPS; fio's job ran "
              f"{m['guest_s']:.2f} s of guest time; between the markers "
              f"{m['uptime_s']:.2f} s of guest time took "
              f"{m['fio_wall_s']:.2f} s of wall clock: "
              f"{m['fio_wall_s'] / m['uptime_s']:.3f} wall s per guest s, "
              f"{ratios[-1]:.1f}x faster than real time  (boot+run "
              f"{m['boot_wall_s']:.1f} s, host load "
              f"{os.getloadavg()[0]:.1f})", flush=True)
    print(f"median: {statistics.median(ratios):.1f}x faster than real time; "
          f"best (least disturbed by other host load): "
          f"{max(ratios):.1f}x")


def power_loss_cost(base, ios, rounds):
    # the 1 MiB job writes half of the 1 GiB disk at most
    jobs = [("randwrite", "4k", ios), ("write", "1m", min(ios, 512))]
    print(f"\n== power-loss=on vs off, timing on (st3400620as), icount "
          f"{ncqguest.ICOUNT}: iodepth 32, "
          f"{', '.join(f'{rw} {bs} {n} I/Os' for rw, bs, n in jobs)}, "
          f"{rounds} rounds alternating", flush=True)
    for rw, bs, ios in jobs:
        job = WRITE_JOB.format(name=rw, rw=rw, bs=bs, ios=ios)
        got = {"on": [], "off": []}
        for r in range(rounds):
            for pl in (("on", "off") if r % 2 == 0 else ("off", "on")):
                m = run_one(base / f"pl-{rw}-{pl}-{r}",
                            f"ncq-disk,model=st3400620as,power-loss={pl}",
                            ios, True, job_text=job, op="write")
                got[pl].append(m)
                print(f"{rw} {bs} round {r + 1} power-loss={pl:3s} "
                      f"{m['iops']:8.1f} IOPS (guest)  fio "
                      f"{m['guest_s']:6.2f} s guest / {m['fio_wall_s']:6.2f} "
                      f"s wall; QEMU used {m['fio_cpu_s']:6.2f} s CPU "
                      f"during fio ({m['cpu_s']:.2f} s with boot)  (host "
                      f"load {os.getloadavg()[0]:.1f})",
                      flush=True)
        same = {m["iops"] for m in got["on"] + got["off"]}
        wall = {k: statistics.median(m["fio_wall_s"] for m in v)
                for k, v in got.items()}
        cpu = {k: statistics.median(m["fio_cpu_s"] for m in v)
               for k, v in got.items()}
        print(f"{rw} {bs}: guest IOPS {'identical' if len(same) == 1 else 'DIFFER'}"
              f" across all runs ({', '.join(f'{x:.1f}' for x in sorted(same))});"
              f" median fio wall time on {wall['on']:.2f} s, off "
              f"{wall['off']:.2f} s: on/off = "
              f"{100 * wall['on'] / wall['off']:.0f} %; median QEMU CPU "
              f"time during fio on {cpu['on']:.2f} s, off {cpu['off']:.2f} "
              f"s: the "
              f"undo data cost {cpu['on'] - cpu['off']:+.2f} s of CPU, "
              f"{1e3 * (cpu['on'] - cpu['off']) / ios:+.3f} ms per write",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ios", type=int, default=20000,
                    help="I/Os per overhead run (default 20000)")
    ap.add_argument("--timed-ios", type=int, default=3000,
                    help="I/Os of the timing-on run (default 3000)")
    ap.add_argument("--timed-rounds", type=int, default=2)
    ap.add_argument("--skip", action="append", default=[],
                    choices=("tcg", "icount", "timed", "powerloss"))
    ap.add_argument("--write-ios", type=int, default=2000,
                    help="I/Os of each power-loss run (default 2000)")
    ap.add_argument("--workdir", help="keep the runs here (default: a "
                    "temporary directory, removed afterwards)")
    args = ap.parse_args()

    print(f"QEMU build: {ncqguest.qemu_build_dir()}")
    print(f"guest image: {ncqguest.image_dir()}")
    print(f"host: {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="ncq-bench-") as tmp:
        base = Path(args.workdir or tmp)
        t0 = time.monotonic()
        if "tcg" not in args.skip:
            overhead(base, args.ios, args.rounds, icount=False)
        if "icount" not in args.skip:
            overhead(base, args.ios, args.rounds, icount=True)
        if "timed" not in args.skip:
            faster_than_real_time(base, args.timed_ios, args.timed_rounds)
        if "powerloss" not in args.skip:
            power_loss_cost(base, args.write_ios, args.timed_rounds)
        print(f"\nbenchmark wall time {time.monotonic() - t0:.0f} s")


if __name__ == "__main__":
    main()
