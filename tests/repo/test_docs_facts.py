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
            caller, callee, line, how = calls[0]
            why = None
            if x in none:
                why = f"{x} is said to call no other file"
            elif y in above:
                why = f"{y} is said to be called by none of the chain"
            elif x in rank and y in rank and rank[y] <= rank[x]:
                why = f"{y} is not after {x} in the chain"
            if why:
                wrong.append(f"{folder}/{x}:{line}: {caller} {how} "
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


def setting_names():
    """The settings' names, NCQ_SETTINGS of ncq-params.h in its order."""
    src = read("include/hw/ide/ncq-params.h")
    body = src[src.index("#define NCQ_SETTINGS(S)"):]
    return re.findall(r'S\(\w+, "([\w-]+)"', body)


def test_hmp_help_lists_every_key():
    """The help `help ncq_disk_set` prints (hmp-commands.hx, in the patch
    series) sends the user to the settings table for the settings (their
    names come from the library's table, so a new one needs no patch)
    and names the keys of ncq_disk_set_text()'s own table in order."""
    keys = hmp_keys()
    patch = next((ROOT / "patches/qemu").glob("*/*add-the-ncq-disk-device*"))
    text = read(os.path.relpath(patch, ROOT))
    m = re.search(r'\.name\s+= "ncq_disk_set",.*?\.help\s+= (.*?),\n'
                  r'\+\s+\.cmd', text, re.S)
    assert m, f"{patch.name}: no ncq_disk_set help in hmp-commands.hx"
    help_text = "".join(re.findall(r'"([^"]*)"', m.group(1)))
    assert "settings table" in help_text, help_text
    said = re.findall(r"[a-z]+(?:-[a-z]+)+|[a-z]+",
                      help_text.split(" by its name, or ", 1)[1])
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


# --- what the 6.12 run takes ---------------------------------------------

def second_kernel_files():
    src = read("scripts/test.sh")
    # the one list of what runs again on 6.12
    m = re.search(r"^GUEST_TESTS_612=\((.*?)^\)", src, re.S | re.M)
    assert m, "scripts/test.sh: no GUEST_TESTS_612=(...) list"
    return sorted(set(re.findall(r"guest-tests/(test_\w+\.py)", m.group(1))))


def test_docs_list_what_the_6_12_run_takes():
    files = second_kernel_files()
    wrong = []
    for doc in ("README.md", "docs/kernel-testing.md"):
        text = " ".join(read(doc).split())
        m = re.search(r"again on 6\.12: (.*?)\)?\.(?= |$)", text)
        if not m:
            wrong.append(f"{doc}: no \"again on 6.12: ...\"")
            continue
        said = sorted(set(re.findall(r"`(test_\w+\.py)`", m.group(1))))
        if said != files:
            wrong.append(f"{doc}: {said}")
    assert not wrong, (f"scripts/test.sh runs {files} on 6.12; but\n"
                       + "\n".join(wrong))


# --- the README's times: docs/build.md keeps them ------------------------

def test_readme_times_are_build_md_s():
    """The README's two commands carry their times; docs/build.md's times
    section gives the same ones, beside the measured runs they come from
    (the timing history lives there only)."""
    readme = read("README.md")
    build = " ".join(read("docs/build.md").split())
    demo = re.search(r"scripts/demo\.sh +#.*: (about [^\n]*)", readme)
    test = re.search(r"scripts/test\.sh +#.*: (about [^\n]*)", readme)
    assert demo and test, "README.md: the two commands' times not found"
    m = re.search(r"The README's figures .*?: `scripts/demo\.sh` (about .*?); "
                  r"`scripts/test\.sh` (about .*?) \(", build)
    assert m, "docs/build.md: no \"The README's figures ...\" line"
    assert (demo.group(1), test.group(1)) == m.groups(), (
        f"README.md: demo {demo.group(1)!r}, test {test.group(1)!r}; "
        f"docs/build.md: {m.groups()}")


# --- counts the docs spell out --------------------------------------------

WORDS = ("zero one two three four five six seven eight nine ten eleven "
         "twelve thirteen fourteen fifteen sixteen seventeen eighteen "
         "nineteen twenty").split()


def test_counts_of_guest_tests_drives():
    """How many drives test_identify.py and test_many_drives.py boot, as
    the docs count them, is what the tests take."""
    import test_identify
    import test_many_drives
    checks = [
        (r"\b(\w+) hard-disk models\b|test_identify\.py`: (\w+) drives",
         len(test_identify.hard_disk_models())),
        (r"\b(\w+) (?:ncq-disks|drives) of \w+ models|"
         r"\b\w+ (?:ncq-disks|drives) of (\w+) models|"
         r"test_many_drives\.py` runs (\w+) ncq-disks|"
         r"test_many_drives\.py: (\w+) drives",
         len(test_many_drives.DRIVES)),
    ]
    wrong = []
    for pattern, want in checks:
        pattern = "(?:" + pattern + ")"
        found = []
        for doc in [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")):
            text = " ".join(doc.read_text(encoding="utf-8").split())
            for m in re.finditer(pattern, text):
                w = next(g for g in m.groups() if g).lower()
                if w.isdigit() or w in WORDS:
                    found.append((os.path.relpath(doc, ROOT), m.group(0),
                                  int(w) if w.isdigit() else WORDS.index(w)))
        assert found, f"no doc matches {pattern}"
        wrong += [f"{d}: \"{text}\" (the test takes {want})"
                  for d, text, n in found if n != want]
    assert not wrong, "\n".join(wrong)


# --- docs/smart.md's two log directories ----------------------------------

def test_smart_md_directories_are_the_log_table():
    """smart.md names what each log directory lists; both come from
    ncq_disk_logs[] (test_tables.py reads it), less the directory itself."""
    from test_tables import log_rows
    rows = log_rows()
    gpl = {a for a, (g, s) in rows.items() if g and a}
    smart = {a for a, (g, s) in rows.items() if s and a}
    text = " ".join(read("docs/smart.md").split())
    m = re.search(r"[tT]he GP log directory \(READ LOG EXT 00h\) lists (.*?)[;.] "
                  r"[tT]he SMART directory (.*?)\.", text)
    assert m, "docs/smart.md: no \"the GP log directory ... lists\" sentence"

    def hexes(s):
        return {int(h, 16) for h in re.findall(r"\b([0-9A-F]{2})h\b", s)}
    said_gpl = hexes(m.group(1)) - {0}
    said_smart = hexes(m.group(2))
    assert (said_gpl, said_smart) == (gpl, smart), (
        f"docs/smart.md: GP {sorted(map(hex, said_gpl))}, SMART "
        f"{sorted(map(hex, said_smart))}; ncq_disk_logs[]: GP "
        f"{sorted(map(hex, gpl))}, SMART {sorted(map(hex, smart))}")


# --- a figure quoted right before a checked session is the session's ------

def test_iops_quoted_before_a_session_are_its_output():
    """"Figures quoted in the prose come from the blocks next to them"
    (docs/ncq-sim.md, "Checked examples"): the IOPS figures of the sentence
    that introduces a session (it ends with a colon) are figures the
    session prints, to the digits quoted."""
    import mdblocks
    wrong = []
    for doc in [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md")):
        rel = os.path.relpath(doc, ROOT)
        text = doc.read_text(encoding="utf-8")
        lines = text.split("\n")
        for b in mdblocks.blocks(rel, text):
            if not mdblocks.session(b):
                continue
            printed = [float(x) for x in re.findall(
                r"-?\d+(?:\.\d+)?", " ".join(
                    ln for ln in b.lines if not ln.startswith("$ ")))]
            i = b.line - 2
            while i >= 0 and not lines[i].strip():
                i -= 1
            para = []
            while i >= 0 and lines[i].strip() and "```" not in lines[i]:
                para.insert(0, lines[i])
                i -= 1
            para = " ".join(" ".join(para).split())
            if not para.endswith(":"):
                continue
            sentence = re.split(r"(?<=[.;]) ", para)[-1]
            for m in re.finditer(r"(\d+(?:\.\d+)?)(?= IOPS| against "
                                 r"[^.]*? IOPS)", sentence):
                n = m.group(1)
                places = len(n.split(".")[1]) if "." in n else 0
                if not any(round(x, places) == float(n) for x in printed):
                    wrong.append(f"{rel}:{b.line}: \"{sentence}\": {n} is "
                                 "not a figure the session prints")
    assert not wrong, "\n".join(wrong)


# --- ncq-sim's options, each described in docs/ncq-sim.md ------------------

def test_ncq_sim_md_describes_every_option(ncq_sim_dir):
    import subprocess
    r = subprocess.run([str(ncq_sim_dir / "ncq-sim"), "--help"],
                       capture_output=True, text=True)
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)",
                             r.stdout + r.stderr)) - {"--help"}
    assert len(options) > 20, f"ncq-sim --help read as {sorted(options)}"
    doc = read("docs/ncq-sim.md")
    # a setting's --NAME is its row of the settings table (`NAME`)
    settings = {"--" + n for n in setting_names()}
    missing = sorted(o for o in options
                     if not re.search(re.escape(o) + r"(?![\w-])", doc) and
                     not (o in settings and f"| `{o[2:]}` |" in doc))
    assert not missing, f"docs/ncq-sim.md does not describe {missing}"


# --- docs/smart.md's attributes: smart.c's two tables ---------------------

def smart_attr_table(name):
    src = read("hw/ide/ncq-model/smart.c")
    body = re.search(rf"{name}\[\] = \{{(.*?)\n\}};", src, re.S)
    assert body, f"smart.c: no {name}[]"
    return [(int(i), int(f, 16), int(t), n) for i, f, t, n in re.findall(
        r"\{ (\d+),\s+(0x[0-9a-f]+), (\d+),\s+\w+,\s*\"(\w+)\" \}",
        body.group(1))]


def test_smart_md_attributes_are_smart_c_s():
    seagate = smart_attr_table("ncq_smart_seagate")
    generic = smart_attr_table("ncq_smart_generic")
    doc = read("docs/smart.md")
    rows = [(int(i), n, int(f, 16), int(t)) for i, n, f, t in re.findall(
        r"^\| (\d+) \| (\w+) \| (0x[0-9a-f]+) \| (\d+) \|", doc, re.M)]
    assert rows == [(i, n, f, t) for i, f, t, n in seagate], (
        f"docs/smart.md's attribute table: {rows}; ncq_smart_seagate[]: "
        f"{seagate}")
    text = " ".join(doc.split())
    m = re.search(r"default names: (.*?), from the same counters", text)
    assert m, "docs/smart.md: no list of the other makers' attributes"
    said = []
    for item in re.split(r", (?:and )?| and ", m.group(1)):
        thr = re.search(r"\((?:threshold )?(\d+)\)", item)
        said.append((int(item.split()[0]), int(thr.group(1)) if thr else 0))
    assert said == [(i, t) for i, f, t, n in generic], (
        f"docs/smart.md: {m.group(1)}; ncq_smart_generic[]: "
        f"{[(i, t, n) for i, f, t, n in generic]}")


def test_layout_md_names_every_ncqfit_module():
    mods = sorted(p.stem for p in (ROOT / "tools/ncq-fit/ncqfit").glob("*.py")
                  if p.stem != "__init__")
    row = next(line for line in read("docs/LAYOUT.md").splitlines()
               if line.startswith("| `tools/ncq-fit/ncqfit/*.py`"))
    said = set(re.findall(r"`(\w+)`", row))
    assert not set(mods) - said, (
        f"docs/LAYOUT.md's ncqfit row misses {sorted(set(mods) - said)}")


def test_suite_times_only_in_build_md():
    """How long the suite or CI took is kept in docs/build.md's times
    section; another doc's prose points there (the README's two figures,
    in its command block, are checked equal to build.md's above)."""
    found = []
    for doc in [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md")):
        rel = os.path.relpath(doc, ROOT)
        if rel == "docs/build.md":
            continue
        prose = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"),
                       flags=re.S)
        for para in re.split(r"\n\s*\n", prose):
            flat = " ".join(para.split())
            for s in re.split(r"(?<=[.;!?|]) ", flat):
                if re.search(r"scripts/test\.sh|\.ci/run|\bsuite\b|\bCI\b|"
                             r"from nothing|nothing cached|caches", s) and \
                        re.search(r"\b\d+(\.\d+)? ?min\b", s):
                    found.append(f"{rel}: {s[:200]}")
    assert not found, ("the suite's times belong in docs/build.md "
                       "(\"Times on the 2-core reference machine\"):\n"
                       + "\n".join(found))


# --- the first Linux with CDL: the guest test's bound ---------------------

def test_cdl_linux_version_is_the_guest_test_s():
    """README and cdl.md say from which Linux on CDL works; test_cdl.py
    skips kernels before the same version."""
    src = read("guest-tests/test_cdl.py")
    m = re.search(r">= \((\d+), (\d+)\)", src)
    assert m, "guest-tests/test_cdl.py: no kernel version bound"
    want = f"{m.group(1)}.{m.group(2)}"
    said = []
    for doc in ("README.md", "docs/cdl.md"):
        text = " ".join(read(doc).split())
        said += [(doc, v) for v in re.findall(
            r"Linux (\d+\.\d+) and later find Command Duration Limits|"
            r"Linux drives them over NCQ since (\d+\.\d+)", text)]
    said = [(d, a or b) for d, (a, b) in said]
    assert {d for d, v in said} == {"README.md", "docs/cdl.md"}, said
    assert all(v == want for d, v in said), (
        f"test_cdl.py takes Linux {want} and later; the docs say {said}")


def test_layout_md_names_every_device_part():
    """LAYOUT.md's row for the device's other parts says what each file
    does: one `-name` per hw/ide/ncq-disk/ncq-disk-*.c (the files with a
    row of their own aside)."""
    rows = [line for line in read("docs/LAYOUT.md").splitlines()
            if line.startswith("| `hw/ide/ncq-disk/")]
    own = set()
    for line in rows:
        own |= set(re.findall(r"`hw/ide/ncq-disk/(ncq-disk-[\w-]+)\.c`",
                              line.split("|")[1]))
    parts = next(line for line in rows
                 if line.startswith("| `hw/ide/ncq-disk/ncq-disk-*.c`"))
    said = {f"ncq-disk{n}" for n in re.findall(r"`(-[a-z-]+)`", parts)}
    files = {p.stem for p in (ROOT / "hw/ide/ncq-disk").glob("ncq-disk-*.c")}
    assert files - own == said, (
        f"docs/LAYOUT.md's parts row: missing {sorted(files - own - said)}, "
        f"no such file {sorted(said - files)}")


def test_readme_names_every_policy():
    """The README's first paragraph names the firmware's policies: all of
    policy.c's table (as test_tables.py reads it), in its order."""
    from test_tables import names
    text = " ".join(read("README.md").split())
    m = re.search(r"reordering policy \(([^)]*?), with a starvation", text)
    assert m, "README.md: no \"reordering policy (...\" list"
    said = [re.sub(r"[^a-z]", "", w.lower().replace("aged ", "aged-"))
            for w in m.group(1).split(", ")]
    want = [re.sub(r"[^a-z]", "", n) for n in names()]
    assert said == want, (f"README.md names {m.group(1)}; policy.c's table "
                          f"has {names()}")


def test_trace_schema_md_has_every_column():
    """trace-schema.md's table has one row per column of the trace, in the
    order of NCQ_TRACE_COLUMNS (the header every trace starts with)."""
    src = read("include/hw/ide/ncq-model.h")
    m = re.search(r'#define NCQ_TRACE_COLUMNS ((?:"[^"]*"\s*\\?\s*)+)', src)
    assert m, "ncq-model.h: no NCQ_TRACE_COLUMNS"
    cols = "".join(re.findall(r'"([^"]*)"', m.group(1))).strip().split(",")
    rows = re.findall(r"^\| `(\w+)` \|", read("docs/trace-schema.md"), re.M)
    assert rows[:len(cols)] == cols, (
        f"docs/trace-schema.md's rows {rows}; NCQ_TRACE_COLUMNS {cols}")


def test_trace_schema_md_gives_every_reason():
    src = read("hw/ide/ncq-model/model.c")
    m = re.search(r"ncq_reason_name\(.*?\{(.*?)\};", src, re.S)
    assert m, "model.c: no ncq_reason_name()"
    reasons = re.findall(r'"(\w+)"', m.group(1))
    row = re.search(r"^\| `reason` \|(.*)$", read("docs/trace-schema.md"),
                    re.M)
    said = re.findall(r"`(\w+)`(?: \(|,| \||$)", row.group(1))
    assert said == reasons, (f"docs/trace-schema.md's reasons {said}; "
                             f"ncq_reason_name(): {reasons}")


def test_ncq_sim_md_gives_every_default(ncq_sim_dir):
    """A default ncq-sim's help states is the one docs/ncq-sim.md's option
    table gives."""
    import subprocess
    r = subprocess.run([str(ncq_sim_dir / "ncq-sim"), "--help"],
                       capture_output=True, text=True)
    rows = [ln.replace("`", "") for ln in read("docs/ncq-sim.md").splitlines()
            if ln.startswith("| `--")]
    wrong = []
    for entry in re.split(r"\n  (?=--)", r.stdout + r.stderr):
        opt = re.match(r"(--[a-z-]+)", entry)
        default = re.search(r"\(default\s+([^);]+)", " ".join(entry.split()))
        if not opt or not default:
            continue
        val = default.group(1).strip().replace("MODEL", "<model>")
        mine = [row for row in rows
                if re.search(re.escape(opt.group(1)) + r"(?![\w-])", row)]
        if not any(val in row for row in mine):
            wrong.append(f"{opt.group(1)}: help says default {val}; "
                         f"docs/ncq-sim.md: {mine}")
    assert not wrong, "\n".join(wrong)
