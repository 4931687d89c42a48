"""The series as it would be posted (scripts/lib/series-mailbox.sh): each
series has its cover letter's text, the device's files are patches of the
device series, and the mailbox is the same bytes each time it is written
(the series walk keys its proofs by them)."""
import os
import re
import subprocess
from pathlib import Path

import pytest

from repopaths import ROOT

PATCHES = ROOT / "patches" / "qemu"
SERIES = sorted(p for p in PATCHES.iterdir() if p.is_dir())


def pin():
    """(version, sha256) of scripts/qemu.pin."""
    text = (ROOT / "scripts" / "qemu.pin").read_text()
    tarball = re.search(r"^QEMU_ORIG_TARBALL=qemu_(.*)\.orig", text, re.M)
    sha = re.search(r"^QEMU_ORIG_SHA256=(\w+)", text, re.M)
    return tarball.group(1), sha.group(1)


def pristine():
    """The pinned QEMU as scripts/fetch-qemu.sh unpacked it, or None."""
    cache = Path(os.environ.get("NCQ_CACHE",
                                Path.home() / ".cache" / "ncq-disk"))
    ver, sha = pin()
    src = cache / "src" / f"qemu-{ver}-{sha}"
    return src if (src / ".unpacked").exists() else None


def subject(path):
    """A format-patch file's Subject, unfolded, less [PATCH n/m]."""
    m = re.search(r"^Subject: (.*(?:\n [^\n]*)*)", path.read_text(), re.M)
    return re.sub(r"^\[PATCH[^\]]*\] ", "", re.sub(r"\n ", " ", m.group(1)))


def added_files(path):
    """The files a patch creates."""
    return set(re.findall(r"^diff --git a/\S+ b/(\S+)\nnew file mode",
                          path.read_text(), re.M))


def overlay_specs(series):
    """{spec file: (files named, subject)} of a series' overlay-*.txt."""
    out = {}
    for spec in sorted(series.glob("overlay-*.txt")):
        lines = spec.read_text().split("\n")
        out[spec] = (lines[0].split()[1:], lines[2])
    return out


@pytest.mark.parametrize("series", SERIES, ids=lambda p: p.name)
def test_each_series_has_its_cover_letter_text(series):
    lines = (series / "cover.txt").read_text().split("\n")
    assert lines[0].strip() and len(lines[0]) <= 75, \
        f"{series.name}/cover.txt: the first line is the subject"
    assert lines[1] == "" and any(s.strip() for s in lines[2:]), \
        f"{series.name}/cover.txt: a blank line, then the text"
    assert "Tested" in "\n".join(lines), \
        f"{series.name}/cover.txt says how the series was tested"


def test_overlay_specs_name_files_and_a_message():
    specs = {s: v for d in SERIES for s, v in overlay_specs(d).items()}
    assert specs, "no patches/qemu/*/overlay-*.txt: the device's files " \
                  "would not be in the mailbox"
    for spec, (files, subj) in specs.items():
        text = spec.read_text()
        assert text.startswith("Files: ") and files, spec.name
        assert text.split("\n")[1] == "" and subj.strip(), spec.name
        for f in files:
            assert (ROOT / f).exists(), f"{spec.name}: {f} does not exist"


@pytest.fixture(scope="module")
def mailboxes(tmp_path_factory):
    src = pristine()
    if src is None:
        pytest.skip("the pinned QEMU is not unpacked; run scripts/fetch-qemu.sh")
    outs = []
    for name in ("a", "b"):
        out = tmp_path_factory.mktemp("mailbox") / name
        subprocess.run([str(ROOT / "scripts/lib/series-mailbox.sh"),
                        str(src), str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        outs.append(out)
    return outs


def test_mailbox_is_the_same_bytes_each_time(mailboxes):
    a, b = mailboxes
    files = sorted(p.relative_to(a) for p in a.rglob("*.patch"))
    assert files == sorted(p.relative_to(b) for p in b.rglob("*.patch"))
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_mailbox_has_each_series_with_its_cover_letter(mailboxes):
    out = mailboxes[0]
    assert sorted(p.name for p in out.iterdir()) == [s.name for s in SERIES]
    for i, series in enumerate(SERIES):
        cover = out / series.name / "0000-cover-letter.patch"
        first = (series / "cover.txt").read_text().split("\n")[0]
        assert subject(cover) == first
        based = re.findall(r"^Based-on: (.*)$", cover.read_text(), re.M)
        assert len(based) == (1 if i else 0), cover
        if i:
            assert SERIES[i - 1].name in based[0]


def test_mailbox_adds_the_device_files_before_the_stored_patches(mailboxes):
    out = mailboxes[0]
    for series in SERIES:
        specs = overlay_specs(series)
        stored = sorted(series.glob("[0-9]*.patch"))
        sent = sorted(p for p in (out / series.name).glob("[0-9]*.patch")
                      if not p.name.startswith("0000-"))
        subjects = [subject(p) for p in sent]
        assert subjects == [s for _, s in specs.values()] + \
            [subject(p) for p in stored], series.name
        for patch, (files, _) in zip(sent, specs.values()):
            adds = added_files(patch)
            for f in files:
                assert any(a == f or a.startswith(f.rstrip("/") + "/")
                           for a in adds), f"{patch.name} does not add {f}"
        if specs:
            qtests = set(subprocess.run(
                ["git", "ls-files", "tests/qtest"], cwd=ROOT, check=True,
                stdout=subprocess.PIPE, text=True).stdout.split())
            assert qtests and qtests <= added_files(sent[-1]), \
                "the overlay's qtests join the series' last patch"


def test_mailbox_adds_no_whitespace_errors(mailboxes):
    """What git am warns of (and a maintainer's git rejects with
    --whitespace=error): a line added with trailing blanks, or a file the
    patch leaves ending in a blank line."""
    bad = []
    for patch in sorted(mailboxes[0].rglob("[0-9]*.patch")):
        lines = patch.read_text().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("+++ "):
                continue
            if line.startswith("+") and line != line.rstrip():
                bad.append(f"{patch.name}:{i + 1}: trailing whitespace")
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if line == "+" and (nxt.startswith("diff --git")
                                or nxt.startswith("-- ") or nxt == "--"):
                bad.append(f"{patch.name}:{i + 1}: blank line at the end "
                           "of a file")
    assert not bad, "\n".join(bad[:10])
