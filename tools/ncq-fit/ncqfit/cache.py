"""The buffer from hit patterns (probe-cache.c), and the command overhead.

A hit costs no positioning: well under a quarter of a revolution against
a miss's rotational wait.  Read-ahead: the largest distance after a miss
still hit after an idle pause.  Segments: the most regions read once that
all hit when read again.  The overhead of a miss over a hit: the distance
-0 threshold of the seek profile (host, overhead, one sector) less a
hit's response less one sector's media time.  The link: hits of 4 and
64 KiB from one segment differ by the time 60 KiB take over it."""

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


def _link_rate(records, rev_ns):
    """bytes/s from one size's records, or None (see fit_link)."""
    if len(records) < 4 or any(not is_hit(min(r["small_ns"]), rev_ns)
                               for r in records):
        return None
    diffs = sorted(min(r["large_ns"]) - min(r["small_ns"]) for r in records)
    med = statistics.median(diffs)
    q1, q3 = diffs[len(diffs) // 4], diffs[(3 * len(diffs)) // 4]
    if med <= 0 or q3 - q1 > 0.1 * med:
        return None
    r = records[0]
    return (r["large_bytes"] - r["small_bytes"]) / (med / 1e9)


def fit_link(records, rev_ns):
    """(bytes/s, the large size, places) from the link records, or None: per
    place, the faster of the two large hits less the faster of the two
    4 KiB hits; their median, kept when at every place a 4 KiB read was a
    hit (a segment that cannot hold the large read loses its start, so
    the 4 KiB reads miss: dec-rz26's 28.5 KiB segments against 64 KiB)
    and the places agree within 10 % (a large read that misses waits
    differently at every place).  64 KiB reads first, 16 KiB ones when
    those fail."""
    by = {}
    for r in records:
        by.setdefault(r["large_bytes"], []).append(r)
    for size in sorted(by, reverse=True):
        rate = _link_rate(by[size], rev_ns)
        if rate:
            return rate, size, len(by[size])
    return None
