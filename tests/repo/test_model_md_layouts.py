"""docs/model.md's summary of the drives gives each model's heads, zones,
outer and inner sectors per track, cylinders, capacity and rpm as its
model file has them (the SAS drives' row kept pre-recalibration values
once)."""
import re

import doclists
from repopaths import ROOT


def _num(s):
    return int(s.replace(",", ""))


def test_summary_layouts_are_the_model_files():
    text = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w-]+)`(?: \(default\))? \| ([\d,]+) [^|]*\| "
                      r"([\d,]+)[^|]*\| ([^|]*)\|", text, re.M)
    assert len(rows) >= 8, "docs/model.md: the drives' summary table not found"
    bad = []
    for name, cap, rpm, layout in rows:
        keys = doclists._keys((doclists.MODELS / "models" /
                               f"{name}.ncqm").read_text())
        d, lay = keys["drive"], keys.get("layout", {})
        if _num(cap) != int(d["capacity"]):
            bad.append(f"{name}: capacity {cap}, the file {d['capacity']}")
        if _num(rpm) != int(d["rpm"]):
            bad.append(f"{name}: rpm {rpm}, the file {d['rpm']}")
        m = re.match(r"\s*(\d+) heads, (?:[\d,]+ cyl, )?(?:DiskSim's )?"
                     r"(\d+) zones(?: (\d+)-(\d+))?", layout)
        if not m or "heads" not in lay:
            continue
        said, have = [m.group(1)], [lay["heads"]]
        if "zones" in lay:     # DiskSim's drives: zone lines, not a count
            said.append(m.group(2))
            have.append(lay["zones"])
        if m.group(3) and "outer_spt" in lay:
            said += [m.group(3), m.group(4)]
            have += [lay["outer_spt"], lay["inner_spt"]]
        c = re.search(r"([\d,]+) cyl", layout)
        if c and "cylinders" in lay:
            said.append(str(_num(c.group(1))))
            have.append(lay["cylinders"])
        if said != have:
            bad.append(f"{name}: the doc says {said}, the file {have} "
                       "(heads, zones, outer/inner spt, cylinders)")
    assert not bad, "docs/model.md's drive summary:\n" + "\n".join(bad)
