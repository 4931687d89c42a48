"""The docs' generated lists (doclists.py) are what their source gives
today, and the README lists every built-in model through one."""
import re

import doclists
from repopaths import ROOT


def test_generated_lists_are_up_to_date():
    assert doclists.stale() == [], (
        "a generated list differs from its source: run "
        "scripts/update-doc-lists.py")


def test_readme_model_list_has_every_built_in_model():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- begin: built-in models -->" in text, \
        "README.md lost its generated model list's markers"
    meson = (doclists.MODELS / "meson.build").read_text()
    names = re.findall(r"'models/([\w-]+)\.ncqm'", meson)
    listed = re.findall(r"^\| `([\w-]+)` \|", text, re.M)
    assert [n for n in names if n not in listed] == []


def test_refresh_rewrites_a_stale_block():
    stale = ("x\n<!-- begin: built-in models -->\n| old |\n"
             "<!-- end: built-in models -->\ny\n")
    fresh = doclists.refresh(stale)
    assert "| old |" not in fresh and "`st3400620as`" in fresh
    assert fresh.startswith("x\n") and fresh.endswith("y\n")


def test_refresh_rewrites_a_stale_value():
    stale = "has (<!-- value: ncq-disk qtests -->1<!-- end --> cases)\n"
    fresh = doclists.refresh(stale)
    n = doclists.ncq_disk_qtests()
    assert int(n) > 50 and fresh == stale.replace(">1<", f">{n}<")


def test_refresh_rewrites_a_stale_settings_table():
    """The settings tables are ncq-sim's --list-settings, rewritten like
    the other lists: a new setting needs no table edited by hand."""
    stale = ("<!-- begin: ncq-sim --list-settings -->\n| old |\n"
             "<!-- end: ncq-sim --list-settings -->\n")
    fresh = doclists.refresh(stale)
    assert "| old |" not in fresh
    assert re.search(r"^\| `policy` \| `policy` \|", fresh, re.M), fresh
