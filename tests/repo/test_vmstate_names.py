"""No VMState subsection's name begins with a sibling's.

QEMU's loader (migration/vmstate.c, vmstate_subsection_load()) takes the
next subsection in the stream for one of the section just loaded whenever
its name begins with that section's name, and fails the load when that
section has no such subsection.  So a subsection named "P/a-b" sent after
its sibling "P/a" made every stream carrying both fail to load (it did:
"ncq state/backend-cmd" after "ncq state/backend").  A real child of "P/a"
is named "P/a/..."; any other name that begins with a sibling's is refused.

The subsections are read from the device's own files and from what the
patches of patches/qemu/ add or keep as context (the subsection lists the
series gives QEMU's IDE and AHCI structures are in them whole)."""

import re

from repopaths import ROOT

VMSD = re.compile(r"VMStateDescription\s+(\w+)\s*=\s*\{(.*?)\n\};", re.S)
NAME = re.compile(r"\.name\s*=\s*\"([^\"]+)\"")
SUBS = re.compile(r"\.subsections\s*=.*?\{(.*?)\}", re.S)


def sources():
    """The device's C files, and each patch's new lines with context."""
    for path in sorted((ROOT / "hw" / "ide").glob("ncq-*/*.c")):
        yield path.name, path.read_text()
    for path in sorted((ROOT / "patches" / "qemu").glob("*/*.patch")):
        kept = [line[1:] for line in path.read_text().splitlines()
                if line[:1] in ("+", " ") and not line.startswith("+++")]
        yield path.name, "\n".join(kept)


def families():
    """[(parent's variable, [subsection names])] of every VMState
    description with subsections."""
    names, parents = {}, []
    for origin, text in sources():
        for var, body in VMSD.findall(text):
            name = NAME.search(body)
            if name:
                names[var] = name.group(1)
            subs = SUBS.search(body)
            if subs:
                parents.append((f"{origin}: {var}",
                                re.findall(r"&(\w+)", subs.group(1))))
    return [(parent, [names[v] for v in subs if v in names])
            for parent, subs in parents]


def clashes(sibling_names):
    """Pairs (a, b) of siblings where b begins with a, not as a child."""
    return [(a, b) for a in sibling_names for b in sibling_names
            if a != b and b.startswith(a) and not b.startswith(a + "/")]


def test_the_check_finds_the_subsections():
    found = dict(families())
    ncq = [subs for parent, subs in found.items()
           if parent.endswith(": vmstate_ncq_tfs")]
    assert ncq and "ncq state/backend" in ncq[0], found
    assert any("ncq-disk/undo" in subs for subs in found.values()), found


def test_the_check_refuses_a_prefix():
    assert clashes(["ncq state/backend", "ncq state/backend-cmd"]) == [
        ("ncq state/backend", "ncq state/backend-cmd")]
    assert clashes(["ide_drive/pio_state", "ide_drive/tray_state"]) == []


def test_no_subsection_name_begins_with_a_siblings():
    bad = [(parent, pair) for parent, subs in families()
           for pair in clashes(subs)]
    assert not bad, bad
