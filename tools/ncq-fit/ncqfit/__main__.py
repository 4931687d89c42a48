#!/usr/bin/env python3
"""ncq-fit: measure a hard disk and write its ncq-disk model (docs/ncq-fit.md).

  ncq-fit DEVICE [--minutes N] [--out DIR] [--name NAME] [--force]
          [--allow-writes] [--host-us US]
                                      probe DEVICE here, then fit
  ncq-fit fit SAMPLES --out DIR [--name NAME] [--no-calibrate]
          [--host-us US]              fit a probe's samples (from another
                                      machine, or a guest)

Run as tools/ncq-fit/ncq-fit or `python3 -m ncqfit` (scripts/pyrun.py).
Writes DIR/<name>.ncqm, DIR/report.md and its plots; `fit` of a DEVICE run
also keeps DIR/samples.jsonl.
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

# the probe's sources: tools/ncq-fit/probe-*.c
HERE = Path(__file__).resolve().parent.parent

from ncqfit import calibrate, fit, report, samples, writer  # noqa: E402


def die(msg, code=1):
    print(f"ncq-fit: {msg}", file=sys.stderr)
    sys.exit(code)


def probe_binary():
    """ncq-fit-probe from PATH, or built from the sources next to this
    script into ~/.cache/ncq-fit."""
    found = shutil.which("ncq-fit-probe")
    if found:
        return found
    out = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) \
        / "ncq-fit" / "ncq-fit-probe"
    srcs = sorted(HERE.glob("probe-*.c"))
    newest = max(s.stat().st_mtime for s in srcs)
    if not out.exists() or out.stat().st_mtime < newest:
        out.parent.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["cc", "-O2", "-pthread", "-o", str(out),
                            *map(str, srcs), "-lm"], capture_output=True,
                           text=True)
        if r.returncode:
            die("cannot build ncq-fit-probe (a C compiler and the libc "
                "headers are needed): " + r.stderr.strip().splitlines()[-1])
    return str(out)


HOST_US_HELP = ("the host's own time per command in us (block layer, "
                "driver, interrupt), if known: the drive's buffer-hit "
                "overhead is then the hit's response less it and the "
                "transfer, instead of a default (docs/ncq-fit.md)")


def host_us_arg(text):
    """--host-us: a time in us, 0 or more."""
    try:
        v = float(text)
    except ValueError:
        v = -1
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time in us; give the host's time per "
            "command, e.g. --host-us 85")
    return v


def do_fit(sample_path, out_dir, name, do_calibrate, host_us=None):
    try:
        s = samples.load(sample_path)
    except OSError as e:
        die(f"cannot read {sample_path}: {e.strerror}")
    except samples.SampleError as e:
        die(str(e))
    try:
        f = fit.fit(s, name, host_us)
    except ValueError as e:
        die(f"{sample_path}: {e}")
    f.data["queue_records"] = s["queue"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    notes = []
    if do_calibrate:
        note = calibrate.calibrate(f, writer.render, out)
        if note is None and f.get("firmware", "policy") == "sptf":
            f.missing.append(("SPTF costs (plan_settle_ms, eval_us)",
                              "jitter + 0.5 ms, 0 us",
                              "ncq-sim not found (build it, or set NCQ_SIM)"))
    header = [f"{f.name}: fitted by ncq-fit from {Path(sample_path).name}",
              f"device {s['probe'][0].get('device', '?') if s['probe'] else '?'}"
              f", probe budget {s['probe'][0].get('minutes', '?') if s['probe'] else '?'}"
              " min"]
    model_path = out / f"{f.name}.ncqm"
    model_path.write_text(writer.render(f, header))
    report.write(f, out, model_path, notes)
    print(model_path)
    return 0


def main(argv):
    if argv[:1] == ["fit"]:
        ap = argparse.ArgumentParser(prog="ncq-fit fit")
        ap.add_argument("samples")
        ap.add_argument("--out", required=True)
        ap.add_argument("--name")
        ap.add_argument("--no-calibrate", action="store_true")
        ap.add_argument("--host-us", type=host_us_arg, help=HOST_US_HELP)
        a = ap.parse_args(argv[1:])
        return do_fit(a.samples, a.out, a.name, not a.no_calibrate,
                      a.host_us)
    ap = argparse.ArgumentParser(prog="ncq-fit")
    ap.add_argument("device")
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--out", default=".")
    ap.add_argument("--name")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--allow-writes", action="store_true",
                    help="also measure the write cache's size, with writes "
                    "that put back what their places held")
    ap.add_argument("--no-calibrate", action="store_true")
    ap.add_argument("--host-us", type=host_us_arg, help=HOST_US_HELP)
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    sample_path = out / "samples.jsonl"
    cmd = [probe_binary(), a.device, "--minutes", str(a.minutes), "--out",
           str(sample_path)]
    cmd += ["--force"] if a.force else []
    cmd += ["--allow-writes"] if a.allow_writes else []
    # the probe's own one-line refusals (root, partition, in use, budget)
    rc = subprocess.run(cmd).returncode
    if rc:
        return rc
    return do_fit(sample_path, out, a.name, not a.no_calibrate, a.host_us)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
