"""The scheduler workload library: one module per workload, each a fio job
for the guest's /dev/sda and the metric that matters for it.

A module defines:

  NAME       the name a matrix uses (e.g. "random-readers")
  METRIC     one line: the metric that matters and why
  PARAMS     {parameter: default}; every workload has "duration" (guest
             seconds of the timed part) so CI can run a short one
  SETUP      shell lines run in the guest before fio (optional)
  fio(p)     the fio job file for the parameters p (a dict)

Jobs whose host-side latency the metrics report carry
write_lat_log=/results/lat-<job> (the "measured" jobs); the others are
load.  A matrix names a workload as "name" or "name:key=value,...", a fio
job file (*.fio) or a shell script (*.sh); see docs/compare.md.
"""

import dataclasses
import hashlib
import importlib
from pathlib import Path

MODULES = ("random_readers", "far_reader", "rt_reader", "seq_readers",
           "fsync_writer", "writeback_burst", "zoned_writers")
# fio's [global] lines every library job shares: the whole disk, the same
# offsets every run, one log line per I/O.
GLOBAL = """[global]
filename=/dev/sda
randrepeat=1
norandommap=1
log_avg_msec=0
"""


class WorkloadError(ValueError):
    """A workload the matrix names that does not exist or has a bad
    parameter; the message is one line."""


@dataclasses.dataclass
class Spec:
    """What a cell runs: a fio job file or a shell script (one of them),
    shell lines before it, and identification."""
    name: str                 # as the matrix wrote it
    kind: str                 # "library", "fio" or "script"
    params: dict
    metric: str
    setup: tuple = ()
    fio: str = None
    script: str = None

    def sha256(self):
        h = hashlib.sha256()
        for part in (self.kind, "\n".join(self.setup), self.fio or "",
                     self.script or ""):
            h.update(part.encode() + b"\0")
        return h.hexdigest()


def library():
    """{NAME: module} of the library."""
    out = {}
    for m in MODULES:
        mod = importlib.import_module(f"workloads.{m}")
        out[mod.NAME] = mod
    return out


def _value(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def split_params(text):
    """"name:k=v,k=v" -> ("name", {k: v}) with numbers converted."""
    name, _, rest = text.partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        k, eq, v = item.partition("=")
        if not eq or not k:
            raise WorkloadError(f"{text!r}: parameter {item!r} is not "
                                "key=value")
        params[k.strip()] = _value(v.strip())
    return name.strip(), params


def resolve(text, duration=None, base=Path.cwd()):
    """The Spec of a matrix's workload entry.  duration (guest seconds), if
    given, overrides the library default but not a parameter the entry
    sets itself."""
    if text.endswith((".fio", ".sh")):
        path = (base / text) if not Path(text).is_absolute() else Path(text)
        if not path.is_file():
            raise WorkloadError(f"workload file {text} does not exist")
        body = path.read_text()
        if text.endswith(".fio"):
            return Spec(text, "fio", {}, "as the job file says", fio=body)
        return Spec(text, "script", {}, "as the script says", script=body)
    name, params = split_params(text)
    lib = library()
    if name not in lib:
        raise WorkloadError(f"unknown workload {name!r}: the library has "
                            f"{', '.join(sorted(lib))}, or give a *.fio or "
                            "*.sh path")
    mod = lib[name]
    bad = sorted(set(params) - set(mod.PARAMS))
    if bad:
        raise WorkloadError(f"workload {name} has no parameter {bad[0]!r} "
                            f"(it has {', '.join(sorted(mod.PARAMS))})")
    p = dict(mod.PARAMS)
    if duration is not None:
        p["duration"] = duration
    p.update(params)
    return Spec(text, "library", p, mod.METRIC,
                setup=tuple(getattr(mod, "SETUP", ())),
                fio=GLOBAL + mod.fio(p))
