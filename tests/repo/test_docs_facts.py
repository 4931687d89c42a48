"""Facts the docs give about the code, checked against the code: what a
doc states once in prose and the source holds in a table (the library's
call order, the probe's phases, the HMP command's keys, what the 6.12 run
takes).  A failure names the doc, what it says and what the source has."""
import os
import re

import callgraph
from repopaths import ROOT


def read(rel):
    return (ROOT / rel).read_text(encoding="utf-8")


def names(text):
    return re.findall(r"`([^`]+)`", text)


# --- docs/model.md: the order calls go in among the library's files -------

def call_order():
    """(chain as a list of sets of file names, above, calling none) as
    docs/model.md's "Pieces" section gives them."""
    text = " ".join(read("docs/model.md").split())
    m = re.search(r"Calls go one way, from the API down to the numbers: "
                  r"(.*?): a file calls only files after it.*?"
                  r"Above the chain, calling into it and called by none of "
                  r"it: (.*?)\.(?= ) Calling no other file: (.*?)\.(?= |$)",
                  text)
    assert m, ("docs/model.md: the call order (\"Calls go one way, ...\", "
               "\"Above the chain, ...\", \"Calling no other file: ...\") "
               "is not where this test reads it")
    chain = [set(names(step)) for step in m.group(1).split("->")]
    return chain, set(names(m.group(2))), set(names(m.group(3)))


def test_model_md_call_order_is_the_call_graph():
    folder = "hw/ide/ncq-model"
    chain, above, none = call_order()
    rank = {f: i for i, step in enumerate(chain) for f in step}
    files = sorted(f for f in os.listdir(ROOT / folder) if f.endswith(".c"))
    placed = list(rank) + sorted(above) + sorted(none)
    wrong = [f"{f}: placed {placed.count(f)} times" for f in files
             if placed.count(f) != 1]
    wrong += [f"{f}: no such file in {folder}" for f in placed
              if f not in files]
    edges = callgraph.file_graph(str(ROOT), folder)
    for a, callees in sorted(edges.items()):
        x = os.path.basename(a)
        for b, calls in sorted(callees.items()):
            y = os.path.basename(b)
            caller, callee, line = calls[0]
            why = None
            if x in none:
                why = f"{x} is said to call no other file"
            elif y in above:
                why = f"{y} is said to be called by none of the chain"
            elif x in rank and y in rank and rank[y] <= rank[x]:
                why = f"{y} is not after {x} in the chain"
            if why:
                wrong.append(f"{folder}/{x}:{line}: {caller}() calls "
                             f"{callee}() of {y}, but {why}")
    assert not wrong, ("docs/model.md's call order disagrees with the code "
                       "(fix the order in the doc, or the call):\n"
                       + "\n".join(wrong))


# --- ncq-fit: the probe's phases -----------------------------------------

def probe_phases():
    src = read("tools/ncq-fit/probe-main.c")
    table = re.search(r"static const Phase phases\[\] = \{(.*?)\n\};", src,
                      re.S)
    assert table, "tools/ncq-fit/probe-main.c: no phases[] table"
    return re.findall(r'\{ "(\w+)",', table.group(1)), src


def test_probe_phases_in_its_usage_and_the_docs():
    phases, src = probe_phases()
    usage = re.search(r"\[--phases ([a-z][\w,\"\s]+)\]", src)
    said = {"probe-main.c usage": "".join(
        re.findall(r"[\w,]+", usage.group(1).replace('"', "")))}
    for line in read("docs/ncq-fit.md").splitlines():
        m = re.search(r"\[--phases ([\w,]+)\]", line)
        if m:
            said["docs/ncq-fit.md usage"] = m.group(1)
    assert len(said) == 2, "docs/ncq-fit.md: no `[--phases ...]` usage"
    want = ",".join(phases)
    wrong = [f"{k}: {v}" for k, v in said.items() if v != want]
    assert not wrong, (f"probe-main.c's phases[] is {want}; but\n"
                       + "\n".join(wrong))


def test_layout_md_names_every_probe_file():
    files = sorted(p.name for p in (ROOT / "tools/ncq-fit").glob("probe-*.c"))
    row = next(line for line in read("docs/LAYOUT.md").splitlines()
               if line.startswith("| `tools/ncq-fit/probe-*.c`"))
    said = {f"probe{n}.c" for n in re.findall(r"`(-[a-z]+)`", row)}
    assert set(files) == said, (
        "docs/LAYOUT.md's probe row: missing "
        f"{sorted(set(files) - said)}, no such file {sorted(said - set(files))}")


# --- HMP's ncq_disk_set and QMP's ncq-disk-set ----------------------------

def hmp_keys():
    src = read("hw/ide/ncq-disk/ncq-disk-qmp.c")
    table = re.search(r"ncq_disk_keys\[NCQ_KEY__MAX\] = \{(.*?)\n\};", src,
                      re.S)
    assert table, "ncq-disk-qmp.c: no ncq_disk_keys[] table"
    return re.findall(r'\{ "([\w-]+)"', table.group(1))


def test_hmp_help_lists_every_key():
    """The help `help ncq_disk_set` prints (hmp-commands.hx, in the patch
    series) names the keys ncq_disk_set_text() takes, in its table's
    order."""
    keys = hmp_keys()
    patch = next((ROOT / "patches/qemu").glob("*/*add-the-ncq-disk-device*"))
    text = read(os.path.relpath(patch, ROOT))
    m = re.search(r'\.name\s+= "ncq_disk_set",.*?\.help\s+= (.*?),\n'
                  r'\+\s+\.cmd', text, re.S)
    assert m, f"{patch.name}: no ncq_disk_set help in hmp-commands.hx"
    help_text = "".join(re.findall(r'"([^"]*)"', m.group(1)))
    said = re.findall(r"[a-z]+(?:-[a-z]+)+|[a-z]+",
                      help_text.split(":", 1)[1])
    said = [w for w in said if w not in ("or", "and")]
    assert said == keys, (f"{patch.name}: ncq_disk_set's help names {said}; "
                          f"ncq_disk_keys[] has {keys}")


def test_device_md_gives_ncq_disk_set_arguments():
    schema = read("qapi/ncq-disk.json")
    m = re.search(r"'command': 'ncq-disk-set',\s*'data': \{(.*?)\}", schema,
                  re.S)
    args = [a.lstrip("*") for a in re.findall(r"'([*\w-]+)':", m.group(1))]
    doc = " ".join(read("docs/device.md").split())
    said = re.search(r"`ncq-disk-set id ((?:\[[\w-]+\] ?)+)`", doc)
    assert said, "docs/device.md: no `ncq-disk-set id [...]` line"
    assert ["id"] + re.findall(r"\[([\w-]+)\]", said.group(1)) == args, (
        f"docs/device.md: `ncq-disk-set id {said.group(1)}`; "
        f"qapi/ncq-disk.json: {args}")
