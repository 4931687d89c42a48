"""The firmware's queue policy, starvation time-out and NCQ priority
(probe-queue.c, probe-starve.c).

Reordering: at each depth, throughput and how many requests were
overtaken (a request issued later that completed earlier, by more than
the host's noise).  A drive serving in arrival order gains nothing from
depth and overtakes nothing; a positioning-time scheduler does both.

Starvation time-out (Stanovich et al.): the far read waits behind a full
queue of near reads until the firmware's time-out forces it; its latency
less its own service time (the far read alone after a near one) is the
time-out.  A far read still waiting after the probe's guard means no
time-out; under FCFS the time-out cannot show and is not measured."""

import statistics
from collections import defaultdict

OVERTAKE_MARGIN_NS = 200_000     # host scheduling noise, well above it
SPTF_GAIN = 1.10                 # depth-32 throughput over depth 1
SPTF_OVERTAKEN = 0.15            # share of requests overtaken at depth 32
GUARD_S = 15                     # probe-starve.c STARVE_GUARD_S


def depth_stats(records):
    """{depth: {'iops', 'mean_ms', 'overtaken', 'max_overtakes', 'n'}}"""
    by = defaultdict(list)
    for r in records:
        by[r["depth"]].append(r)
    out = {}
    for depth, rs in sorted(by.items()):
        if len(rs) < 8:
            continue
        t0 = min(r["submit_ns"] for r in rs)
        t1 = max(r["done_ns"] for r in rs)
        rs = sorted(rs, key=lambda r: r["submit_ns"])
        overtakes = []
        for i, r in enumerate(rs):
            n = 0
            for q in rs[i + 1:]:
                if q["submit_ns"] > r["done_ns"]:
                    break
                if q["submit_ns"] > r["submit_ns"] + OVERTAKE_MARGIN_NS and \
                        q["done_ns"] + OVERTAKE_MARGIN_NS < r["done_ns"]:
                    n += 1
            overtakes.append(n)
        out[depth] = dict(
            iops=len(rs) / ((t1 - t0) / 1e9), n=len(rs),
            mean_ms=statistics.fmean(r["done_ns"] - r["submit_ns"]
                                     for r in rs) / 1e6,
            overtaken=sum(1 for n in overtakes if n) / len(rs),
            max_overtakes=max(overtakes))
    return out


def fit_policy(stats):
    """('sptf' | 'fcfs', reason) or None without depth 1 and a deep one."""
    if 1 not in stats or len(stats) < 2:
        return None
    deep = max(stats)
    gain = stats[deep]["iops"] / stats[1]["iops"]
    ov = stats[deep]["overtaken"]
    why = (f"depth {deep}: {gain:.2f} x the throughput of depth 1, "
           f"{100 * ov:.0f} % of requests overtaken (up to "
           f"{stats[deep]['max_overtakes']} times)")
    if gain >= SPTF_GAIN or ov >= SPTF_OVERTAKEN:
        return "sptf", why
    return "fcfs", why


def _lat(rs):
    return [(r["done_ns"] - r["submit_ns"]) / 1e6 for r in rs]


def fit_starvation(far, ref, policy):
    """(timeout_ms or 0, how) or None when not measured."""
    if not far or not ref:
        return None
    lat = _lat(far)
    service = statistics.median(_lat(ref))
    if max(lat) >= GUARD_S * 1000 * 0.95:
        return 0, (f"a far read still waited after the probe's "
                   f"{GUARD_S} s guard: no time-out")
    med = statistics.median(lat)
    if policy == "fcfs":
        return None
    return med - service, (
        f"far read behind 31 near ones: median latency {med:.1f} ms over "
        f"{len(lat)} reads (spread {min(lat):.1f}-{max(lat):.1f} ms) less "
        f"its service time alone, {service:.2f} ms (Stanovich et al.)")


def fit_priority(prio, far):
    """(honoured, how) or None."""
    if not prio or not far:
        return None
    p, f = statistics.median(_lat(prio)), statistics.median(_lat(far))
    honoured = p < 0.5 * f
    return honoured, (f"a far read at NCQ high priority waited {p:.1f} ms, "
                      f"at normal priority {f:.1f} ms")
