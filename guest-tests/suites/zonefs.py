"""zonefs-tools' tests/zonefs-tests.sh in the guest
(scripts/run-zonefs-tests.sh): each test's verdict, and the reason of a
skip or a failure from the test's own log."""
import re
import shlex

import ncqguest
import ncqsuite

# "  Test 0010: mkzonefs (options)    ... PASS" (PASS and FAIL in colour)
VERDICT = re.compile(r"^\s*Test (\d+):\s+(.*?)\s+\.\.\.\s+(?:\x1b\[[0-9;]*m)?"
                     r"(PASS|FAIL|skip)")


def script(suite_args):
    return f"""
export PATH=/opt/zonefs/bin:$PATH
# test 0401 runs 'sudo fallocate': the guest runs everything as root, and
# has no sudo (its PAM set-up does not run in the image)
printf '#!/bin/sh\\nexec "$@"\\n' >/opt/zonefs/bin/sudo && chmod 755 /opt/zonefs/bin/sudo
# what systemd would have mounted: configfs (null_blk's devices)
modprobe configfs && mount -t configfs none /sys/kernel/config
cd /opt/zonefs-tests
bash ./zonefs-tests.sh {' '.join(shlex.quote(a) for a in suite_args)} \\
    -g $RESULTS/logs /dev/sda
echo "zonefs-tests-exit $?"
"""


def verdicts(output, logs):
    """(lines to print, counts): "0010 PASS  title" a test; after a skip
    the " --> skipped: ..." lines of its log (@logs: name -> text), after
    a failure the last four lines before it."""
    counts = {"PASS": 0, "FAIL": 0, "skip": 0}
    shown = []
    for line in output.splitlines():
        m = VERDICT.match(line)
        if not m:
            continue
        num, desc, verdict = m.groups()
        counts[verdict] += 1
        shown.append(f"{num} {verdict.upper():5} {desc}")
        if verdict != "PASS":
            log = logs.get(f"logs/{num}.log", "").splitlines()
            why = [ln for ln in log if "skipped:" in ln] if verdict == "skip" \
                else [ln for ln in log if ln.strip()][-4:]
            shown += [f"      {ln.strip()}" for ln in why]
    return shown, counts


def main(argv=None):
    p = ncqsuite.parser("zonefs-tools' suite in the guest")
    p.add_argument("suite_args", nargs="*")
    a = p.parse_args(argv)
    r = ncqsuite.run(a.tool, ncqsuite.workdir("zonefs-tests"), a.out,
                     ncqguest.Workload(script=script(a.suite_args),
                                       timeout_s=a.timeout),
                     **ncqsuite.guest_kw(a, snapshot=False,
                                         timeout_s=a.timeout * 3 + 600))
    logs = {n: d.decode(errors="replace") for n, d in r.files.items()}
    shown, counts = verdicts(r.output, logs)
    print("\n".join(shown))
    print(f"zonefs-tests: {counts['PASS']} passed, {counts['FAIL']} failed, "
          f"{counts['skip']} skipped (logs in {a.out})")
    ncqsuite.finish(a.tool, r.status, sum(counts.values()), counts["FAIL"],
                    a.out)


if __name__ == "__main__":
    main()
