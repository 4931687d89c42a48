"""docs/build.md lists the QEMU patch series as patches/qemu/ holds them:
one section per series directory, in order, and in each the patches'
subjects in order (a patch added, dropped or moved without the list
following fails here)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATCHES = ROOT / "patches" / "qemu"


def patch_subject(path):
    """The Subject of a git format-patch file, unfolded, less [PATCH n/m]."""
    text = path.read_text()
    m = re.search(r"^Subject: (.*(?:\n [^\n]*)*)", text, re.M)
    assert m, f"{path}: no Subject line"
    subject = re.sub(r"\n ", " ", m.group(1))
    return re.sub(r"^\[PATCH[^\]]*\] ", "", subject).strip()


def documented_series():
    """{series dir: [subject, ...]} from build.md's '### `dir`' sections."""
    text = (ROOT / "docs" / "build.md").read_text()
    sections = re.split(r"^### ", text, flags=re.M)[1:]
    out = {}
    for sec in sections:
        head = re.match(r"`([0-9]+-[a-z0-9-]+)`", sec)
        if not head:
            continue
        out[head.group(1)] = sec
    return out


def test_every_series_directory_has_a_section():
    dirs = sorted(p.name for p in PATCHES.iterdir() if p.is_dir())
    assert dirs, "no series under patches/qemu/"
    docs = documented_series()
    assert list(docs) == dirs, (list(docs), dirs)


def test_each_section_lists_its_patches_in_order():
    docs = documented_series()
    for d, sec in docs.items():
        subjects = [patch_subject(p)
                    for p in sorted((PATCHES / d).glob("[0-9]*.patch"))]
        # a subject may be folded over two lines inside its backquotes
        listed = [re.sub(r"\s+", " ", m) for m in
                  re.findall(r"^\d+\. `([^`]+)`", sec, re.M)]
        assert listed == subjects, (
            f"docs/build.md's section on {d} lists\n  "
            + "\n  ".join(listed) + "\nbut the series is\n  "
            + "\n  ".join(subjects))
