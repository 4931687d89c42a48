"""cdl-tools' tests/cdl-tests.sh in the guest (scripts/run-cdl-tools.sh):
each test's number, verdict and title."""
import re
import shlex

import ncqguest
import ncqsuite

# "  Test 0001:  cdladm (get device information)  ... PASS" (colour codes
# around PASS and FAIL; a test that passed with a warning, its exit status
# 3, prints PASS in yellow, 93)
VERDICT = re.compile(r"^\s*Test (\d+):\s+(.*?)\s+\.\.\.\s+(?:\x1b\[([0-9;]*)m)?"
                     r"(PASS|FAILED|FAIL|SKIP|WARNING)")


def script(suite_args):
    return f"""
cd /opt/cdl-tests
bash ./cdl-tests.sh {' '.join(shlex.quote(a) for a in suite_args)} \\
    --logdir $RESULTS/logs /dev/sda
echo "cdl-tests-exit $?"
"""


def verdicts(output):
    """(lines to print, counts): "0001 PASS    title" a test; FAIL counts
    as FAILED, a yellow PASS as WARNING."""
    counts = {"PASS": 0, "FAILED": 0, "SKIP": 0, "WARNING": 0}
    shown = []
    for line in output.splitlines():
        m = VERDICT.match(line)
        if m:
            verdict = "FAILED" if m.group(4) == "FAIL" else m.group(4)
            if verdict == "PASS" and m.group(3) == "93":
                verdict = "WARNING"
            counts[verdict] += 1
            shown.append(f"{m.group(1)} {verdict:7} {m.group(2)}")
    return shown, counts


def main(argv=None):
    p = ncqsuite.parser("cdl-tools' suite in the guest")
    p.add_argument("--icount-shift", type=int, default=0)
    p.add_argument("--backend", choices=("null", "image"), default="null")
    p.add_argument("suite_args", nargs="*")
    a = p.parse_args(argv)
    r = ncqsuite.run(a.tool, ncqsuite.workdir("cdl-tools"), a.out,
                     ncqguest.Workload(script=script(a.suite_args),
                                       timeout_s=a.timeout),
                     **ncqsuite.guest_kw(
                         a, snapshot=False,
                         backend="null" if a.backend == "null" else "qcow2",
                         timeout_s=a.timeout * 3 + 600,
                         icount_shift=a.icount_shift))
    shown, counts = verdicts(r.output)
    print("\n".join(shown))
    print(f"cdl-tools: {counts['PASS']} passed, {counts['FAILED']} failed, "
          f"{counts['SKIP']} skipped, {counts['WARNING']} warnings "
          f"(logs in {a.out})")
    ncqsuite.finish(a.tool, r.status, sum(counts.values()),
                    counts["FAILED"], a.out)


if __name__ == "__main__":
    main()
