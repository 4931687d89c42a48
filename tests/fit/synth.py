"""Synthetic probe samples from a known drive, made the way the probe
takes them (probe-rot.c, probe-zones.c, probe-seek.c), so that the
fitting maths can be checked against the truth."""

import random

REV = 60e9 / 7200


def rev_records(rev=REV, n=60, lba=1000, noise_ns=2000, seed=1):
    rnd = random.Random(seed)
    t, done = 1e9, []
    for _ in range(n):
        t += rev
        done.append(int(t + rnd.uniform(-noise_ns, noise_ns)))
    return [{"type": "rev", "lba": lba, "done_ns": done}]


def zone_records(zones, points, capacity, reads=8, read_bytes=1 << 20):
    """zones: [(first_lba, rate)]; points: LBAs."""
    out = []
    for lba in points:
        rate = [r for f, r in zones if f <= lba][-1]
        t, done = 1e9, []
        for i in range(reads):
            t += read_bytes / rate * 1e9 + (5e6 if i == 0 else 0)
            done.append(int(t))
        out.append({"type": "zone", "lba": lba, "read_bytes": read_bytes,
                    "done_ns": done})
    return out


def stream_record(zones, lba, reads=32, read_bytes=1 << 20,
                  boundary_extra_ns=0, switch_every=0, switch_ns=0):
    """One zone stream read by read: each read at the rate of the zone it
    starts in, the read that holds a boundary boundary_extra_ns longer (a
    seek over the zone's spare tracks), every switch_every-th read
    switch_ns longer (a cylinder switch)."""
    rs = read_bytes // 512
    t, done = 1e9, []
    for i in range(reads):
        a, b = lba + i * rs, lba + (i + 1) * rs
        rate = [r for f, r in zones if f <= a][-1]
        t += read_bytes / rate * 1e9 + (5e6 if i == 0 else 0)
        if any(a < f < b for f, _ in zones):
            t += boundary_extra_ns
        if switch_every and i % switch_every == 0:
            t += switch_ns
        done.append(int(t))
    return {"type": "zone", "lba": lba, "read_bytes": read_bytes,
            "done_ns": done}


def seek_records(threshold_ns, jitter_ns, a, b, rev=REV, fine=200,
                 seed=1):
    """The probe's coarse and fine sweeps for one pair whose B needs
    threshold + U[0, jitter] after A's completion (seek_distance())."""
    rnd = random.Random(seed)
    phase = rnd.uniform(0, rev)     # B's phase after A's completion

    def sample(w, stage):
        need = w + threshold_ns + rnd.uniform(0, jitter_ns)
        r = phase
        while r < need:
            r += rev
        return {"type": "seek", "stage": stage, "a": a, "b": b,
                "w_ns": int(w), "r_ns": int(r)}
    recs = [sample(rev * i / 16, "coarse") for i in range(16)]
    xs = [s["r_ns"] - s["w_ns"] for s in recs]
    margin = rev / 16
    lo = min(max(xs) - rev, min(xs)) - margin
    hi = min(max(max(xs) - rev, min(xs)) + margin, lo + rev)
    out = list(recs)

    def sweep(lo, hi, n, rnd_):
        low = high = False
        for j in range(n):
            k = (j * 37) % n
            slack = lo + (hi - lo) * (2 * k + 1) / (2 * n)
            s = sample((phase - slack) % rev, "fine")
            made = abs(s["r_ns"] - s["w_ns"] - slack) < rev / 2
            low |= made and slack < lo + (hi - lo) / 10
            high |= (not made) and slack > hi - (hi - lo) / 10
            out.append(s)
        out.append({"type": "seek_bracket", "a": a, "b": b, "round": rnd_,
                    "lo_ns": int(lo), "hi_ns": int(hi),
                    "phase_ns": int(phase), "rev_ns": int(rev)})
        return low, high
    low, high = sweep(lo, hi, fine // 2, 1)
    w = hi - lo
    lo, hi = lo - (w / 2 if low else 0), hi + (w / 2 if high else 0)
    hi = min(hi, lo + rev)
    sweep(lo, hi, fine - fine // 2, 2)
    return out
