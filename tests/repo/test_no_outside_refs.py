"""Nothing in the repository reads or cites a file outside it: the
project's facts live in its own docs (docs/published-figures.md for the
studies it reproduces)."""
import re
import subprocess

from repopaths import ROOT

# What the repository must not name, each with the reason. The patterns are
# written so that this file does not match them itself.
FORBIDDEN = [
    (r"targets" + r"\.md", "a brief outside the repository; cite "
     "docs/published-figures.md"),
    (r"\.\./" + r"shared\b", "a folder outside the repository"),
    (r"(?<![\w$}/.-])/work" + r"/", "an absolute path of the build machine"),
    (r"build-" + r"notes\.md", "notes outside the repository"),
    (r"(?<![\w-])design" + r"\.md", "a design note outside the repository"),
    (r"issue[0-9]+" + r"\.md", "an issue's text outside the repository"),
    (r"project's " + r"brief", "a brief outside the repository; cite "
     "docs/published-figures.md"),
]


def tracked_text_files():
    out = subprocess.run(["git", "ls-files", "--cached", "--others",
                          "--exclude-standard"], cwd=ROOT, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    for rel in sorted(set(out.split("\n"))):
        path = ROOT / rel
        if not rel or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue                # binary (plots, fuzzer inputs)
        yield rel, data.decode("utf-8", errors="replace")


def test_nothing_cites_a_file_outside_the_repository():
    found = []
    for rel, text in tracked_text_files():
        for n, line in enumerate(text.split("\n"), 1):
            for pattern, why in FORBIDDEN:
                m = re.search(pattern, line)
                if m:
                    found.append(f"{rel}:{n}: '{m.group(0)}': {why}")
    assert not found, "\n".join(found)
