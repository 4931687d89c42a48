#!/usr/bin/env python3
"""Run N pairs of identical guest runs on ncq-disk (two QEMUs at a time)
and compare the device traces byte for byte: a check of the device's
determinism under icount while the host is busy.

    scripts/determinism-pairs.py [N] [--workdir DIR] [--props PROPS]
                                 [--trace-waits]

--props adds ncq-disk properties (e.g. x-hold-clock=on); --trace-waits
logs QEMU's ncq_disk_host_wait* trace events to qemu-trace.log in each
run's directory and prints how many waits each run had and their longest
wall-clock time.

Needs NCQ_QEMU_BUILD and NCQ_IMAGE_DIR (scripts/test.sh sets them; or
let guest-tests/ncqguest.py build them).  Prints one line per pair with
the sha256 of each trace and SAME or DIFFER; exits 1 if any pair differs.
"""

import argparse
import concurrent.futures
import hashlib
import re
import sys
from pathlib import Path

import pyrun  # scripts/: the package roots, pyproject.toml
pyrun.ensure()
import ncqguest  # noqa: E402

JOB = ncqguest.FIO_GLOBAL + """size=2G
[writes]
rw=randwrite
iodepth=8
number_ios=200
fsync=32
[reads]
stonewall
rw=randread
number_ios=1500
"""


PROPS = ""
TRACE_WAITS = False


def waits(workdir):
    """(count, longest ms) of the host waits in a run's QEMU trace."""
    log = workdir / "qemu-trace.log"
    ns = [int(m) for m in re.findall(r"ended after (\d+) ns",
                                     log.read_text(errors="replace"))] \
        if log.exists() else []
    return len(ns), (max(ns) / 1e6 if ns else 0.0)


def one(workdir):
    trace = workdir / "device.trace"
    extra = []
    workdir.mkdir(parents=True, exist_ok=True)
    if TRACE_WAITS:
        extra = ["-trace", "ncq_disk_host_wait*",
                 "-D", str(workdir / "qemu-trace.log")]
    guest = ncqguest.Guest(workdir, disk_size="8G",
                           device=f"ncq-disk,model=st3400620as,trace={trace}"
                                  f"{PROPS}", extra_args=extra)
    res = guest.run(ncqguest.Workload(fio=JOB))
    if res.status != 0:
        raise SystemExit(f"{workdir}: workload failed:\n{res.output}")
    return hashlib.sha256(trace.read_bytes()).hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("pairs", nargs="?", type=int, default=3)
    ap.add_argument("--workdir", default="/tmp/ncq-determinism")
    ap.add_argument("--props", default="")
    ap.add_argument("--trace-waits", action="store_true")
    a = ap.parse_args()
    global PROPS, TRACE_WAITS
    PROPS = "," + a.props if a.props else ""
    TRACE_WAITS = a.trace_waits
    differ = 0
    for i in range(a.pairs):
        dirs = [Path(a.workdir) / f"pair{i}" / x for x in "ab"]
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            ha, hb = ex.map(one, dirs)
        same = ha == hb
        differ += not same
        print(f"pair {i}: {ha} {hb} {'SAME' if same else 'DIFFER'}",
              flush=True)
        if TRACE_WAITS:
            for d in dirs:
                n, ms = waits(d)
                print(f"  {d.name}: {n} host waits, longest {ms:.1f} ms",
                      flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
