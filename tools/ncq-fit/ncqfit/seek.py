"""The seek profile from thresholds of read pairs (probe-seek.c).

For a pair (A, B) and a wait w after A's completion, B completes at a
fixed phase (its sector passing the head), so R mod rev is the same for
every sample and x = R - w is the time from B's issue to its completion,
give or take whole revolutions.  A sample "made it" when no revolution
was lost: x equals the slack s = (phase - w), taken in the bracket the
probe swept.  P(made it | s) rises from 0 at the threshold S (host,
overhead, seek, transfer) to 1 at S + J (J: the settle jitter); on the
probe's grid of slacks over the bracket [lo, hi] the midpoint is

    S + J/2 = hi - (the integral of P over [lo, hi])

with the integral summed over the samples that made it, each standing
for the slacks nearer to it than to its neighbours.
and the width J is four times the grid the samples that went the other
way than their side of the midpoint cover.  The seek of a distance is its midpoint less
the one of distance 0 (B = A: no seek, no jitter), the lowest of the
places the probe tried for A."""

import statistics
from collections import defaultdict


def _mod(x, m):
    return x % m


def _bracket(coarse, rev):
    """The probe's bracket (probe-seek.c seek_distance), from the coarse
    sweep."""
    xs = [s["r_ns"] - s["w_ns"] for s in coarse]
    xmin, xmax = min(xs), max(xs)
    margin = rev // 16
    lo = min(xmax - rev, xmin) - margin
    hi = max(xmax - rev, xmin) + margin
    return lo, min(hi, lo + rev)


def threshold(samples, rev, brackets=()):
    """{'mid_ns', 'width_ns', 'n', ...} for one pair, or None.
    @brackets: the probe's seek_bracket records of the pair (the fine
    sweeps' ranges); without them the first is recomputed from the coarse
    sweep."""
    coarse = [s for s in samples if s["stage"] == "coarse"]
    fine = [s for s in samples if s["stage"] == "fine"]
    if len(coarse) < 4 or len(fine) < 4:
        return None
    # B's phase relative to A's completion: the circular median of R mod
    # rev (every sample has the same, within the host's timer noise)
    ref = coarse[0]["r_ns"]
    phase = _mod(ref, rev) + statistics.median(
        ((s["r_ns"] - ref + rev / 2) % rev) - rev / 2 for s in samples)
    if brackets:
        lo = min(b["lo_ns"] for b in brackets)
        hi = max(b["hi_ns"] for b in brackets)
    else:
        lo, hi = _bracket(coarse, rev)
    made = []
    centre = (lo + hi) / 2
    for s in fine:
        # the representative nearest the bracket's centre: the probe's
        # phase and this one differ by timer noise, which must not send a
        # slack at the bracket's edge round to the other end
        slack = centre + _mod(phase - s["w_ns"] - centre + rev / 2, rev) \
            - rev / 2
        x = s["r_ns"] - s["w_ns"]
        made.append((slack, abs(x - slack) < rev / 2))
    made.sort()
    # each sample stands for the slacks nearer to it than to its
    # neighbours (the probe's second sweep may be wider than its first)
    edges = [lo] + [(a[0] + b[0]) / 2 for a, b in zip(made, made[1:])] + [hi]
    cells = [max(b - a, 0.0) for a, b in zip(edges, edges[1:])]
    mid = hi - sum(c for c, (_, m) in zip(cells, made) if m)
    # the ramp's width: on either side of the midpoint the samples that
    # went the other way cover J/4 (P rises linearly over [S, S + J]:
    # twice the integral of x/J over [0, J/2])
    other = [c for c, (s, m) in zip(cells, made)
             if (m and s < mid) or (not m and s > mid)]
    # the midpoint's standard error: each sample's cell times its
    # Bernoulli spread, P from a linear ramp of the width just found
    width = 4 * sum(other)
    var = 0.0
    for c, (sl, _) in zip(cells, made):
        p = min(max((sl - mid) / width + 0.5, 0.0), 1.0) if width else \
            float(sl > mid)
        var += c * c * p * (1 - p)
    return dict(mid_ns=mid, width_ns=width, se_ns=var ** 0.5, n=len(made),
                n_ramp=len(other), lo=lo, hi=hi,
                frac=sum(m for _, m in made) / len(made))


def profile(records, rev, brackets=()):
    """[(a, b, threshold dict)] for every pair, distance 0 first."""
    pairs = defaultdict(list)
    for r in records:
        pairs[(r["a"], r["b"])].append(r)
    br = defaultdict(list)
    for b in brackets:
        br[(b["a"], b["b"])].append(b)
    out = []
    for (a, b), ss in pairs.items():
        th = threshold(ss, rev, br.get((a, b), ()))
        if th:
            out.append((a, b, th))
    out.sort(key=lambda p: abs(p[1] - p[0]))
    return out


def fit_seek(records, rev, brackets=()):
    """{'base_ns', 'jitter_ns', 'points': [(a, b, effective_ns)]} or
    None when there is no distance 0 or no other distance."""
    prof = profile(records, rev, brackets)
    base = [th for a, b, th in prof if a == b]
    rest = [(a, b, th) for a, b, th in prof if a != b]
    if not base or not rest:
        return None
    # the probe tries several places for A (probe-seek.c seek_base()):
    # the lowest is the one whose read-ahead left the head on A's track
    base_ns = min(th["mid_ns"] for th in base)
    widths = [th["width_ns"] for _, _, th in rest if th["n_ramp"] >= 3]
    jitter = statistics.median(widths) if widths else 0.0
    pts = [(a, b, th["mid_ns"] - base_ns, th["se_ns"]) for a, b, th in rest]
    return dict(base_ns=base_ns, jitter_ns=jitter, points=pts,
                profile=prof)
