#!/usr/bin/env python3
"""Prove "behaviour unchanged": build two versions of the project and
compare, byte for byte, what they produce from the same inputs.

  scripts/check-unchanged.py [--base COMMIT] [--head COMMIT] [--sim-only]
                             [--jobs N] [--capture-trace PATH]

The base defaults to the commit before issue 12 (BASE below); the head
defaults to the working tree.  Compared items:

- ncq-sim: a fixed set of runs (every built-in model under every policy,
  writes and the write cache, sequential and stream patterns, time-outs,
  NCQ priority, clustering, depth sweeps, think time, a parameter file,
  and the replay of the committed guest trace tests/data/guest-rwf.trace
  under several firmware settings).  Each run's exit status, stdout,
  stderr and --trace file are compared.
- the QEMU device (skipped with --sim-only): the device traces of
  scenario 1's boot and scenario 2's three boots (guest-tests/scenarios),
  run under -icount with each version's QEMU and the same guest image and
  harness (the working tree's); a -global setting of the harness that
  one side's QEMU lacks is dropped on both sides and named.

One line per item, "identical" or "DIFFERS" with the first differing
line, then a summary line; the exit status is 1 if anything differs and
2 if a build or run failed.

Builds are cached under _build/unchanged/<commit>/: the commit's files
(git archive), its standalone meson build, and for QEMU its own NCQ_CACHE
(so that the shared cache's work tree keeps pointing at the checkout that
built it; the downloaded QEMU tarball is copied from the usual cache when
it is there).  The working tree uses _build/unchanged/tree/model and
$NCQ_QEMU_BUILD if set, else scripts/build-qemu.sh as scripts/test.sh
does.  The guest image is $NCQ_IMAGE_DIR or images/build-image.sh.  The
base's guest traces are kept with the QEMU binary's and the harness's
digests, so a second run boots only the head.

--capture-trace PATH boots one guest (fio: random writes with an fsync
every 16, then random reads, 4 KiB, libaio) with the head's QEMU and
writes its device trace to PATH: how tests/data/guest-rwf.trace was made.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyrun  # scripts/: the package roots (pyproject.toml)

ROOT = Path(__file__).resolve().parent.parent
BASE = "5d5bb0ede6abb6c75fb2680b6cb1ed69f110c7bf"
WORK = ROOT / "_build" / "unchanged"
REPLAY_TRACE = ROOT / "tests" / "data" / "guest-rwf.trace"
PREFIX = "check-unchanged:"


class Failure(Exception):
    """A build or run that failed (not a difference)."""


def log(msg):
    print(f"{PREFIX} {msg}", file=sys.stderr, flush=True)


def run(cmd, what, **kw):
    """Run cmd; raise Failure with the tail of its output on error."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, **kw)
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-15:]
        raise Failure(f"{what} failed (exit {p.returncode}):\n  " +
                      "\n  ".join(tail))
    return p.stdout


class Side:
    """One version to compare: a commit (exported under _build/unchanged)
    or the working tree."""

    def __init__(self, label, commit=None):
        self.label = label
        self.commit = commit
        if commit:
            self.dir = WORK / commit[:12]
            self.src = self.dir / "src"
        else:
            self.dir = WORK / "tree"
            self.src = ROOT
        self.dir.mkdir(parents=True, exist_ok=True)

    def name(self):
        return self.commit[:12] if self.commit else "working tree"

    def export(self):
        if not self.commit or (self.src / ".complete").exists():
            return
        log(f"{self.label}: exporting {self.commit[:12]} to {self.src}")
        shutil.rmtree(self.src, ignore_errors=True)
        self.src.mkdir(parents=True)
        archive = subprocess.Popen(["git", "-C", str(ROOT), "archive",
                                    self.commit], stdout=subprocess.PIPE)
        run(["tar", "-x", "-C", str(self.src)], "unpacking git archive",
            stdin=archive.stdout)
        if archive.wait() != 0:
            raise Failure(f"git archive {self.commit} failed")
        (self.src / ".complete").touch()

    def ncq_sim(self):
        """Build (if needed) and return the side's ncq-sim."""
        self.export()
        build = self.dir / "model"
        if not (build / "build.ninja").exists():
            shutil.rmtree(build, ignore_errors=True)
            run(["meson", "setup", str(build), str(self.src)],
                f"{self.label}: meson setup")
        run(["ninja", "-C", str(build), "tools/ncq-sim/ncq-sim"],
            f"{self.label}: building ncq-sim")
        return build / "tools" / "ncq-sim" / "ncq-sim"

    def qemu(self):
        """Build (if needed) and return the side's QEMU build directory."""
        if not self.commit and os.environ.get("NCQ_QEMU_BUILD"):
            log(f"{self.label}: QEMU from $NCQ_QEMU_BUILD")
            return Path(os.environ["NCQ_QEMU_BUILD"])
        self.export()
        env = dict(os.environ)
        if self.commit:
            env["NCQ_CACHE"] = str(self.dir / "qemu")
            seed_downloads(self.dir / "qemu" / "dl")
            # Two commits' builds share compiled objects through ccache:
            # their trees sit at the same depth under _build/unchanged.
            if shutil.which("ccache") and "CC" not in env:
                env.update(CC="ccache cc", CCACHE_NOHASHDIR="1",
                           CCACHE_BASEDIR=str(WORK))
        log(f"{self.label}: building QEMU ({self.name()}; log "
            f"{self.dir / 'qemu-build.log'})")
        with open(self.dir / "qemu-build.log", "w") as out:
            p = subprocess.run([str(self.src / "scripts/build-qemu.sh")],
                               stdout=subprocess.PIPE, stderr=out, text=True,
                               env=env)
        if p.returncode != 0:
            tail = (self.dir / "qemu-build.log").read_text().splitlines()
            raise Failure(f"{self.label}: QEMU build failed:\n  " +
                          "\n  ".join(tail[-10:]))
        return Path(p.stdout.strip().splitlines()[-1])


def seed_downloads(dl):
    """Copy the pinned QEMU tarball from the usual cache into dl (when it
    is there) so that a separate NCQ_CACHE does not download it again."""
    usual = Path(os.environ.get("NCQ_CACHE",
                                Path.home() / ".cache" / "ncq-disk")) / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    if not usual.is_dir():
        return
    for f in usual.iterdir():
        if f.is_file() and not (dl / f.name).exists():
            shutil.copy2(f, dl / f.name)


# --- ncq-sim -------------------------------------------------------------

def sim_policies(sim):
    """The policy names @sim's --help lists ("a, b or c" or "a, b, c")."""
    out = subprocess.run([str(sim), "--help"], capture_output=True,
                         text=True).stdout
    # "--policy P  names", or the settings' "--policy V  doc" and under
    # it the range (the policies' names)
    m = re.search(r"^\s*--policy P\s+(.*)$", out, re.M) or \
        re.search(r"^\s*--policy V\s.*\n\s+(.*)$", out, re.M)
    if not m:
        raise Failure(f"{sim} --help lists no --policy line")
    return re.split(r",\s*|\s+or\s+", m.group(1).strip())


def common_policies(sims):
    """The policies both versions have, in the head's (table) order;
    one added since the base has nothing to compare with and is named."""
    base, head = (sim_policies(s) for s in sims)
    for p in head:
        if p not in base:
            print(f"ncq-sim policy {p}: new since the base, not compared",
                  flush=True)
    return [p for p in head if p in base]


def sim_runs(model_file, policies):
    """[(name, args, trace?)]: the fixed set of ncq-sim runs."""
    out = []
    models = ("st3400620as", "fujitsu-max3036rc", "ibm-40k1044",
              "intel-530", "maxtor-atlas10kv", "quantum-atlas10k",
              "seagate-cheetah9lp")
    for m in models:
        for p in policies:
            out.append((f"{m} {p}", ["--model", m, "--policy", p,
                                     "--count", "2000"], True))
    more = [
        ("writes, cache on", ["--read-ratio", "0.5", "--count", "2000"]),
        ("writes, cache off", ["--read-ratio", "0.5", "--write-cache",
                               "off", "--count", "2000"]),
        ("writes only, mixed sizes", ["--read-ratio", "0", "--size",
                                      "8,64,256", "--align", "1"]),
        ("ssd writes", ["--model", "intel-530", "--read-ratio", "0.3",
                        "--size", "8,32"]),
        ("pattern seq", ["--pattern", "seq"]),
        ("pattern seq fcfs", ["--pattern", "seq", "--policy", "fcfs"]),
        ("pattern stream", ["--pattern", "stream", "--clients", "4"]),
        ("groups seq/stream/random",
         ["--group", "2:0:10%:seq", "--group", "4:50%:60%:stream",
          "--group", "8:70%:100%:random:size=16:read=0.7"]),
        ("time-out 0", ["--model", "fujitsu-max3036rc", "--timeout", "0"]),
        ("time-out 500 ms", ["--timeout", "500", "--clients", "48"]),
        ("time-out sstf", ["--policy", "sstf", "--timeout", "300"]),
        ("priority", ["--group", "4:0:10%:prio", "--clients", "8",
                      "--prio-timeout", "100"]),
        ("priority, fujitsu", ["--model", "fujitsu-max3036rc", "--group",
                               "2:80%:100%:prio", "--prio-timeout", "50"]),
        ("aged-sptf weight", ["--policy", "aged-sptf", "--aging-weight",
                              "0.5"]),
        ("clustering 64 fcfs", ["--clustering", "64", "--policy", "fcfs",
                                "--pattern", "seq"]),
        ("clustering 0", ["--clustering", "0", "--pattern", "seq"]),
        ("sweep depth", ["--sweep-depth", "1,2,4,8,16,31,32"]),
        ("duration, think, host delay",
         ["--duration", "2", "--think-ns", "1000000", "--host-delay-ns",
          "50000"]),
        ("lba range, depth 4", ["--lba-range", "10%:30%", "--depth", "4"]),
        ("seed 7", ["--seed", "7", "--model", "maxtor-atlas10kv"]),
        ("quiet", ["--quiet", "--model", "ibm-40k1044"]),
        ("model file", ["--model-file", str(model_file)]),
        ("list models", ["--list-models"]),
    ]
    out += [(n, a, "--sweep-depth" not in a and "--list-models" not in a)
            for n, a in more]
    replay = str(REPLAY_TRACE)
    for n, a in [
            ("replay", []),
            ("replay fcfs", ["--policy", "fcfs"]),
            ("replay no time-out", ["--timeout", "0"]),
            ("replay clustering 64", ["--clustering", "64"]),
            ("replay fujitsu", ["--model", "fujitsu-max3036rc"]),
            ("replay seed 3", ["--seed", "3"]),
            ("replay ssd", ["--model", "intel-530"])]:
        out.append((n, ["--replay", replay] + a, True))
    return out


def v1_view(lines):
    """A trace of schema v2 (issue 15: the CDL columns) whose records carry
    no CDL, as the v1 trace it equals, so that versions on either side of
    the schema change compare; records with a CDL index keep theirs and
    so differ."""
    if not lines or not lines[0].startswith("# ncq-trace v2 "):
        return lines
    out = ["# ncq-trace v1 " + lines[0][len("# ncq-trace v2 "):]]
    for line in lines[1:]:
        for tail in (",cdl,cdl_outcome", ",0,-"):
            if line.endswith(tail):
                line = line[:-len(tail)]
                break
        out.append(line)
    return out


def sim_blob(sim, args, trace, outdir, idx):
    """Everything one run produced, as one text (the item compared)."""
    outdir.mkdir(parents=True, exist_ok=True)
    # a trace left by an earlier invocation must not pass for this run's
    (outdir / f"run{idx}.trace").unlink(missing_ok=True)
    extra = ["--trace", f"run{idx}.trace"] if trace else []
    p = subprocess.run([str(sim)] + args + extra, cwd=outdir,
                       capture_output=True, text=True)
    blob = [f"exit {p.returncode}", "--- stdout"] + p.stdout.splitlines()
    blob += ["--- stderr"] + p.stderr.splitlines()
    if trace:
        t = outdir / f"run{idx}.trace"
        blob += ["--- trace"] + (v1_view(t.read_text().splitlines())
                                 if t.exists() else ["(none written)"])
    return blob


def first_difference(a, b):
    """None, or 'line N: base ... / head ...' for two lists of lines."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: base {x[:100]!r} / head {y[:100]!r}"
    if len(a) != len(b):
        n = min(len(a), len(b))
        extra = (a if len(a) > n else b)[n]
        return (f"line {n + 1}: {len(a)} lines vs {len(b)}; next "
                f"{'base' if len(a) > n else 'head'} line {extra[:100]!r}")
    return None


class Tally:
    def __init__(self):
        self.same = self.differ = 0

    def item(self, name, diff):
        if diff is None:
            self.same += 1
            print(f"{name}: identical", flush=True)
        else:
            self.differ += 1
            print(f"{name}: DIFFERS, {diff}", flush=True)


def sim_args(sim, args):
    """@args as @sim takes them: since --honour-prio is its own option,
    --prio-timeout alone no longer turns priority on, so a build that
    has the option gets it beside --prio-timeout, the older builds'
    meaning."""
    out = subprocess.run([str(sim), "--help"], capture_output=True,
                         text=True).stdout
    if "--prio-timeout" in args and "--honour-prio" in out:
        return args + ["--honour-prio", "on"]
    return args


def compare_sim(base, head, tally):
    sims = {s.label: s.ncq_sim() for s in (base, head)}
    model_file = base.src / "hw/ide/ncq-model/models/fujitsu-max3036rc.ncqm"
    if not REPLAY_TRACE.exists():
        raise Failure(f"{REPLAY_TRACE.relative_to(ROOT)} is missing "
                      "(see tests/data/README.md)")
    policies = common_policies([sims[base.label], sims[head.label]])
    for idx, (name, args, trace) in enumerate(sim_runs(model_file,
                                                       policies)):
        blobs = [sim_blob(sims[s.label], sim_args(sims[s.label], args),
                          trace, s.dir / "sim-out", idx)
                 for s in (base, head)]
        tally.item(f"ncq-sim {name} ({' '.join(args)})".replace(
            str(ROOT) + "/", "").replace(str(base.src) + "/", ""),
            first_difference(*blobs))


# --- guest traces --------------------------------------------------------

# Runs in a child python with the working tree's harness (its package
# roots on PYTHONPATH, scripts/pyrun.py): scenario 1's
# boot and scenario 2's three boots, the traces copied to OUT/<name>.trace.
GUEST_CHILD = r"""
import concurrent.futures, shutil, sys
from pathlib import Path
from scenarios import s1_depth, s2_starvation as s2
import ncqguest
out, jobs = Path(sys.argv[1]), int(sys.argv[2])
drop = set(sys.argv[3:])   # -global settings one of the two QEMUs lacks
command = ncqguest.Guest.command
def without_drop(self, *a, **kw):
    args, kept = command(self, *a, **kw), []
    for arg in args:
        if kept and kept[-1] == "-global" and arg in drop:
            kept.pop()
        else:
            kept.append(arg)
    return kept
ncqguest.Guest.command = without_drop
work = out / "work"
def s1():
    return "s1", s1_depth.boot(work / "s1")
def s2one(key, props):
    return "s2-" + key, s2._one(work / "s2", key, props)[1]
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    fs = [pool.submit(s1)] + [pool.submit(s2one, k, p)
                              for k, _, p in s2.SETTINGS]
    for f in fs:
        name, r = f.result()
        shutil.copyfile(r.trace_path, out / (name + ".trace"))
        print(name, r.wall_s, flush=True)
shutil.rmtree(work)
"""
GUEST_TRACES = ("s1", "s2-timeout", "s2-none", "s2-fcfs")


def harness_globals():
    """The -global settings the working tree's harness passes QEMU."""
    src = (ROOT / "guest-tests" / "ncqguest.py").read_text()
    return re.findall(r'"-global", "([^"]+)"', src)


def has_property(build, setting):
    """Whether @build's QEMU knows the property of "driver.prop=value"."""
    driver, prop = setting.split("=", 1)[0].split(".", 1)
    p = subprocess.run([str(build / "qemu-system-x86_64"), "-device",
                        f"{driver},help"], capture_output=True, text=True)
    return re.search(rf"^\s*{re.escape(prop)}=", p.stdout, re.M) is not None


def globals_to_drop(builds):
    """The harness's -global settings that some side's QEMU lacks: both
    sides boot without them, so that the two traces see the same
    machine (a property added since the base, e.g. ich9-ahci.sata-gen,
    would otherwise stop the base's QEMU or change only the head)."""
    drop = []
    for setting in harness_globals():
        missing = [label for label, b in builds.items()
                   if not has_property(b, setting)]
        if missing:
            log(f"-global {setting}: not in the {' and '.join(missing)} "
                "QEMU; both sides boot without it")
            drop.append(setting)
    return drop


def harness_digest():
    """Digest of the guest-side inputs: the harness and scenarios 1-2."""
    h = hashlib.sha256()
    for rel in ("guest-tests/ncqguest.py", "guest-tests/scenarios/__init__.py",
                "guest-tests/scenarios/s1_depth.py",
                "guest-tests/scenarios/s2_starvation.py"):
        h.update((ROOT / rel).read_bytes())
    return h.hexdigest()


def file_digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def image_dir():
    if os.environ.get("NCQ_IMAGE_DIR"):
        return Path(os.environ["NCQ_IMAGE_DIR"])
    out = run([str(ROOT / "images/build-image.sh")], "images/build-image.sh")
    return Path(out.strip().splitlines()[-1])


def guest_traces(side, build, image, jobs, drop):
    """{name: lines} of the side's four guest traces (cached for commits
    by QEMU binary, image and harness)."""
    out = side.dir / "guest-traces"
    key = {"qemu": file_digest(build / "qemu-system-x86_64"),
           "initrd": file_digest(image / "initrd.img"),
           "kernel": file_digest(image / "vmlinuz"),
           "harness": harness_digest(), "dropped": drop}
    stamp = out / "key.json"
    cached = (side.commit and stamp.exists() and
              json.loads(stamp.read_text()) == key and
              all((out / f"{n}.trace").exists() for n in GUEST_TRACES))
    if cached:
        log(f"{side.label}: guest traces from {out} (same QEMU, image, "
            "harness)")
    else:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        log(f"{side.label}: booting scenario 1 and scenario 2 (x3) with "
            f"{build}")
        env = pyrun.env(dict(os.environ, NCQ_QEMU_BUILD=str(build),
                             NCQ_IMAGE_DIR=str(image)))
        run([sys.executable, "-c", GUEST_CHILD, str(out), str(jobs)] + drop,
            f"{side.label}: guest runs", env=env)
        stamp.write_text(json.dumps(key, indent=1) + "\n")
    return {n: (out / f"{n}.trace").read_text().splitlines()
            for n in GUEST_TRACES}


def compare_guests(base, head, jobs, tally):
    builds = {s.label: s.qemu() for s in (base, head)}
    image = image_dir()
    drop = globals_to_drop(builds)
    traces = {s.label: guest_traces(s, builds[s.label], image, jobs, drop)
              for s in (base, head)}
    for n in GUEST_TRACES:
        a, b = traces[base.label][n], traces[head.label][n]
        tally.item(f"device trace {n} ({len(a)} lines)",
                   first_difference(a, b))


CAPTURE_JOB = """[global]
filename=/dev/sda
direct=1
ioengine=libaio
bs=4k
randrepeat=1
size=1G
[writes]
rw=randwrite
iodepth=8
number_ios=96
fsync=16
[reads]
stonewall
rw=randread
iodepth=16
number_ios=160
"""


def capture(side, path):
    build = side.qemu()
    os.environ["NCQ_QEMU_BUILD"] = str(build)
    os.environ["NCQ_IMAGE_DIR"] = str(image_dir())
    import ncqguest
    with tempfile.TemporaryDirectory(prefix="ncq-capture-") as tmp:
        trace = Path(tmp) / "device.trace"
        res = ncqguest.Guest(
            Path(tmp) / "guest",
            device=f"ncq-disk,model=st3400620as,trace={trace}",
            disk_size="1G").run(ncqguest.Workload(fio=CAPTURE_JOB))
        if res.status != 0:
            raise Failure(f"capture guest exited with {res.status}:\n"
                          f"{res.output[-2000:]}")
        shutil.copyfile(trace, path)
    print(f"captured {path}: {len(Path(path).read_text().splitlines())} "
          "lines")


def resolve(commit):
    try:
        return run(["git", "-C", str(ROOT), "rev-parse", "--verify",
                    commit + "^{commit}"], "git rev-parse").strip()
    except Failure:
        sys.exit(f"check-unchanged: '{commit}' is not a commit of this "
                 "repository; give --base/--head a commit id or branch")


def main():
    ap = argparse.ArgumentParser(
        description="Compare a base commit and the working tree (or "
                    "--head COMMIT) byte for byte: ncq-sim outputs and "
                    "scenario 1 and 2 device traces.")
    ap.add_argument("--base", default=BASE,
                    help=f"base commit (default {BASE[:12]}, the commit "
                         "before issue 12)")
    ap.add_argument("--head", default=None,
                    help="head commit (default: the working tree)")
    ap.add_argument("--sim-only", action="store_true",
                    help="compare ncq-sim only (no QEMU build, no guest)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="guests booted at once (default 2)")
    ap.add_argument("--capture-trace", metavar="PATH",
                    help="boot one guest with the head's QEMU and write "
                         "its device trace to PATH (how the committed "
                         "replay trace was made); compares nothing")
    args = ap.parse_args()
    if args.jobs < 1:
        sys.exit("check-unchanged: --jobs must be 1 or more")
    # the project's venv: meson for the model builds, the harness
    # (ncqguest) for the guest runs, and for the base commit's
    # build-qemu.sh its python3 first on PATH
    pyrun.ensure()
    head = Side("head", resolve(args.head) if args.head else None)
    try:
        if args.capture_trace:
            capture(head, args.capture_trace)
            return 0
        base = Side("base", resolve(args.base))
        print(f"base {base.name()}, head {head.name()}", flush=True)
        tally = Tally()
        compare_sim(base, head, tally)
        if not args.sim_only:
            compare_guests(base, head, args.jobs, tally)
    except Failure as e:
        print(f"{PREFIX} ERROR: {e}", flush=True)
        return 2
    print(f"summary: {tally.same} identical, {tally.differ} differ"
          f"{' (ncq-sim only)' if args.sim_only else ''}", flush=True)
    return 1 if tally.differ else 0


if __name__ == "__main__":
    sys.exit(main())
