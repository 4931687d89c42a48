"""The zone table from media rate against LBA (probe-zones.c).

Each zone record is a stream of reads at one LBA; its rate comes from the
reads after the first two (those include the seek and the start of the
read-ahead).  Neighbouring points within ZONE_TOL of each other form a
zone; a lone point between two zones whose rate lies between theirs read
across the boundary and is dropped.  Boundaries fall midway between the
last point of one zone and the first of the next (the probe bisects there,
so the gap is small)."""

import statistics

ZONE_TOL = 0.004        # rates within 0.4 %: the same zone


def point_rates(records):
    """[(lba, bytes_per_s, span_sectors)] sorted by LBA."""
    pts = []
    for r in records:
        t = r["done_ns"]
        if len(t) < 4:
            continue
        rate = (len(t) - 2) * r["read_bytes"] / ((t[-1] - t[1]) / 1e9)
        pts.append((r["lba"], rate, len(t) * r["read_bytes"] // 512))
    return sorted(pts)


def _runs(pts, tol):
    runs = []
    for p in pts:
        if runs and abs(p[1] - statistics.median(
                q[1] for q in runs[-1])) <= tol * p[1]:
            runs[-1].append(p)
        else:
            runs.append([p])
    return runs


def fit_zones(records, capacity, tol=ZONE_TOL):
    """[(first_lba, end_lba, rate)] covering [0, capacity)."""
    pts = point_rates(records)
    if not pts:
        return []
    runs = _runs(pts, tol)
    kept = []
    for i, run in enumerate(runs):
        if len(run) == 1 and 0 < i < len(runs) - 1:
            lo = statistics.median(q[1] for q in runs[i - 1])
            hi = statistics.median(q[1] for q in runs[i + 1])
            if min(lo, hi) < run[0][1] < max(lo, hi):
                continue        # straddles a boundary
        kept.append(run)
    # straddlers removed: neighbours of equal rate join again
    merged = []
    for run in kept:
        if merged and abs(statistics.median(q[1] for q in run) -
                          statistics.median(q[1] for q in merged[-1])) <= \
                tol * run[0][1]:
            merged[-1] += run
        else:
            merged.append(list(run))
    zones = []
    for i, run in enumerate(merged):
        first = 0 if i == 0 else zones[-1][1]
        if i + 1 < len(merged):
            nxt = merged[i + 1][0]
            # the last point's stream ends inside this zone
            end = (run[-1][0] + run[-1][2] + nxt[0]) // 2
        else:
            end = capacity
        zones.append([first, end, statistics.median(q[1] for q in run)])
    return [tuple(z) for z in zones]
