"""The firmware's SPTF costs, fitted with ncq-sim: the settle allowance it
plans with (plan_settle_ms) and its time per evaluated command (eval_us)
shape how much a deeper queue gains (docs/model.md#calibration-of-
st3400620as).  The probe measured throughput at depths 1 to 32 with as
many closed-loop readers; ncq-sim runs the fitted model on the same
workload over a small grid and the pair closest to the measurement
wins."""

import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def find_ncq_sim():
    env = os.environ.get("NCQ_SIM")
    if env:
        return env
    for p in (ROOT / "_build/model/tools/ncq-sim/ncq-sim",):
        if p.exists():
            return str(p)
    return shutil.which("ncq-sim")


def sim_iops(sim, model_path, depth, count, extra=()):
    out = subprocess.run(
        [sim, "--model-file", str(model_path), "--clients", str(depth),
         "--depth", "32", "--count", str(count), "--quiet", *extra],
        capture_output=True, text=True, check=True).stdout
    return float(re.search(r"iops ([0-9.]+)", out)[1])


# the probe's queued reads (probe-workers.c WORKER_BYTES), in sectors
QUEUE_READ_SECTORS = 8
# SATA generation -> interface rate in bytes per ns
SATA_BYTES_PER_NS = {1: 0.15, 2: 0.3, 3: 0.6}
MRA_STEP_KIB = 4
MRA_SEEDS = (1, 2, 3)


def host_gap_ns(f):
    """The host's part of a command's response (submission and completion
    through the block layer and interrupt path): a buffer hit's response
    less the hit overhead the fit takes and the transfer over the link.
    With the default hit overhead this is off by the drive's difference
    from it, and the read miss overhead (read_hit_ms + the distance-0
    threshold less a hit's response) by the same amount the other way, so
    their sum, what a read costs at depth 1, stays right."""
    hit = f.data.get("hit_ns")
    if hit is None:
        return None
    rate = SATA_BYTES_PER_NS.get(f.get("drive", "sata_gen"), 0.3)
    return max(0.0, hit - f.get("overhead", "read_hit_ms") * 1e6 -
               QUEUE_READ_SECTORS * 512 / rate)


def min_readahead(f, render, workdir, sim):
    """Fits min_readahead_kib (the read-ahead a drive finishes before it
    serves the next command) to the probe's random reads at depth 1:
    ncq-sim replays the same reads, one at a time with the host's gap
    between a completion and the next command, and the minimum read-ahead
    whose time per read comes closest to the measured one wins.  Returns
    a note or None without depth-1 reads or a buffer hit."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import ncqfit_sim

    d1 = sorted((r for r in f.data.get("queue_records") or ()
                 if r["depth"] == 1), key=lambda r: r["submit_ns"])
    gap = host_gap_ns(f)
    if len(d1) < 50 or gap is None:
        return None
    measured = (d1[-1]["submit_ns"] - d1[0]["submit_ns"]) / (len(d1) - 1)
    reqs = [(0, "R", r["lba"], QUEUE_READ_SECTORS) for r in d1]
    path = Path(workdir) / "calibrate.ncqm"
    limit = int(f.get("cache", "readahead_kib"))
    best = None
    for kib in range(0, limit + 1, MRA_STEP_KIB):
        f.values[("cache", "min_readahead_kib")] = (kib, "")
        path.write_text(render(f))
        per_read = statistics.fmean(statistics.fmean(
            ncqfit_sim.simulate(path, reqs, seed=seed, depth=1,
                                host_delay_ns=int(gap), sim=sim))
            for seed in MRA_SEEDS) + gap
        err = abs(per_read - measured)
        if best is None or err < best[0]:
            best = (err, kib, per_read)
        if per_read > measured + best[0]:
            break           # the time per read only grows from here
    path.unlink()
    err, kib, per_read = best
    how = (f"ncq-sim replaying the {len(d1)} random 4 KiB reads at depth 1 "
           f"with the host's {gap / 1e3:.0f} us per command (a buffer hit's "
           f"response less read_hit_ms and the link): {per_read / 1e6:.3f} "
           f"ms per read against the measured {measured / 1e6:.3f} ms "
           f"(minimum read-ahead tried in steps of {MRA_STEP_KIB} KiB up to "
           f"the read-ahead)")
    f.set("cache", "min_readahead_kib", kib, how)
    f.missing = [m for m in f.missing if m[0] != "cache.min_readahead_kib"]
    return how


def calibrate(f, render, workdir, count=6000):
    """Adjusts plan_settle_ms and eval_us of an SPTF fit; returns a note
    or None when ncq-sim is missing or the policy is FCFS."""
    sim = find_ncq_sim()
    depths = f.data.get("depths") or {}
    deep = [d for d in depths if d > 1]
    if not sim:
        return None
    mra = min_readahead(f, render, workdir, sim)
    if not deep or f.get("firmware", "policy") != "sptf":
        return mra
    jit = f.get("seek", "jitter_ms")
    best = None
    path = Path(workdir) / "calibrate.ncqm"
    for plan in (jit, jit + 0.25, jit + 0.5, jit + 0.85, jit + 1.25):
        for ev in (0, 10, 20, 40):
            f.values[("seek", "plan_settle_ms")] = (round(plan, 3), "")
            f.values[("firmware", "eval_us")] = (ev, "")
            path.write_text(render(f))
            err = 0.0
            for d in deep:
                sim_v = sim_iops(sim, path, d, count)
                err += (sim_v / depths[d]["iops"] - 1) ** 2
            if best is None or err < best[0]:
                best = (err, plan, ev)
    err, plan, ev = best
    rms = (err / len(deep)) ** 0.5
    how = (f"grid with ncq-sim (plan_settle jitter + 0/0.25/0.5/0.85/1.25 "
           f"ms x eval 0/10/20/40 us): the pair closest to the measured "
           f"throughput at depths {', '.join(map(str, sorted(deep)))} "
           f"(rms error {100 * rms:.1f} %)")
    f.set("seek", "plan_settle_ms", round(plan, 3), how)
    f.set("firmware", "eval_us", ev, how)
    path.unlink()
    return how
