"""A model file's layout and seek curve in Python: LBA -> (cylinder,
head), the media rate a stream gets in each zone, the seek time of a
distance, as hw/ide/ncq-model/layout.c and mech.c compute them.  ncq-fit
uses it for the model it writes; the round-trip tests compare a fitted
model with the original through it (the same functions for both)."""

import math
import re


def parse_ncqm(text):
    """{section: {key: value}}; repeated keys (zone, point) as lists."""
    out = {}
    sec = None
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"\[(\w+)\]$", line)
        if m:
            sec = out.setdefault(m[1], {})
            continue
        k, _, v = line.partition("=")
        k, v = k.strip(), v.strip()
        if k in ("zone", "point"):
            sec.setdefault(k, []).append(v)
        else:
            sec[k] = v
    return out


def _num(s, default=0.0):
    return float(s) if s is not None else default


class Layout:
    """Zones of (first_cyl, cyl_count, spt, mapped, first_lba, track_skew,
    cyl_skew) with skews as fractions of a revolution."""

    def __init__(self, model):
        lay, drive = model["layout"], model["drive"]
        self.heads = int(lay["heads"])
        self.rpm = float(drive["rpm"])
        self.rev_ns = 60e9 / self.rpm
        self.capacity = int(drive["capacity"])
        # the link's rate unless the file gives the drive's own (model.md)
        gen_rate = {1: 150, 2: 300, 3: 600}
        self.bus_bps = float(drive.get("bus_mb_s") or gen_rate.get(
            int(drive.get("sata_gen", 0) or 0), 300)) * 1e6
        spare = int(lay.get("spare_per_track", 0))
        ts = _num(lay.get("track_skew"))
        cs = _num(lay.get("cyl_skew"))
        zones = []
        if "zone" in lay:
            for z in lay["zone"]:
                w = z.split()
                first, count, spt = int(w[0]), int(w[1]), int(w[2])
                opts = dict(o.split("=", 1) for o in w[3:])
                zts = float(opts["track_skew"]) / spt \
                    if "track_skew" in opts else ts
                zcs = float(opts["cyl_skew"]) / spt \
                    if "cyl_skew" in opts else cs
                unit, nspare = _spare_unit(opts.get("spares"), spare,
                                           self.heads)
                zones.append([first, count, spt, unit, nspare, zts, zcs,
                              int(opts.get("front", 0))])
        else:
            n = int(lay["zones"])
            outer, inner = int(lay["outer_spt"]), int(lay["inner_spt"])
            cyls = int(lay["cylinders"])
            per = cyls // n
            start = 0
            for i in range(n):
                count = cyls - start if i + 1 == n else per
                spt = outer if n == 1 else \
                    outer - (outer - inner) * i // (n - 1)
                zones.append([start, count, spt, 1, spare, ts, cs, 0])
                start += count
        lba = 0
        self.zones = []
        for first, count, spt, unit, nspare, zts, zcs, front in zones:
            tracks = count * self.heads
            unit = unit or tracks
            full = tracks // unit
            lbas = full * (unit * spt - nspare) + (tracks - full * unit) * \
                spt - front
            self.zones.append(dict(first_cyl=first, cyls=count, spt=spt,
                                   mapped=spt - nspare if unit == 1 else spt,
                                   unit_tracks=unit, spares=nspare,
                                   front=front, lbas=lbas, first_lba=lba,
                                   track_skew=zts, cyl_skew=zcs))
            lba += lbas
        self.seek = SeekCurve(model["seek"])

    def zone_of(self, lba):
        for z in reversed(self.zones):
            if lba >= z["first_lba"]:
                return z
        return self.zones[0]

    def chs(self, lba):
        """(cylinder, head) of lba: the zone's front sectors and each spare
        unit's last sectors hold no LBA (layout.c)."""
        z = self.zone_of(lba)
        off = lba - z["first_lba"] + z["front"]
        unit_lbas = z["unit_tracks"] * z["spt"] - z["spares"]
        u, rest = divmod(off, max(unit_lbas, 1))
        track = u * z["unit_tracks"] + rest // max(z["spt"], 1)
        return z["first_cyl"] + track // self.heads, track % self.heads

    def zone_rate(self, z):
        """Bytes/s of a stream through the zone: a track per revolution,
        then the wait for the next track's skewed first sector after a
        head switch or a one-cylinder seek (a revolution more when the
        switch takes longer than the skew)."""
        rev = self.rev_ns

        def wait(skew, switch_ns):
            w = skew * rev
            while w < switch_ns:
                w += rev
            return w
        hs = self.seek.head_switch_ns
        cyl_switch = self.seek.time_ns(1)
        t = self.heads * rev + (self.heads - 1) * wait(z["track_skew"], hs) \
            + wait(z["cyl_skew"], cyl_switch)
        return self.heads * z["mapped"] * 512 / (t / 1e9)

    def rate_at(self, lba):
        """A stream's rate: the media's, or the bus's if slower."""
        return min(self.zone_rate(self.zone_of(lba)), self.bus_bps)

    def positioning_ns(self, a, b):
        """Seek or head switch from LBA a's track to b's, plus the mean
        settle jitter when the head moves (sched.c adds uniform [0, J])."""
        ca, ha = self.chs(a)
        cb, hb = self.chs(b)
        d = abs(cb - ca)
        sk = 0.0
        if d:
            sk = self.seek.time_ns(d)
            if sk < self.seek.head_switch_ns and ha != hb:
                sk = self.seek.head_switch_ns
        elif ha != hb:
            sk = self.seek.head_switch_ns
        if sk:
            sk += self.seek.jitter_ns / 2
        return sk


def _spare_unit(spec, spare_per_track, heads):
    """(tracks per spare unit, spare sectors per unit) of a zone's
    `spares=N/UNIT` (docs/model.md; 0 tracks: the whole zone)."""
    if not spec:
        return 1, spare_per_track
    n, unit = spec.split("/")
    if unit == "track":
        return 1, int(n)
    if unit == "cyl":
        return heads, int(n)
    if unit == "zone":
        return 0, int(n)
    return int(unit[:-3]) * heads, int(n)        # "<R>cyl"


class SeekCurve:
    def __init__(self, s):
        self.type = s.get("type", "twopart")
        self.head_switch_ns = _num(s.get("head_switch_ms")) * 1e6
        self.jitter_ns = _num(s.get("jitter_ms")) * 1e6
        if self.type == "table":
            pts = [p.split() for p in s["point"]]
            self.points = [(int(d), float(ms) * 1e6) for d, ms in pts]
        else:
            self.a, self.b = _num(s["a_ms"]) * 1e6, _num(s["b_ms"]) * 1e6
            self.x = int(s["x"])
            self.c, self.e = _num(s["c_ms"]) * 1e6, _num(s["e_ms"]) * 1e6

    def time_ns(self, d):
        if d == 0:
            return 0.0
        if self.type != "table":
            if d < self.x:
                return self.a + self.b * math.sqrt(d)
            return self.c + self.e * d
        pts = self.points
        if d <= pts[0][0] or len(pts) == 1:
            return pts[0][1]
        for (d0, t0), (d1, t1) in zip(pts, pts[1:]):
            if d <= d1:
                return t0 + (t1 - t0) * (d - d0) / (d1 - d0)
        (d0, t0), (d1, t1) = pts[-2], pts[-1]
        return t0 + (t1 - t0) * (d - d0) / (d1 - d0)


def load(path):
    with open(path) as f:
        return Layout(parse_ncqm(f.read()))
