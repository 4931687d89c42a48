"""DIR/report.md with its PNG plots: the seek profile measured and
fitted, the zone rates against LBA, measured and model response-time
CDFs, and what could not be measured with the defaults taken."""

import subprocess
import tempfile
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import calibrate, layout  # noqa: E402


def _finish(fig, ax, xlabel, ylabel, title, path):
    """Label a plot, write it to path and free it."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _seek_plot(f, model, path):
    sk = f.data.get("seek")
    if not sk:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    xs, meas, fitted = [], [], []
    for a, b, eff, _ in sk["points"]:
        d = abs(b - a)
        xs.append(d)
        meas.append(eff / 1e6)
        fitted.append(model.positioning_ns(a, b) / 1e6)
    ax.plot(xs, meas, "o", ms=3, label="measured (threshold midpoint)")
    ax.plot(xs, fitted, "-", label="fitted model (seek + mean jitter)")
    ax.set_xscale("symlog", linthresh=max(min(x for x in xs if x) * 10, 1))
    _finish(fig, ax, "distance (sectors)", "ms",
            f"{f.name}: seek profile", path)
    return True


def _zone_plot(f, model, path):
    pts = f.data.get("zone_points") or []
    if not pts:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([p[0] / 2e9 for p in pts], [p[1] / 1e6 for p in pts], "o", ms=3,
            label="measured (1 MiB stream)")
    xs = [z["first_lba"] for z in model.zones]
    ax.step([x / 2e9 for x in xs] + [model.capacity / 2e9],
            [model.zone_rate(z) / 1e6 for z in model.zones] +
            [model.zone_rate(model.zones[-1]) / 1e6], where="post",
            label="fitted zones")
    _finish(fig, ax, "LBA (TB from the start, 512-byte sectors)", "MB/s",
            f"{f.name}: media rate against LBA", path)
    return True


def _sim_latencies(model_path, depth, count):
    sim = calibrate.find_ncq_sim()
    if not sim:
        return None
    with tempfile.TemporaryDirectory() as d:
        tr = Path(d) / "t.csv"
        subprocess.run([sim, "--model-file", str(model_path), "--clients",
                        str(depth), "--depth", "32", "--count", str(count),
                        "--trace", str(tr), "--quiet"], check=True,
                       capture_output=True)
        lines = tr.read_text().splitlines()
        cols = lines[1].split(",")
        ia, ic = cols.index("arrival_ns"), cols.index("complete_ns")
        return sorted((int(v[ic]) - int(v[ia])) / 1e6 for v in
                      (ln.split(",") for ln in lines[2:] if ln and
                       not ln.startswith("#")))


def _cdf_plot(f, model_path, path):
    depths = f.data.get("depths") or {}
    queue = f.data.get("queue_records") or []
    if not depths:
        return []
    fig, ax = plt.subplots(figsize=(7, 4))
    rows = []
    for d in sorted(depths):
        if d not in (1, max(depths)):
            continue
        meas = sorted((r["done_ns"] - r["submit_ns"]) / 1e6 for r in queue
                      if r["depth"] == d)
        sim = _sim_latencies(model_path, d, max(2000, len(meas)))
        n = len(meas)
        ax.plot(meas, [i / n for i in range(n)], label=f"measured, {d} "
                "readers")
        if sim:
            m = len(sim)
            ax.plot(sim, [i / m for i in range(m)], "--",
                    label=f"model (ncq-sim), {d} readers")
            rows.append((d, meas[n // 2], sim[m // 2], meas[int(n * .99)],
                         sim[int(m * .99)]))
    ax.set_xscale("log")
    _finish(fig, ax, "response time (ms, log scale)", "fraction of reads",
            f"{f.name}: random 4 KiB reads", path)
    return rows


def write(f, out_dir, model_path, notes=()):
    out = Path(out_dir)
    model = layout.load(model_path)
    lines = [f"# ncq-fit report: {f.name}", ""]
    lines += [f"Model file: `{Path(model_path).name}` (load it with "
              f"`-device ncq-disk,model-file={Path(model_path).name}` or "
              f"`ncq-sim --model-file {Path(model_path).name}`).", ""]
    lines += ["## Measured", "", "| parameter | value | how |",
              "|---|---|---|"]
    for (sec, key), (v, how) in f.values.items():
        if not str(how).startswith("default"):
            lines.append(f"| `{sec}.{key}` | {v} | {how} |")
    lines.append(f"| zones | {len(f.zone_lines)} | media rate against LBA |")
    lines.append(f"| seek profile | {len(f.points)} distances | read-pair "
                 "thresholds |")
    lines += ["", "## Could not measure (defaults taken)", "",
              "| what | value taken | why |", "|---|---|---|"]
    for what, v, why in f.missing:
        lines.append(f"| {what} | {v} | {why} |")
    lines.append("")
    if _seek_plot(f, model, out / "seek.png"):
        lines += ["## Seek profile", "", "![seek](seek.png)", ""]
    if _zone_plot(f, model, out / "zones.png"):
        lines += ["## Zones", "", "![zones](zones.png)", ""]
    rows = _cdf_plot(f, model_path, out / "cdf.png")
    if rows:
        lines += ["## Response times, measured and model", "",
                  "![cdf](cdf.png)", "",
                  "| readers | p50 measured | p50 model | p99 measured | "
                  "p99 model |", "|---|---|---|---|---|"]
        for d, m50, s50, m99, s99 in rows:
            lines.append(f"| {d} | {m50:.2f} ms | {s50:.2f} ms | "
                         f"{m99:.2f} ms | {s99:.2f} ms |")
        lines.append("")
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    (out / "report.md").write_text("\n".join(lines))
