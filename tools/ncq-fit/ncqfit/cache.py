"""The buffer from hit patterns (probe-cache.c), and the command overhead.

A hit costs no positioning: well under a quarter of a revolution against
a miss's rotational wait.  Read-ahead: the largest distance after a miss
still hit after an idle pause.  Segments: the most regions read once that
all hit when read again.  The overhead of a miss over a hit: the distance
-0 threshold of the seek profile (host, overhead, one sector) less a
hit's response less one sector's media time."""

import statistics


def is_hit(r_ns, rev_ns):
    return r_ns < 0.25 * rev_ns


def fit_readahead(records, rev_ns):
    """KiB read ahead after a miss, or None."""
    if not records:
        return None
    by = {}
    for r in records:
        by.setdefault(r["end_kib"], []).append(is_hit(r["r_ns"], rev_ns))
    hit = [k for k, v in sorted(by.items()) if all(v)]
    # the request itself is 4 KiB; the read-ahead is what follows it
    return max(hit) - 4 if hit else 0


def fit_segments(records, rev_ns):
    if not records:
        return None
    ok = [r["regions"] for r in records
          if all(is_hit(x, rev_ns) for x in r["r_ns"])]
    return max(ok) if ok else 0


def hit_response_ns(cache_records, seg_records, rev_ns):
    xs = [r["r_ns"] for r in cache_records if is_hit(r["r_ns"], rev_ns)]
    for r in seg_records:
        xs += [x for x in r["r_ns"] if is_hit(x, rev_ns)]
    return statistics.median(xs) if xs else None
