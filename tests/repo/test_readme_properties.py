"""The README's table of device properties says what the device does: each
property it names is one ncq-disk.c defines, a fixed default is the
DEFINE_PROP's, and "model's" stands only for a property whose own help
says its default is the model's (the README once said ncq-prio "advertise
and honour", which the built-in models do not)."""
import re

from repopaths import ROOT

SRC = ROOT / "hw" / "ide" / "ncq-disk" / "ncq-disk.c"
PARAMS = ROOT / "include" / "hw" / "ide" / "ncq-params.h"


def defined():
    """property -> its DEFINE_PROP default as the README writes it
    (None: no fixed default)."""
    out = {}
    text = SRC.read_text()
    for kind, name, rest in re.findall(
            r"DEFINE_PROP_(\w+)\(\s*\"([\w-]+)\",([^;]*?)\),?\n", text):
        args = [a.strip() for a in rest.split(",")]
        default = None
        if kind == "BOOL":
            default = {"true": "on", "false": "off"}[args[-1]]
        elif kind.startswith("UINT") and args[-1].isdigit():
            default = args[-1]
        elif kind == "UINT32" and args[-1] == "NCQ_DISK_MAX_DEPTH":
            default = "32"
        elif kind == "STRING":
            default = "none"
        out[name] = default
    for name in settings():
        out.setdefault(name, None)
    return out


def settings():
    """The run-time settings' property names: ncq-disk.c registers one
    property per row of NCQ_SETTINGS (ncq-params.h), its default the
    model's (write-cache is QEMU's own, its auto the model's)."""
    text = PARAMS.read_text()
    body = text[text.index("#define NCQ_SETTINGS(S)"):]
    body = body[:body.index("#endif")]
    return set(re.findall(r'S\(\w+, "([\w-]+)"', body))


def model_defaults():
    """Properties whose help says the model gives the default."""
    text = " ".join(SRC.read_text().split()).replace('" "', "")
    out = set(settings())
    for name, body in re.findall(r'\{ "([\w-]+)",(.*?)\},', text):
        if "the model's" in body:
            out.add(name)
    for name, body in re.findall(
            r'ncq_disk_describe\(klass, "([\w-]+)",(.*?)\)\);', text):
        if "the model's" in body:
            out.add(name)
    return out


def readme_rows():
    text = (ROOT / "README.md").read_text()
    start = text.index("## The device in one table")
    rows = []
    for line in text[start:].split("\n")[3:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        names = re.findall(r"`([\w-]+)`", cells[0])
        rows.append((names, cells[1], cells[2]))
    return rows


def test_readme_property_table_matches_the_device():
    props, models = defined(), model_defaults()
    assert "ncq-prio" in props and "policy" in models, \
        "ncq-disk.c's properties or their help not found"
    rows = readme_rows()
    assert len(rows) >= 10, "README.md: the property table not found"
    bad = []
    for names, default, _ in rows:
        for n in names:
            if n not in props:
                bad.append(f"{n}: no such property in ncq-disk.c")
            elif default == "model's" and n not in models and n != "cdl":
                bad.append(f"{n}: README says the model's default; the "
                           "device's help does not")
            elif default not in ("model's",) and props[n] is not None \
                    and not default.startswith("`") and default != props[n]:
                bad.append(f"{n}: README says {default}, ncq-disk.c "
                           f"{props[n]}")
    assert not bad, "README.md's property table:\n" + "\n".join(bad)


def test_readme_does_not_say_built_in_models_honour_prio():
    rows = {n: text for names, _, text in readme_rows() for n in names}
    honours = [p for p in (ROOT / "hw/ide/ncq-model/models").glob("*.ncqm")
               if re.search(r"^honour_prio\s*=\s*(on|yes|1)\b",
                            p.read_text(), re.M)]
    if not honours:
        assert "honour" not in rows["ncq-prio"].split(";")[0], (
            "README.md: ncq-prio says the drive honours NCQ priority; no "
            "built-in model sets honour_prio")
    else:
        assert "off in every built-in model" not in rows["ncq-prio"], (
            "README.md: ncq-prio says no built-in model honours NCQ "
            "priority; " + ", ".join(p.stem for p in honours) + " does")
