"""rpm from the period of same-sector FUA re-reads (probe-rot.c).

A sector read again as soon as its previous read completed comes back
exactly one revolution later, as long as the host and the drive's command
overhead take less than a revolution.  Intervals near twice the median (a
read that missed its turn, a thermal recalibration pause) are dropped.
"""

import statistics


def intervals(records):
    out = []
    for r in records:
        t = r["done_ns"]
        out += [b - a for a, b in zip(t, t[1:])]
    return out


def fit_revolution(records):
    """(rev_ns, rpm, n_used, n_all) or None without samples."""
    iv = intervals(records)
    if len(iv) < 5:
        return None
    med = statistics.median(iv)
    # an interval of k revolutions (a missed turn) is dropped, not divided:
    # keep those within 1 % of the median
    good = [x for x in iv if abs(x - med) <= 0.01 * med]
    rev = statistics.fmean(good)
    return rev, 60e9 / rev, len(good), len(iv)
