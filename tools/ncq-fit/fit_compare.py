#!/usr/bin/env python3
"""Check a fitted model against the original, offline, in ncq-sim.

    tools/ncq-fit/fit-compare.py ORIGINAL FITTED [--out DIR]
        [--tolerance PCT] [--seed N] [--runs N] [--reads N] [--seconds S]
        [--metrics LIST] [--no-plots] [--ncq-sim PATH]

Runs the Table V workload and the starvation workload (scenarios 1 and 2
of docs/scenarios.md, fit_workloads.py) on both models with the same seed
and prints one table per workload: throughput and response-time
percentiles of each model, their relative difference, and whether it is
within the tolerance.  Writes response-time CDF plots, compare.md and
compare.json (the cells) into --out.  Exit status 0 when every cell is
within, 1 when any is outside (the last line says how many), 2 for bad
input (one line).
See docs/ncq-fit.md, "Checking a fitted model".  tools/ncq-fit/fit-compare.py
runs this module (`python3 -m fit_compare`, scripts/pyrun.py).
"""

import argparse
import json
import sys
from pathlib import Path

import ncqfit_sim as ns
import fit_workloads as fw
import scenarios as sc

METRICS = ("IOPS", "p50", "p90", "p99", "p99.9", "max", "mean")


def pct(sorted_ns, q):
    """Nearest-rank percentile in ms, as ncq-sim's summaries compute it
    (tools/ncq-sim/report.c), so the figures here equal the ones
    `ncq-sim` prints for the same run."""
    return sorted_ns[int(q * (len(sorted_ns) - 1) + 0.5)] / 1e6


def figures(series):
    """{metric: value} of one series: IOPS, and response times in ms."""
    v = sorted(series.latencies_ns)
    if not v:
        return {m: 0.0 for m in METRICS}
    return {"IOPS": series.iops, "p50": pct(v, 0.5), "p90": pct(v, 0.9),
            "p99": pct(v, 0.99), "p99.9": pct(v, 0.999), "max": v[-1] / 1e6,
            "mean": sum(v) / len(v) / 1e6}


def rel_diff(orig, fit):
    """(fit - orig) / orig in %; 0 when both are 0."""
    if orig == 0:
        return 0.0 if fit == 0 else float("inf")
    return (fit - orig) / orig * 100.0


class Cell:
    """One metric of one series on both models."""

    def __init__(self, series, metric, orig, fit, tolerance):
        self.series, self.metric = series, metric
        self.orig, self.fit = orig, fit
        self.diff = rel_diff(orig, fit)
        self.within = abs(self.diff) <= tolerance

    def name(self):
        return f"{self.series.workload} {self.series.key} {self.metric}"

    def row(self):
        unit = "" if self.metric == "IOPS" else " ms"
        return [self.series.key, self.metric + unit, f"{self.orig:.2f}",
                f"{self.fit:.2f}", f"{self.diff:+.2f}",
                "within" if self.within else "OUTSIDE"]


def compare(orig_series, fit_series, tolerance, metrics=METRICS):
    """The cells of one workload, series by series."""
    cells = []
    for so, sf in zip(orig_series, fit_series):
        fo, ff = figures(so), figures(sf)
        cells += [Cell(so, m, fo[m], ff[m], tolerance) for m in metrics]
    return cells


def cells_json(cells):
    """The cells as JSON-ready dicts (compare.json)."""
    return [{"workload": c.series.workload, "series": c.series.key,
             "metric": c.metric, "original": c.orig, "fitted": c.fit,
             "diff_pct": c.diff, "within": c.within} for c in cells]


HEADER = ["series", "metric", "original", "fitted", "diff %", "verdict"]


def text_table(cells):
    rows = [HEADER] + [c.row() for c in cells]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    return "\n".join("  ".join(c.rjust(w) if i >= 2 else c.ljust(w)
                               for i, (c, w) in enumerate(zip(r, widths)))
                     .rstrip() for r in rows)


def plot_cdf(so, sf, names, outdir):
    """Both models' response-time CDFs of one series, one PNG."""
    plt = sc.pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for s, name, style in ((so, names[0], "-"), (sf, names[1], "--")):
        x, y = sc.cdf([v / 1e6 for v in s.latencies_ns])
        ax.step(x, y, style, where="post", label=f"{name} ({len(x)} reads)")
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("fraction of reads")
    ax.set_title(f"{fw.WORKLOADS[so.workload][0].split(' (')[0]}: "
                 f"{so.label}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return sc.save(fig, Path(outdir) / f"{so.workload}-{so.key}-cdf.png")


def seeds_text(args):
    if args.runs == 1:
        return f"seed {args.seed}"
    return (f"seeds {args.seed}..{args.seed + args.runs - 1} "
            f"({args.runs} runs pooled)")


def summary_line(cells, tolerance):
    out = [c for c in cells if not c.within]
    line = (f"fit-compare: {len(out)} of {len(cells)} cells outside "
            f"{tolerance:g} %")
    return line + (": " + ", ".join(c.name() for c in out) if out else "")


def shown(word):
    """A path inside the repository relative to its top (a report that is
    committed names no path of the machine it was made on), anything else
    as given."""
    p = Path(word)
    if p.exists():
        try:
            return str(p.resolve().relative_to(ns.ROOT))
        except ValueError:
            pass
    return word


def markdown(args, argv, cells, pngs, commands):
    """compare.md: the models, the commands, each workload's table and
    plots, the verdict."""
    md = ["# Fitted model against the original, in ncq-sim", "",
          f"Original: `{shown(args.original)}`; fitted: "
          f"`{shown(args.fitted)}`; {seeds_text(args)}; tolerance "
          f"{args.tolerance:g} % on every cell (relative difference "
          "fitted - original). Made by:", "",
          "```", "tools/ncq-fit/fit-compare.py " + " ".join(
              shown(w) for w in argv), "```", ""]
    for wl, (title, what) in fw.WORKLOADS.items():
        wcells = [c for c in cells if c.series.workload == wl]
        md += [f"## {title}", "", what + ". Response time: issue to "
               "completion on the host (ncq-sim's `latency ms`); "
               "percentiles by nearest rank, as ncq-sim prints them. "
               "Each model ran, for each seed:", ""]
        md += [f"- `ncq-sim --model-file MODEL --seed SEED {c}`"
               for c in commands[wl]] + [""]
        md += [sc.md_table(HEADER, [c.row() for c in wcells]), ""]
        md += [f"![{p.stem}]({p.name})" for p in pngs[wl]] + [""]
    md += [summary_line(cells, args.tolerance), ""]
    return "\n".join(md)


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line naming the problem (see --help), status 2."""

    def error(self, message):
        self.exit(2, f"fit-compare: {message} (see --help)\n")


def parse_args(argv):
    ap = OneLineParser(
        prog="fit-compare.py",
        description="Check a fitted model against the original in "
        "ncq-sim: the Table V and starvation workloads on both, same seed.")
    ap.add_argument("original", help="the original model: an .ncqm file "
                    "or a built-in model's name")
    ap.add_argument("fitted", help="the fitted model (.ncqm file or name)")
    ap.add_argument("--out", default="fit-compare",
                    help="folder for the plots and compare.md "
                    "(default ./fit-compare)")
    ap.add_argument("--tolerance", type=float, default=5.0,
                    help="largest relative difference in %% (default 5)")
    ap.add_argument("--seed", type=int, default=1,
                    help="ncq-sim seed of both models (default 1)")
    ap.add_argument("--runs", type=int, default=1,
                    help="runs per workload and model, seeds SEED.."
                    "SEED+RUNS-1, their response times pooled (default 1)")
    ap.add_argument("--reads", type=int, default=fw.s1_depth.READS,
                    help="Table V: reads per reader (default "
                    f"{fw.s1_depth.READS}, as scenario 1)")
    ap.add_argument("--seconds", type=float,
                    default=fw.s2_starvation.RUNTIME_S,
                    help="starvation: simulated seconds (default "
                    f"{fw.s2_starvation.RUNTIME_S}, as scenario 2)")
    ap.add_argument("--metrics", default=",".join(METRICS),
                    help="the metrics compared, comma-separated (default "
                    f"all: {','.join(METRICS)})")
    ap.add_argument("--no-plots", action="store_true",
                    help="no CDF plots (the tables and compare.md only)")
    ap.add_argument("--ncq-sim", dest="ncq_sim",
                    help="the ncq-sim binary (default: the standalone "
                    "build, else PATH)")
    args = ap.parse_args(argv)
    args.metrics = [m for m in args.metrics.split(",") if m]
    bad = [m for m in args.metrics if m not in METRICS]
    if bad or not args.metrics:
        ap.error(f"--metrics {','.join(bad) or '(none)'}: choose among "
                 f"{','.join(METRICS)}")
    if args.tolerance < 0 or args.reads < 1 or args.seconds <= 0 \
            or args.seed < 0 or args.runs < 1:
        ap.error("--tolerance must be >= 0, --reads >= 1, --seconds > 0, "
                 "--seed >= 0, --runs >= 1")
    return args


def run_workloads(args, sim, model):
    seeds = range(args.seed, args.seed + args.runs)
    return {"table-v": fw.table_v(model, seeds, args.reads, sim),
            "starvation": fw.starvation(model, seeds, args.seconds, sim)}


def main(argv):
    args = parse_args(argv)
    try:
        sim = ns.ncq_sim_path(args.ncq_sim)
        orig = run_workloads(args, sim, args.original)
        fit = run_workloads(args, sim, args.fitted)
    except ns.SimError as e:
        print(f"fit-compare: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cells, pngs, commands = [], {}, {}
    names = (f"original {Path(args.original).name}",
             f"fitted {Path(args.fitted).name}")
    for wl, (title, what) in fw.WORKLOADS.items():
        wcells = compare(orig[wl], fit[wl], args.tolerance, args.metrics)
        print(f"{title}: {what}; {seeds_text(args)}")
        print(text_table(wcells))
        print()
        cells += wcells
        pngs[wl] = [] if args.no_plots else \
            [plot_cdf(so, sf, names, out) for so, sf in zip(orig[wl], fit[wl])]
        commands[wl] = sorted({s.command for s in orig[wl]},
                              key=[s.command for s in orig[wl]].index)
    (out / "compare.md").write_text(markdown(args, argv, cells, pngs,
                                             commands))
    (out / "compare.json").write_text(json.dumps(cells_json(cells),
                                                 indent=1) + "\n")
    print(summary_line(cells, args.tolerance))
    return 0 if all(c.within for c in cells) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
