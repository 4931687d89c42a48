"""Scenario 7: determinism.  Scenario 1's guest (five depths, 16,000 reads
over the whole disk) run twice must give byte-identical device traces and
identical fio results; the ratio of guest time to wall time is reported.
Both runs restore the harness's snapshot of the boot (docs/guest-image.md);
guest-tests/test_snapshot.py shows that a snapshot made twice, on its own
each time, gives the same traces too, so the boot itself is covered.

When scenario 1 already booted in this process with the same QEMU
binary, its boot is run A and only run B boots now (host load and date
differ between the two); else both boot at once on two cores, B started
1.1 s after A.
"""

import concurrent.futures
import hashlib
import time
from pathlib import Path

import scenarios as sc
from scenarios import s1_depth

TITLE = "Determinism: the same guest run twice"
NUMBER = 7
# Facts of the host, not of the guest: how the two boots were arranged
# (scenario 1's boot reused or not), where they ran, the QEMU binary's
# digest (it changes with the compiler and build paths) and guest time
# over wall time.
VOLATILE = ("concurrent", "workdir", "qemu_sha256", "ratio")


def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _first_difference(pa, pb):
    la = Path(pa).read_text().splitlines()
    lb = Path(pb).read_text().splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}: {x!r} vs {y!r}"
    if len(la) != len(lb):
        return f"{len(la)} lines vs {len(lb)} lines"
    return None


def _boots(workdir):
    existing = s1_depth.existing_boot()
    # a QEMU rebuilt since scenario 1 ran cannot be compared with it
    if existing is not None and existing.qemu_sha256 == sc.qemu_sha256():
        return existing, s1_depth.boot(workdir / "b"), False

    def later():
        time.sleep(1.1)
        return s1_depth.boot(workdir / "b")

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        fa = pool.submit(s1_depth.boot, workdir / "a")
        fb = pool.submit(later)
        a, b = fa.result(), fb.result()
    if existing is None:
        s1_depth.remember(a)
    return a, b, True


def run(workdir):
    a, b, concurrent_runs = _boots(Path(workdir))
    fio_diff = []
    for d in s1_depth.DEPTHS:
        name = f"d{d}.json"
        ja, jb = a.fio(name)["jobs"][0], b.fio(name)["jobs"][0]
        if sc.fio_stable(ja) != sc.fio_stable(jb):
            fio_diff.append(f"{name}: fio figures differ (iops "
                            f"{ja['read']['iops']:.3f} vs "
                            f"{jb['read']['iops']:.3f})")
        logs = [f"d{d}_clat.{job}.log"
                for job in range(1, s1_depth.PROCS + 1)]
        differ = sum(a.res.files.get(x) != b.res.files.get(x) for x in logs)
        if differ:
            fio_diff.append(f"depth {d}: {differ} of {len(logs)} per-read "
                            f"latency logs differ")
    if a.res.output != b.res.output:
        fio_diff.append("the workloads' console output differs")
    runs = []
    for r in (a, b):
        runs.append({"workdir": str(r.workdir),
                     "qemu_sha256": r.qemu_sha256, "trace_sha256":
                     _digest(r.trace_path), "trace_bytes":
                     r.trace_path.stat().st_size, "records": len(r.records),
                     "guest_s": r.guest_s(), "wall_s": r.wall_s,
                     "ratio": r.guest_s() / r.wall_s})
    return {"title": TITLE, "device": s1_depth.DEVICE,
            "concurrent": concurrent_runs, "runs": runs,
            "trace_difference": _first_difference(a.trace_path,
                                                  b.trace_path),
            "fio_differences": fio_diff,
            "fio_iops": {str(d): a.fio(f"d{d}.json")["jobs"][0]["read"]
                         ["iops"] for d in s1_depth.DEPTHS}}


def check(result):
    fails = []
    ra, rb = result["runs"]
    if ra["qemu_sha256"] != rb["qemu_sha256"]:
        fails.append("the two runs used different QEMU binaries (rebuilt "
                     "in between): not comparable")
    if ra["trace_sha256"] != rb["trace_sha256"]:
        fails.append(f"device traces differ ({ra['records']} and "
                     f"{rb['records']} records), first difference at "
                     f"{result['trace_difference']}")
    fails += result["fio_differences"]
    need = s1_depth.PROCS * s1_depth.READS * len(s1_depth.DEPTHS)
    if ra["records"] < need:
        fails.append(f"the trace holds {ra['records']} records, fewer than "
                     f"the {need} reads of the workload")
    return fails


def figures(result):
    out = []
    for name, r in zip("AB", result["runs"]):
        out.append(f"run {name}: {r['records']} records, {r['trace_bytes']}"
                   f" bytes, sha256 {r['trace_sha256'][:16]}, guest "
                   f"{r['guest_s']:.1f} s in {r['wall_s']:.1f} s wall "
                   f"(x{r['ratio']:.2f})")
    out.append("identical" if not check(result) else "DIFFERENT")
    return out


def plot(result, outdir):
    return []


def report_md(result, pngs):
    cmd = sc.report_command(NUMBER)
    rows = [[name, r["records"], r["trace_bytes"], r["trace_sha256"][:16],
             f"{r['guest_s']:.1f}", f"{r['wall_s']:.1f}",
             f"{r['ratio']:.2f}"]
            for name, r in zip("AB", result["runs"])]
    table = sc.md_table(["run", "trace records", "trace bytes",
                         "sha256 (first 16)", "guest s", "wall s",
                         "guest/wall"], rows)
    fails = check(result)
    verdict = ("The two traces are byte-identical and every fio figure "
               "(counts, runtimes, latency distributions, the per-read "
               "latency logs) is equal."
               if not fails else "The runs DIFFER: " + "; ".join(fails))
    how = ("both booted at once on two cores, B 1.1 s after A"
           if result["concurrent"] else
           "A is scenario 1's boot, B booted afterwards in the same process")
    return f"""## Scenario 7: {TITLE}

Scenario 1's guest (`-device {result['device']}`, boot plus 16,000 random
reads at five depths) run twice under `-icount shift=3,sleep=off` with a
fixed guest date ({how}). Produced by `{cmd}` (test:
`python3 -m pytest -q guest-tests/test_scenarios.py -k s7-determinism`).

{table}

*Table produced by `{cmd}`.* "guest s" is the virtual time of the last
completion in the device trace (boot included); "wall s" the host time
of the whole QEMU run. {verdict}
"""
