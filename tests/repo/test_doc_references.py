"""What the docs and the code's comments point at exists: qtest cases by
name, doc sections by anchor or by quoted title, pytest tests by
`file.py::test`.  Each of these once pointed at something renamed or
gone."""
import os
import re

import pytest

from repopaths import ROOT
from test_docs import DOCS, anchors, rel, slug

CODE_DIRS = ("hw", "include", "qapi", "scripts", "tools", "tests",
             "guest-tests", "images", ".ci")
CODE_EXT = (".c", ".h", ".py", ".sh", ".json", ".build", ".txt", "")


def code_files():
    for top in CODE_DIRS:
        for p in sorted((ROOT / top).rglob("*")):
            if (p.is_file() and p.suffix in CODE_EXT and "__pycache__"
                    not in p.parts and p.suffix != ".md"
                    and not p.name.endswith((".ncqm", ".input", ".bin"))):
                yield p


def _read(p):
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ""


def registered_qtests():
    """/ncq-disk/ case names the qtest sources register (string literals),
    and the per-model cases add_models_tests() makes."""
    names = set()
    for p in (ROOT / "tests" / "qtest").rglob("*.c"):
        names |= set(re.findall(r'"(/ncq-disk/[\w/.-]+)"', _read(p)))
    meson = _read(ROOT / "hw" / "ide" / "ncq-model" / "meson.build")
    names |= {f"/ncq-disk/models/{m}" for m in
              re.findall(r"'models/([\w-]+)\.ncqm'", meson)}
    return names


def test_quoted_qtest_names_are_registered():
    names = registered_qtests()
    assert len(names) > 50, "no qtest case found in tests/qtest/**/*.c"
    bad = []
    for doc in DOCS:
        for n, line in enumerate(_read(doc).split("\n"), 1):
            for q in re.findall(r"`(/ncq-disk/[\w/.*-]+)`", line):
                q = q.rstrip("/")
                if q.endswith("*"):
                    ok = any(x.startswith(q[:-1]) for x in names)
                else:
                    ok = q in names or any(x.startswith(q + "/")
                                           for x in names)
                if not ok:
                    bad.append(f"{rel(doc)}:{n}: {q}")
    assert not bad, ("qtest cases the docs name but tests/qtest does not "
                     "register:\n" + "\n".join(bad))


def _doc(path_text):
    p = ROOT / path_text if path_text.startswith("docs/") \
        else ROOT / "docs" / path_text
    return p if p.exists() else None


def test_code_links_to_doc_sections_exist():
    """`docs/x.md#anchor` and `docs/x.md, "Section"` in code."""
    bad = []
    for p in code_files():
        text = _read(p)
        for n, line in enumerate(text.split("\n"), 1):
            for page, frag in re.findall(
                    r"((?:docs/)?[\w-]+\.md)#([\w-]*\w)", line):
                d = _doc(page)
                if d and frag not in anchors(d):
                    bad.append(f"{rel(p)}:{n}: {page}#{frag}")
        # a comment's lines joined, so that a title may wrap
        flat = re.sub(r"\n\s*(?:#|\*|//|;)?\s*", " ", text)
        for m in re.finditer(r"(docs/[\w/-]+\.md),\s+\"([^\"]+)\"", flat):
            d = _doc(m.group(1))
            n = text.count("\n", 0, text.find(m.group(1))) + 1
            title = " ".join(m.group(2).split())
            # a title may be the start of the heading's
            if d and not any(a.startswith(slug(title)) for a in anchors(d)):
                bad.append(f"{rel(p)}:{n}: {m.group(1)}, \"{title}\"")
    assert not bad, ("code points at doc sections that do not exist:\n"
                     + "\n".join(bad))


def _pytest_defs():
    out = {}
    for top in ("guest-tests", "tests", "tools"):
        for p in (ROOT / top).rglob("*.py"):
            out.setdefault(p.name, set()).update(
                re.findall(r"^\s*def (test_\w+)", _read(p), re.M))
    return out


def test_pytest_references_exist():
    """`<file>.py::<test>` anywhere in the docs or the code."""
    defs = _pytest_defs()
    bad = []
    for p in list(DOCS) + list(code_files()):
        for n, line in enumerate(_read(p).split("\n"), 1):
            for f, t in re.findall(r"([\w-]+\.py)::(test_\w+)", line):
                if t not in defs.get(f, set()):
                    bad.append(f"{rel(p)}:{n}: {f}::{t}")
    assert not bad, "pytest tests named but not defined:\n" + "\n".join(bad)
