"""docs/LAYOUT.md names the tree: every top-level folder and every file
under hw/, include/, tools/ and scripts/ (the rules are at the end of
docs/LAYOUT.md)."""
import re
import subprocess
from fnmatch import fnmatchcase

from repopaths import ROOT

LAYOUT = ROOT / "docs" / "LAYOUT.md"
COVERED = ("hw/", "include/", "tools/", "scripts/")


def tree():
    """Tracked files and new files not ignored: what a commit would hold."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others",
                          "--exclude-standard"], cwd=ROOT, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return sorted(p for p in set(out.split("\n"))
                  if p and (ROOT / p).exists())


def entries():
    """The paths and patterns of the table's first column."""
    out = []
    for line in LAYOUT.read_text(encoding="utf-8").split("\n"):
        m = re.match(r"^\|([^|]*)\|", line)
        if m:
            out += re.findall(r"`([^`]+)`", m.group(1))
    return out


def matches(entry, path):
    """A file is named by an entry equal to its path or a pattern whose `*`
    matches within one path component."""
    if entry.endswith("/"):
        return False
    if entry.count("/") != path.count("/"):
        return False
    return fnmatchcase(path, entry) if "*" in entry else path == entry


def test_layout_names_every_top_level_folder():
    names = entries()
    folders = sorted({p.split("/")[0] for p in tree() if "/" in p})
    missing = [f for f in folders
               if not any(e.startswith(f + "/") for e in names)]
    assert not missing, ("docs/LAYOUT.md names no path in these top-level "
                         "folders: " + ", ".join(missing))


def test_layout_names_every_file_under_hw_include_tools_scripts():
    names = entries()
    missing = [p for p in tree() if p.startswith(COVERED)
               and not any(matches(e, p) for e in names)]
    assert not missing, ("docs/LAYOUT.md names none of these files (add a "
                         "row, or a pattern that covers them):\n"
                         + "\n".join(missing))


def test_layout_names_only_what_exists():
    files = tree()
    dirs = {p.rsplit("/", 1)[0] + "/" for p in files if "/" in p}
    dirs |= {d[:i + 1] for d in list(dirs) for i, c in enumerate(d) if c == "/"}
    stale = [e for e in entries()
             if not (e in dirs if e.endswith("/")
                     else any(matches(e, p) for p in files))]
    assert not stale, ("docs/LAYOUT.md names paths that match nothing in "
                       "the tree: " + ", ".join(stale))
