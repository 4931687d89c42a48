#!/usr/bin/env python3
"""Benchmark of boot once, restore many (not a test: pytest collects
test_*.py only).  Prints figures; docs/benchmarks.md records a run.

1. Command to workload start: the wall-clock time from Guest.run() to the
   moment the guest's init prints "ncq-init: running" on its console (the
   host polls the console file), for a run that boots (NCQ_SNAPSHOT=0's
   path), the run that boots and saves the snapshot, and runs that restore
   it.  Medians over --rounds runs.

2. With --suite: the wall time of the guest-test suite (pytest
   guest-tests): as before this work (snapshots off, one test file after
   the other), then as scripts/test.sh runs it (snapshots on, one pytest
   worker per core) with an empty snapshot cache (a fresh machine), then
   again with the cache that run filled (a CI machine that keeps
   $NCQ_CACHE).  About 15 min on 2 cores.

    export NCQ_QEMU_BUILD=... NCQ_IMAGE_DIR=...   # or let the scripts build
    python3 guest-tests/bench_snapshot.py [--rounds 5] [--suite]
"""

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ncqguest
from ncqguest import Guest, Workload

ROOT = Path(__file__).resolve().parent.parent
DEVICE = "ncq-disk,model=st3400620as,seed={seed}"
MARK = b"ncq-init: running"


def timed_run(workdir, seed, snapshot, snapshot_dir=None):
    """Run a trivial workload; return (seconds to workload start, seconds
    in all, guest uptime at the workload's start).  snapshot_dir: a cache
    of the benchmark's own (every device line shares one saved boot, so
    a fresh cache is what makes the first snapshot run boot)."""
    g = Guest(workdir, device=DEVICE.format(seed=seed), snapshot=snapshot,
              snapshot_dir=snapshot_dir)
    console = g.workdir / "console.log"
    t0 = time.monotonic()

    async def watch(_qmp):
        while True:
            if console.exists() and MARK in console.read_bytes():
                return time.monotonic() - t0
            await asyncio.sleep(0.005)

    res = g.run(Workload(script="cut -d' ' -f1 /proc/uptime\n"),
                qmp_actions=watch)
    if res.status != 0:
        raise SystemExit(f"workload failed:\n{res.output}\n{g.tail()}")
    return res.qmp, time.monotonic() - t0, float(res.output.split()[0])


def bench_start(rounds, tmp):
    seed = int(time.time())     # a key no earlier run left in the cache
    rows = []
    boots = [timed_run(tmp / f"boot{i}", seed, False) for i in range(rounds)]
    rows.append(("boots (NCQ_SNAPSHOT=0)", boots))
    cache = tmp / "snapshots"
    rows.append(("boots and saves the snapshot",
                 [timed_run(tmp / "save", seed, True, cache)]))
    # each restore plugs a drive of another seed in: the saved boot is
    # the same for all
    restores = [timed_run(tmp / f"restore{i}", seed + 1 + i, True, cache)
                for i in range(rounds)]
    rows.append(("restores the snapshot", restores))
    print(f"{'run':32s} {'n':>2s} {'to workload start':>18s} "
          f"{'whole run':>10s} {'guest uptime':>13s}")
    for name, runs in rows:
        start = statistics.median(r[0] for r in runs)
        whole = statistics.median(r[1] for r in runs)
        up = sorted({r[2] for r in runs})
        print(f"{name:32s} {len(runs):2d} {start:16.2f} s {whole:8.2f} s "
              f"{' '.join(f'{u:.2f}' for u in up):>11s} s")
    return rows


def suite_wall(snapshot, jobs, env_extra):
    env = dict(os.environ, NCQ_SNAPSHOT="1" if snapshot else "0",
               **env_extra)
    xdist = ["-n", str(jobs), "--dist", "loadfile"] if jobs > 1 else []
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "pytest", "-q",
                        "-p", "no:cacheprovider", *xdist, "guest-tests"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    last = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
    return wall, last


def bench_suite():
    cores = os.cpu_count()
    fresh = tempfile.mkdtemp(prefix="ncq-snapcache-")
    runs = [("snapshots off, 1 worker", False, 1, {}),
            (f"snapshots on, {cores} workers, empty cache", True, cores,
             {"NCQ_SNAPSHOT_DIR": fresh}),
            (f"snapshots on, {cores} workers, cache kept", True, cores,
             {"NCQ_SNAPSHOT_DIR": fresh})]
    try:
        for name, snap, jobs, env in runs:
            wall, last = suite_wall(snap, jobs, env)
            print(f"{name:40s} {wall:7.1f} s   {last}", flush=True)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--suite", action="store_true",
                    help="also time the guest-test suite, off and on")
    args = ap.parse_args()
    os.environ.setdefault("NCQ_QEMU_BUILD", str(ncqguest.qemu_build_dir()))
    os.environ.setdefault("NCQ_IMAGE_DIR", str(ncqguest.image_dir()))
    print(f"QEMU {os.environ['NCQ_QEMU_BUILD']}\n"
          f"image {os.environ['NCQ_IMAGE_DIR']}\n"
          f"host {os.cpu_count()} cores\n")
    tmp = Path(tempfile.mkdtemp(prefix="ncq-bench-snap-"))
    try:
        bench_start(args.rounds, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.suite:
        print()
        bench_suite()


if __name__ == "__main__":
    main()
