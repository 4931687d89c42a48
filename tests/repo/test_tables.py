"""Lists that copy one of the project's tables must agree with it.

The scheduling policies' table is ncq_policy_ops[] in
hw/ide/ncq-model/policy.c (tests/unit/test-policy.c checks the C side:
NCQ_POLICY_NAMES, the parser).  Every other place that names the policies
is checked here: forgetting one when a policy is added fails this test.
"""
import re

from repopaths import ROOT


def policy_rows():
    """[(name, [aliases])] in table order, read from policy.c."""
    text = (ROOT / "hw/ide/ncq-model/policy.c").read_text()
    aliases = {m.group(1): re.findall(r'"([^"]+)"', m.group(2))
               for m in re.finditer(
                   r"static const char \*const (\w+)\[\] = \{([^}]*)\}",
                   text)}
    table = text[text.index("ncq_policy_ops[NCQ_POLICY__MAX] = {"):]
    rows = []
    for row in re.finditer(r"\[NCQ_POLICY_\w+\] = \{(.*?)\n    \}", table,
                           re.S):
        name = re.search(r'\.name = "([^"]+)"', row.group(1)).group(1)
        al = re.search(r"\.aliases = (\w+)", row.group(1))
        rows.append((name, aliases[al.group(1)] if al else []))
    return rows


def names():
    return [n for n, _ in policy_rows()]


def test_table_read():
    assert names()[0] == "fcfs" and len(names()) >= 5, policy_rows()


def test_python_tools_take_policies_from_the_table():
    """No Python tool keeps its own list: the soak reads the header's name
    list, check-unchanged asks each build's ncq-sim."""
    for path in ("scripts/check-unchanged.py", "guest-tests/ncqsoak.py"):
        text = (ROOT / path).read_text()
        assert not re.search(r'^POLICIES = \(\s*"', text, re.M), \
            f"{path}: a hand-kept POLICIES list is back"
    text = (ROOT / "include/hw/ide/ncq-model.h").read_text()
    m = re.search(r'#define NCQ_POLICY_NAMES "([^"]*)"', text)
    assert m, "ncq-model.h: NCQ_POLICY_NAMES is gone (ncqsoak.py reads it)"
    assert re.split(r",\s*|\s+or\s+", m.group(1)) == names()


def test_qapi_documents_every_policy():
    text = (ROOT / "qapi/ncq-disk.json").read_text()
    m = re.search(r"^# @policy: (\"[^\n]*)$", text, re.M)
    assert m, "qapi/ncq-disk.json: no '# @policy: \"...' line"
    listed = re.findall(r'"([^"]+)"', m.group(1))
    assert listed == names(), f"qapi/ncq-disk.json @policy lists {listed}"


def test_docs_tables_list_every_policy():
    # docs/device.md's and docs/ncq-sim.md's settings tables print
    # NCQ_POLICY_NAMES (test_params_table.py checks them)
    for path, pattern in (
            ("docs/model.md", r"policy \((`[^)]*)\)"),):
        m = re.search(pattern, (ROOT / path).read_text(), re.M)
        assert m, f"{path}: the policy list is gone ({pattern})"
        listed = re.findall(r"`([a-z-]+)`", m.group(1))
        assert listed == names(), f"{path}: lists {listed}"


def log_rows():
    """{address: (gpl, smart)} from ncq_disk_logs[] in ncq-disk-log.c."""
    text = (ROOT / "hw/ide/ncq-disk/ncq-disk-log.c").read_text()
    body = text[text.index("ncq_disk_logs[] = {"):]
    body = body[:body.index("\n};")]
    rows = {}
    for m in re.finditer(r"\{ (0x[0-9a-f]+|LOG_\w+), \"[^\"]+\",\s*"
                         r"([A-Z |]+),", body):
        addr = m.group(1)
        if addr.startswith("LOG_"):
            define = re.search(rf"#define {addr}\s+(0x[0-9a-f]+)", text)
            addr = define.group(1)
        where = m.group(2)
        rows[int(addr, 16)] = ("GPL" in where, "SMART" in where)
    return rows


def test_device_doc_lists_every_log():
    """docs/device.md's log table has one row per row of the table, with
    the same command sets: a log added to the code without its line (or a
    line left for a log that went) fails here."""
    doc = (ROOT / "docs/device.md").read_text()
    listed = {}
    for m in re.finditer(r"^\| ([0-9A-F]{2})h \| [^|]+\| (yes)? *\| (yes)? *\|",
                         doc, re.M):
        listed[int(m.group(1), 16)] = (bool(m.group(2)), bool(m.group(3)))
    rows = log_rows()
    assert len(rows) >= 14, f"ncq_disk_logs[] read as {rows}"
    assert listed == rows, \
        f"docs/device.md lists {sorted(listed.items())}; ncq_disk_logs[] " \
        f"has {sorted(rows.items())}"
