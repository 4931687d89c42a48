"""A shell script's --help describes the options its parser takes, and
only those: scripts/fuzz.sh's once described a CI campaign it no longer
ran.  The help text is the script's header comment (what `sed` prints for
--help) and its usage() function; an option is one the `case` branches
take."""
import re

import pytest

from repopaths import ROOT

SCRIPTS = sorted(list((ROOT / "scripts").glob("*.sh"))
                 + list((ROOT / "images").glob("*.sh")))


def help_text(text):
    lines = text.split("\n")[1:]
    head = []
    for line in lines:
        if not line.startswith("#"):
            break
        head.append(line[1:])
    m = re.search(r"^usage\(\)\s*\{(.*?)^\}", text, re.S | re.M)
    if not m:
        m = re.search(r"^usage\(\)\s*\{(.*?)\}$", text, re.M)
    more = m.group(1) if m else ""
    if "suite_help" in more:
        # the runners' common options: SUITE_HELP in scripts/lib/suite.sh
        lib = (ROOT / "scripts" / "lib" / "suite.sh").read_text()
        more += "\n" + re.search(r"^SUITE_HELP='(.*?)'$", lib,
                                  re.S | re.M).group(1)
    return "\n".join(head) + "\n" + more


def parsed_options(text):
    """The `--opt` patterns of `case` branches: first on a line or after
    `;;`, alone or joined by `|`, then `)`; a pattern may continue from a
    line ending in `|`."""
    code = "\n".join(l for l in text.split("\n")
                     if not l.lstrip().startswith("#"))
    code = re.sub(r"\|\s*\\?\n\s*", "| ", code)
    out = set()
    for m in re.finditer(r"(?:^|;;)\s*((?:-[\w-]+\*?\s*\|\s*)*-[\w-]+\*?)"
                         r"\s*\)", code, re.M):
        out |= {x.strip().rstrip("*") for x in m.group(1).split("|")
                if x.strip().startswith("--")}
    return out - {"--help", "--"}


def with_sourced(path):
    """The script's text and that of the scripts/lib/*.sh it sources: the
    suite runners take their common options in lib/suite.sh."""
    text = path.read_text()
    for name in sorted(set(re.findall(r"lib/([\w-]+\.sh)", text))):
        lib = ROOT / "scripts" / "lib" / name
        if lib.exists():
            text += "\n" + lib.read_text()
    return text


def described_options(help):
    """Options the help defines: `--opt` first on a line of its own."""
    return set(re.findall(r"^ {0,4}(?:-\w,?\s*)?(--[\w-]+)", help, re.M)) - {
        "--help"}


CASES = [p for p in SCRIPTS if "--help" in p.read_text()
         and parsed_options(p.read_text())]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_help_names_what_the_parser_takes(path):
    text = path.read_text()
    help = help_text(text)
    parsed = parsed_options(with_sourced(path))
    mentioned = set(re.findall(r"--[\w-]+", help))
    assert parsed - mentioned == set(), (
        f"{path.name} takes {sorted(parsed - mentioned)} but its --help "
        "does not say so")
    extra = described_options(help) - parsed
    assert extra == set(), (
        f"{path.name}'s --help describes {sorted(extra)}, which its parser "
        "does not take")


def test_some_scripts_are_checked():
    assert len(CASES) >= 3, [p.name for p in CASES]


def test_fuzz_help_gives_the_ci_campaign_it_runs():
    """fuzz.sh --help prints the --ci campaign from the variables the
    campaign runs with, not from prose."""
    import subprocess
    path = ROOT / "scripts" / "fuzz.sh"
    text = path.read_text()
    runs = re.search(r"^CI_RUNS=(\d+) CI_SEED=(\d+)$", text, re.M)
    legs = re.search(r"^CI_LEGS=\((.*)\)$", text, re.M)
    assert runs and legs, "fuzz.sh: CI_RUNS, CI_SEED or CI_LEGS not found"
    out = subprocess.run(["bash", str(path), "--help"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    n = len(re.findall(r'"[^"]*"', legs.group(1)))
    assert (f"--ci runs {n} legs" in out
            and f"--runs {runs.group(1)} --seed {runs.group(2)}" in out), out


def test_docs_use_only_options_the_scripts_take():
    """`scripts/X.sh --opt` in the README or a doc: X's parser takes --opt."""
    docs = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    scripts = {p.name: p for p in SCRIPTS}
    bad, checked = [], 0
    for doc in docs:
        for n, line in enumerate(doc.read_text().split("\n"), 1):
            for m in re.finditer(r"(?:scripts|images)/([\w-]+\.sh)"
                                 r"((?:\s+[^`|;#]*?)?)(?=`|$|\s#|;|\|)", line):
                path = scripts.get(m.group(1))
                opts = parsed_options(with_sourced(path)) if path else set()
                if not opts:
                    continue
                for o in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", m.group(2)):
                    checked += 1
                    if o not in opts | {"--help"}:
                        bad.append(f"{doc.name}:{n}: {m.group(1)} {o}")
    assert checked > 20, "no script option found in the docs"
    assert not bad, "options the scripts do not take:\n" + "\n".join(bad)
