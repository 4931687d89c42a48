"""The zone table from media rate against LBA (probe-zones.c).

Each zone record is a stream of reads at one LBA; its rate comes from the
reads after the first two (those include the seek and the start of the
read-ahead).  A stream that crosses a zone boundary shows it in its own
reads: their durations step from one zone's to the next's, with the read
that holds the boundary between (longer still where the zone ends in
spare tracks).  Such a stream is split there into two points, the second
starting at the boundary.  Neighbouring points within ZONE_TOL of each
other form a zone; a lone point between two zones whose rate lies between
theirs, and whose reads are not all alike, read across the boundary
without showing it clearly enough to split and is dropped (a lone point
whose reads are all alike is a zone of its own).
Boundaries fall midway between the last point of one zone and the first
of the next (the probe bisects there, so the gap is small; a split stream
gives the boundary itself)."""

import statistics

ZONE_TOL = 0.004        # rates within 0.4 %: the same zone


SPLIT_MIN_READS = 3     # reads on each side of a boundary inside a stream
SPLIT_MIN_STEP = 2 * ZONE_TOL
SPLIT_SIGMAS = 4.0
STEADY_TOL = 2 * ZONE_TOL   # the ends of a stream inside one zone


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


def _steady(d):
    """One level throughout: the reads before and after a third, half and
    two thirds of the stream have means within STEADY_TOL.  A stream that
    crossed a boundary without a split clear enough (its last reads, or
    a step within the noise) has parts at two levels; head and cylinder
    switches make reads alternate between two or three lengths, which
    leaves the means of long parts alike."""
    n = len(d)
    for k in (n // 3, n // 2, 2 * n // 3):
        if 0 < k < n:
            ml, mr = statistics.fmean(d[:k]), statistics.fmean(d[k:])
            if abs(ml - mr) > STEADY_TOL * min(ml, mr):
                return False
    return True


def _points(records):
    """[(lba, bytes_per_s, span_sectors, steady)] sorted by LBA; a stream
    across a zone boundary gives two, the second from the boundary (not
    steady: each holds a part of the stream, as few as SPLIT_MIN_READS
    reads, whose rate is the noisier for it)."""
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
            pts.append((r["lba"], rate, len(t) * rs, _steady(d)))
            continue
        # d[k] is read k + 2: the boundary is taken at its middle
        edge = r["lba"] + (2 * k + 5) * rs // 2
        pts.append((r["lba"], k * nb / (sum(d[:k]) / 1e9),
                    edge - r["lba"], False))
        pts.append((edge, len(d[k + 1:]) * nb / (sum(d[k + 1:]) / 1e9),
                    r["lba"] + len(t) * rs - edge, False))
    return sorted(pts)


def point_rates(records):
    """[(lba, bytes_per_s, span_sectors)] sorted by LBA; a stream across a
    zone boundary gives two, the second from the boundary."""
    return [p[:3] for p in _points(records)]


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
    pts = _points(records)
    if not pts:
        return []
    runs = _runs(pts, tol)
    kept = []
    for i, run in enumerate(runs):
        # a steady lone point is a zone narrower than the points' spacing
        # (seagate-st41601n's 105,375 and 138,800 sectors at 3.697 and
        # 3.653 MB/s, one point each)
        if len(run) == 1 and 0 < i < len(runs) - 1 and not run[0][3]:
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
