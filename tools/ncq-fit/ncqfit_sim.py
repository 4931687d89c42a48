"""ncq-sim from Python: per-request response times of a model.

Two uses:

- simulate(): the requests ncq-fit issued to a drive, replayed through a
  model (ncq-fit's report draws the measured response-time CDF next to
  the model's);
- closed_loop(): one of ncq-sim's own closed-loop workloads with every
  request's host response time (fit-compare.py's reference workloads).

ncq-sim itself does the simulation (tools/ncq-sim, docs/ncq-sim.md); this
module writes its input, runs it with --trace and reads the trace with the
project's one reader (guest-tests/ncqguest.py's read_trace).
"""

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
from ncqguest import read_trace  # noqa: E402  (guest-tests: a package root, pyproject.toml)

MODELS = ROOT / "hw" / "ide" / "ncq-model" / "models"
REPLAY_OPS = ("R", "W", "F")


class SimError(Exception):
    """A problem in one line: a missing ncq-sim or model, or ncq-sim's own
    error message."""


def ncq_sim_path(explicit=None):
    """The ncq-sim binary: @explicit, else $NCQ_SIM, else the repository's
    standalone build ($NCQ_MODEL_BUILD or _build/model; brought up to date
    with ninja, as the repository's tests do, so that it matches the
    checkout), else `ncq-sim` on PATH (scripts/install.sh puts it there).
    Looked up once per process and setting (simulate() may be called
    many times)."""
    return _ncq_sim_path(explicit and str(explicit),
                         os.environ.get("NCQ_SIM"),
                         os.environ.get("NCQ_MODEL_BUILD"))


@functools.lru_cache(maxsize=None)
def _ncq_sim_path(explicit, env_sim, env_build):
    if explicit or env_sim:
        p = Path(explicit or env_sim)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise SimError(f"{p}: not an executable ncq-sim")
        return p
    build = Path(env_build or ROOT / "_build" / "model")
    if not build.is_absolute():
        build = ROOT / build
    if (build / "build.ninja").exists():
        r = subprocess.run(["ninja", "-C", str(build),
                            "tools/ncq-sim/ncq-sim"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        if r.returncode != 0:
            raise SimError(f"building ncq-sim in {build} failed: "
                           f"{r.stderr.strip()[-300:]}")
        return build / "tools" / "ncq-sim" / "ncq-sim"
    found = shutil.which("ncq-sim")
    if found:
        return Path(found)
    raise SimError("no ncq-sim: build it (meson setup _build/model && ninja "
                   "-C _build/model), or give its path (--ncq-sim or "
                   "$NCQ_SIM)")


def model_args(model):
    """ncq-sim's options naming @model: a parameter file's path, or the
    name of a built-in model (ncq-sim --list-models)."""
    p = Path(model)
    if p.is_file():
        return ["--model-file", str(p.resolve())]
    if p.suffix != ".ncqm" and re.fullmatch(r"[a-z0-9][a-z0-9.-]*",
                                            str(model)):
        return ["--model", str(model)]
    raise SimError(f"{model}: no such model file (give the path of an "
                   ".ncqm file, or a built-in model name such as "
                   "st3400620as)")


def dump_model(model, sim=None):
    """The model as the model library parses it: `ncq-sim --dump-model`'s
    JSON, {section: {key: value}} in the file's units, with layout.zone
    the zones laid out (analytic ones generated, spares and skews
    resolved, each zone's LBAs and first LBA).  @model: a file's path or a
    built-in model's name.  Raises SimError with ncq-sim's one line when
    the file is refused."""
    r = subprocess.run([str(ncq_sim_path(sim)), "--dump-model",
                        *model_args(model)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SimError(r.stderr.strip() or
                       f"ncq-sim --dump-model {model} failed")
    return json.loads(r.stdout)


def model_capacity(model, sim=None):
    """The model's capacity in sectors, as the model library reads it."""
    return int(dump_model(model, sim)["drive"]["capacity"])


def run_traced(sim, model, seed, args, workdir):
    """Run ncq-sim on @model with @args, a per-command trace on; returns
    (its one-line summary, the trace's records in completion order)."""
    trace = Path(workdir) / "run.trace"
    trace.unlink(missing_ok=True)
    cmd = [str(sim)] + model_args(model) + ["--seed", str(seed)] + \
        list(args) + ["--trace", str(trace), "--quiet"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines() or [f"exit status "
                                                  f"{r.returncode}"]
        raise SimError(lines[0])
    return r.stdout.strip(), read_trace(trace)[1]


def dispatch_order(records):
    """Records in the order the host sent them to the drive: by arrival,
    and within one instant by the queue length they found (it grows with
    every command sent in that instant)."""
    return sorted(records, key=lambda r: (r["arrival_ns"], r["queue_len"]))


def closed_loop(model, seed, args, clients, count=None, duration_ns=None,
                sim=None):
    """Run one of ncq-sim's closed-loop workloads (@args: its --group,
    --depth, ... options; @clients clients in all; --count @count or
    --duration @duration_ns) and return [(record, host response ns)] in
    dispatch order.

    The trace holds the drive's times only; the host's issue times follow
    from ncq-sim's closed loop (tools/ncq-sim/workload.c, run.c), without
    think time or host delay: every client issues at 0, then again at each
    of its completions while the run goes on (fewer than @count issued, or
    the completion before @duration_ns), and the host sends issued
    requests to the drive first in, first out.  So the k-th request sent
    was the k-th issued.  tests/fit checks that these response times give
    exactly the percentiles ncq-sim prints."""
    args = list(args)
    if count is not None:
        args += ["--count", str(count)]
    if duration_ns is not None:
        args += ["--duration", f"{duration_ns}ns"]
    with tempfile.TemporaryDirectory(prefix="ncqfit-sim-") as d:
        _, recs = run_traced(sim or ncq_sim_path(), model, seed, args, d)
    done = sorted(r["complete_ns"] for r in recs)
    if duration_ns is not None:
        done = [t for t in done if t < duration_ns]
    issues = [0] * clients + done
    if count is not None:
        issues = issues[:count]
    sent = dispatch_order(recs)
    if len(issues) != len(sent):
        raise SimError(f"internal: {len(sent)} commands in the trace, "
                       f"{len(issues)} issues from the closed loop")
    return [(r, r["complete_ns"] - t) for r, t in zip(sent, sorted(issues))]


def _request(req, i):
    """(time_ns, op, lba, sectors, prio) of one request of simulate()."""
    if isinstance(req, dict):
        vals = (req.get("time_ns", 0), req["op"], req["lba"],
                req["sectors"], req.get("prio", 0))
    else:
        if len(req) not in (4, 5):
            raise ValueError(f"request {i}: {req!r}: expected (time_ns, op, "
                             "lba, sectors[, prio])")
        vals = tuple(req) + (0,) * (5 - len(req))
    t, op, lba, sectors, prio = vals
    op = str(op).upper()
    if op not in REPLAY_OPS:
        raise ValueError(f"request {i}: op {op!r}: expected R, W or F")
    if int(t) < 0 or int(lba) < 0 or int(sectors) < 0 or prio not in (0, 1):
        raise ValueError(f"request {i}: {req!r}: time_ns, lba and sectors "
                         "must be >= 0, prio 0 or 1")
    return int(t), op, int(lba), int(sectors), int(prio)


def simulate(model_path, requests, seed=1, depth=1, host_delay_ns=0,
             sim=None):
    """Replay @requests through the model @model_path (an .ncqm file, or a
    built-in model's name) in ncq-sim and return each request's response
    time in nanoseconds (int), in the order of @requests.

    requests: a list, in the order the probe issued them, of either
      dicts  {"time_ns": T, "op": "R", "lba": L, "sectors": S, "prio": 0}
             (time_ns defaults to 0, prio to 0), or
      tuples (T, "R", L, S) or (T, "R", L, S, prio);
    T: the earliest time the request may be issued, in ns from the start
    (non-decreasing along the list); op: "R" read, "W" write, "F" flush
    (lba and sectors 0); L: first sector; S: sectors of 512 bytes; prio:
    1 for an NCQ high-priority command.

    Issue discipline, as a probe keeping @depth commands outstanding (a
    closed loop at depth @depth): the requests are issued in list order;
    each is sent to the drive at max(T, the moment one of the @depth
    slots is free), a slot being free again @host_delay_ns after its
    command completed (the host's turnaround).  With every T = 0 that is
    a closed loop over the list; with depth 32 and measured T, an open
    loop.  The response time is completion - that sending time, what a
    probe timing each command from its submission sees.  A flush waits
    for an empty queue, as on the device.

    What this cannot express: a request that waits for one particular
    earlier request (one reader among several, each waiting for its own
    previous read); give such experiments as one list at the number of
    readers, which is the same when the next request does not depend on
    which one completed (random readers over one range).  FUA is not
    replayed (ncq-sim's replay CSV has no FUA column).

    seed: the model's seed (spindle phase at time 0, settle jitter), as
    ncq-sim's --seed.  Raises ValueError for a bad request, SimError when
    ncq-sim refuses the model or a request (one line)."""
    reqs = [_request(r, i) for i, r in enumerate(requests)]
    for i in range(1, len(reqs)):
        if reqs[i][0] < reqs[i - 1][0]:
            raise ValueError(f"request {i}: time_ns {reqs[i][0]} before "
                             f"the previous request's {reqs[i - 1][0]}")
    if not reqs:
        return []
    if not 1 <= int(depth) <= 32:
        raise ValueError(f"depth {depth}: must be 1..32")
    with tempfile.TemporaryDirectory(prefix="ncqfit-sim-") as d:
        csv = Path(d) / "requests.csv"
        csv.write_text("time_ns,op,lba,sectors,prio\n" + "".join(
            f"{t},{op},{lba},{s},{p}\n" for t, op, lba, s, p in reqs))
        _, recs = run_traced(sim or ncq_sim_path(), model_path, seed,
                             ["--replay", str(csv), "--depth", str(depth),
                              "--host-delay-ns", str(host_delay_ns)], d)
    sent = dispatch_order(recs)
    if len(sent) != len(reqs):
        raise SimError(f"internal: {len(reqs)} requests, {len(sent)} in "
                       "ncq-sim's trace")
    for i, (rec, (_, op, lba, s, _)) in enumerate(zip(sent, reqs)):
        if (rec["op"], rec["lba"], rec["sectors"]) != (op, lba, s):
            raise SimError(f"internal: request {i} ({op} {lba}+{s}) sent "
                           f"as {rec['op']} {rec['lba']}+{rec['sectors']}")
    return [r["complete_ns"] - r["arrival_ns"] for r in sent]
