"""The matrix file (TOML or JSON, docs/compare.md#the-matrix-file): its
keys checked, its axes expanded into cells in a fixed order, and a
deterministic slice of them for --shard."""

import dataclasses
import hashlib
import json
import re
import tomllib
from pathlib import Path


class MatrixError(ValueError):
    """Bad input in the matrix or on the command line: one line."""


KEYS = {"name": str, "kernels": list, "schedulers": list, "devices": list,
        "workloads": list, "duration": (int, float), "memory": str,
        "timeout_s": (int, float), "guest": dict}
REQUIRED = ("kernels", "schedulers", "devices", "workloads")
# Guest options: sysfs files of the disk, written before the workload.
GUEST_OPTIONS = {
    "queue_depth": "/sys/block/sda/device/queue_depth",
    "nr_requests": "/sys/block/sda/queue/nr_requests",
    "read_ahead_kb": "/sys/block/sda/queue/read_ahead_kb",
    "ncq_prio_enable": "/sys/block/sda/device/ncq_prio_enable",
    "wbt_lat_usec": "/sys/block/sda/queue/wbt_lat_usec",
    "rq_affinity": "/sys/block/sda/queue/rq_affinity",
}
_WORD = re.compile(r"[A-Za-z0-9_.-]+\Z")
# Properties the tool sets itself on every device line.
OWN_PROPS = ("drive", "bus", "id", "trace")


@dataclasses.dataclass(frozen=True)
class Scheduler:
    name: str
    tunables: tuple           # ((key, value), ...) in the order written

    @property
    def text(self):
        t = ",".join(f"{k}={v}" for k, v in self.tunables)
        return f"{self.name}:{t}" if t else self.name


@dataclasses.dataclass(frozen=True)
class Cell:
    index: int                # position in the full matrix
    coord: tuple              # (kernel, scheduler, device, workload) indices
    kernel: str
    scheduler: str
    device: str
    device_label: str
    workload: str

    @property
    def id(self):
        return (f"{self.kernel} | {self.scheduler} | {self.device_label} | "
                f"{self.workload}")

    @property
    def slug(self):
        """Its directory's name: short, since QEMU's QMP socket lives
        under it (a Unix socket path has at most 107 bytes);
        results.json maps cell ids to directories."""
        return f"c{self.index:03d}"


@dataclasses.dataclass
class Matrix:
    path: str
    name: str
    kernels: list
    schedulers: list          # of Scheduler
    devices: list             # of (device line, label)
    workloads: list           # of str
    duration: float = None
    memory: str = "512M"
    timeout_s: float = 900
    guest: dict = dataclasses.field(default_factory=dict)

    def cells(self):
        out = []
        for ki, k in enumerate(self.kernels):
            for si, s in enumerate(self.schedulers):
                for di, (dev, label) in enumerate(self.devices):
                    for wi, w in enumerate(self.workloads):
                        out.append(Cell(len(out), (ki, si, di, wi), k,
                                        s.text, dev, label, w))
        return out

    def sha256(self):
        """Digest of what the matrix asks for (not where the file is)."""
        d = {"kernels": self.kernels,
             "schedulers": [s.text for s in self.schedulers],
             "devices": self.devices, "workloads": self.workloads,
             "duration": self.duration, "memory": self.memory,
             "guest": self.guest}
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()
                              ).hexdigest()


def parse_scheduler(text, where):
    """"bfq:slice_idle=0,low_latency=0" -> Scheduler."""
    name, _, rest = str(text).partition(":")
    if not _WORD.match(name):
        raise MatrixError(f"{where}: scheduler {text!r}: bad name {name!r}")
    tun = []
    for item in filter(None, rest.split(",")):
        k, eq, v = item.partition("=")
        if not eq or not _WORD.match(k) or not _WORD.match(v):
            raise MatrixError(f"{where}: scheduler {text!r}: tunable "
                              f"{item!r} is not key=value (e.g. "
                              "bfq:slice_idle=0)")
        tun.append((k, v))
    return Scheduler(name, tuple(tun))


def parse_device(entry, where):
    """A device entry: "ncq-disk,model=..." or {device=..., label=...}."""
    if isinstance(entry, dict):
        extra = sorted(set(entry) - {"device", "label"})
        if extra or "device" not in entry:
            raise MatrixError(f"{where}: a device table has the keys device "
                              f"and label, not {extra or 'no device'}")
        line, label = str(entry["device"]), str(entry.get("label", ""))
    else:
        line, label = str(entry), ""
    if not line or any(c in line for c in " \t'\"$`;"):
        raise MatrixError(f"{where}: device line {line!r} is empty or has "
                          "spaces or quotes")
    for prop in line.split(",")[1:]:
        if prop.partition("=")[0] in OWN_PROPS:
            raise MatrixError(f"{where}: device line {line!r} sets "
                              f"{prop.partition('=')[0]}=; compare.py sets "
                              f"{', '.join(OWN_PROPS)} itself")
    if not label:
        label = line[len("ncq-disk,"):] if line.startswith("ncq-disk,") \
            else line
    return line, label


def _load(path):
    p = Path(path)
    if not p.is_file():
        raise MatrixError(f"matrix file {path} does not exist")
    text = p.read_text()
    try:
        if p.suffix == ".json":
            return json.loads(text)
        return tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as e:
        raise MatrixError(f"{path}: not valid "
                          f"{'JSON' if p.suffix == '.json' else 'TOML'}: "
                          f"{str(e).splitlines()[0]}")


def _check_types(d, path):
    for k, v in d.items():
        if k not in KEYS:
            raise MatrixError(f"{path}: unknown key {k!r} (known: "
                              f"{', '.join(KEYS)})")
        if not isinstance(v, KEYS[k]) or isinstance(v, bool):
            raise MatrixError(f"{path}: key {k!r} has the wrong type "
                              f"({type(v).__name__})")
    for k in REQUIRED:
        if not d.get(k):
            raise MatrixError(f"{path}: key {k!r} is missing or empty")
    for k, v in d.get("guest", {}).items():
        if k not in GUEST_OPTIONS:
            raise MatrixError(f"{path}: unknown key 'guest.{k}' (known: "
                              f"{', '.join(GUEST_OPTIONS)})")
        if not _WORD.match(str(v)):
            raise MatrixError(f"{path}: guest.{k} = {v!r} is not a plain "
                              "value")


def load(path):
    """The Matrix of a TOML (.toml) or JSON (.json) file."""
    d = _load(path)
    if not isinstance(d, dict):
        raise MatrixError(f"{path}: the top level is not a table")
    _check_types(d, path)
    where = str(path)
    m = Matrix(path=str(path), name=str(d.get("name", Path(path).stem)),
               kernels=[str(k) for k in d["kernels"]],
               schedulers=[parse_scheduler(s, where)
                           for s in d["schedulers"]],
               devices=[parse_device(x, where) for x in d["devices"]],
               workloads=[str(w) for w in d["workloads"]],
               duration=d.get("duration"),
               memory=d.get("memory", "512M"),
               timeout_s=d.get("timeout_s", 900),
               guest={k: str(v) for k, v in d.get("guest", {}).items()})
    for axis in ("kernels", "workloads"):
        vals = getattr(m, axis)
        if len(set(vals)) != len(vals):
            raise MatrixError(f"{path}: {axis} lists an entry twice")
    return m


def parse_shard(text):
    """"i/n" (1 <= i <= n) -> (i, n)."""
    m = re.fullmatch(r"(\d+)/(\d+)", text or "")
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise MatrixError(f"--shard {text!r}: want i/n with 1 <= i <= n, "
                          "e.g. --shard 2/4")
    return int(m.group(1)), int(m.group(2))


def shard(cells, i, n):
    """Slice i of n: every n-th cell starting at the (i-1)-th, so that each
    shard gets a mix of the matrix and the slices cover it exactly once."""
    return [c for c in cells if c.index % n == i - 1]
