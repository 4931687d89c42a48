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
import subprocess
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


def sim_iops(sim, model_path, depth, count, extra=None):
    """ncq-sim's throughput for @depth closed-loop random readers over
    the whole disk, or for the readers of @extra (its --group)."""
    who = ["--group", extra] if extra else ["--clients", str(depth)]
    out = subprocess.run(
        [sim, "--model-file", str(model_path), *who, "--depth", "32",
         "--count", str(count), "--quiet"],
        capture_output=True, text=True, check=True).stdout
    return float(re.search(r"iops ([0-9.]+)", out)[1])


def near_iops(records):
    """Throughput of the starvation experiment's 31 near readers (the
    first 1 % of the disk), over the runs' spans (a run ends where the
    readers stopped for more than half a second)."""
    if len(records) < 100:
        return None
    rs = sorted(records, key=lambda r: r["submit_ns"])
    spans, start, last = 0, rs[0]["submit_ns"], rs[0]["done_ns"]
    for r in rs[1:]:
        if r["submit_ns"] - last > 500_000_000:
            spans += last - start
            start = r["submit_ns"]
        last = max(last, r["done_ns"])
    spans += last - start
    return len(rs) / (spans / 1e9)


PLAN_STEPS = (0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5)
EVAL_US = (0, 10, 20, 40)
NEAR_WEIGHT = 4     # the near readers' many samples and sharp response


def calibrate(f, render, workdir, count=6000, near=None):
    """Adjusts plan_settle_ms and eval_us of an SPTF fit; returns a note
    or None when ncq-sim is missing or the policy is FCFS.  The targets:
    throughput at each measured depth over the whole disk, and (@near)
    the starvation experiment's near readers, 31 of them on the first 1 %
    of the disk, where short seeks make SPTF's costs show most."""
    sim = find_ncq_sim()
    depths = f.data.get("depths") or {}
    deep = [d for d in depths if d > 1]
    if not sim or not deep or f.get("firmware", "policy") != "sptf":
        return None
    jit = f.get("seek", "jitter_ms")
    best = None
    path = Path(workdir) / "calibrate.ncqm"
    for step in PLAN_STEPS:
        plan = jit + step
        for ev in EVAL_US:
            f.values[("seek", "plan_settle_ms")] = (round(plan, 3), "")
            f.values[("firmware", "eval_us")] = (ev, "")
            path.write_text(render(f))
            err = 0.0
            for d in deep:
                sim_v = sim_iops(sim, path, d, count)
                err += (sim_v / depths[d]["iops"] - 1) ** 2
            if near:
                sim_v = sim_iops(sim, path, 31, count, "31:0:1%")
                err += NEAR_WEIGHT * (sim_v / near - 1) ** 2
            if best is None or err < best[0]:
                best = (err, plan, ev)
    err, plan, ev = best
    rms = (err / (len(deep) + (NEAR_WEIGHT if near else 0))) ** 0.5
    targets = f"depths {', '.join(map(str, sorted(deep)))}"
    if near:
        targets += (f" and the starvation experiment's 31 near readers "
                    f"({near:.0f} IOPS, weight {NEAR_WEIGHT})")
    how = (f"grid with ncq-sim (plan_settle jitter + "
           f"{'/'.join(map(str, PLAN_STEPS))} ms x eval "
           f"{'/'.join(map(str, EVAL_US))} us): the pair closest to the "
           f"measured throughput at {targets} (rms error {100 * rms:.1f} %)")
    f.set("seek", "plan_settle_ms", round(plan, 3), how)
    f.set("firmware", "eval_us", ev, how)
    path.unlink()
    return how
