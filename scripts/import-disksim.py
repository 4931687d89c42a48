#!/usr/bin/env python3
"""Turn a DiskSim 4.0 drive (.diskspecs + .model + .seek) into an .ncqm model.

usage: import-disksim.py FILE.diskspecs [-o OUT.ncqm] [--name NAME]
                         [--set SECTION.KEY=VALUE[#NOTE]]...
                         [--figures OUT.fig]

Every value written names the DiskSim file and field it comes from, or says
"estimate:" and how it was chosen.  docs/model.md ("DiskSim's drive
library") explains the mapping and what it approximates.  Anything the
importer cannot read or map is one line on stderr,
  import-disksim: FILE:LINE: FIELD: problem; fix
exit status 1, and no output file.

SPDX-License-Identifier: GPL-2.0-or-later
"""
import argparse
import bisect
import math
import os
import re
import shlex
import sys
import tempfile

PROG = "import-disksim"
# DiskSim's sparing schemes (diskmodel/layout_g1.h) this importer maps
SPARING = {0: "none", 1: "spare tracks per zone", 2: "sectors per cylinder",
           3: "sectors per track", 7: "slips to the zone's end",
           8: "sectors per range of cylinders", 9: "sectors per zone",
           10: "sectors per zone, slips to the zone's end"}
MAX_ZONES = 128         # NCQ_MAX_ZONES
MAX_POINTS = 256        # NCQ_MAX_SEEK_POINTS
MAX_SEGMENTS = 32       # NCQ_MAX_SEGS


class BadInput(Exception):
    """One bad-input line: where, which field, what is wrong, the fix."""

    def __init__(self, where, field, problem, fix):
        super().__init__(f"{where}: {field}: {problem}; {fix}")


# ---- DiskSim's parameter syntax -------------------------------------------

class Value:
    """A parsed value: kind is 'word', 'list' or 'block'."""

    def __init__(self, kind, v, line, typename=None):
        self.kind, self.v, self.line, self.typename = kind, v, line, typename


TOKEN = re.compile(r"[{}\[\]=,]|[^\s{}\[\]=,]+")


def tokenize(text):
    """(token, line) pairs; '#' starts a comment up to the line's end."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        out.extend((t, n) for t in TOKEN.findall(line.split("#", 1)[0]))
    return out


class Parser:
    def __init__(self, fname, shown):
        self.shown = shown
        with open(fname, encoding="utf-8", errors="replace") as f:
            self.toks = tokenize(f.read())
        self.i = 0

    def err(self, line, field, problem, fix):
        return BadInput(f"{self.shown}:{line}", field, problem, fix)

    def peek(self):
        """The next (token, line); at the end, None and the last line."""
        if self.i < len(self.toks):
            return self.toks[self.i]
        return None, self.toks[-1][1] if self.toks else 1

    def take(self):
        t = self.peek()
        self.i += 1
        return t

    def words(self):
        out = []
        while self.peek()[0] and self.peek()[0] not in "{}[]=,":
            out.append(self.take())
        return out

    def value(self, field):
        tok, line = self.peek()
        if tok == "[":
            self.take()
            items = []
            while self.peek()[0] not in ("]", None):
                if self.peek()[0] == ",":
                    self.take()
                    continue
                items.append(self.value(field))
            if self.take()[0] != "]":
                raise self.err(line, field, "list without ]", "close the list")
            return Value("list", items, line)
        w = self.words()
        if self.peek()[0] == "{":
            self.take()
            return Value("block", self.body(field), line,
                         " ".join(t for t, _ in w))
        if not w:
            raise self.err(line, field, "missing value", "give a value")
        return Value("word", " ".join(t for t, _ in w), line)

    def body(self, where):
        fields = {}
        while True:
            tok, line = self.peek()
            if tok == "}":
                self.take()
                return fields
            if tok == ",":
                self.take()
                continue
            if tok is None:
                raise self.err(line, where, "block without }", "close it")
            key = " ".join(t for t, _ in self.words())
            if self.take()[0] != "=" or not key:
                raise self.err(line, key or where, "expected NAME = VALUE",
                               "fix the syntax")
            fields[key] = self.value(key)

    def top(self, kind):
        """The first `kind NAME { ... }` block of the file."""
        while self.peek()[0] is not None:
            w = self.words()
            if self.peek()[0] == "{":
                line = self.take()[1]
                if w and w[0][0] == kind:
                    name = " ".join(t for t, _ in w[1:])
                    return name, line, self.body(kind)
                self.body(w[0][0] if w else "?")
            elif self.peek()[0] is not None:
                self.take()
        raise self.err(1, kind, f"no {kind} block",
                       f"give the file a '{kind} NAME {{ ... }}' block")


# ---- reading fields -------------------------------------------------------

class Src:
    """A parsed block with the file it came from, for citing fields."""

    def __init__(self, shown, line, fields):
        self.shown, self.line, self.f = shown, line, fields

    def where(self, key):
        v = self.f.get(key)
        return f"{self.shown}:{v.line if v else self.line}"

    def cite(self, key):
        return f"{os.path.basename(self.shown)}: {key}"

    def get(self, key, kind="word"):
        v = self.f.get(key)
        if v is None:
            raise BadInput(f"{self.shown}:{self.line}", key,
                           "missing field", f"add '{key} = ...'")
        if v.kind != kind:
            raise BadInput(self.where(key), key, f"expected a {kind}",
                           "give the field its usual form")
        return v

    def num(self, key, integer=False, minimum=0.0):
        v = self.get(key).v
        try:
            x = float(v)
            if not math.isfinite(x):
                raise ValueError
        except ValueError:
            raise BadInput(self.where(key), key, f"'{v}' is not a number",
                           "write a decimal number") from None
        if integer and x != int(x):
            raise BadInput(self.where(key), key, f"'{v}' is not a whole "
                           "number", "write a whole number")
        if x < minimum:
            raise BadInput(self.where(key), key, f"{v} is below "
                           f"{fmt(minimum)}", "give a value in range")
        return int(x) if integer else x

    def nums(self, key):
        v = self.get(key, "list")
        out = []
        for item in v.v:
            try:
                out.append(float(item.v))
            except (TypeError, ValueError):
                raise BadInput(f"{self.shown}:{item.line}", key,
                               f"'{item.v}' is not a number",
                               "list decimal numbers") from None
        return out


def fmt(x, places=6):
    """A decimal without exponent or trailing zeros."""
    s = f"{x:.{places}f}".rstrip("0").rstrip(".")
    return s if s not in ("", "-0") else "0"


def repo_path(path):
    """@path as the repository shows it (relative to its top), if inside."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    a = os.path.abspath(path)
    return os.path.relpath(a, top) if a.startswith(top + os.sep) else path


def load_block(path, kind, cited_from, field):
    shown = repo_path(path)
    if not os.path.isfile(path):
        raise BadInput(cited_from, field, f"{shown} not found",
                       "put the file next to the one naming it")
    p = Parser(path, shown)
    name, line, fields = p.top(kind)
    return name, Src(shown, line, fields)


def read_seek_file(path, cited_from, field):
    shown = repo_path(path)
    if not os.path.isfile(path):
        raise BadInput(cited_from, field, f"{shown} not found",
                       "put the seek curve next to the model file")
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    m = re.match(r"\s*Seek distances measured:\s*(\d+)\s*$",
                 lines[0] if lines else "")
    if not m:
        raise BadInput(f"{shown}:1", "Seek distances measured",
                       "missing first line",
                       "start with 'Seek distances measured: N'")
    pts = []
    for n, l in enumerate(lines[1:], 2):
        if not l.strip():
            continue
        mm = re.match(r"\s*(\d+)\s*,\s*([0-9.]+)\s*$", l)
        if not mm:
            raise BadInput(f"{shown}:{n}", "seek point",
                           f"'{l.strip()}' is not 'distance, ms'",
                           "write 'distance, milliseconds'")
        d, t = int(mm.group(1)), float(mm.group(2))
        if pts and d <= pts[-1][0]:
            raise BadInput(f"{shown}:{n}", "seek point",
                           "distances must increase", "sort the curve")
        pts.append((d, t))
    if len(pts) != int(m.group(1)) or len(pts) < 2:
        raise BadInput(f"{shown}:1", "Seek distances measured",
                       f"says {m.group(1)}, file has {len(pts)}",
                       "make the count match the rows")
    if len(pts) > MAX_POINTS:
        raise BadInput(f"{shown}:1", "Seek distances measured",
                       f"{len(pts)} points, ncq-disk holds {MAX_POINTS}",
                       "thin the curve")
    return shown, pts


# ---- the mapping ------------------------------------------------------------

def profile_distances(maxdist):
    """The seek profile's distances (Lumb et al. 2002; DiskSim's .seek)."""
    out = list(range(1, 11)) + list(range(12, 21, 2)) + \
        list(range(25, 51, 5)) + list(range(60, 101, 10)) + \
        list(range(125, 501, 25)) + list(range(600, maxdist, 100))
    out = [d for d in out if d < maxdist]
    return out + [maxdist]


def hpl_table(mech, cylinders):
    """The hplplus10 equations at the profile's distances."""
    v = mech.nums("HPL seek equation values")
    first10 = mech.nums("First ten seek times")
    if len(v) != 6 or len(first10) != 10:
        raise BadInput(mech.where("HPL seek equation values"),
                       "HPL seek equation values",
                       "need 6 values and 10 first seek times",
                       "give V1..V6 and First ten seek times")
    pts = []
    for d in profile_distances(cylinders - 1):
        if d <= 10:
            t = first10[d - 1]
        elif d < v[0]:
            t = v[1] + v[2] * math.sqrt(d)
        else:
            t = v[3] + v[4] * d
        pts.append((d, t))
    return pts


def seek_section(out, mech, cylinders, model_dir):
    kind = mech.get("Seek type").v
    cite = mech.cite
    if kind == "extracted":
        curve = mech.get("Full seek curve").v
        shown, pts = read_seek_file(os.path.join(model_dir, curve),
                                    mech.where("Full seek curve"),
                                    "Full seek curve")
        out.append(f"# the extracted curve: {shown} "
                   f"({cite('Full seek curve')})")
    elif kind == "hplplus10":
        pts = hpl_table(mech, cylinders)
        out.append(f"# {cite('HPL seek equation values')} with "
                   f"{cite('First ten seek times')}")
        out.append("# (hplplus10: the first ten distances as given, V2 + V3 * "
                   "sqrt(d) below V1")
        out.append("# cylinders, V4 + V5 * d beyond) evaluated at the "
                   "seek profile's distances of")
        out.append("# Lumb et al. (docs/published-figures.md#lumb-et-al-2002)"
                   ", which DiskSim's extracted curves")
        out.append("# use: 1-10, then steps of 2, 5, 10, 25, 100 cylinders, "
                   "and the full stroke.")
    else:
        raise BadInput(mech.where("Seek type"), "Seek type",
                       f"'{kind}' is not mapped",
                       "use extracted or hplplus10")
    out.append("type = table  # the points below, linear between them")
    for d, t in pts:
        out.append(f"point = {d} {fmt(t, 5)}")
    return pts


def zone_line(z, scheme, rangesize):
    """The zone = ... line of one dm_layout_g1_zone, and its notes."""
    first = z.num("First cylinder number", True)
    last = z.num("Last cylinder number", True)
    spt = z.num("Blocks per track", True, 1)
    if last < first:
        raise BadInput(z.where("Last cylinder number"),
                       "Last cylinder number", "below the first",
                       "give the zone at least one cylinder")
    units = z.f.get("Skew units")
    if units and units.v != "sectors":
        raise BadInput(z.where("Skew units"), "Skew units",
                       f"'{units.v}' is not mapped", "give skews in sectors")
    tskew = z.num("Skew for track switch")
    cskew = z.num("Skew for cylinder switch")
    off = z.num("Offset of first block")
    front = z.num("Empty space at zone front", True)
    spares = z.num("Number of spares", True)
    slips = z.nums("slips") if "slips" in z.f else []
    defects = z.nums("defects") if "defects" in z.f else []
    for key, x in (("Skew for track switch", tskew),
                   ("Skew for cylinder switch", cskew),
                   ("Offset of first block", off)):
        if x >= spt:
            raise BadInput(z.where(key), key, f"{fmt(x)} sectors is not "
                           f"below the {spt} blocks per track",
                           "give less than one revolution")
    if scheme == 0:
        sp = "0/zone"
    elif scheme == 1:
        sp = f"{spares * spt}/zone"
    elif scheme == 2:
        sp = f"{spares}/cyl"
    elif scheme == 3:
        sp = f"{spares}/track"
    elif scheme == 7:
        if spares:
            raise BadInput(z.where("Number of spares"), "Number of spares",
                           "sectors per cylinder with slips to the end "
                           "are not modelled", "use sparing scheme 4")
        sp = f"{len(slips)}/zone"
    elif scheme == 8:
        sp = f"{spares}/{rangesize}cyl" if rangesize > 1 else f"{spares}/cyl"
    elif scheme == 9:
        sp = f"{spares}/zone"
    else:
        sp = f"{spares + len(slips)}/zone"
    line = (f"zone = {first} {last - first + 1} {spt} track_skew={fmt(tskew)} "
            f"cyl_skew={fmt(cskew)} first={fmt(off)} front={front} "
            f"spares={sp}")
    return first, last, spt, line, len(slips), len(defects)


def layout_section(out, dm, heads):
    lay = Src(dm.shown, dm.f["Layout Model"].line,
              dm.get("Layout Model", "block").v)
    mapping = lay.num("LBN-to-PBN mapping scheme", True)
    if mapping not in (0, 1, 2):
        raise BadInput(lay.where("LBN-to-PBN mapping scheme"),
                       "LBN-to-PBN mapping scheme",
                       f"scheme {mapping} is not known",
                       "use 0, 1 or 2")
    scheme = lay.num("Sparing scheme used", True)
    if scheme not in SPARING:
        raise BadInput(lay.where("Sparing scheme used"),
                       "Sparing scheme used",
                       f"scheme {scheme} (spares at the front of a "
                       "cylinder, or per cylinder with slips to the end) "
                       "is not modelled",
                       "use one of " + ", ".join(map(str, sorted(SPARING))))
    rangesize = lay.num("Rangesize for sparing", True, 1)
    zones = lay.get("Zones", "list").v
    if not 1 <= len(zones) <= MAX_ZONES:
        raise BadInput(lay.where("Zones"), "Zones",
                       f"{len(zones)} zones", f"give 1..{MAX_ZONES}")
    out.append(f"# {lay.cite('LBN-to-PBN mapping scheme')} = {mapping}"
               + ("" if mapping == 0 else
                  " (cylinder switches stay on the same surface): mapped as "
                  "0; skews") + ("" if mapping == 0 else "\n# count tracks in "
                                 "LBA order as DiskSim's do, only the head "
                                 "number of odd cylinders differs"))
    out.append(f"# {lay.cite('Sparing scheme used')} = {scheme} "
               f"({SPARING[scheme]}), {lay.cite('Rangesize for sparing')} = "
               f"{rangesize}")
    out.append("# zone = first_cylinder cylinders spt (First/Last cylinder "
               "number, Blocks per track);")
    out.append("# track_skew, cyl_skew, first: Skew for track/cylinder "
               "switch, Offset of first block")
    out.append("# (sectors); front: Empty space at zone front; spares: "
               "Number of spares per unit.")
    out.append("# slips and defects lists: not modelled (each shifts or "
               "moves one sector or track;")
    out.append("# the zone's capacity is kept); counts per zone in the "
               "comments.")
    nxt, rows = 0, []
    for i, zv in enumerate(zones):
        if zv.kind != "block":
            raise BadInput(f"{dm.shown}:{zv.line}", "Zones",
                           "expected dm_layout_g1_zone blocks",
                           "list zone blocks")
        z = Src(dm.shown, zv.line, zv.v)
        first, last, spt, line, ns, nd = zone_line(z, scheme, rangesize)
        if first < nxt:
            raise BadInput(z.where("First cylinder number"),
                           "First cylinder number",
                           f"zone {i} starts at {first}, inside the zone "
                           f"before (which ends at {nxt - 1})",
                           "list zones in order without overlaps")
        if first > nxt:
            # cylinders no zone of DiskSim's holds: mapped to nothing
            n, prev = first - nxt, rows[-1][2] if rows else spt
            gap = (f"zone = {nxt} {n} {prev} front=0 "
                   f"spares={n * heads * prev}/zone")
            out.append(gap + f"  # cylinders {nxt}-{first - 1}: in no zone "
                       "of DiskSim's, so unmapped")
            rows.append((nxt, first - 1, prev, gap))
        nxt = last + 1
        note = f"  # zone {i}, {dm.shown}:{zv.line}"
        if ns or nd:
            note += f"; {ns} slips, {nd} defects not modelled"
        out.append(line + note)
        rows.append((first, last, spt, line))
    return rows, nxt


def zone_lbas(line, heads):
    """Mapped sectors of a zone line (as hw/ide/ncq-model/layout.c)."""
    w = line.split()
    first, count, spt = int(w[2]), int(w[3]), int(w[4])
    opts = dict(x.split("=", 1) for x in w[5:])
    tracks = count * heads
    n, unit = opts["spares"].split("/")
    n = int(n)
    if unit == "track":
        u = 1
    elif unit == "zone":
        u = tracks
    else:
        u = (int(unit[:-3]) if unit != "cyl" else 1) * heads
    full = tracks // u
    return full * (u * spt - n) + (tracks - full * u) * spt - \
        int(opts["front"])


def media_mb_s(spt, rpm):
    return spt * 512 * rpm / 60 / 1e6


class Drive:
    """Everything read from one .diskspecs and the files it names."""

    def __init__(self, path):
        self.path = path
        if not os.path.isfile(path):
            raise BadInput(f"{repo_path(path)}:0", "file", "not found",
                           "give the path of a .diskspecs file")
        self.name, self.spec = load_block(path, "disksim_disk", path,
                                          "disksim_disk")
        mv = self.spec.get("Model")
        m = re.match(r"source\s+(\S+)$", mv.v)
        if not m:
            raise BadInput(self.spec.where("Model"), "Model",
                           f"'{mv.v}' does not name a file",
                           "write 'Model = source FILE.model'")
        self.model_dir = os.path.dirname(path)
        self.mname, self.dm = load_block(
            os.path.join(self.model_dir, m.group(1)), "dm_disk",
            self.spec.where("Model"), "Model")
        mech = self.dm.get("Mechanical Model", "block")
        self.mech = Src(self.dm.shown, mech.line, mech.v)
        self.heads = self.dm.num("Number of data surfaces", True, 1)
        self.cylinders = self.dm.num("Number of cylinders", True, 2)
        self.blocks = self.dm.num("Block count", True, 1)
        self.rpm = self.mech.num("Rotation speed (in rpms)", minimum=1000)


def drive_section(out, d, args):
    s, dm = d.spec, d.dm
    bulk = s.num("Bulk sector transfer time")
    model = re.sub(r"_validate$", "", d.name).replace("_", " ")
    out += ["[drive]", f"name = {args.name}  # --name",
            f"model = {model[:40]}  # DiskSim's drive name "
            f"({os.path.basename(d.path)}), without _validate",
            "firmware = 1.0  # estimate: DiskSim gives no firmware revision",
            "kind = hdd  # a dm_disk: DiskSim's mechanical disk",
            f"capacity = {d.blocks}  # {dm.cite('Block count')} (512-byte "
            "blocks, exported as the SATA capacity)",
            f"rpm = {round(d.rpm)}  # "
            f"{d.mech.cite('Rotation speed (in rpms)')}"
            + (f" = {fmt(d.rpm)}, rounded" if d.rpm != round(d.rpm) else ""),
            f"queue_depth = 32  # estimate: DiskSim's Max queue length = "
            f"{s.num('Max queue length', True)} (validated one request at a "
            "time); presented as an NCQ drive with 32 tags"]
    if bulk > 0:
        out.append(f"bus_mb_s = {fmt(0.512 / bulk, 3)}  # "
                   f"{s.cite('Bulk sector transfer time')} = {fmt(bulk)} ms "
                   "per 512-byte block")
    else:
        rate = math.ceil(2 * d.outer_mb_s)
        out.append(f"bus_mb_s = {rate}  # estimate: "
                   f"{s.cite('Bulk sector transfer time')} = 0 (no limit of "
                   "the drive's own; DiskSim's bus, not in the library, sets "
                   "it): twice the outer zone's media rate, so the link "
                   "does not limit a stream")


def overhead_section(out, d):
    s = d.spec
    scale = s.num("Time scale for overheads")
    per = s.num("Per-request overhead time")

    def ms(key):
        return fmt((s.num(key) + per) * scale, 5)

    note = (f" (+ Per-request overhead time {fmt(per)})" if per else "") + \
        (f" x Time scale for overheads {fmt(scale)}" if scale != 1 else "")
    out += ["[overhead]",
            f"read_miss_ms = {ms('Read miss over. after read')}  # "
            f"{s.cite('Read miss over. after read')}{note}",
            f"read_hit_ms = {ms('Read hit over. after read')}  # "
            f"{s.cite('Read hit over. after read')}{note}",
            f"write_ms = {ms('Write miss over. after write')}  # "
            f"{s.cite('Write miss over. after write')}{note}",
            f"other_ms = {ms('Read hit over. after read')}  # estimate: "
            "DiskSim has no non-data commands; the read hit overhead, its "
            "shortest command path"]


def cache_split(segs, wsegs):
    """DiskSim's segments as ncq-disk's read segments and write cache.

    In DiskSim up to `Maximum number of write segments` of the buffer's
    segments hold write data; ncq-disk keeps write data apart, so those
    segments become the write cache and the rest the read segments, the
    buffer keeping its size.  At least one segment stays for reads.
    """
    w = min(max(wsegs, 1), segs - 1) if segs > 1 else 1
    return segs - w if segs > 1 else 1, w


def cache_section(out, d):
    s = d.spec
    segs = s.num("Number of buffer segments", True, 1)
    size = s.num("Segment size (in blks)", True, 1)
    wsegs = s.num("Maximum number of write segments", True)
    fast = s.num("Fast write level", True)
    rsegs, w = cache_split(segs, wsegs)

    def kib(key):
        return fmt(s.num(key, True) / 2, 1)

    if segs > MAX_SEGMENTS:
        raise BadInput(s.where("Number of buffer segments"),
                       "Number of buffer segments",
                       f"{segs} segments, ncq-disk holds {MAX_SEGMENTS}",
                       "merge segments")
    wnote = (f"{s.cite('Maximum number of write segments')} = {wsegs} of "
             f"the {segs} segments")
    if segs == 1:
        wnote += (" (estimate: DiskSim's one segment serves reads and "
                  "writes; ncq-disk gives writes a segment of their own)")
    elif w != wsegs:
        wnote += f" (estimate: {w}, leaving one for reads)"
    out += ["[cache]",
            f"segments = {rsegs}  # {s.cite('Number of buffer segments')} = "
            f"{segs}, less the {w} for write data (write_cache_kib)",
            f"segment_kib = {fmt(size / 2, 1)}  # "
            f"{s.cite('Segment size (in blks)')} = {size}",
            f"readahead_kib = {kib('Maximum read-ahead (blks)')}"
            f"  # {s.cite('Maximum read-ahead (blks)')}",
            f"min_readahead_kib = {kib('Minimum read-ahead (blks)')}"
            f"  # {s.cite('Minimum read-ahead (blks)')}",
            f"write_cache_kib = {fmt(w * size / 2, 1)}  # {wnote}",
            f"write_cache = {'on' if fast else 'off'}  # "
            f"{s.cite('Fast write level')} = {fast}" +
            (" (write-behind for sequential writes only: mapped to on)"
             if fast == 1 else "")]


def firmware_section(out, d):
    s = d.spec
    sched = s.get("Scheduler", "block")
    pol = Src(d.spec.shown, sched.line, sched.v).num("Scheduling policy",
                                                     True)
    names = {1: "fcfs", 4: "sstf", 3: "clook"}
    if pol not in names:
        raise BadInput(f"{s.shown}:{sched.line}", "Scheduling policy",
                       f"policy {pol} is not mapped",
                       "use 1 (FCFS), 3 (C-LOOK) or 4 (SSTF)")
    out += ["[firmware]",
            f"policy = {names[pol]}  # {s.cite('Scheduling policy')} = {pol} "
            f"({names[pol].upper()})",
            "zero_latency = off  # estimate: DiskSim's disk reads in order "
            "from the first requested sector"]


def write_settle(mech):
    key = "Add. write settling delay"
    v = float(mech.get(key).v) if re.match(r"^-?[0-9.]+$", mech.get(key).v) \
        else mech.num(key)
    if v >= 0:
        return f"write_settle_ms = {fmt(v, 5)}  # {mech.cite(key)}"
    return (f"write_settle_ms = 0  # estimate: {mech.cite(key)} = {fmt(v, 5)} "
            "(writes settle faster than reads); ncq-disk adds no negative "
            "settle")


def build(d, args):
    """The .ncqm text and the figure rows of drive @d."""
    out, mech, dm = [], d.mech, d.dm
    layout = []
    rows, ncyl = layout_section(layout, dm, d.heads)
    if ncyl < d.cylinders:
        raise BadInput(dm.where("Number of cylinders"),
                       "Number of cylinders",
                       f"{d.cylinders}, the zones end at {ncyl}",
                       "make the zones cover every cylinder")
    total = sum(zone_lbas(r[3], d.heads) for r in rows)
    if total < d.blocks:
        raise BadInput(dm.where("Block count"), "Block count",
                       f"{d.blocks}, the zones map only {total}",
                       "check the zones' spares")
    d.outer_mb_s = media_mb_s(rows[0][2], d.rpm)
    drive_section(out, d, args)
    out += ["", "[layout]",
            f"heads = {d.heads}  # {dm.cite('Number of data surfaces')}",
            f"cylinders = {ncyl}  # {dm.cite('Number of cylinders')}" +
            (f" = {d.cylinders}; the zones end at cylinder {ncyl - 1}"
             if ncyl != d.cylinders else ""),
            f"# the zones map {total} blocks (Block count {d.blocks})"]
    out += layout + ["", "[seek]"]
    pts = seek_section(out, mech, d.cylinders, d.model_dir)
    out += [f"head_switch_ms = {fmt(mech.num('Head switch time'), 5)}  # "
            f"{mech.cite('Head switch time')}",
            write_settle(mech), ""]
    overhead_section(out, d)
    out.append("")
    cache_section(out, d)
    out.append("")
    firmware_section(out, d)
    return out, rows, pts


def apply_sets(lines, sets):
    """--set SECTION.KEY=VALUE[#NOTE]: replace or add a key."""
    for n, item in enumerate(sets, 1):
        m = re.match(r"(\w+)\.(\w+)=([^#]+?)\s*(?:#\s*(.*))?$", item)
        if not m:
            raise BadInput(f"--set:{n}", item, "not SECTION.KEY=VALUE[#NOTE]",
                           "write e.g. firmware.policy=sptf#why")
        sec, key, val, note = m.groups()
        new = f"{key} = {val}" + (f"  # {note}" if note else "  # --set")
        try:
            start = lines.index(f"[{sec}]")
        except ValueError:
            raise BadInput(f"--set:{n}", item, f"no section [{sec}]",
                           "use drive, layout, seek, overhead, cache or "
                           "firmware") from None
        end = start + 1
        while end < len(lines) and lines[end] and \
                not lines[end].startswith("["):
            end += 1
        for i in range(start + 1, end):
            if lines[i].split("=")[0].strip() == key:
                lines[i] = new
                break
        else:
            lines.insert(end, new)
    return lines


def seek_at(pts, d):
    """The curve at distance @d: linear between points, beyond the last."""
    i = bisect.bisect_left(pts, (d, -1.0))
    if i < len(pts) and pts[i][0] == d:
        return pts[i][1]
    i = min(max(i, 1), len(pts) - 1)
    (d0, t0), (d1, t1) = pts[i - 1], pts[i]
    return t0 + (t1 - t0) * (d - d0) / (d1 - d0)


def seek_figure(key, mech, field, curve, src, seek_src):
    """The stated seek time, or the curve's where the two disagree.

    Several old drives carry placeholder single-cylinder and full-stroke
    times (0.2 and 2.3 ms) that DiskSim's extracted and HPL seeks ignore.
    """
    stated = mech.num(field)
    if abs(stated - curve) <= 0.5 * curve:
        return f"{key} {fmt(stated, 5)} ms 5% {src} -- {field}"
    return (f"{key} {fmt(curve, 5)} ms 5% {seek_src} -- computed from the "
            f"seek curve; {field} = {fmt(stated, 5)} in {src} is not used by "
            "DiskSim's seek type and contradicts the curve")


SEEK_PAIRS = 200000
# the media keys' reader (docs/validation/README.md): 128 KiB commands
READER_SECTORS = 256


def splitmix64(x):
    """The next state and number of splitmix64 (deterministic anywhere)."""
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x, z ^ (z >> 31)


def zone_firsts(rows, heads):
    out, lba = [], 0
    for r in rows:
        out.append(lba)
        lba += zone_lbas(r[3], heads)
    return out


def zone_of(rows, heads, lba):
    """The zone row holding @lba (a zone mapping nothing holds none)."""
    firsts = zone_firsts(rows, heads)
    i = bisect.bisect_right(firsts, lba) - 1
    while zone_lbas(rows[i][3], heads) == 0:
        i -= 1
    return rows[i]


def mean_seek(d, rows, pts):
    """Mean seek between random exported LBAs on different cylinders.

    A cylinder is placed in proportion within its zone; that is within a
    cylinder or so of the layout, enough for a mean over the whole disk.
    """
    firsts = zone_firsts(rows, d.heads)
    sizes = [zone_lbas(r[3], d.heads) for r in rows]
    state, total, n = 1, 0.0, 0
    while n < SEEK_PAIRS:
        cyl = []
        for _ in range(2):
            state, r = splitmix64(state)
            lba = r % d.blocks
            i = bisect.bisect_right(firsts, lba) - 1
            while sizes[i] == 0:
                i -= 1
            first, last = rows[i][0], rows[i][1]
            cyl.append(first + (lba - firsts[i]) * (last - first + 1) //
                       sizes[i])
        if cyl[0] != cyl[1]:
            total += seek_at(pts, abs(cyl[0] - cyl[1]))
            n += 1
    return total / n


def stream_mb_s(d, row, pts):
    """What DiskSim's layout lets a stream read from zone @row, MB/s.

    Per cylinder the head passes every track (spares included) and waits
    its track skews and the cylinder skew, one more revolution where a
    skew is shorter than the head switch or the one-cylinder seek.
    """
    first, last, spt, line = row
    w = dict(x.split("=", 1) for x in line.split()[5:])
    tskew, cskew = float(w.get("track_skew", 0)), float(w.get("cyl_skew", 0))
    rev_ms = 60000 / d.rpm
    if tskew * rev_ms / spt < d.mech.num("Head switch time"):
        tskew += spt
    if cskew * rev_ms / spt < seek_at(pts, 1):
        cskew += spt
    heads = d.heads
    if w["spares"].endswith("/zone"):
        # spares at the zone's end: a stream inside the zone meets none
        per_cyl = heads * spt
    else:
        per_cyl = (zone_lbas(line, heads) + int(w["front"])) / \
            (last - first + 1)
    sectors_time = heads * spt + (heads - 1) * tskew + cskew
    return per_cyl * 512 * spt / sectors_time * d.rpm / 60 / 1e6


def media_figure(key, d, row, pts, zone, src):
    """The rate a stream gets from the zone; the link may hold it lower."""
    rate = stream_mb_s(d, row, pts)
    bulk = d.spec.num("Bulk sector transfer time")
    tol, note = "5%", ""
    seg = d.spec.num("Segment size (in blks)", True)
    if bulk > 0 and 0.512 / bulk < rate:
        tol = "none"
        note = (f"; unreachable through the link: Bulk sector transfer time "
                f"{fmt(bulk)} ms = {fmt(0.512 / bulk, 3)} MB/s, which "
                "ncq-disk's bus_mb_s keeps")
    elif seg < READER_SECTORS:
        tol = "none"
        note = (f"; unreachable by a reader of {READER_SECTORS}-sector "
                f"commands: a segment holds {seg} blocks (Segment size), so "
                "read-ahead cannot bridge the gap between commands and each "
                "one waits for the media again")
    return (f"{key} {fmt(rate, 3)} MB/s {tol} {src} -- computed from Blocks "
            f"per track {row[2]}, skews, spares and {fmt(d.rpm)} rpm of "
            f"{zone}: a stream reads a cylinder's mapped sectors in one "
            f"revolution per track plus the skews{note}")


def figures(d, rows, pts, model_path):
    """The DiskSim figures of the drive, for the validation sheet."""
    src = d.dm.shown
    mech = d.mech
    n = d.cylinders
    avg = mean_seek(d, rows, pts)
    curve = mech.f.get("Full seek curve")
    seek_src = (os.path.join(os.path.dirname(src), curve.v)
                if mech.get("Seek type").v == "extracted" else src)
    outer, inner = rows[0], zone_of(rows, d.heads, d.blocks - 1)
    lines = [f"# Figures of {d.name}: what {src} states, or computed from it.",
             f"# Written by scripts/import-disksim.py for {model_path}.",
             f"capacity_sectors {d.blocks} sectors 0% {src} -- Block count",
             f"rpm {fmt(d.rpm)} rpm 0% {src} -- Rotation speed (in rpms)",
             f"avg_seek_ms {fmt(avg, 3)} ms 5% {seek_src} -- computed from "
             f"the seek curve: mean over {SEEK_PAIRS} random pairs of "
             "exported LBAs on different cylinders",
             seek_figure("track_to_track_ms", mech, "Single cylinder seek "
                         "time", seek_at(pts, 1), src, seek_src),
             seek_figure("full_stroke_ms", mech, "Full strobe seek time",
                         seek_at(pts, n - 1), src, seek_src),
             f"head_switch_ms {fmt(mech.num('Head switch time'), 5)} ms 2% "
             f"{src} -- Head switch time" if mech.num("Head switch time")
             else "# head_switch_ms: Head switch time = 0 in " + src +
             ", no figure to check (a figure is positive)",
             media_figure("media_outer_mb_s", d, outer, pts, "zone 0", src),
             media_figure("media_inner_mb_s", d, inner, pts,
                          "the zone of the last exported LBA", src)]
    s = d.spec
    segs = s.num("Number of buffer segments", True)
    size = s.num("Segment size (in blks)", True)
    rsegs, w = cache_split(segs, s.num("Maximum number of write segments",
                                       True))
    if rsegs + w == segs:
        tol, note = "0%", ""
    else:
        tol, note = "none", ("; ncq-disk gives write data a segment of its "
                             "own beside the read segments")
    lines.append(f"cache_kib {fmt(segs * size / 2, 1)} KiB {tol} {s.shown} "
                 f"-- computed from Number of buffer segments {segs} x "
                 f"Segment size (in blks) {size}{note}")
    return lines


def write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)),
                               prefix=".import-disksim.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return tmp


def header(d, args, argv):
    # one option per line, shell continuations: a copy-paste command
    words, parts = ["scripts/import-disksim.py"] + argv, []
    for w in words:
        if w.startswith("-") or not parts:
            parts.append(shlex.quote(w))
        else:
            parts[-1] += " " + shlex.quote(w)
    licence = os.path.join(os.path.dirname(d.spec.shown), "COPYING")
    return [f"# {args.name}: DiskSim 4.0's {d.name} as an ncq-disk model.",
            "# Generated by:"] + \
        [f"#   {x}" + (" \\" if i + 1 < len(parts) else "")
         for i, x in enumerate(parts)] + [

            "# Do not edit: change the importer or its --set options and "
            "regenerate.",
            f"# Source: {d.spec.shown}, {d.dm.shown} and the files they name "
            f"(licence: {licence};",
            "# see data/disksim/README.md). A SCSI drive presented as a SATA "
            "NCQ drive: capacity",
            "# = DiskSim's Block count, 32 NCQ tags, the link runs at the "
            "drive's bus rate.", "#"]


def extra_figures(rows):
    """--figure ROW: a published figure from outside DiskSim's files."""
    out = []
    for n, row in enumerate(rows, 1):
        head = row.partition(" -- ")[0].split()
        if len(head) != 5 or not re.fullmatch(r"\d+(\.\d+)?%|none", head[3]):
            raise BadInput(f"--figure:{n}", "ROW", "not KEY VALUE UNIT "
                           "TOLERANCE SOURCE [-- NOTE]",
                           "write it as docs/validation/README.md says")
        out.append(row)
    if out:
        out.insert(0, "# Figures of other sources (--figure):")
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    ap.add_argument("diskspecs")
    ap.add_argument("-o", dest="out")
    ap.add_argument("--name")
    ap.add_argument("--set", dest="sets", action="append", default=[],
                    metavar="SECTION.KEY=VALUE[#NOTE]")
    ap.add_argument("--figures", metavar="OUT.fig")
    ap.add_argument("--figure", dest="extra", action="append", default=[],
                    metavar="ROW", help="a figures row from another source, "
                    "appended to --figures")
    args = ap.parse_args(argv)
    tmps = []
    try:
        d = Drive(args.diskspecs)
        if not args.name:
            args.name = re.sub(r"[^a-z0-9]+", "-",
                               re.sub(r"_validate$", "", d.name.lower()))
        args.title = d.name
        lines, rows, pts = build(d, args)
        lines = header(d, args, argv) + apply_sets(lines, args.sets)
        text = "\n".join(lines) + "\n"
        if args.figures:
            fig = figures(d, rows, pts, repo_path(args.out) if args.out
                          else args.name) + extra_figures(args.extra)
            tmps.append((write_atomic(args.figures, "\n".join(fig) + "\n"),
                         args.figures))
        if args.out:
            tmps.append((write_atomic(args.out, text), args.out))
        else:
            sys.stdout.write(text)
        for tmp, dest in tmps:
            os.replace(tmp, dest)
        return 0
    except BadInput as e:
        for tmp, _ in tmps:
            os.unlink(tmp)
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        for tmp, _ in tmps:
            os.unlink(tmp)
        print(f"{PROG}: {e.filename or args.diskspecs}:0: file: "
              f"{e.strerror}; check the path", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
