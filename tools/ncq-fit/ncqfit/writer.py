"""The .ncqm text of a Fit: every value on its own line with how it was
measured, or "default:" and why (docs/model.md's format)."""

# The keys ncq-fit writes, in the parameter table's order (sections as
# NCQ_PARAM_SECTIONS, keys as include/hw/ide/ncq-params.h lists them);
# zone and point lines follow their section's keys.
# tests/repo/test_params_table.py checks both against the table.
ORDER = [
    ("drive", ["name", "model", "firmware", "kind", "capacity", "rpm",
               "queue_depth", "bus_mb_s", "sata_gen", "buffer_kib"]),
    ("layout", ["heads", "spare_per_track", "track_skew", "cyl_skew"]),
    ("seek", ["type", "head_switch_ms", "write_settle_ms", "jitter_ms",
              "plan_settle_ms"]),
    ("overhead", ["read_miss_ms", "read_hit_ms", "write_ms", "other_ms"]),
    ("cache", ["segments", "segment_kib", "readahead_kib",
               "min_readahead_kib", "write_cache_kib", "write_cache"]),
    ("firmware", ["policy", "aging_weight", "starvation_timeout_ms",
                  "prio_timeout_ms", "honour_prio", "clustering_sectors",
                  "window", "eval_us", "plan_ahead"]),
]

# the default curve when no seek profile was measured: 1 ms one track,
# ~10 ms a third of the stroke (a + b sqrt(d) below x, then linear)
DEFAULT_TWOPART = [("a_ms", 0.8), ("b_ms", 0.02), ("c_ms", 3.5),
                   ("e_ms", 0.00004), ("x", 100000)]


def _fmt(v):
    if isinstance(v, float):
        s = f"{v:.6f}".rstrip("0").rstrip(".")
        return s if s not in ("", "-0") else "0"
    return str(v)


def _line(key, value, comment):
    text = f"{key} = {_fmt(value)}"
    comment = " ".join(str(comment).split())
    return f"{text:<32} # {comment}"


def render(f, header=()):
    out = [f"# {h}" if h else "#" for h in header]
    out.append("# Written by ncq-fit (docs/ncq-fit.md): every value says how "
               "it was measured, or that it is a default and why.")
    f.values[("drive", "name")] = (f.name, "ncq-fit --name, or from the "
                                   "model string")
    known = {(sec, k) for sec, keys in ORDER for k in keys}
    lost = sorted(set(f.values) - known)
    if lost:
        raise ValueError("writer.ORDER has no place for " +
                         ", ".join(f"[{s}] {k}" for s, k in lost) +
                         ": add the key there, in the table's order")
    for section, keys in ORDER:
        out += ["", f"[{section}]"]
        for k in keys:
            if (section, k) in f.values:
                v, how = f.values[(section, k)]
                out.append(_line(k, v, how))
        if section == "layout":
            for cyl, count, spt, how in f.zone_lines:
                out.append(_line("zone", f"{cyl} {count} {spt}", how))
        if section == "seek":
            if f.points:
                out.append("# point = distance (tracks of the fitted layout) "
                           "ms: the threshold midpoint of read pairs less "
                           "distance 0's, less half the jitter")
                for d, ms in f.points:
                    out.append(f"point = {d} {_fmt(ms)}")
            else:
                for k, v in DEFAULT_TWOPART:
                    out.append(_line(k, v, "default: no seek profile "
                                     "measured"))
    return "\n".join(out) + "\n"
