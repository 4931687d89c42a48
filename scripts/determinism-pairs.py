#!/usr/bin/env python3
"""Run N pairs of identical guest runs on ncq-disk (two QEMUs at a time)
and compare the device traces byte for byte: a check of the device's
determinism under icount while the host is busy.

    scripts/determinism-pairs.py [N] [--workdir DIR]

Needs NCQ_QEMU_BUILD and NCQ_IMAGE_DIR (scripts/test.sh sets them; or
let guest-tests/ncqguest.py build them).  Prints one line per pair with
the sha256 of each trace and SAME or DIFFER; exits 1 if any pair differs.
"""

import argparse
import concurrent.futures
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "guest-tests"))
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


def one(workdir):
    trace = workdir / "device.trace"
    guest = ncqguest.Guest(workdir, disk_size="8G",
                           device=f"ncq-disk,model=st3400620as,trace={trace}")
    res = guest.run(ncqguest.Workload(fio=JOB))
    if res.status != 0:
        raise SystemExit(f"{workdir}: workload failed:\n{res.output}")
    return hashlib.sha256(trace.read_bytes()).hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("pairs", nargs="?", type=int, default=3)
    ap.add_argument("--workdir", default="/tmp/ncq-determinism")
    a = ap.parse_args()
    differ = 0
    for i in range(a.pairs):
        dirs = [Path(a.workdir) / f"pair{i}" / x for x in "ab"]
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            ha, hb = ex.map(one, dirs)
        same = ha == hb
        differ += not same
        print(f"pair {i}: {ha} {hb} {'SAME' if same else 'DIFFER'}",
              flush=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
