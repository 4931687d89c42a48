"""A run against a saved results.json (--baseline): cells matched, metric
by metric, with a relative threshold.  Runs are deterministic, so any
move comes from what differs between the two runs' cells (kernel,
scheduler, device line, workload); a baseline made with another QEMU
build or guest image cannot say that and is refused."""

from compare import metrics


class NotComparable(Exception):
    """The baseline was made with other inputs; the message is one line."""


def _short(h):
    return (h or "?")[:12]


def match(base_cells, new_cells):
    """[(new cell, base cell or None)]: the same cell id first, else the
    same position in the matrix (so that a changed tunable or device line
    is compared with what stood in its place)."""
    by_id = {c["id"]: c for c in base_cells}
    used, pairs = set(), []
    for c in new_cells:
        b = by_id.get(c["id"])
        if b is not None:
            used.add(b["id"])
        pairs.append([c, b])
    by_coord = {tuple(c["coord"]): c for c in base_cells
                if c["id"] not in used}
    for p in pairs:
        if p[1] is None:
            b = by_coord.pop(tuple(p[0]["coord"]), None)
            p[1] = b
    return [tuple(p) for p in pairs]


def check_comparable(base, new, path):
    bq, nq = base["qemu"]["sha256"], new["qemu"]["sha256"]
    if bq != nq:
        raise NotComparable(
            f"baseline {path} was made with another QEMU build (qemu "
            f"sha256 {_short(bq)}, this run {_short(nq)}): not comparable; "
            "make a new baseline with this build")
    for c, b in match(base["cells"], new["cells"]):
        if b is None:
            continue
        bi = b["inputs"].get("image", {}).get("inputs_hash")
        ni = c["inputs"].get("image", {}).get("inputs_hash")
        if bi and ni and bi != ni and b["kernel"] == c["kernel"]:
            raise NotComparable(
                f"baseline {path} was made with another guest image for "
                f"kernel {c['kernel']} (image {bi}, this run {ni}): not "
                "comparable; make a new baseline with this image")


def moved(old, new, threshold):
    """(moved?, relative change in %): a change of more than threshold
    (a fraction) of the old value; from 0, any change."""
    if old == new:
        return False, 0.0
    if old == 0:
        return True, float("inf")
    pct = 100.0 * (new - old) / abs(old)
    return abs(pct) > 100.0 * threshold, pct


def compare(base, new, threshold):
    """{cell id: [change lines]} for the cells that moved, and notes
    (cells with no counterpart).  Raises NotComparable."""
    changes, notes = {}, []
    for c, b in match(base["cells"], new["cells"]):
        if b is None:
            notes.append(f"{c['id']}: not in the baseline")
            continue
        lines = []
        if b["id"] != c["id"]:
            lines.append(f"in place of {b['id']}")
        if c["status"] != "ok" or b["status"] != "ok":
            if c["status"] != b["status"]:
                lines.append(f"status {b['status']} -> {c['status']}"
                             + (f" ({c.get('error')})" if c.get("error")
                                else ""))
                changes[c["id"]] = lines
            continue
        fo, fn = metrics.flat(b["metrics"]), metrics.flat(c["metrics"])
        hits = []
        for name in metrics.COMPARED:
            if name in fo and name in fn:
                is_moved, pct = moved(fo[name], fn[name], threshold)
                if is_moved:
                    hits.append(f"{name} {fo[name]:g} -> {fn[name]:g} "
                                f"({pct:+.1f} %)")
        if hits:
            changes[c["id"]] = lines + hits
    return changes, notes


def summary(changes, notes, ncells, threshold, path):
    """The lines to print: "no change ..." or the cells that moved."""
    pct = f"{100 * threshold:g} %"
    if not changes:
        return ([f"no change: {ncells} cells within {pct} of baseline "
                 f"{path}"] + [f"  note: {n}" for n in notes])
    out = [f"changed: {len(changes)} of {ncells} cells moved more than "
           f"{pct} against baseline {path}"]
    for cid, lines in changes.items():
        out.append(f"  {cid}: " + "; ".join(lines))
    return out + [f"  note: {n}" for n in notes]
