"""Refresh the `$ ncq-sim ...` sessions of the docs after a timing change.

Re-runs every session as tests/repo/test_docs.py does (the convention is
in tests/repo/mdblocks.py: the sessions of one page in order, in one fresh
temporary folder, the standalone build's ncq-sim first on PATH) and
rewrites each command's printed output in place. Output that still matches
is left as it is. Where the old output used wildcards (a line `...`, or a
line ending ` ...`), the new one keeps them: the same number of lines
before the first `...` and after the last one, a ` ...` line kept while
its text still starts the new line; if that no longer matches, the whole
new output is written and the line is reported.

    scripts/update-doc-sessions.py [--check] [DOC.md ...]

(the command runs this module, `python3 -m docsessions`, with the
checkout's package roots: scripts/pyrun.py, pyproject.toml)

Without DOC, every page test_docs.py checks (README.md, docs/**/*.md).
--check writes nothing and exits 1 if some session would change. A
command that fails is reported and its output left alone (exit 1).
The build is $NCQ_MODEL_BUILD (default _build/model), set up and built
when needed.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import mdblocks  # the one parser of the convention
from repopaths import ROOT


def ncq_sim_dir():
    """The standalone build's tools/ncq-sim, brought up to date."""
    build = Path(os.environ.get("NCQ_MODEL_BUILD", "_build/model"))
    if not build.is_absolute():
        build = ROOT / build
    if not (build / "build.ninja").exists():
        subprocess.run(["meson", "setup", str(build)], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", str(build), "tools/ncq-sim/ncq-sim"],
                   check=True, stdout=subprocess.DEVNULL)
    return build / "tools" / "ncq-sim"


def strip_end(lines):
    lines = list(lines)
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def keep_prefix(old, new):
    """@old if it is a ` ...` line that still matches @new, else @new."""
    if old.endswith(" ...") and new.startswith(old[:-4]):
        return old
    return new


def refreshed(expected, actual):
    """The new expected output for @actual, keeping @expected's
    wildcards where they still fit; (lines, kept_wildcards)."""
    exp, act = strip_end(expected), strip_end(actual)
    if "..." not in exp:
        new = [keep_prefix(e, a) for e, a in zip(exp, act)]
        new += act[len(new):]
    else:
        first = exp.index("...")
        last = len(exp) - 1 - exp[::-1].index("...")
        head, middle, tail = exp[:first], exp[first:last + 1], exp[last + 1:]
        if len(head) + len(tail) > len(act):
            return act, False
        new = [keep_prefix(e, a) for e, a in zip(head, act)]
        new += middle
        if tail:
            new += [keep_prefix(e, a)
                    for e, a in zip(tail, act[len(act) - len(tail):])]
    if mdblocks.match(new, act) is None:
        return new, True
    return act, False


def run_page(path, bindir):
    """[(command, new expected lines or None if it failed)] of a page."""
    rel = os.path.relpath(path, ROOT)
    text = path.read_text(encoding="utf-8")
    cmds = [c for b in mdblocks.blocks(rel, text) for c in mdblocks.session(b)]
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", LC_ALL="C")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in cmds:
            r = subprocess.run(["bash", "-c", c.text], cwd=tmp, env=env,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               timeout=300)
            if r.returncode != 0:
                first = c.text.split("\n")[0]
                print(f"{c.path}:{c.line}: `{first}` exited {r.returncode}; "
                      "left as it is", file=sys.stderr)
                out.append((c, None))
            else:
                out.append((c, r.stdout.split("\n")))
    return text, out


def update_page(path, bindir, check):
    """Rewrite the page's changed outputs; (changed, failed) counts."""
    text, results = run_page(path, bindir)
    lines = text.split("\n")
    changed = failed = 0
    # bottom up, so that earlier line numbers stay valid
    for c, actual in reversed(results):
        if actual is None:
            failed += 1
            continue
        if mdblocks.match(c.expected, actual) is None:
            continue
        new, kept = refreshed(c.expected, actual)
        start = c.line - 1 + len(c.text.split("\n"))   # 0-based, output
        end = start + len(strip_end(c.expected))
        lines[start:end] = new
        changed += 1
        note = "" if kept or "..." not in c.expected else \
            " (wildcards no longer fit: the whole output written)"
        print(f"{c.path}:{c.line}: output {'differs' if check else 'updated'}"
              f"{note}")
    if changed and not check:
        path.write_text("\n".join(lines), encoding="utf-8")
    return changed, failed


def main():
    ap = argparse.ArgumentParser(prog="scripts/update-doc-sessions.py",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if some output differs")
    ap.add_argument("docs", nargs="*", type=Path)
    a = ap.parse_args()
    docs = [d.resolve() for d in a.docs] or sorted(
        [ROOT / "README.md"] + list((ROOT / "docs").rglob("*.md")))
    bindir = ncq_sim_dir()
    changed = failed = 0
    for d in docs:
        c, f = update_page(d, bindir, a.check)
        changed += c
        failed += f
    print(f"{changed} session output(s) {'differ' if a.check else 'updated'}"
          f", {failed} command(s) failed", file=sys.stderr)
    return 1 if failed or (a.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
