"""The parameter table (include/hw/ide/ncq-params.h) is the one list of
parameters: docs/model.md's key table is its print-out, NcqParams is
generated from it and nothing else, and ncq-fit's writer names its keys in
its order (docs/contributing.md#a-model-parameter)."""
import json
import re
import subprocess

from repopaths import ROOT

from ncqfit import writer

BEGIN = "<!-- begin: ncq-sim --list-params -->\n"
END = "<!-- end: ncq-sim --list-params -->"


def _sim(ncq_sim_dir, *args):
    return subprocess.run([str(ncq_sim_dir / "ncq-sim"), *args], check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def test_model_md_key_table_is_the_table(ncq_sim_dir):
    text = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    assert BEGIN in text and END in text, \
        f"docs/model.md lost its markers {BEGIN.strip()} ... {END}"
    have = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    want = _sim(ncq_sim_dir, "--list-params")
    assert have == want, (
        "docs/model.md's key table differs from the parameter table; "
        "run scripts/update-doc-lists.py")


SBEGIN = "<!-- begin: ncq-sim --list-settings -->\n"
SEND = "<!-- end: ncq-sim --list-settings -->"


def test_docs_settings_tables_are_the_table(ncq_sim_dir):
    """The settings tables of the device's and ncq-sim's docs are the
    library's (NCQ_SETTINGS in ncq-params.h): each setting's one name,
    its key, its bounds and its old spellings, printed by ncq-sim."""
    want = _sim(ncq_sim_dir, "--list-settings")
    for doc in ("docs/device.md", "docs/ncq-sim.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert SBEGIN in text and SEND in text, \
            f"{doc} lost its markers {SBEGIN.strip()} ... {SEND}"
        have = text[text.index(SBEGIN) + len(SBEGIN):text.index(SEND)]
        assert have == want, (
            f"{doc}'s settings table differs from the settings; run "
            "scripts/update-doc-lists.py")


def test_ncqparams_is_generated_only():
    """A field written into NcqParams by hand, outside the table, would
    have no row (test-param-table catches one that shifts the layout; this
    one also catches a field hidden in padding)."""
    h = (ROOT / "include" / "hw" / "ide" / "ncq-model.h").read_text()
    m = re.search(r"typedef struct NcqParams \{(.*?)\} NcqParams;", h, re.S)
    assert m, "include/hw/ide/ncq-model.h: no NcqParams struct"
    body = " ".join(m.group(1).split())
    assert body == ("NCQ_PARAMS(NCQ_PARAM_FIELD, NCQ_PARAM_NO_FIELD, "
                    "NCQ_PARAM_FIELD)"), (
        "NcqParams holds more than the table's fields: put the field in "
        "include/hw/ide/ncq-params.h as a row, not in the struct: " + body)


def test_writer_order_follows_the_table(ncq_sim_dir):
    table = json.loads(_sim(ncq_sim_dir, "--list-params", "--json"))
    sections = table["sections"]
    keys = {}
    for k in table["keys"]:
        keys.setdefault(k["section"], []).append(k["key"])
    seen = [s for s, _ in writer.ORDER]
    assert seen == [s for s in sections if s in seen], (
        f"ncqfit/writer.py's sections {seen} are not in "
        f"NCQ_PARAM_SECTIONS' order {sections}")
    for sec, names in writer.ORDER:
        unknown = [k for k in names if k not in keys.get(sec, [])]
        assert not unknown, (f"ncqfit/writer.py writes [{sec}] {unknown}, "
                             "keys the parameter table does not have")
        order = [k for k in keys[sec] if k in names]
        assert names == order, (f"ncqfit/writer.py's [{sec}] order {names} "
                                f"is not the table's {order}")
    twopart = [k for k, _ in writer.DEFAULT_TWOPART]
    assert twopart == [k for k in keys["seek"] if k in twopart]


def test_dump_model_reads_every_key(ncq_sim_dir):
    """--dump-model prints every key of the table that has a field of its
    own, in its section, for a hard disk and an SSD."""
    table = json.loads(_sim(ncq_sim_dir, "--list-params", "--json"))
    for model in ("st3400620as", "intel-530"):
        dump = json.loads(_sim(ncq_sim_dir, "--dump-model", "--model",
                               model))
        have = {(s, k) for s in dump for k in dump[s]}
        want = {(k["section"], k["key"]) for k in table["keys"]
                if k["own_field"]}
        assert have == want, (model, sorted(have ^ want))
