#!/usr/bin/env python3
"""Run guest scenarios (guest-tests/scenarios/sN_*.py) and write a report:
<out>/README.md, the PNG plots next to it, and each scenario's result as
<out>/sN.json so that --from-json can rewrite the report without booting
a guest.  See docs/scenarios.md."""

import argparse
import datetime
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import pyrun  # noqa: E402  (scripts/: the package roots, pyproject.toml)
pyrun.ensure()

import scenarios as sc  # noqa: E402


def discover():
    """{number: module name} of guest-tests/scenarios/s[0-9]_*.py."""
    found = {}
    for path in sorted((ROOT / "guest-tests/scenarios").glob("s[0-9]_*.py")):
        found[int(path.name[1])] = path.stem
    return found


def parse_numbers(text, known):
    try:
        nums = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        sys.exit(f"report.py: --scenarios {text!r}: use numbers separated "
                 "by commas, e.g. 1,2,7")
    missing = [n for n in nums if n not in known]
    if missing:
        sys.exit(f"report.py: no scenario {missing[0]}; known: "
                 f"{','.join(str(k) for k in sorted(known))}")
    return nums


def header(nums):
    return f"""# ncq-disk: the published NCQ phenomena in an unmodified Linux guest

Each section below is one scenario of [docs/scenarios.md](../scenarios.md):
a guest experiment on ncq-disk under deterministic `-icount`, compared
with the published figure it reproduces (the studies, their set-ups and
figures: [docs/published-figures.md](../published-figures.md)). Under icount every figure is the same on
every run and machine; only wall-clock times vary.

Last written by `python3 scripts/report.py --scenarios {','.join(map(str, nums))}`;
sections of other scenarios come from their saved results (`sN.json` in
this directory). Each table and plot names the command that produced it:
`python3 scripts/report.py --scenarios N` reruns scenario N and rewrites
this file; adding `--from-json` rewrites it from the saved results
without booting a guest.
"""


def main():
    known = discover()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--scenarios", default="1,2,3,4,5,6",
                    help="comma-separated scenario numbers (default "
                         "1,2,3,4,5,6; known: "
                         f"{','.join(str(k) for k in sorted(known))})")
    ap.add_argument("--out", default=str(ROOT / "docs/report"),
                    help="report directory (default docs/report)")
    ap.add_argument("--workdir", default=None,
                    help="where guests run (default: a temporary "
                         "directory, removed afterwards)")
    ap.add_argument("--from-json", action="store_true",
                    help="do not boot guests: read <out>/sN.json")
    args = ap.parse_args()
    nums = parse_numbers(args.scenarios, known)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = None
    if args.workdir:
        workdir = Path(args.workdir)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="ncq-report-")
        workdir = Path(tmp.name)
    sections, failed = [], []
    # scenarios not chosen now keep their section, from their saved result
    shown = sorted(set(nums) | {n for n in known
                                if (out / f"s{n}.json").exists()})
    for n in shown:
        mod = importlib.import_module(f"scenarios.{known[n]}")
        saved = out / f"s{n}.json"
        if args.from_json or n not in nums:
            if not saved.exists():
                sys.exit(f"report.py: --from-json: {saved} is missing; run "
                         f"without --from-json to produce it")
            result = json.loads(saved.read_text())
        else:
            t0 = time.monotonic()
            print(f"scenario {n}: {mod.TITLE} ...", flush=True)
            try:
                result = mod.run(workdir / f"s{n}")
            except Exception as e:      # a guest that failed: report it
                msg = f"{type(e).__name__}: {e}".strip()
                print(f"scenario {n}: ERROR {msg}", flush=True)
                failed.append(f"scenario {n}: {msg.splitlines()[0]}")
                sections.append(f"## Scenario {n}: {mod.TITLE}\n\nThe run "
                                f"failed (`python3 scripts/report.py "
                                f"--scenarios {n}`):\n\n```\n"
                                f"{msg[-3000:]}\n```\n")
                continue
            result["report_wall_s"] = time.monotonic() - t0
            # what made it: guest-tests/test_report_inputs.py compares
            result["inputs"] = sc.inputs(mod)
            sc.dump(result, saved)
        pngs = mod.plot(result, out)
        fails = mod.check(result)
        failed += [f"scenario {n}: {f}" for f in fails]
        print(f"scenario {n}: " + ("holds" if not fails else
                                   "FAILED: " + "; ".join(fails)),
              flush=True)
        sections.append(mod.report_md(result, pngs))
    text = header(nums) + "\n" + "\n".join(sections)
    text += (f"\n---\nGenerated {datetime.date.today().isoformat()}"
             f"{' from saved results' if args.from_json else ''}.\n")
    (out / "README.md").write_text(text)
    print(f"report: {out / 'README.md'}")
    if tmp:
        tmp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
