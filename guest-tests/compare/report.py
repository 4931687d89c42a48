"""report.md: one section per workload, its cells side by side (a column
each), with four plots per workload: throughput, latency percentiles,
latency CDF and delay-count distribution.  Everything comes from the
results dict, so a merged run gets the same report as a single one."""

from pathlib import Path

import scenarios as sc
from compare import metrics

ROWS = list(metrics.COMPARED) + ["commands"]
ROW_LABELS = dict(metrics.COMPARED, commands="commands in the trace")


def _axes_that_vary(cells):
    keys = ("kernel", "scheduler", "device_label")
    return [k for k in keys if len({c[k] for c in cells}) > 1] or \
        ["scheduler"]


def label(c, axes, sep=" / "):
    return sep.join(c[k] for k in axes)


def _value(c, name):
    if c["status"] != "ok":
        return "failed"
    if name == "commands":
        return str(c["metrics"]["commands"])
    v = metrics.flat(c["metrics"]).get(name)
    if v is None:
        return "-"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _groups(jobs):
    """Clones name.N of one job summed: {name: (iops, worst max ms, n)}."""
    out = {}
    for name, j in jobs.items():
        base = name.rsplit(".", 1)[0] if name.rsplit(".", 1)[-1].isdigit() \
            else name
        iops, mx, n = out.get(base, (0.0, 0.0, 0))
        out[base] = (iops + j["iops"], max(mx, j.get("max_ms", 0)), n + 1)
    return out


def _job_table(cells, axes):
    ok = [c for c in cells if c["status"] == "ok"]
    names = list(dict.fromkeys(n for c in ok
                               for n in _groups(c["metrics"]["jobs"])))
    if not names:
        return ""
    rows = []
    for n in names:
        row = [f"`{n}`"]
        for c in cells:
            g = _groups(c["metrics"]["jobs"]).get(n) \
                if c["status"] == "ok" else None
            row.append(f"{g[0]:.1f} IOPS, max {g[1]:.0f} ms"
                       + (f" ({g[2]} jobs)" if g[2] > 1 else "")
                       if g else "-")
        rows.append(row)
    return ("Per fio job (clones of one job summed; max over them):\n\n"
            + sc.md_table(["job"] + [label(c, axes, "<br>") for c in cells],
                          rows) + "\n")


def _bars(plt, ax, names, values, ylabel):
    ax.bar(range(len(values)), values, color=[f"C{i}" for i in
                                              range(len(values))])
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)


def _buckets(top):
    """Delay-count buckets 0, 1, 2-3, 4-7, ... up to top."""
    out, lo = [(0, 0)], 1
    while lo <= top:
        out.append((lo, 2 * lo - 1))
        lo *= 2
    return out


def plots(cells, axes, outdir, stem, title):
    """The workload's four PNGs; their paths."""
    plt = sc.pyplot()
    ok = [c for c in cells if c["status"] == "ok"]
    if not ok:
        return []
    names = [label(c, axes) for c in ok]
    pngs = []
    fig, ax = plt.subplots(figsize=(6, 3.6))
    _bars(plt, ax, names, [c["metrics"]["iops"] for c in ok], "IOPS")
    ax.set_title(f"{title}: throughput")
    pngs.append(sc.save(fig, outdir / f"{stem}-throughput.png"))

    fig, ax = plt.subplots(figsize=(6, 3.6))
    ps = ["p50", "p95", "p99", "p99.9", "max"]
    w = 0.8 / len(ok)
    for i, c in enumerate(ok):
        lat = c["metrics"]["lat_ms"] or c["metrics"]["drive_ms"]
        ax.bar([k + i * w for k in range(len(ps))],
               [lat.get(p, 0) for p in ps], w, label=names[i],
               color=f"C{i}")
    ax.set_xticks([k + 0.4 - w / 2 for k in range(len(ps))])
    ax.set_xticklabels(ps)
    ax.set_yscale("log")
    ax.set_ylabel("latency (ms)")
    ax.set_title(f"{title}: latency percentiles")
    ax.legend(fontsize=7)
    pngs.append(sc.save(fig, outdir / f"{stem}-latency.png"))

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for i, c in enumerate(ok):
        q = c["metrics"]["lat_cdf_ms"]
        if q:
            ax.step(q, [k / (len(q) - 1) for k in range(len(q))],
                    where="post", color=f"C{i}", label=names[i])
    ax.set_xscale("log")
    ax.set_xlabel("latency (ms)")
    ax.set_ylabel("fraction of I/Os")
    ax.set_title(f"{title}: latency CDF")
    ax.legend(fontsize=7)
    pngs.append(sc.save(fig, outdir / f"{stem}-cdf.png"))

    fig, ax = plt.subplots(figsize=(6, 3.6))
    edges = _buckets(max(c["metrics"]["delay_max"] for c in ok))
    for i, c in enumerate(ok):
        h = c["metrics"]["delay_hist"]
        total = sum(h.values()) or 1
        counts = [sum(v for k, v in h.items() if lo <= int(k) <= hi)
                  for lo, hi in edges]
        ax.bar([k + i * w for k in range(len(edges))],
               [x / total for x in counts], w, color=f"C{i}",
               label=f"{names[i]} (max {c['metrics']['delay_max']})")
    ax.set_xticks([k + 0.4 - w / 2 for k in range(len(edges))])
    ax.set_xticklabels([str(lo) if lo == hi else f"{lo}-{hi}"
                        for lo, hi in edges], fontsize=7)
    ax.set_yscale("log")
    ax.set_xlabel("delay count (later arrivals completed first)")
    ax.set_ylabel("fraction of commands")
    ax.set_title(f"{title}: delay-count histogram")
    ax.legend(fontsize=7)
    pngs.append(sc.save(fig, outdir / f"{stem}-delay.png"))
    return pngs


def _head(res, base_lines):
    m = res["matrix"]
    cells = res["cells"]
    how = (f"shard {res['shard']}, " if res.get("shard") else "") + \
        (f"merged from {len(res['merged_from'])} shards, "
         if res.get("merged_from") else "")
    kern = {}
    for c in cells:
        im = c["inputs"]["image"]
        kern.setdefault(c["kernel"], [im.get("inputs_hash", "-"),
                                      im.get("kernel", "-"),
                                      c["inputs"].get("kernel_release")
                                      or "-"])
    out = [f"# Comparison: {m['name']}", "",
           f"Matrix `{Path(m['file']).name}` (sha256 {m['sha256'][:12]}), "
           f"{len(cells)} of {m['cells']} cells ({how}"
           f"{sum(c['status'] == 'ok' for c in cells)} ran). QEMU "
           f"`qemu-system-x86_64` sha256 {res['qemu']['sha256'][:12]}. "
           "Written by `scripts/compare.py` (docs/compare.md).", "",
           sc.md_table(["kernel", "image", "kernel package", "uname -r"],
                       [[k] + v for k, v in kern.items()]), ""]
    if base_lines:
        out += ["## Against the baseline", "", "```"] + base_lines + \
            ["```", ""]
    return out


def write(out, res, base_lines=()):
    """report.md and its PNGs in directory out."""
    out = Path(out)
    text = _head(res, list(base_lines))
    wls = list(dict.fromkeys(c["workload"] for c in res["cells"]))
    for wi, w in enumerate(wls):
        cells = [c for c in res["cells"] if c["workload"] == w]
        axes = _axes_that_vary(res["cells"])
        inp = cells[0]["inputs"]
        rows = [[ROW_LABELS[n]] + [_value(c, n) for c in cells]
                for n in ROWS]
        rows.append(["workload guest s / cell wall s"] + [
            f"{c.get('guest_s', 0):.1f} / {c.get('wall_s', 0):.1f}"
            for c in cells])
        text += [f"## Workload `{w}`", "",
                 f"Metric that matters: {inp['workload_metric']}. "
                 "Parameters " + (", ".join(f"{k}={v}" for k, v in
                                   inp["workload_params"].items()) or "-")
                 + "; workload "
                 f"sha256 {inp['workload_sha256'][:12]}.", "",
                 sc.md_table(["metric"] + [label(c, axes, "<br>")
                                           for c in cells], rows), ""]
        for c in cells:
            if c["status"] == "ok" and c["metrics"].get("ncq_disabled"):
                text += [f"Warning: {c['id']}: libata turned NCQ off after "
                         f"{c['metrics']['libata_errors']} failed commands "
                         "(the guest's dmesg.txt in the cell's directory)."
                         " The cell measured no queueing.", ""]
            if c["status"] != "ok":
                text += [f"Failed: {c['id']}: "
                         f"{c['error'].splitlines()[0]}", ""]
        text += [_job_table(cells, axes)]
        stem = f"w{wi + 1}"
        for p in plots(cells, axes, out, stem, w):
            text += [f"![{p.stem}]({p.name})", ""]
    (out / "report.md").write_text("\n".join(text).rstrip() + "\n")
