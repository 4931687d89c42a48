"""A model file's layout and seek curve in Python: LBA -> (cylinder,
head), the media rate a stream gets in each zone, the seek time of a
distance, as hw/ide/ncq-model/layout.c and mech.c compute them.  ncq-fit
uses it for the model it writes; the round-trip tests compare a fitted
model with the original through it (the same functions for both).

The file is read by the model library itself (`ncq-sim --dump-model`):
its parser, defaults and zone layout (analytic zones, spares, skews, each
zone's LBAs), not a second copy of them here."""

import math

import ncqfit_sim


def dump(model, sim=None):
    """ncqfit_sim.dump_model(): the model as the library parses it."""
    return ncqfit_sim.dump_model(model, sim)


class Layout:
    """Zones of (first_cyl, cyl_count, spt, mapped, first_lba, track_skew,
    cyl_skew) with skews as fractions of a revolution."""

    def __init__(self, model):
        """@model: dump()'s dict; the zones are the library's own."""
        drive = model["drive"]
        self.heads = int(model["layout"]["heads"])
        self.rpm = float(drive["rpm"])
        self.rev_ns = 60e9 / self.rpm
        self.capacity = int(drive["capacity"])
        self.bus_bps = float(drive["bus_mb_s"]) * 1e6
        self.zones = []
        for z in model["layout"]["zone"]:
            unit = z["spare_tracks"] or z["cyl_count"] * self.heads
            self.zones.append(dict(
                first_cyl=z["first_cyl"], cyls=z["cyl_count"], spt=z["spt"],
                mapped=z["spt"] - z["spares"] if unit == 1 else z["spt"],
                unit_tracks=unit, spares=z["spares"], front=z["front"],
                lbas=z["lbas"], first_lba=z["first_lba"],
                track_skew=z["track_skew"], cyl_skew=z["cyl_skew"]))
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


class SeekCurve:
    def __init__(self, s):
        self.type = s["type"]
        self.head_switch_ns = s["head_switch_ms"] * 1e6
        self.jitter_ns = s["jitter_ms"] * 1e6
        if self.type == "table":
            self.points = [(int(d), ms * 1e6) for d, ms in s["point"]]
        else:
            self.a, self.b = s["a_ms"] * 1e6, s["b_ms"] * 1e6
            self.x = int(s["x"])
            self.c, self.e = s["c_ms"] * 1e6, s["e_ms"] * 1e6

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


def load(path, sim=None):
    """The Layout of a model file (or built-in model), parsed by the model
    library through ncq-sim --dump-model."""
    return Layout(dump(path, sim))
