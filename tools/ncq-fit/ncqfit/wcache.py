"""The write cache's size from the probe's write burst (probe-wcache.c).

After a FLUSH the drive takes 64 KiB writes to places far apart into its
cache at the link's rate; the first write that waits for the media (more
than a quarter revolution over the fastest) came when the cache was full.
By then the drive had also written some of the burst to the media, one
place per destage access; an access costs what each write costs once the
cache is full (the median wait after the first), so the burst's duration
up to the first wait, divided by that cost, is how many writes left the
cache meanwhile.  The size is the writes the cache took less those.
"""

import statistics


def first_wait(resp, rev_ns):
    """The index of the first response more than a quarter revolution
    over the fastest one before it, or None."""
    fastest = None
    for i, r in enumerate(resp):
        fastest = r if fastest is None else min(fastest, r)
        if r > fastest + rev_ns / 4:
            return i
    return None


def fit_write_cache(records, rev_ns):
    """(KiB, how) from the wcache records, or None when no burst filled the
    cache.  Rounded to the write size: the burst cannot tell finer."""
    for r in records:
        resp, start = r["r_ns"], r["start_ns"]
        first = first_wait(resp, rev_ns)
        if not first:
            continue
        cost = statistics.median(resp[first:])
        drained = start[first] / cost if cost > 0 else 0.0
        size = r["write_kib"]
        kib = max(1, round(first - drained)) * size
        how = (f"{first} writes of {size} KiB taken before the first wait "
               f"for the media, less {drained:.1f} the drive wrote meanwhile "
               f"(the burst's {start[first] / 1e6:.1f} ms / "
               f"{cost / 1e6:.2f} ms per destage)")
        return kib, how
    return None


def never_filled(records):
    """Why no burst filled the cache, when the probe made bursts; else
    None.  A drive that writes a place to the media faster than its link
    brings the next write never fills its cache this way."""
    if not records:
        return None
    r = max(records, key=lambda r: len(r["r_ns"]))
    med = statistics.median(r["r_ns"])
    return (f"the cache never filled: {len(r['r_ns'])} writes of "
            f"{r['write_kib']} KiB took {med / 1e6:.2f} ms each (median), "
            "and the drive wrote each to the media before the next came")

