"""Every client nobody here wrote, on one drive in one boot
(scripts/run-conformance.sh; the guest runs scripts/conformance-guest.sh):
what each printed, the drive's view of each queue depth, and a problem
count."""
import re

import ncqguest
import ncqsuite

# fio's regions are 1 GiB each; what each phase of conformance-guest.sh
# reads there, and the most commands the drive should hold
PHASES = ((1, "fio iodepth 1", 1), (2, "fio iodepth 8", 8),
          (3, "fio iodepth 32", 32), (4, "blktrace, fio iodepth 8", 8),
          (5, "libata queue_depth 1", 1), (6, "libata queue_depth 8", 8),
          (7, "libata queue_depth 32", 32))


def listed_logs(directory):
    """The log addresses `smartctl -l directory` lists (GPL and SMART)."""
    return {int(a, 16) for a in re.findall(r"^0x([0-9a-f]{2}) ", directory,
                                           re.M)}


def step_problems(name, lines, listed):
    """(problems, unclaimed) of one smartctl step's lines: "not supported"
    is a problem only for a log the drive lists, so is a failed read."""
    problems, unclaimed = [], set()
    if not name.startswith("smartctl"):
        return problems, unclaimed
    for line in lines:
        m = re.search(r"Log 0x([0-9a-f]{2})\) not supported", line)
        if m and int(m[1], 16) not in listed:
            unclaimed.add(line.strip())
        elif re.search(r"not supported|^(Read|Write) .*failed|FAILED!", line):
            problems.append(f"{name}: {line.strip()}")
    return problems, unclaimed


def guest_line_problems(other):
    """Problems in the guest script's own lines: a log that does not read
    the same both ways, a SMART log read that failed."""
    problems = []
    for line in other:
        m = re.match(r"gplog (\S+) (\d+) (\d+) (\d+) (\w+)$", line)
        # E1h (SCT data transfer) holds data only after an SCT command that
        # has some; reading it otherwise is refused, both ways alike
        if m and m[1] != "e1h" and m.groups()[2:] != ("0", "0", "same"):
            problems.append(f"sg_sat_read_gplog: {line}")
        m = re.match(r"smartlog (\S+) exit (\d+) (\d+)$", line)
        if m and (m[2] != "0" or m[3] != "0"):
            problems.append(f"smartctl -l smartlog: {line}")
    return problems


def depth_report(recs, most):
    """(lines, problems): per phase, the reads and the most commands the
    drive held (queue_len counts those already in it when one arrives);
    @most is the drive's own depth (Linux never sets more)."""
    gib = (1 << 30) // 512
    lines, problems = [], []
    for region, what, want in PHASES:
        rs = [x for x in recs if x["op"] == "R"
              and region * gib <= x["lba"] < (region + 1) * gib]
        held = max((x["queue_len"] for x in rs), default=-1) + 1
        want = min(want, most)
        lines.append(f"{what}: {len(rs)} reads, at most {held} in the drive")
        if not rs or held != want:
            problems.append(f"{what}: the drive held at most {held} "
                            f"commands, not {want}")
    return lines, problems


def main(argv=None):
    p = ncqsuite.parser("conformance clients in the guest")
    p.add_argument("--brief", action="store_true")
    a = p.parse_args(argv)
    out = a.out
    work = ncqsuite.workdir("conformance")
    trace = work / "drive.trace"
    script = (ncqguest.ROOT / "scripts" / "conformance-guest.sh").read_text()
    device = a.device
    r = ncqsuite.run(a.tool, work, out,
                     ncqguest.Workload(script=script, timeout_s=a.timeout),
                     **ncqsuite.guest_kw(a, device=f"{device},trace={trace}",
                                         snapshot=False,
                                         timeout_s=a.timeout * 2))
    release = ncqguest.image_manifest().get("kernel_release", "?")
    print(f"{a.tool}: {device} on Linux {release}; each step's output "
          f"in {out}")
    problems, unclaimed = [], set()
    listed = listed_logs(r.files.get("smartctl-directory.txt", b"").decode())
    steps = re.findall(r"^step (\S+) exit (\d+)$", r.output, re.M)
    for name, rc in steps:
        text = r.files.get(f"{name}.txt", b"").decode(errors="replace")
        lines = text.rstrip("\n").splitlines()
        print(f"\n== {name} (exit {rc})")
        print("\n".join(lines[:12] if a.brief else lines))
        if a.brief and len(lines) > 12:
            print(f"   ... {len(lines) - 12} more lines in {out}/{name}.txt")
        pr, un = step_problems(name, lines, listed)
        problems += pr
        unclaimed |= un
    other = [line for line in r.output.splitlines()
             if not re.match(r"step \S+ exit \d+$", line)]
    print("\n== guest's own lines")
    print("\n".join(other))
    problems += guest_line_problems(other)
    m = re.search(r"^dmesg_bad (\d+)$", r.output, re.M)
    if not m or m[1] != "0":
        problems.append("libata: errors in dmesg (dmesg-libata.txt)")
    if trace.exists():
        _, recs = ncqguest.read_trace(trace)
        print("\n== the drive's trace: most commands held per phase")
        # a drive of queue-depth=N: Linux sets queue_depth N at boot and
        # never more, so no phase holds more than N
        m = re.search(r"^boot_queue_depth (\d+)$", r.output, re.M)
        lines, pr = depth_report(recs, int(m[1]) if m else 32)
        print("\n".join(lines))
        problems += pr
    print()
    for line in sorted(unclaimed):
        print(f"not claimed (the drive lists no such log): {line}")
    for pr in problems:
        print(f"problem: {pr}")
    print(f"conformance: {len(problems)} problems "
          f"({len(steps)} steps, Linux {release}, {device})")
    raise SystemExit(1 if problems else 0)


if __name__ == "__main__":
    main()
