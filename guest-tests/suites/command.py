"""Any command line in the guest (scripts/run-in-guest.sh): its output
and exit status, and the guest files --fetch names brought back."""
import shlex
import sys

import ncqguest
import ncqsuite

# The last line the guest script prints: the command's own exit status,
# apart from the harness's (a time-out's 137)
EXIT = "run-in-guest-exit"


def script(command, fetch, cwd="/"):
    """The guest's shell: COMMAND (its words as given) in @cwd, then each
    @fetch path copied under $RESULTS/fetched/ (a missing one said so)."""
    lines = [f"cd {shlex.quote(cwd)}",
             " ".join(shlex.quote(w) for w in command),
             "rc=$?", "mkdir -p $RESULTS/fetched"]
    for path in fetch:
        q = shlex.quote(path)
        dest = shlex.quote(path.lstrip("/") or ".")
        lines.append(
            f'if [ -e {q} ]; then mkdir -p "$(dirname "$RESULTS/fetched/"'
            f'{dest})" && cp -a {q} "$RESULTS/fetched/"{dest}; '
            f'else echo "run-in-guest: --fetch {path}: no such file in the '
            f'guest" >&2; fi')
    lines += [f'echo "{EXIT} $rc"', "exit $rc"]
    return "\n".join(lines) + "\n"


def command_status(output, status):
    """The command's exit status from the guest's @output (its last EXIT
    line), or None when the script did not get there (@status the
    harness's)."""
    for line in reversed(output.splitlines()):
        if line.startswith(EXIT + " "):
            return int(line.split()[1])
    return None


def fetched(files):
    """The files under fetched/ of a Result's files, renamed without it."""
    return {n[len("fetched/"):]: d for n, d in files.items()
            if n.startswith("fetched/")}


def main(argv=None):
    p = ncqsuite.parser("a command line in the guest")
    p.add_argument("--fetch", action="append", default=[])
    p.add_argument("--cwd", default="/")
    p.add_argument("--snapshot", choices=("on", "off"), default="on")
    p.add_argument("command", nargs="+")
    a = p.parse_args(argv)
    r = ncqsuite.run(
        a.tool, ncqsuite.workdir("run-in-guest"), a.out,
        ncqguest.Workload(script=script(a.command, a.fetch, a.cwd),
                          timeout_s=a.timeout),
        rename=lambda n: n[len("fetched/"):] if n.startswith("fetched/")
        else None,
        **ncqsuite.guest_kw(a, snapshot=None if a.snapshot == "on" else False,
                            timeout_s=a.timeout * 2 + 600))
    text = "\n".join(line for line in r.output.splitlines()
                     if not line.startswith(EXIT + " "))
    print(text)
    # output.txt: what the command printed, without the script's own line
    (a.out / "output.txt").write_text(text + "\n" if text else "")
    rc = command_status(r.output, r.status)
    got = sorted(fetched(r.files))
    print(f"{a.tool}: exit status {rc if rc is not None else r.status}; "
          f"output in {a.out}/output.txt"
          + (f"; fetched into {a.out}: {', '.join(got)}" if got else ""),
          file=sys.stderr)
    if rc is None:
        why = ("the run hit --timeout" if r.status == 137
               else f"see {a.out}/console.txt")
        print(f"{a.tool}: error: the command did not finish (guest status "
              f"{r.status}; {why})", file=sys.stderr)
        sys.exit(2)
    sys.exit(rc)


if __name__ == "__main__":
    main()
