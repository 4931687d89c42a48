"""One cell of the matrix: the guest script that sets the scheduler, its
tunables and the guest options, then runs the workload; the guest run
(ncqguest.Guest) with trace=<cell dir>/device.trace on the device line;
the raw results kept in the cell's directory and its metrics."""

import os
import re
import shlex
import time
from pathlib import Path

import ncqguest
from compare import metrics
from compare.matrix import GUEST_OPTIONS, parse_scheduler

QUEUE = "/sys/block/sda/queue"
MODELS = ncqguest.ROOT / "hw" / "ide" / "ncq-model" / "models"
ERROR = "NCQ-COMPARE-ERROR"
# One 512-byte read at this LBA just before the workload: the device trace
# records before it are the boot's (scenarios/__init__.py, markers).
MARKER_LBA = 1000001
# Kept out of the cell directory after the run: large and rebuilt each time.
SCRATCH = ("disk.qcow2", "workload.cpio")


def _q(text):
    return shlex.quote(str(text))


def scheduler_lines(sched):
    """Shell lines that select the scheduler and write its tunables, each
    failure one line naming the scheduler and the kernel."""
    n = sched.name
    out = [f"if ! echo {n} > {QUEUE}/scheduler 2>/dev/null || "
           f"! grep -q '\\[{n}\\]' {QUEUE}/scheduler; then "
           f"fail \"scheduler {n} is not available in kernel $(uname -r) "
           f"(it offers: $(cat {QUEUE}/scheduler))\"; fi"]
    for k, v in sched.tunables:
        f = f"{QUEUE}/iosched/{k}"
        out += [f"[ -e {f} ] || fail \"scheduler {n} in kernel $(uname -r) "
                f"has no tunable {k} (it has: "
                f"$(echo $(ls {QUEUE}/iosched)))\"",
                f"echo {_q(v)} > {f} 2>/dev/null || fail \"scheduler {n} in "
                f"kernel $(uname -r) refused {k}={v}\"",
                f"echo \"tunable {k} $(cat {f})\""]
    out.append(f"echo \"scheduler $(cat {QUEUE}/scheduler)\"")
    return out


def guest_lines(options):
    out = []
    for k, v in sorted(options.items()):
        f = GUEST_OPTIONS[k]
        out += [f"[ -e {f} ] || fail \"kernel $(uname -r) has no {f} "
                f"(guest option {k})\"",
                f"echo {_q(v)} > {f} 2>/dev/null || fail \"kernel "
                f"$(uname -r) refused guest option {k}={v} ({f})\"",
                f"echo \"guest {k} $(cat {f})\""]
    return out


def script(sched, options, spec):
    """The guest's /workload/run.sh for one cell."""
    lines = [f"fail() {{ echo \"{ERROR} $*\"; exit 3; }}",
             "echo \"kernel $(uname -r)\""]
    lines += scheduler_lines(sched) + guest_lines(options)
    lines += list(spec.setup)
    lines.append(f"fio --name=marker --filename=/dev/sda --direct=1 "
                 f"--ioengine=psync --rw=read --bs=512 "
                 f"--offset={MARKER_LBA * 512} --size=512 "
                 "--output=/dev/null")
    if spec.kind == "script":
        lines.append("sh /workload/user.sh || fail \"workload script "
                     "exited with $?\"")
    else:
        logs = "--write_lat_log=$RESULTS/lat-job " \
            if spec.kind == "fio" else ""
        lines.append(f"fio --output-format=json --output=$RESULTS/fio.json "
                     f"{logs}/workload/job.fio || fail \"fio exited with "
                     "$?\"")
    lines.append("rm -f $RESULTS/lat-*_lat.*.log $RESULTS/lat-*_slat.*.log")
    return "\n".join(lines) + "\n"


def disk_size(device):
    """The qcow2's size: the model's capacity (workloads seek over the whole
    disk), from model=NAME or model-file=PATH; else 1 GiB."""
    props = dict(p.partition("=")[::2] for p in device.split(",")[1:])
    path = None
    if "model-file" in props:
        path = Path(props["model-file"])
    elif "model" in props:
        path = MODELS / f"{props['model']}.ncqm"
    if path and path.is_file():
        m = re.search(r"^capacity\s*=\s*(\d+)", path.read_text(), re.M)
        if m:
            return str(int(m.group(1)) * 512)
    return "1G"


def _error_line(res):
    for line in res.output.splitlines():
        if line.startswith(ERROR + " "):
            return line[len(ERROR) + 1:]
    tail = [x for x in res.output.splitlines() if x.strip()]
    return (f"workload exited with {res.status}"
            + (f": {tail[-1].strip()}" if tail else ""))


def _keep(res, cdir):
    for name, data in res.files.items():
        if name in ("fio.json", "output.txt", "dmesg.txt") or \
                name.startswith("lat-"):
            (cdir / name).write_bytes(data)


def run(cell, spec, image, options, memory, timeout_s, cdir):
    """Run one cell in directory cdir; returns (error line or None, raw)
    where raw holds the kernel release, wall and guest time and metrics.
    Runs in its own process: NCQ_IMAGE_DIR selects the cell's kernel."""
    os.environ["NCQ_IMAGE_DIR"] = str(image)
    cdir = Path(cdir)
    cdir.mkdir(parents=True, exist_ok=True)
    trace = cdir / "device.trace"
    trace.unlink(missing_ok=True)
    dev = f"{cell.device},trace={trace}"
    size = disk_size(cell.device)
    guest = ncqguest.Guest(cdir / "guest", device=dev, disk_size=size,
                           memory=memory, timeout_s=timeout_s)
    sched = parse_scheduler(cell.scheduler, cell.id)
    t0 = time.monotonic()
    raw = {"disk_size": size}
    try:
        res = guest.run(ncqguest.Workload(
            script=script(sched, options, spec),
            files={"job.fio": spec.fio} if spec.fio else
            {"user.sh": spec.script}))
    except ncqguest.GuestError as e:
        return f"the guest failed: {e}", raw
    finally:
        raw["wall_s"] = round(time.monotonic() - t0, 1)
        for f in SCRATCH:
            (cdir / "guest" / f).unlink(missing_ok=True)
    _keep(res, cdir)
    for line in res.output.splitlines():
        if line.startswith("kernel "):
            raw["kernel_release"] = line.split(None, 1)[1]
    if res.status != 0:
        return _error_line(res), raw
    header, records = ncqguest.read_trace(trace)
    fio = ncqguest.fio_json(res) if "fio.json" in res.files else None
    raw["metrics"] = metrics.cell_metrics(records, fio, metrics.lat_logs(
        {k: v for k, v in res.files.items() if k.startswith("lat-")}),
        MARKER_LBA)
    raw["metrics"].update(metrics.libata_health(res.dmesg))
    raw["guest_s"] = metrics.guest_seconds(records, MARKER_LBA)
    return None, raw
