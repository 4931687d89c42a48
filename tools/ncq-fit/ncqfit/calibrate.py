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


def sim_iops(sim, model_path, depth, count, extra=()):
    out = subprocess.run(
        [sim, "--model-file", str(model_path), "--clients", str(depth),
         "--depth", "32", "--count", str(count), "--quiet", *extra],
        capture_output=True, text=True, check=True).stdout
    return float(re.search(r"iops ([0-9.]+)", out)[1])


def calibrate(f, render, workdir, count=6000):
    """Adjusts plan_settle_ms and eval_us of an SPTF fit; returns a note
    or None when ncq-sim is missing or the policy is FCFS."""
    sim = find_ncq_sim()
    depths = f.data.get("depths") or {}
    deep = [d for d in depths if d > 1]
    if not sim or not deep or f.get("firmware", "policy") != "sptf":
        return None
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
