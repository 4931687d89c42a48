#!/usr/bin/env python3
"""The main job: boot an unmodified Debian guest on
-device ncq-disk,model=st3400620as under deterministic icount, run a short
fio job and print what the guest saw."""

import argparse
import sys
import tempfile
from pathlib import Path

import pyrun  # scripts/: the package roots, pyproject.toml
pyrun.ensure()
import ncqguest  # noqa: E402

JOB = """
[global]
filename=/dev/sda
direct=1
ioengine=libaio
bs=4k
randrepeat=1
size={size}

[randread-qd{depth}]
rw=randread
iodepth={depth}
number_ios={ios}
"""

SCRIPT = """
echo "kernel $(uname -r)"
echo "scheduler $(cat /sys/block/sda/queue/scheduler)"
fio --output-format=json --output=$RESULTS/fio.json /workload/job.fio
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="st3400620as",
                    help="built-in model (ncq-sim --list-models; default "
                    "%(default)s)")
    ap.add_argument("--ios", type=int, default=2000,
                    help="4 KiB random reads fio issues (default %(default)s)")
    ap.add_argument("--depth", type=int, default=32,
                    help="fio's iodepth (default %(default)s)")
    ap.add_argument("--disk-size", default="4G",
                    help="size of the disk image and of fio's region "
                    "(default %(default)s)")
    ap.add_argument("--device-props", default="",
                    help="extra ncq-disk properties, e.g. queue-depth=8")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep the run directory (console log, results)")
    a = ap.parse_args()

    device = f"ncq-disk,model={a.model}"
    if a.device_props:
        device += "," + a.device_props
    workdir = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(
        prefix="ncq-demo-"))
    guest = ncqguest.Guest(workdir, device=device, disk_size=a.disk_size)
    wl = ncqguest.Workload(
        script=SCRIPT,
        files={"job.fio": JOB.format(size=a.disk_size, depth=a.depth,
                                     ios=a.ios)},
        collect=("/sys/block/sda/device/model",
                 "/sys/class/ata_device/dev1.0/id",
                 "/sys/block/sda/device/queue_depth",
                 "/sys/block/sda/size"))
    print(f"ncq-disk demo: booting {guest.image.name} on -device {device} "
          f"(TCG, -icount {ncqguest.ICOUNT})", flush=True)
    res = guest.run(wl)
    if res.status != 0:
        print(res.output)
        print(f"demo: the guest workload failed with status {res.status}; "
              f"console log: {workdir / 'console.log'}", file=sys.stderr)
        return 1
    c = res.collected
    out = dict(line.split(" ", 1) for line in res.output.splitlines()
               if line.startswith(("kernel ", "scheduler ")))
    job = res.fio["jobs"][0]["read"]
    lat = job["clat_ns"]
    pct = lat.get("percentile", {})
    guest_s = res.fio["jobs"][0]["job_runtime"] / 1000
    size_gib = int(c["/sys/block/sda/size"]) * 512 / 2**30
    # IDENTIFY words 23-26: firmware revision (sysfs 'rev' is SCSI's
    # 4-character field, which libata fills from its last characters)
    words = [int(w, 16) for w in c["/sys/class/ata_device/dev1.0/id"].split()]
    firmware = b"".join(w.to_bytes(2, "big") for w in words[23:27]).decode(
        "ascii", "replace").strip()
    print(f"guest kernel:  {out.get('kernel', '?')}")
    print(f"guest saw:     /dev/sda model {c['/sys/block/sda/device/model']}"
          f", firmware {firmware}, "
          f"{size_gib:.1f} GiB, queue_depth "
          f"{c['/sys/block/sda/device/queue_depth']}, scheduler "
          f"{out.get('scheduler', '?')}")
    print(f"fio:           4 KiB random reads, iodepth {a.depth}, "
          f"{job['total_ios']} I/Os: {job['iops']:.0f} IOPS, "
          f"mean {lat['mean'] / 1e6:.2f} ms, "
          f"p50 {pct.get('50.000000', 0) / 1e6:.2f} ms, "
          f"p99 {pct.get('99.000000', 0) / 1e6:.2f} ms, "
          f"max {lat['max'] / 1e6:.2f} ms")
    print(f"time:          fio ran {guest_s:.2f} s of guest time; the whole "
          f"boot and run took {res.wall_s:.1f} s of wall clock")
    print(f"run directory: {workdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
