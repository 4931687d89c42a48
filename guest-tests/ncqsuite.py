"""How a suite runner (scripts/run-cdl-tools.sh, run-blktests.sh,
run-conformance.sh, run-zonefs-tests.sh, run-in-guest.sh) boots its one
guest and keeps what it printed.  The runners share one shape
(scripts/lib/suite.sh): the shell builds the image, then runs the
runner's module in guest-tests/suites/ with the common values parser()
reads.

The guest runs in a temporary directory that holds its disk image
(gigabytes after a suite on a whole-capacity drive): the directory goes
when the runner exits, and is kept, with its path printed, only when the
guest itself failed (its console log is there).
"""
import argparse
import atexit
import shutil
import sys
import tempfile
from pathlib import Path

import ncqguest


def workdir(tool):
    """A fresh work directory for @tool's guest, removed at exit."""
    work = Path(tempfile.mkdtemp(prefix=f"ncq-{tool}-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    return work


def run(tool, work, out, workload, rename=lambda name: name, **guest_kw):
    """Boot ncqguest.Guest(work, **guest_kw), run @workload and save its
    files (each under out/rename(name); rename returns None to drop one),
    output.txt, dmesg.txt and console.txt in @out.  A guest that does not
    finish ends the runner with status 2."""
    try:
        r = ncqguest.Guest(work, **guest_kw).run(workload)
    except ncqguest.GuestError as e:
        print(f"{tool}: error: the guest did not finish: {e}",
              file=sys.stderr)
        atexit.unregister(shutil.rmtree)
        print(f"{tool}: the guest's files are kept in {work}",
              file=sys.stderr)
        sys.exit(2)
    out = Path(out)
    for name, data in r.files.items():
        kept = rename(name)
        if kept is not None:
            (out / kept).parent.mkdir(parents=True, exist_ok=True)
            (out / kept).write_bytes(data)
    out.mkdir(parents=True, exist_ok=True)
    (out / "output.txt").write_text(r.output)
    (out / "dmesg.txt").write_text(r.dmesg)
    (out / "console.txt").write_text(r.console)
    return r


def finish(tool, status, total, failed, out, suite="the suite"):
    """End a runner with its exit status: 2 when the guest's run hit its
    time-out (@status 137) or @suite reported no test (@total 0), each
    with one line on stderr; else 1 when @failed, 0 when not."""
    if status == 137:
        print(f"{tool}: error: the run hit --timeout; the tests after the "
              "last verdict did not run", file=sys.stderr)
        sys.exit(2)
    if not total:
        print(f"{tool}: error: {suite} reported no test; its output is in "
              f"{out}/output.txt", file=sys.stderr)
        sys.exit(2)
    sys.exit(1 if failed else 0)


def parser(description):
    """The arguments scripts/lib/suite.sh's suite_run passes every runner's
    module: its name (for messages), the output directory and the guest's
    drive, memory, CPUs and time bound."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--tool", required=True)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--device", required=True)
    p.add_argument("--disk-size", required=True)
    p.add_argument("--memory", required=True)
    p.add_argument("--smp", type=int, required=True)
    p.add_argument("--timeout", type=int, required=True)
    return p


def guest_kw(args, **kw):
    """ncqguest.Guest's keywords from parser()'s arguments, then @kw."""
    out = dict(device=args.device, disk_size=args.disk_size,
               memory=args.memory, smp=args.smp)
    out.update(kw)
    return out
