"""From samples to a model: each parameter measured or defaulted, with
how (the comment the model file carries on its line) and, for defaults,
why it was not measured (the report's "could not measure" section)."""

import math
import re
import statistics

from . import cache, policy, rotation, seek, wcache, zones

SKEW_MARGIN = 0.01      # revolutions of cylinder skew beyond the switch

# What the fit takes when it cannot measure a value: (value, why chosen)
DEFAULTS = {
    ("seek", "write_settle_ms"): (0.2, "desktop and enterprise drives "
                                  "spec writes ~0.2 ms slower track to "
                                  "track"),
    ("overhead", "read_hit_ms"): (0.1, "cannot be told from the host's own "
                                  "time per command"),
    ("overhead", "write_ms"): (0.3, "the probe does not write"),
    ("overhead", "other_ms"): (0.05, "not measured"),
    ("cache", "segment_kib"): (512, "not measured; at least the "
                               "read-ahead"),
    ("cache", "min_readahead_kib"): (0, "not measured (needs interleaved "
                                     "streams at depth > 1)"),
    ("cache", "write_cache_kib"): (4096, "measured only with --allow-writes "
                                   "and the write cache on"),
    ("firmware", "aging_weight"): (0, "aged SPTF cannot be told from SPTF "
                                   "with a time-out by these experiments"),
    ("firmware", "clustering_sectors"): (0, "not measured"),
    ("firmware", "prio_timeout_ms"): (0, "not measured"),
}


class Fit:
    def __init__(self, name):
        self.name = name
        self.values = {}        # (section, key) -> (value, comment)
        self.zone_lines = []    # (first, count, spt, comment)
        self.points = []        # (dist, ms)
        self.missing = []       # (what, value, why)
        self.data = {}          # what the report plots

    def set(self, section, key, value, how):
        self.values[(section, key)] = (value, how)

    def default(self, section, key, what=None, why=None, value=None):
        v, reason = DEFAULTS.get((section, key), (value, why))
        v = value if value is not None else v
        why = why or reason
        self.values[(section, key)] = (v, f"default: {why}")
        self.missing.append((what or f"{section}.{key}", v, why))

    def get(self, section, key):
        return self.values[(section, key)][0]


def slug(model):
    s = re.sub(r"[^a-z0-9]+", "-", (model or "").lower()).strip("-")
    return s or "fitted-drive"


def _identity(f, s):
    ident = s.identify
    f.set("drive", "capacity", s.capacity, "sectors, the block device's "
          "size (BLKGETSIZE64)")
    f.set("drive", "kind", "hdd", "the tool fits hard disks")
    if ident:
        f.set("drive", "model", ident["model"] or "FITTED",
              "IDENTIFY DEVICE words 27-46")
        f.set("drive", "firmware", (ident["firmware"] or "0")[:8],
              "IDENTIFY DEVICE words 23-26")
        depth = ident["ncq_depth"] if ident["ncq"] else 1
        f.set("drive", "queue_depth", depth, "IDENTIFY DEVICE word 75")
        words = ident.get("words") or []
        gen = 0
        if len(words) > 76 and words[76] not in (0, 0xffff):
            gen = max((g for g in (1, 2, 3) if words[76] & (1 << g)),
                      default=0)
        if gen:
            f.set("drive", "sata_gen", gen, "IDENTIFY DEVICE word 76 "
                  "(highest SATA generation supported)")
        else:
            f.default("drive", "sata_gen", "SATA generation", value=2,
                      why="IDENTIFY word 76 gives none")
        f.set("cache", "write_cache",
              "on" if ident["write_cache_enabled"] else "off",
              "IDENTIFY DEVICE word 85 bit 5 (write cache enabled now)")
        # what the drive reports, not the model library's sum of the
        # cache parameters (which a large cache takes past the word)
        w21 = words[21] if len(words) > 21 and words[21] != 0xffff else 0
        f.set("drive", "buffer_kib", _fmt_half(w21 / 2),
              "IDENTIFY DEVICE word 21 (retired since ATA/ATAPI-6; "
              "0: not reported)")
    else:
        f.set("drive", "model", "FITTED", "no IDENTIFY data")
        f.set("drive", "firmware", "0", "no IDENTIFY data")
        f.set("drive", "queue_depth", 32, "default: no IDENTIFY data")
        f.default("drive", "sata_gen", "SATA generation", value=2,
                  why="IDENTIFY DEVICE not available")
        f.default("cache", "write_cache", "write cache state", value="on",
                  why="IDENTIFY DEVICE not available")
        f.set("drive", "buffer_kib", 0, "not reported: no IDENTIFY data")


def _fmt_half(kib):
    """KiB in steps of half a KiB (word 21 counts 512-byte sectors)."""
    return int(kib) if float(kib).is_integer() else kib


def _rotation(f, s):
    rot = rotation.fit_revolution(s["rev"])
    if rot is None:
        return None
    rev, rpm, used, n = rot
    f.set("drive", "rpm", int(round(rpm)),
          f"period of same-sector FUA re-reads: {rev / 1e6:.4f} ms "
          f"({used} of {n} intervals within 1 % of the median)")
    f.data["rev_ns"] = rev
    return rev


def _seek(f, s, rev):
    sk = seek.fit_seek(s["seek"], rev, s["seek_bracket"])
    f.data["seek"] = sk
    return sk


def _zones_and_layout(f, s, rev, sk):
    """Zones as tracks of one head: each zone's spt is its sectors per
    revolution while streaming, grown by the cylinder skew that lets the
    next track's first sector wait for the one-track seek."""
    zs = zones.fit_zones(s["zone"], s.capacity)
    f.data["zones"] = zs
    f.data["zone_points"] = zones.point_rates(s["zone"])
    first_point_ms = None
    if sk:
        near = [p for p in sk["points"] if p[2] > 0]
        if near:
            first_point_ms = min(near, key=lambda p: abs(p[1] - p[0]))[2] \
                / 1e6 - sk["jitter_ns"] / 2e6
    switch_ms = max(first_point_ms or 1.0, 0.05)
    cs = switch_ms * 1e6 / rev + SKEW_MARGIN
    f.set("layout", "heads", 1, "modelling choice: tracks are not told "
          "apart by surface; one head, a track per cylinder")
    f.set("layout", "track_skew", 0, "one head: no head switch")
    f.set("layout", "cyl_skew", round(cs, 4),
          f"one-track switch {switch_ms:.3f} ms (the seek profile's "
          f"shortest distance) + {SKEW_MARGIN} rev")
    f.set("layout", "spare_per_track", 0, "spares are not seen from the "
          "host; the streaming rate includes them")
    cyl = 0
    for first, end, rate in zs:
        e = rate * rev / 1e9 / 512        # sectors per revolution
        spt = max(int(round(e * (1 + cs))), 1)
        count = max(math.ceil((end - first) / spt), 1)
        f.zone_lines.append((cyl, count, spt,
                             f"LBA {first}-{end}: {rate / 1e6:.2f} MB/s "
                             "streamed"))
        cyl += count
    return f.zone_lines


def _track_of(f, lba):
    """Cylinder of @lba in the fitted layout (zone lines, one head)."""
    first_lba = 0
    for cyl, count, spt, _ in f.zone_lines:
        if lba < first_lba + count * spt:
            return cyl + (lba - first_lba) // spt
        first_lba += count * spt
    cyl, count, spt, _ = f.zone_lines[-1]
    return cyl + count - 1


def monotone(values, errors, tol=3.0):
    """Pool adjacent violators, within the noise: where a longer distance
    measured less than a shorter one by less than @tol standard errors,
    both take their weighted mean (a seek takes no less time for a longer
    distance; pooling averages out the estimator's noise where the
    profile is flat).  A larger step down is kept: it is the drive's (a
    head switch at one distance, none at the next)."""
    blocks = []                 # [sum of v/se^2, sum of 1/se^2, count]
    for v, e in zip(values, errors):
        w = 1.0 / max(e, 1.0) ** 2
        blocks.append([v * w, w, 1])
        while len(blocks) > 1:
            (s0, w0, n0), (s1, w1, n1) = blocks[-2], blocks[-1]
            drop = s0 / w0 - s1 / w1
            if drop <= 0 or drop > tol * (1 / w0 + 1 / w1) ** 0.5:
                break
            blocks.pop()
            blocks[-1] = [s0 + s1, w0 + w1, n0 + n1]
    out = []
    for s_, w, n in blocks:
        out += [s_ / w] * n
    return out


def _seek_table(f, sk):
    jit = sk["jitter_ns"]
    by = {}
    for a, b, eff, se in sk["points"]:
        d = abs(_track_of(f, b) - _track_of(f, a))
        if d > 0:
            by.setdefault(d, []).append((eff, se))
    dists = sorted(by)
    effs = monotone([statistics.fmean(e for e, _ in by[d]) for d in dists],
                    [statistics.fmean(s for _, s in by[d]) / len(by[d]) ** 0.5
                     for d in dists])
    pts = []
    for d, eff in zip(dists, effs):
        ms = max(eff - jit / 2, 1e3) / 1e6
        pts.append((d, round(ms, 4)))
    f.points = pts
    f.set("seek", "type", "table", "Lumb et al.'s seek profile, measured "
          "(neighbours that differ by noise pooled, docs/ncq-fit.md)")
    f.set("seek", "jitter_ms", round(jit / 1e6, 3),
          "width of the made-it ramp of the read-pair thresholds (median "
          "over the distances)")
    f.set("seek", "head_switch_ms", pts[0][1] if pts else 0.5,
          "one head: the profile's shortest distance")


def _policy(f, s):
    stats = policy.depth_stats(s["queue"])
    f.data["depths"] = stats
    pol = policy.fit_policy(stats)
    if pol:
        f.set("firmware", "policy", pol[0], "reordering of random 4 KiB "
              "reads: " + pol[1])
    else:
        f.default("firmware", "policy", "queue policy", value="fcfs",
                  why="no queued reads measured")
    name = f.get("firmware", "policy")
    st = policy.fit_starvation(s["starve_far"], s["starve_ref"], name)
    f.data["starve"] = (s["starve_far"], s["starve_ref"])
    if st:
        f.set("firmware", "starvation_timeout_ms", round(st[0], 1), st[1])
    else:
        f.default("firmware", "starvation_timeout_ms", "starvation time-out",
                  value=0, why="FCFS serves the far read in its turn: no "
                  "time-out shows" if name == "fcfs" else "no far reads "
                  "measured")
    pr = policy.fit_priority(s["starve_prio"], s["starve_far"])
    if pr:
        f.set("firmware", "honour_prio", "on" if pr[0] else "off", pr[1])
    else:
        f.default("firmware", "honour_prio", "NCQ priority", value="off",
                  why="the kernel offered no NCQ priority for the device")
    for k in ("prio_timeout_ms", "aging_weight", "clustering_sectors"):
        f.default("firmware", k)
    for k in ("window", "plan_ahead"):
        f.set("firmware", k, 0 if k == "window" else "off",
              "the firmware's simplest form (not measured)")


# SATA generation -> the link's rate in MB/s (docs/model.md)
SATA_MB_S = {1: 150, 2: 300, 3: 600}
# Measured below this share of the SATA link, the drive's own interface
# is the limit (5 to 40 MB/s: a bridge, a DiskSim drive's SCSI-era bus).
# Above it the host's own cost per byte shows: under QEMU's TCG, DMA adds
# 0.07 ms per 60 KiB, so st3400620as's 300 MB/s link measures 226 MB/s
# and seagate-exos-x18's 600 MB/s 384 MB/s.
LINK_SLOW = 0.5


def _link(f, s, rev):
    """bus_mb_s when the drive's own interface is slower than its SATA
    link (a bridge, or a DiskSim drive's SCSI-era bus); left to the link's
    rate otherwise."""
    link = cache.fit_link(s["link"], rev)
    sata = SATA_MB_S.get(f.get("drive", "sata_gen"), 300)
    f.data["link_bps"] = sata * 1e6
    if link and link[0] < LINK_SLOW * sata * 1e6:
        bps, size, places = link
        f.set("drive", "bus_mb_s", round(bps / 1e6, 3),
              f"{size // 1024} KiB buffer hits less 4 KiB ones: "
              f"{size // 1024 - 4} KiB in "
              f"{(size - 4096) / bps * 1e3:.3f} ms over {places} places, "
              f"below the SATA {sata} MB/s link")
        f.data["link_bps"] = bps


# the probe's queued reads, and its buffer hits, are 4 KiB
HIT_BYTES = 4096


def link_ns(f, nbytes):
    """nbytes over the link the fit found (_link): the drive's own
    interface where it is the slower, else the SATA generation's rate."""
    rate = f.data.get("link_bps") or \
        SATA_MB_S.get(f.get("drive", "sata_gen"), 300) * 1e6
    return nbytes / rate * 1e9


def _read_hit(f, hit, host_us):
    """read_hit_ms: a buffer hit's response is the host's time per
    command, the drive's hit overhead and 4 KiB over the link, and only
    their sum shows.  Given the host's share (--host-us), the rest is the
    drive's; without it, the default."""
    if hit is None or host_us is None:
        f.default("overhead", "read_hit_ms")
        return
    xfer = link_ns(f, HIT_BYTES)
    own = (hit - xfer - host_us * 1e3) / 1e6
    f.set("overhead", "read_hit_ms", round(max(0.01, own), 3),
          f"a hit's response {hit / 1e6:.3f} ms less 4 KiB over the link "
          f"{xfer / 1e6:.3f} ms less the host's share {host_us:g} us "
          "(--host-us)")


def _cache(f, s, rev, sk, host_us=None):
    ra = cache.fit_readahead(s["readahead"], rev)
    if ra is None:
        f.default("cache", "readahead_kib", "read-ahead", value=256,
                  why="no cache samples")
    else:
        f.set("cache", "readahead_kib", ra, "largest distance after a miss "
              "read again as a hit after an idle pause")
    seg = cache.fit_segments(s["segments"], rev)
    if seg:
        f.set("cache", "segments", min(seg, 32), "most regions read once "
              "that all hit when read again (LRU)")
    else:
        f.default("cache", "segments", "cache segments", value=16,
                  why="no region hit when read again")
    f.default("cache", "segment_kib", value=max(512, ra or 0))
    f.default("cache", "min_readahead_kib")
    wc = wcache.fit_write_cache(s["wcache"], rev)
    if wc:
        f.set("cache", "write_cache_kib", wc[0], wc[1])
    else:
        f.default("cache", "write_cache_kib",
                  why=wcache.never_filled(s["wcache"]))
    _link(f, s, rev)
    hit = cache.hit_response_ns(s["readahead"], s["segments"], rev)
    f.data["hit_ns"] = hit
    _read_hit(f, hit, host_us)
    if hit and sk:
        spt0 = f.zone_lines[0][2] if f.zone_lines else 1000
        miss = f.get("overhead", "read_hit_ms") + max(
            0.0, (sk["base_ns"] - hit - rev / spt0) / 1e6)
        f.set("overhead", "read_miss_ms", round(miss, 3),
              f"read_hit_ms + (distance-0 threshold {sk['base_ns'] / 1e6:.3f}"
              f" ms - a hit's response {hit / 1e6:.3f} ms - one sector)")
    else:
        f.default("overhead", "read_miss_ms", "read miss overhead",
                  value=0.2, why="no buffer hit or seek profile measured")
    f.default("overhead", "write_ms")
    f.default("overhead", "other_ms")


def fit(s, name=None, host_us=None):
    """A Fit from Samples.  host_us: the host's own time per command in
    us, if known (read_hit_ms is then measured, else defaulted).  Raises
    ValueError when even rpm or the zones are missing (the model cannot be
    written without them)."""
    ident = s.identify
    f = Fit(name or slug(ident["model"] if ident else None))
    _identity(f, s)
    rev = _rotation(f, s)
    if rev is None:
        raise ValueError("no revolution samples: the probe's rpm phase "
                         "did not run or failed")
    if not s["zone"]:
        raise ValueError("no zone samples: the probe's zones phase did not "
                         "run or failed")
    sk = _seek(f, s, rev)
    _zones_and_layout(f, s, rev, sk)
    if sk:
        _seek_table(f, sk)
    else:
        f.set("seek", "type", "twopart", "default curve")
        f.missing.append(("seek curve", "a + b sqrt(d): 1 ms one track, "
                          "18 ms full stroke", "no seek profile samples"))
        f.data["default_seek"] = True
        f.set("seek", "jitter_ms", 0, "default: no seek profile")
        f.set("seek", "head_switch_ms", 1.0, "default: no seek profile")
    f.default("seek", "write_settle_ms")
    _policy(f, s)
    _cache(f, s, rev, sk, host_us)
    jit = f.get("seek", "jitter_ms")
    f.set("seek", "plan_settle_ms", round(jit + 0.5, 3),
          "estimate: the jitter plus 0.5 ms (a firmware plans with an "
          "allowance, docs/model.md); ncq-fit's --calibrate refines it")
    f.set("firmware", "eval_us", 0, "estimate: ncq-fit's --calibrate "
          "refines it")
    for what, why in s.skipped():
        f.missing.append((what, "see the lines above", why))
    return f
