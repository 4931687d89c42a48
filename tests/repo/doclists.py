"""Lists in the docs that are copies of the code, generated from it.

A generated list sits between `<!-- begin: NAME -->` and `<!-- end: NAME -->`
lines; everything between them is this module's output for NAME, so a
reader sees an ordinary Markdown table that cannot drift from its source.

    scripts/update-doc-lists.py [--check]

rewrites every marked block (with --check: names the stale ones and exits
1).  tests/repo/test_doc_lists.py fails when a block is stale.

A generated value inside a sentence sits between `<!-- value: NAME -->` and
`<!-- end -->` on one line (a count the code decides, which a reader sees
as plain text).

Blocks:
- `built-in models` (README.md): one row per model the device and ncq-sim
  build in (hw/ide/ncq-model/meson.build's list, in its order), read from
  the model's own file.
- `validation sheets` (docs/validation/README.md): the sheet and figures
  file of each built-in model that has one.
- `fuzz.sh usage` (docs/fuzzing.md): the synopsis of scripts/fuzz.sh's own
  header, the text its --help prints.
- `ncq-sim --list-params` (docs/model.md): the parameter table's keys;
  `ncq-sim --list-settings` (docs/device.md, docs/ncq-sim.md): the
  run-time settings; each the output of the standalone build's ncq-sim
  (built when missing or older than the code).

Values:
- `ncq-disk qtests` (docs/build.md): the cases ncq-disk-test's sources
  (tests/qtest/ncq-disk-test.c and tests/qtest/ncq-disk/*.c) register by
  name (the per-model cases count once);
- `disksim models` (README.md): how many built-in models were imported
  from DiskSim, in words;
- `image modules` (docs/guest-image.md): images/build-image.sh's MODULES,
  the kernel modules every image carries.
"""
import re
import sys

from repopaths import ROOT

MODELS = ROOT / "hw" / "ide" / "ncq-model"
DOCS = ("README.md", "docs/validation/README.md", "docs/build.md",
        "docs/fuzzing.md", "docs/guest-image.md", "docs/model.md",
        "docs/device.md", "docs/ncq-sim.md")
WORDS = ("zero one two three four five six seven eight nine ten eleven "
         "twelve thirteen fourteen fifteen sixteen seventeen eighteen "
         "nineteen twenty").split()


def _keys(text):
    """section -> {key: value} of an .ncqm file, comments dropped."""
    out, sec = {}, ""
    for line in text.split("\n"):
        line = line.split("#", 1)[0].strip()
        m = re.match(r"^\[(\w+)\]$", line)
        if m:
            sec = m.group(1)
            out.setdefault(sec, {})
        elif "=" in line:
            k, v = (x.strip() for x in line.split("=", 1))
            out.setdefault(sec, {})[k] = v
    return out


def _kind(keys):
    if any(s.get("cdl") == "yes" for s in keys.values()):
        return "hard disk with Command Duration Limits"
    if "zones" in keys:
        return "host-managed SMR hard disk"
    if "media_cache" in keys:
        return "drive-managed SMR hard disk"
    return {"hdd": "hard disk", "ssd": "SSD"}[keys["drive"]["kind"]]


def _source(text):
    """The file's first comment line (with the next ones while a
    parenthesis is open)."""
    lines = text.split("\n")
    first = lines[0].lstrip("# ").rstrip()
    for more in lines[1:]:
        if first.count("(") == first.count(")") or not more.startswith("#"):
            break
        first += " " + more.lstrip("# ").rstrip()
    first = re.sub(r"\)[,.].*$", ")", first)
    m = re.match(r"^[\w-]+: (DiskSim 4\.0's \S+) as an ncq-disk model\.$",
                 first)
    if m:
        return m.group(1) + " (`data/disksim/`)"
    return first.rstrip(":")


def _size(blocks):
    b = blocks * 512
    return f"{b / 1e12:.1f} TB" if b >= 1e12 else f"{b / 1e9:.1f} GB"


def built_in_models():
    names = _built_in_names()
    rows = ["| `model=` | IDENTIFY model | kind | capacity | rpm | from |",
            "|---|---|---|---|---|---|"]
    for name in names:
        text = (MODELS / "models" / f"{name}.ncqm").read_text()
        keys = _keys(text)
        d = keys["drive"]
        rpm = d["rpm"] if d["kind"] == "hdd" else "-"
        rows.append(f"| `{name}` | {d['model']} | {_kind(keys)} | "
                    f"{_size(int(d['capacity']))} | {rpm} | "
                    f"{_source(text)} |")
    return "\n".join(rows) + "\n"


def _built_in_names():
    meson = (MODELS / "meson.build").read_text()
    return re.findall(r"'models/([\w-]+)\.ncqm'", meson)


def validation_sheets():
    """docs/validation/README.md's index: each built-in model's sheet and
    figures file (a missing figures file is the sheets' own tests' to
    name)."""
    rows = ["| model | sheet | figures file |", "|---|---|---|"]
    for name in _built_in_names():
        if (ROOT / "docs" / "validation" / "figures" / f"{name}.fig").exists():
            rows.append(f"| `{name}` | [{name}.md]({name}.md) | "
                        f"[figures/{name}.fig](figures/{name}.fig) |")
    return "\n".join(rows) + "\n"


def fuzz_usage():
    """The `scripts/fuzz.sh ...` lines of the script's header comment, up
    to the first blank comment line after them."""
    out = []
    for line in (ROOT / "scripts" / "fuzz.sh").read_text().split("\n")[1:]:
        body = line[1:].strip() if line.startswith("#") else None
        if body is None or (out and not body):
            break
        if body.startswith("scripts/fuzz.sh") or (out and
                                                 body.startswith("[")):
            lead = "" if body.startswith("scripts/") else "    "
            out.append(lead + body)
    return "```\n" + "\n".join(out) + "\n```\n"


def _ncq_sim(*args):
    """What the standalone build's ncq-sim prints for args."""
    import subprocess

    from ncqsimbuild import ncq_sim_binary
    return subprocess.run([str(ncq_sim_binary()), *args], check=True,
                          stdout=subprocess.PIPE, text=True).stdout


BLOCKS = {"built-in models": built_in_models,
          "validation sheets": validation_sheets,
          "fuzz.sh usage": fuzz_usage,
          "ncq-sim --list-params": lambda: _ncq_sim("--list-params"),
          "ncq-sim --list-settings": lambda: _ncq_sim("--list-settings")}


def ncq_disk_test_sources():
    """The C files of the ncq-disk-test program: its main file, and one
    file per concern in tests/qtest/ncq-disk/."""
    qtest = ROOT / "tests" / "qtest"
    return ([qtest / "ncq-disk-test.c"]
            + sorted((qtest / "ncq-disk").glob("*.c")))


def ncq_disk_qtests():
    src = "".join(p.read_text() for p in ncq_disk_test_sources())
    return str(len(re.findall(r"\bqtest_add_(?:data_)?func\s*\(", src)))


def disksim_models():
    n = sum(1 for name in _built_in_names()
            if "scripts/import-disksim.py" in
            (MODELS / "models" / f"{name}.ncqm").read_text().split("[", 1)[0])
    return WORDS[n] if n < len(WORDS) else str(n)


def image_modules():
    text = (ROOT / "images" / "build-image.sh").read_text()
    m = re.search(r"^MODULES=\((.*?)\)", text, re.M | re.S)
    return "`" + " ".join(m.group(1).split()) + "`"


VALUES = {"ncq-disk qtests": ncq_disk_qtests,
          "disksim models": disksim_models,
          "image modules": image_modules}


def refresh(text):
    """text with every marked block rewritten; KeyError for an unknown
    block name."""
    def one(m):
        return m.group(1) + BLOCKS[m.group(2)]() + m.group(3)

    def value(m):
        return m.group(1) + VALUES[m.group(2)]() + m.group(3)
    text = re.sub(r"(^<!-- begin: ([\w .-]+) -->\n)(?:.*?\n)?"
                  r"(<!-- end: \2 -->$)", one, text, flags=re.M | re.S)
    return re.sub(r"(<!-- value: ([\w -]+) -->)[^<\n]*(<!-- end -->)", value,
                  text)


def stale():
    """The docs whose marked blocks differ from what they would be."""
    out = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        if refresh(text) != text:
            out.append(doc)
    return out


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(
        prog="scripts/update-doc-lists.py",
        description="Rewrite the docs' generated lists and values (between "
        "<!-- begin: NAME --> and <!-- end: NAME -->, or <!-- value: NAME "
        "--> and <!-- end -->) from the code they copy.")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; name the stale docs and exit 1")
    check = ap.parse_args(argv).check
    bad = stale()
    for doc in bad:
        if check:
            print(f"{doc}: a generated list is stale; run "
                  "scripts/update-doc-lists.py", file=sys.stderr)
        else:
            p = ROOT / doc
            p.write_text(refresh(p.read_text(encoding="utf-8")),
                         encoding="utf-8")
            print(f"rewrote {doc}")
    return 1 if check and bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
