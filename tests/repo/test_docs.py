"""The docs stay true: their ncq-sim sessions print what they show, the
paths they name exist, and their links land on existing sections.
The session convention is in mdblocks.py and docs/ncq-sim.md."""
import os
import re
import shlex
import subprocess

import pytest

import mdblocks
from repopaths import ROOT

DOCS = sorted([ROOT / "README.md"] + list((ROOT / "docs").rglob("*.md")))
TOP = ("\\.ci", "configs", "docs", "guest-tests", "hw", "images", "include",
       "patches", "qapi", "scripts", "tests", "tools")
TOP_FILES = ("README.md", "meson.build", "meson_options.txt", ".gitignore")
# Files of QEMU's own tree that the docs name as such: not in this repository.
QEMU_PATHS = {
    "hw/ide/core.c", "tests/qtest/ahci-test", "tests/qtest/ahci-test.c",
    "tests/qtest/fuzz", "tests/qtest/fuzz/generic_fuzz.c",
    "hw/ide/ahci.c", "hw/ide/trace-events", "system/dma-helpers.c",
    "include/hw/ide/internal.h", "include/hw/ide/ide-dev.h",
    "tests/qtest/libqos", "hw/ide/ide-dev.c", "hw/ide/atapi.c",
    "scripts/oss-fuzz/output_reproducer.py", "include/qemu/rcu.h",
    "include/qemu", "hw/ide/meson.build", "tests/qtest/meson.build",
    "scripts/get_maintainer.pl",
}


def rel(path):
    return os.path.relpath(path, ROOT)


def read(path):
    return path.read_text(encoding="utf-8")


def _sessions():
    out = []
    for doc in DOCS:
        cmds = [c for b in mdblocks.blocks(rel(doc), read(doc))
                for c in mdblocks.session(b)]
        if cmds:
            out.append(pytest.param(cmds, id=rel(doc)))
    return out


@pytest.mark.parametrize("cmds", _sessions())
def test_sessions_print_what_the_doc_shows(cmds, ncq_sim_dir, tmp_path):
    env = dict(os.environ, PATH=f"{ncq_sim_dir}:{os.environ['PATH']}",
               LC_ALL="C")
    failures = []
    for c in cmds:
        r = subprocess.run(["bash", "-c", c.text], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300)
        first = c.text.split("\n")[0]
        if r.returncode != 0:
            failures.append(f"{c.path}:{c.line}: `{first}` exited "
                            f"{r.returncode}: {r.stdout.strip()[-300:]}")
            continue
        why = mdblocks.match(c.expected, r.stdout.split("\n"))
        if why:
            failures.append(f"{c.path}:{c.line}: `{first}`: {why}")
    assert not failures, "\n".join(failures)


def test_every_ncq_sim_command_in_a_block_is_a_session():
    """A command shown in a fenced block is checked only in a session."""
    loose = []
    for doc in DOCS:
        for b in mdblocks.blocks(rel(doc), read(doc)):
            if mdblocks.session(b):
                continue
            for k, line in enumerate(b.lines):
                words = line.split()
                if words and words[0].rsplit("/", 1)[-1] == "ncq-sim":
                    loose.append(f"{b.path}:{b.line + 1 + k}: {line.strip()}")
    assert not loose, ("ncq-sim commands outside a `$ ` session (not "
                       "checked):\n" + "\n".join(loose))


def _inline_commands():
    """Inline `ncq-sim ...` spans of the prose whose arguments are all
    concrete (no placeholder such as D, FILE or [--opt])."""
    out = []
    for doc in DOCS:
        text = read(doc)
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for m in re.finditer(r"`(ncq-sim [^`]+)`", prose):
            cmd = m.group(1)
            words = shlex.split(cmd)
            if any(re.fullmatch(r"[A-Z][A-Z_]*|\[.*|.*\]|.*\.\.\..*", w)
                   for w in words):
                continue
            if any(w in ("--model-file", "--replay") for w in words):
                continue            # needs a file the prose only describes
            out.append(pytest.param(cmd, id=f"{rel(doc)}: {cmd}"))
    return out


@pytest.mark.parametrize("cmd", _inline_commands())
def test_inline_ncq_sim_commands_run(cmd, ncq_sim_dir, tmp_path):
    words = shlex.split(cmd)
    r = subprocess.run([str(ncq_sim_dir / "ncq-sim")] + words[1:],
                       cwd=tmp_path, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    assert r.returncode == 0, f"`{cmd}`: {r.stderr.strip()}"


_PATH = re.compile(r"^(?:%s)/[\w./*@+-]*$|^(?:%s)$" % (
    "|".join(TOP), "|".join(re.escape(f) for f in TOP_FILES)))


def named_paths(doc):
    """(line, path, base) for each repository path the doc names: words of
    backtick spans that start with a top-level folder (relative to the
    repository), and link targets (relative to the doc)."""
    out = []
    text = read(doc)
    for n, line in enumerate(text.split("\n"), 1):
        for span in re.findall(r"`([^`]+)`", line):
            for w in span.split():
                if w.endswith(":"):
                    continue        # a patch subject's prefix, `hw/ide/ahci:`
                w = re.sub(r"(::|:\d).*$", "", w).rstrip(".,;:)")
                if "$" in w or "<" in w:
                    continue
                if _PATH.match(w):
                    out.append((n, w, ROOT))
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            out.append((n, target.split("#")[0], doc.parent))
    return out


def test_every_named_path_exists():
    missing = []
    for doc in DOCS:
        for n, p, base in named_paths(doc):
            if base == ROOT and p.rstrip("/") in QEMU_PATHS:
                continue
            full = os.path.normpath(base / p)
            if not full.startswith(str(ROOT) + os.sep) and full != str(ROOT):
                missing.append(f"{rel(doc)}:{n}: {p} is outside the repository")
            elif "*" in p:
                if not list(ROOT.glob(os.path.relpath(full, ROOT))):
                    missing.append(f"{rel(doc)}:{n}: {p} matches nothing")
            elif not os.path.exists(full):
                missing.append(f"{rel(doc)}:{n}: {p} does not exist")
    assert not missing, "\n".join(missing)


def slug(heading):
    """GitHub's anchor for a heading."""
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link's text
    s = s.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = re.sub(r"```.*?```", "", read(path), flags=re.S)
    seen, out = {}, set()
    for h in re.findall(r"^#+\s+(.*)$", text, re.M):
        s = slug(h)
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.add(s if k == 0 else f"{s}-{k}")
    return out


def test_links_land_on_existing_sections():
    bad = []
    for doc in DOCS:
        for n, line in enumerate(read(doc).split("\n"), 1):
            for target in re.findall(r"\]\(([^)\s]*#[^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue
                page, frag = target.split("#", 1)
                dest = (doc.parent / page) if page else doc
                if dest.exists() and frag not in anchors(dest):
                    bad.append(f"{rel(doc)}:{n}: {target}: no such section")
    assert not bad, "\n".join(bad)


def _table_after(doc, heading):
    """First-column backtick names of the first table after a heading."""
    text = read(doc)
    start = text.index(heading)
    names, seen_table = [], False
    for line in text[start:].split("\n")[1:]:
        if line.startswith("|"):
            seen_table = True
            m = re.match(r"^\|([^|]*)\|", line)
            names += re.findall(r"`([^`]+)`", m.group(1))
        elif seen_table:
            break
    return names


def test_model_md_names_every_file_of_the_library():
    names = set(_table_after(ROOT / "docs" / "model.md", "## Pieces"))
    files = {p.name for p in (ROOT / "hw/ide/ncq-model").iterdir()
             if p.suffix in (".c", ".py")}
    assert files - names == set(), ("docs/model.md's table of pieces misses "
                                    + ", ".join(sorted(files - names)))
    assert names - files == set(), ("docs/model.md names files that do not "
                                    "exist: " + ", ".join(sorted(names - files)))


def test_model_md_names_every_unit_test(ncq_sim_dir):
    build = ncq_sim_dir.parent.parent
    out = subprocess.run(["meson", "test", "-C", str(build), "--list"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, check=True).stdout
    tests = {line.rsplit(" / ", 1)[1] for line in out.split("\n")
             if " / " in line}
    tests = {re.sub(r"^invariants-.*", "invariants-<model>", t) for t in tests}
    names = set(_table_after(ROOT / "docs" / "model.md", "## Tests"))
    assert tests - names == set(), ("docs/model.md's table of tests misses "
                                    + ", ".join(sorted(tests - names)))
    assert names - tests == set(), ("docs/model.md names tests that do not "
                                    "exist: " + ", ".join(sorted(names - tests)))


def test_device_md_describes_every_property():
    props = set()
    for path in sorted((ROOT / "hw" / "ide" / "ncq-disk").glob("*.c")):
        props |= set(re.findall(r'DEFINE_PROP_\w+\(\s*"([\w-]+)"', read(path)))
    assert props, "no qdev property found in hw/ide/ncq-disk/*.c"
    names = set(_table_after(ROOT / "docs" / "device.md", "## Properties"))
    assert props - names == set(), ("docs/device.md's property table misses "
                                    + ", ".join(sorted(props - names)))


def test_device_md_names_every_trace_event():
    events = set()
    path = ROOT / "hw" / "ide" / "ncq-disk" / "trace-events"
    events = set(re.findall(r"^(ncq_disk_\w+)\(", read(path), re.M))
    assert events, "no ncq_disk trace event found in " + str(path)
    text = read(ROOT / "docs" / "device.md")
    missing = sorted(e for e in events if f"`{e}`" not in text)
    assert not missing, "docs/device.md does not name " + ", ".join(missing)


def test_named_test_functions_exist():
    """A test the docs name (`test_...` in backticks) is defined somewhere."""
    defined = set()
    for top in ("guest-tests", "tests"):
        for path in (ROOT / top).rglob("*.py"):
            defined |= set(re.findall(r"^\s*def (test_\w+)", read(path), re.M))
            defined.add(path.stem)
    for path in (ROOT / "tests" / "unit").glob("*.c"):
        defined |= set(re.findall(r"^static \w+ (test_\w+)\(", read(path),
                                  re.M))
    missing = []
    for doc in DOCS:
        for n, line in enumerate(read(doc).split("\n"), 1):
            for span in re.findall(r"`([^`]+)`", line):
                for name in re.findall(r"(?:^|::|\s)(test_\w+)\b", span):
                    if name not in defined and not name.endswith("_"):
                        missing.append(f"{rel(doc)}:{n}: {name}")
    assert not missing, "tests the docs name but nobody defines:\n" + \
        "\n".join(missing)


def test_qmp_commands_shown_exist():
    schema = read(ROOT / "qapi" / "ncq-disk.json")
    commands = set(re.findall(r"'command':\s*'([\w-]+)'", schema))
    assert commands, "no command in qapi/ncq-disk.json"
    unknown = []
    for doc in DOCS:
        for n, line in enumerate(read(doc).split("\n"), 1):
            for cmd in re.findall(r'"execute":\s*"([\w-]+)"', line):
                if cmd not in commands:
                    unknown.append(f"{rel(doc)}:{n}: {cmd}")
    assert not unknown, "QMP commands not in qapi/ncq-disk.json:\n" + \
        "\n".join(unknown)


def test_device_md_lists_every_built_in_model():
    meson = read(ROOT / "hw" / "ide" / "ncq-model" / "meson.build")
    models = set(re.findall(r"'models/([\w-]+)\.ncqm'", meson))
    assert models, "no model in hw/ide/ncq-model/meson.build"
    row = re.search(r"^\| `model` \|([^\n]*)$", read(ROOT / "docs" / "device.md"),
                    re.M)
    assert row, "docs/device.md: no `model` property row"
    listed = set(re.findall(r"`([\w-]+)`", row.group(1)))
    assert models - listed == set(), ("docs/device.md's model row misses "
                                      + ", ".join(sorted(models - listed)))


def test_model_state_md_gives_the_current_version():
    # state.c derives it from the body's version and the parameter table;
    # test-state holds the build to the newest golden stream's version
    golden = [int(m.group(1)) for m in
              (re.match(r"model-state-v(\d+)\.bin$", p.name)
               for p in (ROOT / "tests" / "data").iterdir()) if m]
    version = re.match(r"(\d+)", str(max(golden))) if golden else None
    said = re.search(r"^\| 8 \| 4 \| version .*currently (\d+)",
                     read(ROOT / "docs" / "model-state.md"), re.M)
    assert version and said, ("no golden stream in tests/data, or the "
                              "version line not found in the doc")
    assert said.group(1) == version.group(1), (
        f"docs/model-state.md says version {said.group(1)}; the newest "
        f"golden stream is v{version.group(1)}")
