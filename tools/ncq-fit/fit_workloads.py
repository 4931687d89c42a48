"""The two reference workloads a fitted model is checked on, in ncq-sim:
scenario 1 (Yu et al.'s Table V) and scenario 2 (Stanovich et al.'s
far-read experiment) of docs/scenarios.md.  Their figures (depths,
readers, reads, run time) are the scenarios' own constants
(guest-tests/scenarios/s1_depth.py, s2_starvation.py), read from there so
that the check cannot drift from the scenarios.

Each workload gives a list of Series: one response-time series per depth
(Table V) or per group of readers (starvation), with its throughput.
"""

import dataclasses

import ncqfit_sim as ns
from scenarios import s1_depth, s2_starvation

# Scenario 2's fio job: 20 near readers on offset 0, size 20 %; the far
# reader on offset 80 %, size 20 %.
NEAR_RANGE = "0:20%"
FAR_RANGE = "80%:100%"


@dataclasses.dataclass
class Series:
    workload: str       # "table-v" or "starvation"
    key: str            # "d1".."d31", "near", "far"
    label: str          # for tables and plots
    latencies_ns: list  # host response times, in dispatch order
    iops: float         # the series' commands / the run's simulated time
    command: str        # the ncq-sim options of its run


def _end_s(recs):
    """A run's simulated time, as ncq-sim counts it for its IOPS: up to
    its last completion."""
    return max((r["complete_ns"] for r in recs), default=0) / 1e9


def _pooled(workload, key, label, runs, command):
    """One Series from the runs [(latencies, simulated seconds)] of
    several seeds: their latencies together, commands over total time."""
    lats = [x for lat, _ in runs for x in lat]
    secs = sum(s for _, s in runs)
    return Series(workload, key, label, lats,
                  len(lats) / secs if secs else 0.0, command)


def table_v(model, seeds, reads=s1_depth.READS, sim=None):
    """Scenario 1 in ncq-sim: PROCS clients of synchronous 4 KiB random
    reads over the whole disk, READS reads each (--count PROCS x READS;
    ncq-sim's defaults are 4 KiB page-aligned random reads), at each of
    the scenario's depths; one run per seed of @seeds at every depth,
    pooled."""
    out = []
    count = s1_depth.PROCS * reads
    for d in s1_depth.DEPTHS:
        args = ["--clients", str(s1_depth.PROCS), "--depth", str(d)]
        runs = []
        for seed in seeds:
            got = ns.closed_loop(model, seed, args, s1_depth.PROCS,
                                 count=count, sim=sim)
            runs.append(([lat for _, lat in got],
                         _end_s([r for r, _ in got])))
        out.append(_pooled("table-v", f"d{d}", f"depth {d}", runs,
                           " ".join(args + ["--count", str(count)])))
    return out


def starvation(model, seeds, seconds=s2_starvation.RUNTIME_S, sim=None):
    """Scenario 2 in ncq-sim: NEAR_PROCS synchronous 4 KiB random readers
    on the lowest 20 % of the LBAs and one on the highest 20 %, at most
    QUEUE_DEPTH commands in the drive, for @seconds of simulated time,
    one run per seed of @seeds, pooled; one series for the near readers,
    one for the far reader."""
    near = s2_starvation.NEAR_PROCS
    args = ["--group", f"{near}:{NEAR_RANGE}", "--group", f"1:{FAR_RANGE}",
            "--depth", str(s2_starvation.QUEUE_DEPTH)]
    half = ns.model_capacity(model) // 2
    runs = {"near": [], "far": []}
    for seed in seeds:
        got = ns.closed_loop(model, seed, args, near + 1,
                             duration_ns=int(seconds * 1e9), sim=sim)
        secs = _end_s([r for r, _ in got])
        for key, is_far in (("near", False), ("far", True)):
            runs[key].append(([lat for r, lat in got
                               if (r["lba"] >= half) == is_far], secs))
    command = " ".join(args + ["--duration", f"{seconds:g}s"])
    return [_pooled("starvation", "near", f"{near} near readers",
                    runs["near"], command),
            _pooled("starvation", "far", "the far reader", runs["far"],
                    command)]


WORKLOADS = {
    "table-v": ("Table V workload (scenario 1 of docs/scenarios.md)",
                f"{s1_depth.PROCS} synchronous readers of random 4 KiB reads "
                "over the whole disk, at NCQ depths "
                f"{', '.join(str(d) for d in s1_depth.DEPTHS)}"),
    "starvation": ("Starvation workload (scenario 2 of docs/scenarios.md)",
                   f"{s2_starvation.NEAR_PROCS} synchronous 4 KiB random "
                   "readers on the lowest 20 % of the LBAs, one on the "
                   "highest 20 %, at most "
                   f"{s2_starvation.QUEUE_DEPTH} commands in the drive"),
}
