"""The zone table from media rate against LBA (probe-zones.c).

Each zone record is a stream of reads at one LBA; its rate comes from the
reads after the first two (those include the seek and the start of the
read-ahead).  A stream that crosses a zone boundary shows it in its own
reads: their durations step from one zone's to the next's, with the read
that holds the boundary between (longer still where the zone ends in
spare tracks).  Such a stream is split there into two points, the second
starting at the boundary.  Neighbouring points within ZONE_TOL of each
other form a zone; a lone point between two zones whose rate lies between
theirs read across the boundary without showing it and is dropped.
Boundaries fall midway between the last point of one zone and the first
of the next (the probe bisects there, so the gap is small; a split stream
gives the boundary itself)."""

import statistics

ZONE_TOL = 0.004        # rates within 0.4 %: the same zone


SPLIT_MIN_READS = 3     # reads on each side of a boundary inside a stream
SPLIT_MIN_STEP = 2 * ZONE_TOL
SPLIT_SIGMAS = 4.0


def _mean_var(xs):
    m = statistics.fmean(xs)
    return m, statistics.pvariance(xs, m) if len(xs) > 1 else 0.0


def boundary_in_stream(d):
    """The index into the read durations d of the read that holds a zone
    boundary, or None: the split into a left and a right part (that read
    left out) whose means differ most against their standard error, kept
    when they differ by more than SPLIT_MIN_STEP and SPLIT_SIGMAS standard
    errors (a drive's head and cylinder switches make reads vary, but not
    in two steady levels)."""
    best, best_k = 0.0, None
    for k in range(SPLIT_MIN_READS, len(d) - SPLIT_MIN_READS):
        ml, vl = _mean_var(d[:k])
        mr, vr = _mean_var(d[k + 1:])
        step = abs(ml - mr)
        se = (vl / k + vr / (len(d) - k - 1)) ** 0.5
        if step <= SPLIT_MIN_STEP * min(ml, mr):
            continue
        score = step / se if se > 0 else float("inf")
        if score > best:
            best, best_k = score, k
    return best_k if best >= SPLIT_SIGMAS else None


def point_rates(records):
    """[(lba, bytes_per_s, span_sectors)] sorted by LBA; a stream across a
    zone boundary gives two, the second from the boundary."""
    pts = []
    for r in records:
        t = r["done_ns"]
        if len(t) < 4:
            continue
        nb, rs = r["read_bytes"], r["read_bytes"] // 512
        d = [t[i] - t[i - 1] for i in range(2, len(t))]
        k = boundary_in_stream(d)
        if k is None:
            rate = (len(t) - 2) * nb / ((t[-1] - t[1]) / 1e9)
            pts.append((r["lba"], rate, len(t) * rs))
            continue
        # d[k] is read k + 2: the boundary is taken at its middle
        edge = r["lba"] + (2 * k + 5) * rs // 2
        pts.append((r["lba"], k * nb / (sum(d[:k]) / 1e9),
                    edge - r["lba"]))
        pts.append((edge, len(d[k + 1:]) * nb / (sum(d[k + 1:]) / 1e9),
                    r["lba"] + len(t) * rs - edge))
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
