"""Guest-side experiments that reproduce the published NCQ phenomena
(../../docs/scenarios.md; the studies' set-ups and figures are in
../../docs/published-figures.md).

One module per scenario, sN_<name>.py, each with:

  TITLE                       one line
  run(workdir) -> dict        boots the guest(s); JSON-serialisable figures
                              and the raw series the plots need
  check(result) -> [str]      failed assertions (empty: the phenomenon holds)
  plot(result, outdir) -> [Path]          PNGs (matplotlib, Agg)
  report_md(result, pngs) -> str          the report's Markdown section

This file holds only what several scenarios share: booting a guest with a
trace, splitting and summarising traces, percentiles, CDFs, Jain's index.
"""

import hashlib
import json
import math
import re
import time
from pathlib import Path

import ncqguest
from ncqguest import Workload, read_trace

SECTOR = 512
DEV = "/sys/block/sda/device"
QUEUE = "/sys/block/sda/queue"

# Marker reads: one 512-byte O_DIRECT read at a scenario-chosen LBA,
# issued between the phases of a run so that the device trace can be split
# by phase.  Workload reads are 4 KiB or larger, so a 1-sector record is
# always a marker.  (fio, not busybox dd: the image's dd has no
# iflag=direct, and a buffered read reaches the disk as a 4 KiB page.)
MARKER_SECTORS = 1


def report_command(numbers):
    """The command that regenerates a report section or figure."""
    return f"python3 scripts/report.py --scenarios {numbers}"


def marker_cmd(lba):
    """Shell line for a marker read at lba (see MARKER_SECTORS)."""
    return (f"fio --name=marker --filename=/dev/sda --direct=1 "
            f"--ioengine=psync --rw=read --bs={SECTOR} "
            f"--offset={lba * SECTOR} --size={SECTOR} --output=/dev/null")


class Run:
    """One finished guest run: the harness Result, the device trace (path,
    header, records) and the wall-clock time of the boot."""

    def __init__(self, workdir, result, trace_path, wall_s, device,
                 qemu_sha256=None):
        self.workdir = Path(workdir)
        self.qemu_sha256 = qemu_sha256
        self.res = result
        self.trace_path = Path(trace_path)
        self.header, self.records = read_trace(trace_path)
        self.wall_s = wall_s
        self.device = device

    def lines(self, key):
        """Values of the script's 'key value' output lines, in order."""
        return [ln.split(None, 1)[1] for ln in self.res.output.splitlines()
                if ln.startswith(key + " ")]

    def fio(self, name):
        return ncqguest.fio_json(self.res, name)

    def guest_s(self):
        """Guest (virtual) time of the last completion in the trace."""
        return max((r["complete_ns"] for r in self.records), default=0) / 1e9


def run_guest(workdir, device, script, files=None, disk_sectors=None,
              timeout_s=900, collect=()):
    """Boot one guest with `device` (a -device string without drive/bus)
    plus trace=<workdir>/device.trace, run `script`, and return a Run.
    disk_sectors: the sparse qcow2's size (the model's full capacity when
    the workload seeks over the whole disk).  Raises if the workload
    failed, with its output."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    trace = workdir / "device.trace"
    trace.unlink(missing_ok=True)
    dev = f"{device},trace={trace}"
    guest = ncqguest.Guest(
        workdir / "guest", device=dev,
        disk_size=str(disk_sectors * SECTOR) if disk_sectors else "1G",
        timeout_s=timeout_s)
    qemu_sha = qemu_sha256(guest.qemu)
    t0 = time.monotonic()
    res = guest.run(Workload(script=script, files=files or {},
                             collect=tuple(collect)))
    wall = time.monotonic() - t0
    if res.status != 0:
        raise RuntimeError(f"workload in {workdir} exited with {res.status}:"
                           f"\n{res.output[-3000:]}\n{guest.tail()}")
    return Run(workdir, res, trace, wall, device, qemu_sha)


def qemu_sha256(path=None):
    """Digest of the QEMU binary (default: the harness's), so that a run
    can tell whether another run used the same build."""
    path = path or ncqguest.qemu_build_dir() / "qemu-system-x86_64"
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def split_by_markers(records, marker_lbas):
    """Records between consecutive markers: {marker_lba: [records after
    that marker and before the next]}, by arrival time.  Marker records
    themselves are left out; records before the first marker (boot) too."""
    marks = sorted((r["arrival_ns"], r["lba"]) for r in records
                   if r["sectors"] == MARKER_SECTORS and r["lba"] in
                   marker_lbas)
    found = [lba for _, lba in marks]
    if sorted(found) != sorted(marker_lbas):
        raise ValueError(f"trace markers {found}, expected {marker_lbas}")
    phases = {}
    for i, (t, lba) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else math.inf
        phases[lba] = [r for r in records
                       if t < r["arrival_ns"] < end and
                       r["sectors"] != MARKER_SECTORS]
    return phases


def latency_ms(rec):
    """Drive latency of a trace record: arrival in the drive to completion."""
    return (rec["complete_ns"] - rec["arrival_ns"]) / 1e6


def percentile(values, p):
    """The p-th percentile (0..100) by linear interpolation."""
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def summary(values):
    """min, p50, p90, p99, max and mean of a series (ms or anything)."""
    if not values:
        return {}
    return {"n": len(values), "min": min(values),
            "p50": percentile(values, 50), "p90": percentile(values, 90),
            "p99": percentile(values, 99), "max": max(values),
            "mean": sum(values) / len(values)}


def cdf(values):
    """(sorted values, cumulative fractions) for a step CDF plot."""
    v = sorted(values)
    n = len(v)
    return v, [(i + 1) / n for i in range(n)]


def histogram(values):
    """{value: count} with int keys turned into strings (JSON)."""
    out = {}
    for x in values:
        out[str(x)] = out.get(str(x), 0) + 1
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def histogram_words(words):
    """{word: count}, sorted by word."""
    out = {}
    for w in words:
        out[w] = out.get(w, 0) + 1
    return dict(sorted(out.items()))


def jain(xs):
    """Jain's fairness index (sum x)^2 / (n * sum x^2): 1 is fair, 1/n is
    one party getting everything."""
    xs = list(xs)
    sq = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if sq else float("nan")


def fio_stable(job):
    """The parts of one fio job's JSON that two deterministic runs must
    share: error, counts, guest-clock runtimes, latency distributions.
    Left out: dates and CPU accounting."""
    out = {"job_runtime": job["job_runtime"], "error": job["error"]}
    for d in ("read", "write", "sync"):
        if d in job:
            out[d] = {k: job[d][k] for k in
                      ("total_ios", "io_bytes", "runtime", "iops", "bw",
                       "short_ios", "drop_ios", "lat_ns", "clat_ns",
                       "slat_ns") if k in job[d]}
    return out


def pyplot():
    """matplotlib.pyplot on the Agg back end (no display)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    return Path(path)


def md_table(header, rows):
    """A Markdown table from a header list and row lists."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def image_kernel():
    """The guest image's kernel as its manifest names it (e.g. "debian-
    package linux-image-6.1.0-56-amd64 6.1.192-2")."""
    return ncqguest.image_manifest().get("kernel", "unknown")


def dump(result, path):
    """Save a result, with the kernel it ran on (the report is that
    kernel's)."""
    result = dict(result)
    result.setdefault("kernel", image_kernel())
    Path(path).write_text(json.dumps(result, indent=1, sort_keys=True)
                          + "\n")


REPO = Path(__file__).resolve().parent.parent.parent

# What makes a scenario's figures, by kind (inputs() digests each).  The
# device: the pinned QEMU (scripts/qemu.pin names it, fetch-qemu.sh
# unpacks it with patches/debian), the patch series, the device set
# (configs/devices), the device's and the model library's sources; the
# harness: the modules every scenario runs through (the scenario's own
# module is added per scenario); the firmware: the qboot.rom QEMU boots
# the guest with, a host file (Debian's qemu-system-data).
DEVICE_INPUTS = ("scripts/build-qemu.sh", "scripts/qemu.pin",
                 "scripts/fetch-qemu.sh", "patches", "configs/devices",
                 "hw/ide", "include/hw/ide", "qapi")
MODEL_INPUTS = ("hw/ide/ncq-model/models",)
# The series walk's record of proofs: it says which patches were built one
# by one, not what the device is (a report made before the walk stays true).
WALK_RECORD = "patches/qemu/walked"
HARNESS_INPUTS = ("guest-tests/ncqguest.py", "guest-tests/ncqqemu.py",
                  "guest-tests/ncqsnapshot.py",
                  "guest-tests/scenarios/__init__.py")


def _digest(paths, leave_out=()):
    """sha256 over the named files and every file under the named
    folders (paths relative to the repository, sorted), names included;
    files named in leave_out or under a folder it names are not counted."""
    h = hashlib.sha256()
    files = []
    for rel in paths:
        p = REPO / rel
        files += sorted(p.rglob("*")) if p.is_dir() else [p]
    for f in sorted(set(files)):
        rel = f.relative_to(REPO).as_posix()
        if not f.is_file() or "__pycache__" in rel or \
                any(rel == x or rel.startswith(x + "/") for x in leave_out):
            continue
        h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def scenario_files(module):
    """The scenario's own module and the scenario modules it imports."""
    name = module.__name__.rsplit(".", 1)[-1]
    out, todo = [], [name]
    while todo:
        n = todo.pop()
        rel = f"guest-tests/scenarios/{n}.py"
        if rel in out:
            continue
        out.append(rel)
        text = (REPO / rel).read_text()
        todo += re.findall(r"^from scenarios(?:\.| import )(s\d_\w+)", text,
                           re.M)
    return sorted(out)


def inputs(module):
    """What made this scenario's figures, as short digests: the guest
    image (its directory, which images/build-image.sh names by a digest of
    everything that goes in it), the device, the model files and the
    harness and the firmware.  A committed report records them; guest-tests/
    test_report_inputs.py fails when the current ones differ."""
    return {
        "image": ncqguest.image_dir().name,
        "device": _digest(DEVICE_INPUTS,
                          leave_out=MODEL_INPUTS + (WALK_RECORD,)),
        "models": _digest(MODEL_INPUTS),
        "harness": _digest(HARNESS_INPUTS + tuple(scenario_files(module))),
        "firmware": firmware_digest(),
    }


def firmware_digest():
    """Short digest of the guest's firmware (qboot.rom, the file the
    snapshot key names too), or "none" without one."""
    path = ncqguest.firmware_path()
    if path is None:
        return "none"
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
REPORT_DIR = REPO / "docs" / "report"
# Where the scenario tests leave each fresh result (sN.json), to look at
# when it no longer matches the committed report.
FRESH_DIR = REPO / "_build" / "scenarios"
# Fields that hold facts of the host, not of the guest: the wall-clock
# times of a run and of the report.  A scenario module may name more in
# its own VOLATILE (e.g. scenario 7: the QEMU binary's digest).
VOLATILE = frozenset({"wall_s", "report_wall_s", "inputs"})
MAX_SHOWN = 12


def _differences(saved, fresh, path, volatile, out):
    if isinstance(saved, dict) and isinstance(fresh, dict):
        for k in sorted(set(saved) | set(fresh)):
            if k in volatile:
                continue
            sub = f"{path}.{k}"
            if k not in fresh:
                out.append(f"{sub}: committed {saved[k]!r:.80}, missing now")
            elif k not in saved:
                out.append(f"{sub}: not in the committed report, now "
                           f"{fresh[k]!r:.80}")
            else:
                _differences(saved[k], fresh[k], sub, volatile, out)
    elif isinstance(saved, list) and isinstance(fresh, list):
        if len(saved) != len(fresh):
            out.append(f"{path}: committed {len(saved)} values, now "
                       f"{len(fresh)}")
        for i, (a, b) in enumerate(zip(saved, fresh)):
            _differences(a, b, f"{path}[{i}]", volatile, out)
    elif saved != fresh or type(saved) is not type(fresh):
        out.append(f"{path}: committed {saved!r:.80}, now {fresh!r:.80}")


def report_differences(module, result):
    """Compare a fresh result of scenario `module` with the committed
    docs/report/sN.json, wall-clock fields (VOLATILE) aside.  Saves the
    fresh result as _build/scenarios/sN.json.  Returns [] or failure
    lines, the first saying how to regenerate the report, then one line
    per differing field with both values."""
    n = module.NUMBER
    fresh = json.loads(json.dumps(result))  # the types a saved file has
    fresh.setdefault("kernel", image_kernel())
    FRESH_DIR.mkdir(parents=True, exist_ok=True)
    dump(fresh, FRESH_DIR / f"s{n}.json")
    saved_path = REPORT_DIR / f"s{n}.json"
    if not saved_path.exists():
        return [f"docs/report/s{n}.json is missing; write it with "
                f"`{report_command(n)}`"]
    saved = json.loads(saved_path.read_text())
    if saved.get("kernel", fresh["kernel"]) != fresh["kernel"]:
        # Another kernel schedules differently: its figures are its own
        # (the scenario's phenomenon test still ran on it).
        import pytest
        pytest.skip(f"docs/report/s{n}.json was made on {saved['kernel']};"
                    f" this image has {fresh['kernel']}")
    out = []
    volatile = VOLATILE | frozenset(getattr(module, "VOLATILE", ()))
    _differences(saved, fresh, f"s{n}", volatile, out)
    if not out:
        return []
    head = (f"docs/report/s{n}.json does not match this run in "
            f"{len(out)} field(s), wall-clock fields aside (this run: "
            f"_build/scenarios/s{n}.json). If the code changed the "
            f"figures on purpose, regenerate the report with "
            f"`{report_command(n)}` and commit it:")
    more = [f"... and {len(out) - MAX_SHOWN} more"] \
        if len(out) > MAX_SHOWN else []
    return [head] + ["  " + x for x in out[:MAX_SHOWN]] + more
