"""scripts/compare.py: run a matrix (or a shard of it), or merge shards,
write results.json, report.md with plots and junit.xml, and compare with
a baseline.  Exit status: 0 all cells ran (and nothing moved against the
baseline), 1 a cell failed or moved, 2 bad input or a baseline that is
not comparable."""

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import ncqguest
import scenarios as sc
import workloads
from compare import baseline, cell, junit, kernels, matrix, report

FORMAT = "ncq-compare-results 1"
T0 = time.monotonic()


class Refused(Exception):
    """Bad input: exit 2 with this one line."""


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="scripts/compare.py", description=__doc__.split("\n\n")[0])
    p.add_argument("matrix", nargs="?",
                   help="the matrix file (.toml or .json)")
    p.add_argument("--out", help="output directory (default "
                   "_build/compare/<matrix name>)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="cells run at once (default: the number of cores)")
    p.add_argument("--shard", help="run slice i of n (i/n) of the cells")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="join the results.json of these shard directories "
                   "into one report in --out (no cell runs)")
    p.add_argument("--baseline", metavar="FILE",
                   help="a results.json to compare with")
    p.add_argument("--threshold", type=float, default=5.0,
                   help="percent a metric may move before it counts as a "
                   "change (default 5)")
    a = p.parse_args(argv)
    if bool(a.matrix) == bool(a.merge):
        p.error("give a matrix file, or --merge DIR..., not both")
    if a.jobs < 1:
        p.error("--jobs wants 1 or more")
    return a


def _specs(m):
    base = Path(m.path).resolve().parent
    try:
        return {w: workloads.resolve(w, m.duration, base)
                for w in m.workloads}
    except workloads.WorkloadError as e:
        raise Refused(f"{m.path}: {e}")


def _check_kernels(m):
    for k in m.kernels:
        if not kernels.known(k):
            raise Refused(f"{m.path}: kernel {k!r} is neither a name "
                          f"({', '.join(kernels.NAMED)}) nor an image "
                          "directory")


def _images(cells):
    """{kernel entry: image dir or KernelError}, for the cells' kernels."""
    out = {}
    for k in dict.fromkeys(c.kernel for c in cells):
        try:
            out[k] = kernels.resolve(k)
        except kernels.KernelError as e:
            out[k] = e
    return out


def _record(c, spec, m, image, err, raw, cdir, out):
    rec = {"id": c.id, "index": c.index, "coord": list(c.coord),
           "kernel": c.kernel, "scheduler": c.scheduler,
           "device": c.device, "device_label": c.device_label,
           "workload": c.workload,
           "dir": os.path.relpath(cdir, out),
           "status": "failed" if err else "ok"}
    if err:
        rec["error"] = err
    rec["inputs"] = {
        "image": kernels.identity(image) if isinstance(image, Path) else {},
        "kernel_release": raw.get("kernel_release"),
        "device_line": c.device, "disk_size": raw.get("disk_size"),
        "memory": m.memory, "guest": m.guest,
        "workload_kind": spec.kind, "workload_params": spec.params,
        "workload_metric": spec.metric,
        "workload_sha256": spec.sha256()}
    for k in ("wall_s", "guest_s", "metrics"):
        if k in raw:
            rec[k] = raw[k]
    return rec


def _one(c, spec, m, image, cdir):
    """A worker process's cell (its own QEMU process)."""
    if not isinstance(image, Path):
        return str(image), {}
    try:
        return cell.run(c, spec, image, m.guest, m.memory, m.timeout_s,
                        cdir)
    except Exception as e:                 # the cell fails, not the run
        return f"{type(e).__name__}: {str(e).splitlines()[0]}", {}


def run_cells(m, cells, specs, images, out, jobs):
    """Every cell, up to jobs at once; one line printed per cell."""
    recs = []
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=ctx) as ex:
        futs = {}
        for c in cells:
            cdir = out / "cells" / c.slug
            futs[ex.submit(_one, c, specs[c.workload], m,
                           images[c.kernel], cdir)] = (c, cdir)
        for n, f in enumerate(concurrent.futures.as_completed(futs), 1):
            c, cdir = futs[f]
            err, raw = f.result()
            rec = _record(c, specs[c.workload], m, images[c.kernel], err,
                          raw, cdir, out)
            state = "ok" if not err else f"FAILED: {err.splitlines()[0]}"
            if raw.get("metrics", {}).get("ncq_disabled"):
                state += " (but libata turned NCQ off after errors)"
            print(f"[{n}/{len(cells)}] {c.id}: {state} "
                  f"({raw.get('wall_s', 0):.1f} s wall, "
                  f"{raw.get('guest_s', 0):.1f} s guest)", flush=True)
            if err and "\n" in err:
                print(err, flush=True)
            recs.append(rec)
    return sorted(recs, key=lambda r: r["index"])


def run_matrix(a, base):
    """Check the input, then run the cells; (output dir, results)."""
    m = matrix.load(a.matrix)
    cells = m.cells()
    shard = None
    if a.shard:
        i, n = matrix.parse_shard(a.shard)
        shard = f"{i}/{n}"
        cells = matrix.shard(cells, i, n)
    specs = _specs(m)
    _check_kernels(m)
    build = ncqguest.qemu_build_dir()
    # every cell (each a forked worker) uses this one build, and none runs
    # scripts/build-qemu.sh again
    os.environ["NCQ_QEMU_BUILD"] = str(build)
    qemu = build / "qemu-system-x86_64"
    sha = sc.qemu_sha256(qemu)
    if base:                   # refused before any cell runs
        baseline.check_comparable(base, {"qemu": {"sha256": sha},
                                         "cells": []}, a.baseline)
    images = _images(cells)
    out = Path(a.out or ncqguest.ROOT / "_build" / "compare" / m.name)
    out.mkdir(parents=True, exist_ok=True)
    print(f"{len(cells)} cells of {len(m.cells())}"
          + (f" (shard {shard})" if shard else "")
          + f", {min(a.jobs, max(1, len(cells)))} at a time, in {out}",
          flush=True)
    recs = run_cells(m, cells, specs, images, out, a.jobs)
    return out, {
        "format": FORMAT,
        "matrix": {"name": m.name, "file": m.path, "sha256": m.sha256(),
                   "cells": len(m.cells()),
                   "workloads": m.workloads},
        "shard": shard,
        "qemu": {"build": kernels.shown(build), "sha256": sha},
        "cells": recs}


def load_results(path):
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise Refused(f"{p}: not a readable results.json ({e})")
    if d.get("format") != FORMAT:
        raise Refused(f"{p}: not a compare.py results file (format "
                      f"{d.get('format')!r}, want {FORMAT!r})")
    return d


def merge(dirs, out):
    """One results dict from shards' results: the same matrix and QEMU
    build, every cell once."""
    parts = [load_results(d) for d in dirs]
    first = parts[0]
    for d, p in zip(dirs[1:], parts[1:]):
        for key in ("matrix", "qemu"):
            if p[key]["sha256"] != first[key]["sha256"]:
                raise Refused(f"--merge: {d} was made with another "
                              f"{key} than {dirs[0]} ({key} sha256 "
                              f"{p[key]['sha256'][:12]} vs "
                              f"{first[key]['sha256'][:12]})")
    cells = {}
    for d, p in zip(dirs, parts):
        for c in p["cells"]:
            if c["index"] in cells:
                raise Refused(f"--merge: cell {c['id']} is in two shards "
                              f"(again in {d})")
            c = dict(c, dir=os.path.relpath(Path(d) / c["dir"], out))
            cells[c["index"]] = c
    return {"format": FORMAT, "matrix": first["matrix"], "shard": None,
            "merged_from": [str(d) for d in dirs], "qemu": first["qemu"],
            "cells": [cells[i] for i in sorted(cells)]}


def finish(a, out, res, base):
    """Write the outputs, compare with the baseline; the exit status."""
    status = 0
    changes, notes, base_lines = {}, [], []
    if base:
        try:
            baseline.check_comparable(base, res, a.baseline)
        except baseline.NotComparable as e:
            print(f"compare: {e}", file=sys.stderr)
            return 2
        changes, notes = baseline.compare(base, res, a.threshold / 100)
        base_lines = baseline.summary(changes, notes, len(res["cells"]),
                                      a.threshold / 100, a.baseline)
    sc.dump(res, out / "results.json")
    # the report from what results.json holds (keys sorted), so that a run
    # and the merge of its shards give the same report
    res = json.loads((out / "results.json").read_text())
    report.write(out, res, base_lines)
    junit.write(out / "junit.xml", res, changes)
    failed = [c for c in res["cells"] if c["status"] != "ok"]
    missing = res["matrix"]["cells"] - len(res["cells"])
    for c in failed:
        print(f"cell failed: {c['id']}: {c['error'].splitlines()[0]}")
    if res.get("merged_from") and missing:
        print(f"merged {len(res['cells'])} of {res['matrix']['cells']} "
              f"cells: {missing} missing (a shard not given to --merge?)")
        status = 1
    if base_lines:
        print("\n".join(base_lines))
    print(f"wrote {out / 'report.md'}, {out / 'results.json'}, "
          f"{out / 'junit.xml'} ({time.monotonic() - T0:.0f} s)")
    return 1 if failed or changes or status else 0


def main(argv=None):
    a = parse_args(argv)
    try:
        # a bad baseline is refused before any cell runs
        base = load_results(a.baseline) if a.baseline else None
        if a.merge:
            out = Path(a.out or ncqguest.ROOT / "_build" / "compare" /
                       "merged")
            out.mkdir(parents=True, exist_ok=True)
            res = merge(a.merge, out)
        else:
            out, res = run_matrix(a, base)
        return finish(a, out, res, base)
    except (Refused, matrix.MatrixError, baseline.NotComparable) as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
