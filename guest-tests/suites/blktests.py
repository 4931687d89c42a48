"""blktests' ./check in the guest (scripts/run-blktests.sh): its verdicts,
the tests that stopped without one, those ./check never named."""
import re

import ncqguest
import ncqsuite

# blktests prints "block/005 => sda (...)   [passed]" per test, then its
# indented details (runtime, the reason of a "not run"); a failure also
# leaves results/<dev>/<test>.out.bad and .full
VERDICT = re.compile(r"^(\S+/\d+)\b.*\[(passed|failed|not run)\]\s*$")
# a test's first line: its name and description, before the verdict
STARTED = re.compile(r"^(\S+/\d+)( => \S+)? \(")


def script(tests):
    """The guest's shell: what systemd would have mounted, then ./check."""
    return f"""
cd /opt/blktests
# what systemd would have mounted: configfs (null_blk's devices), cgroup2
modprobe configfs && mount -t configfs none /sys/kernel/config
mount -t cgroup2 none /sys/fs/cgroup
./check -o $RESULTS/blktests {' '.join(tests)}
echo "check-exit $?"
"""


def verdicts(output, expected, out):
    """(lines to print, counts) from ./check's @output: each verdict with
    its indented details; a test that started and has no verdict is a
    failure; an @expected test ./check never named is "not run"."""
    counts = {"passed": 0, "failed": 0, "not run": 0}
    shown = []
    lines = output.replace("\r", "\n").splitlines()
    started = {m.group(1) for m in map(STARTED.match, lines) if m}
    seen = set()
    for i, line in enumerate(lines):
        m = VERDICT.match(line)
        if not m:
            continue
        seen.add(m.group(1))
        counts[m.group(2)] += 1
        shown.append(line.rstrip())
        # the indented lines after a verdict: its runtime, the reason it
        # did not run, the diff of a failure
        for extra in lines[i + 1:]:
            if not extra.startswith(("    ", "\t")):
                break
            shown.append(extra.rstrip())
    # A test whose script stopped with an error has no verdict line
    # (./check goes on with the next): a failure, with its .out kept
    for name in sorted(started - seen):
        counts["failed"] += 1
        shown.append(f"{name} [no verdict: the test stopped; see "
                     f"{out}/*/{name}.out and .full]")
    # A test ./check never named: dropped before its first line (e.g. a
    # requires() whose shell arithmetic failed); not run, said so
    for name in expected:
        if name not in started | seen:
            counts["not run"] += 1
            shown.append(f"{name} [not run: ./check printed nothing for "
                         f"it; see {out}/output.txt]")
    return shown, counts


def main(argv=None):
    p = ncqsuite.parser("blktests in the guest")
    p.add_argument("--expected", default="",
                   help="the tests ./check should report, space-separated")
    p.add_argument("tests", nargs="+")
    a = p.parse_args(argv)
    r = ncqsuite.run(a.tool, ncqsuite.workdir("blktests"), a.out,
                     ncqguest.Workload(script=script(a.tests),
                                       timeout_s=a.timeout),
                     rename=lambda n: n[len("blktests/"):]
                     if n.startswith("blktests/") else None,
                     **ncqsuite.guest_kw(a, snapshot=False,
                                         timeout_s=a.timeout * 3 + 600))
    shown, counts = verdicts(r.output, a.expected.split(), a.out)
    print("\n".join(shown))
    print(f"blktests: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['not run']} not run (results in {a.out})")
    ncqsuite.finish(a.tool, r.status, sum(counts.values()), counts["failed"],
                    a.out, suite="blktests")


if __name__ == "__main__":
    main()
