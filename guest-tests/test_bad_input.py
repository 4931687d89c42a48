"""Bad input at startup: every property value out of range or of the wrong
type, a drive that cannot serve, a model file that is missing, unreadable
or malformed (one case per kind of error the parser reports), an image
larger than the model.  Each must stop QEMU with exit status 1 (not a
signal: no abort) and exactly one stderr line that names the problem and
the fix.  QEMU starts with -S and no guest, so a case costs well under a
second.

The tests run as root, for whom file permissions mean nothing; the cases
that need a real "permission denied" run QEMU under setpriv with the
capabilities that bypass them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH)
dropped from its bounding set.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "hw" / "ide" / "ncq-model" / "models"
NO_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
          "--"]
DEVICE = "ncq-disk,drive=d0,bus=ide.0"
SECTOR = 512


def edit(text, key, line):
    """Replace the first 'key = ...' line of a model file with @line, or
    drop it when @line is None."""
    pat = re.compile(rf"^{re.escape(key)}\s*=.*$", re.M)
    assert pat.search(text), key
    return pat.sub(line if line is not None else "", text, count=1)


def add(text, section, line):
    """Add @line at the start of [section]."""
    head = f"[{section}]\n"
    assert head in text, section
    return text.replace(head, head + line + "\n", 1)


def model_case(edits, base="st3400620as"):
    """A model file: the named built-in model's file with @edits applied
    (('edit', key, line) or ('add', section, line)), or raw text when
    @edits is a str."""
    def setup(tmp):
        if isinstance(edits, str):
            text = edits
        else:
            text = (MODELS / f"{base}.ncqm").read_text()
            for op, a, b in edits:
                text = edit(text, a, b) if op == "edit" else add(text, a, b)
        path = tmp / "bad.ncqm"
        path.write_text(text)
        return ["-device", f"{DEVICE},model-file={path}"], []
    return setup


def prop_case(props):
    return lambda tmp: (["-device", f"{DEVICE},{props.format(tmp=tmp)}"], [])


def args_case(*args, prefix=()):
    return lambda tmp: ([a.format(tmp=tmp) for a in args], list(prefix))


def unreadable_model(tmp):
    path = tmp / "secret.ncqm"
    shutil.copy(MODELS / "st3400620as.ncqm", path)
    path.chmod(0)
    return ["-device", f"{DEVICE},model-file={path}"], NO_DAC


def readonly_image_file(tmp):
    img = tmp / "ro.qcow2"
    shutil.copy(tmp / "own.qcow2", img)
    img.chmod(0o444)
    return ["-drive", f"if=none,id=ro,file={img},format=qcow2",
            "-device", "ncq-disk,drive=ro,bus=ide.0"], NO_DAC


def binary_model(tmp):
    path = tmp / "bad.ncqm"
    path.write_bytes(b"[drive]\nname = x\0\n")
    return ["-device", f"{DEVICE},model-file={path}"], []


def huge_model(tmp):
    path = tmp / "bad.ncqm"
    path.write_text(("# padding " + "x" * 100 + "\n") * 12000)
    return ["-device", f"{DEVICE},model-file={path}"], []


LONG = "x" * 600
# (id, setup(tmp) -> (QEMU arguments, wrapper), words the one stderr line
# must contain; '{tmp}' stands for the test's directory)
CASES = [
    # -- device properties: out of range --------------------------------
    ("queue-depth=0", prop_case("queue-depth=0"),
     ["queue-depth=0", "out of range", "use 1 to 32"]),
    ("queue-depth=33", prop_case("queue-depth=33"),
     ["queue-depth=33", "use 1 to 32"]),
    ("clustering=65537", prop_case("clustering=65537"),
     ["clustering='65537'", "out of range", "0..65536 sectors"]),
    ("starvation-timeout=3601s", prop_case("starvation-timeout=3601s"),
     ["starvation-timeout='3601s'", "out of range", "0..3600000 ms"]),
    ("prio-timeout=huge", prop_case("prio-timeout=9223372036854775807ns"),
     ["prio-timeout='9223372036854775807ns'", "0..3600000 ms"]),
    ("serial-too-long", prop_case("serial=ABCDEFGHIJKLMNOPQRSTU"),
     ["serial='ABCDEFGHIJKLMNOPQRSTU'", "20 characters", "shorten"]),
    ("ver-too-long", prop_case("ver=123456789"),
     ["ver='123456789'", "8 characters", "shorten"]),
    ("model=unknown", prop_case("model=nope"),
     ["unknown model 'nope'", "st3400620as", "model-file=PATH"]),
    ("policy=bogus", prop_case("policy=bogus"),
     ["policy='bogus'", "use fcfs", "aged-sptf"]),
    ("logical_block_size=4096", prop_case("logical_block_size=4096"),
     ["logical_block_size"]),
    ("unit=1", prop_case("unit=1"), ["unit 1", "only 1 units"]),
    ("ich9-ahci.sata-gen=4", args_case("-global", "ich9-ahci.sata-gen=4"),
     ["sata-gen must be 1, 2 or 3", "not 4"]),
    # -- device properties: wrong type ----------------------------------
    ("queue-depth=-1", prop_case("queue-depth=-1"),
     ["'queue-depth' expects uint32_t"]),
    ("queue-depth=abc", prop_case("queue-depth=abc"),
     ["'queue-depth' expects integer"]),
    ("clustering=abc", prop_case("clustering=abc"),
     ["clustering='abc'", "not a value of clustering", "0..65536"]),
    ("aging-weight=-1", prop_case("aging-weight=-1"),
     ["aging-weight='-1'", "not a value of aging-weight"]),
    ("honour-prio=yes", prop_case("honour-prio=yes"),
     ["honour-prio='yes'", "use on or off"]),
    ("zero-latency=on", prop_case("zero-latency=on"),
     ["zero-latency=on", "no zero-latency access", "use off"]),
    ("seed=abc", prop_case("seed=abc"), ["'seed' expects integer"]),
    ("wwn=abc", prop_case("wwn=abc"), ["'wwn' expects integer"]),
    ("timing=maybe", prop_case("timing=maybe"),
     ["'timing' expects 'on' or 'off'"]),
    ("ncq-prio=2", prop_case("ncq-prio=2"),
     ["'ncq-prio' expects 'on' or 'off'"]),
    ("cdl=maybe", prop_case("cdl=maybe"),
     ["'cdl' does not accept value 'maybe'"]),
    # Command Duration Limits are modelled for hard disks only
    ("cdl=on-ssd", prop_case("model=intel-530,cdl=on"),
     ["cdl=on: model intel-530 is an SSD", "drop cdl=on"]),
    ("recovery=abc", prop_case("recovery=abc"),
     ["recovery='abc'", "not a time", "use e.g. 2s"]),
    ("recovery=3601s", prop_case("recovery=3601s"),
     ["recovery='3601s'", "too long", "at most 3600s"]),
    ("starvation-timeout=abc", prop_case("starvation-timeout=abc"),
     ["starvation-timeout='abc'", "not a value", "2s, 500us"]),
    ("starvation-timeout=5m", prop_case("starvation-timeout=5m"),
     ["starvation-timeout='5m'", "not a value", "500us"]),
    ("starvation-timeout=-1", prop_case("starvation-timeout=-1"),
     ["starvation-timeout='-1'", "not a value"]),
    ("prio-timeout=xyz", prop_case("prio-timeout=xyz"),
     ["prio-timeout='xyz'", "2s, 500us"]),
    ("prio-timeout=overflow", prop_case("prio-timeout=99999999999999999999"),
     ["prio-timeout='99999999999999999999'", "0..3600000 ms"]),
    ("rerror=foo", prop_case("rerror=foo"),
     ["'rerror' does not accept value 'foo'"]),
    ("werror=foo", prop_case("werror=foo"),
     ["'werror' does not accept value 'foo'"]),
    # -- trace file -----------------------------------------------------
    ("trace=missing-dir", prop_case("trace=/nonexistent/dir/t.csv"),
     ["trace file '/nonexistent/dir/t.csv'", "No such file"]),
    ("trace=directory", prop_case("trace={tmp}"),
     ["trace file '{tmp}'", "Is a directory"]),
    # -- the drive ------------------------------------------------------
    ("no-drive", args_case("-device", "ncq-disk,bus=ide.0"),
     ["drive property not set", "give drive=ID"]),
    ("drive=unknown", prop_case("drive=nope"),
     ["drive", "can't find value 'nope'"]),
    ("drive-without-medium",
     args_case("-drive", "if=none,id=e0", "-device",
               "ncq-disk,drive=e0,bus=ide.0"),
     ["drive 'e0' has no medium", "file=IMAGE"]),
    ("drive-readonly=on",
     args_case("-drive", "if=none,id=ro,file={tmp}/own.qcow2,"
               "format=qcow2,readonly=on",
               "-device", "ncq-disk,drive=ro,bus=ide.0"),
     ["drive 'ro' is read-only", "drop readonly=on"]),
    # QEMU's block layer refuses before the device is created; its line
    # names the file and the reason.
    ("image-file-read-only", readonly_image_file,
     ["Could not open", "ro.qcow2", "Permission denied"]),
    # -- the model file: cannot be read ---------------------------------
    ("model-file-missing", prop_case("model-file=/nonexistent.ncqm"),
     ["model-file=/nonexistent.ncqm cannot be read", "No such file"]),
    ("model-file-unreadable", unreadable_model,
     ["secret.ncqm cannot be read", "Permission denied"]),
    ("model-file-directory", prop_case("model-file={tmp}"),
     ["model-file={tmp} is not a regular file", ".ncqm model file"]),
    ("model-and-model-file", prop_case(
        "model=intel-530,model-file=/etc/hostname"),
     ["model=intel-530 and model-file=/etc/hostname both given",
      "give one"]),
    ("model-file-binary", binary_model,
     ["bad.ncqm: not a text file", "docs/model.md"]),
    ("model-file-too-large", huge_model,
     ["bad.ncqm: larger than 1 MiB", "docs/model.md"]),
    # -- the model file: each kind of parse error -----------------------
    ("parse-line-too-long", model_case(f"[drive]\nname = {LONG}\n"),
     ["bad.ncqm:2: line too long", "docs/model.md"]),
    ("parse-section-header", model_case("[drive\nname = x\n"),
     ["bad.ncqm:1: malformed section header"]),
    ("parse-no-equals", model_case([("add", "drive", "rpm 7200")]),
     ["bad.ncqm:", "expected key = value"]),
    ("parse-unknown-key", model_case([("add", "drive", "no_such_key = 3")]),
     ["bad.ncqm:", "key 'no_such_key': unknown key in section [drive]",
      "docs/model.md"]),
    ("parse-duplicate-key", model_case([("add", "drive", "rpm = 5400")]),
     ["key 'rpm': duplicate"]),
    ("parse-missing-value", model_case([("edit", "rpm", "rpm =")]),
     ["key 'rpm': missing value"]),
    ("parse-bad-u32", model_case([("edit", "rpm", "rpm = fast")]),
     ["key 'rpm': expected an unsigned 32-bit integer"]),
    ("parse-u32-overflow", model_case([("edit", "heads",
                                        "heads = 4294967296")]),
     ["key 'heads': expected an unsigned 32-bit integer"]),
    ("parse-negative", model_case([("edit", "heads", "heads = -6")]),
     ["key 'heads': expected an unsigned 32-bit integer"]),
    ("parse-bad-u64", model_case([("edit", "capacity",
                                   "capacity = 1e9")]),
     ["key 'capacity': expected an unsigned integer"]),
    ("parse-bad-decimal", model_case([("edit", "a_ms", "a_ms = 0,137")]),
     ["key 'a_ms': expected a non-negative decimal number"]),
    ("parse-bad-kind", model_case([("edit", "kind", "kind = tape")]),
     ["key 'kind': expected hdd or ssd"]),
    ("parse-bad-policy", model_case([("edit", "policy", "policy = lifo")]),
     ["key 'policy': expected fcfs, sstf, clook, sptf or aged-sptf"]),
    ("parse-bad-seek-type", model_case([("edit", "type",
                                         "type = cubic")]),
     ["key 'type': expected twopart or table"]),
    ("parse-bad-bool", model_case([("edit", "write_cache",
                                    "write_cache = maybe")]),
     ["key 'write_cache': expected on or off"]),
    ("parse-string-too-long", model_case([("edit", "model",
                                           "model = " + "M" * 41)]),
     ["key 'model': string too long"]),
    ("parse-fraction", model_case([("edit", "track_skew",
                                    "track_skew = 1.5")]),
     ["key 'track_skew': fraction of a revolution must be below 1"]),
    ("parse-value-too-large", model_case([("edit", "segment_kib",
                                           "segment_kib = 3000000000")]),
     ["key 'segment_kib': value too large"]),
    ("parse-missing-required-key", model_case([("edit", "capacity", None)]),
     ["key 'drive.capacity': missing required key",
      "add capacity = ... to section [drive]"]),
    ("parse-zones-incomplete", model_case([("edit", "inner_spt", None)]),
     ["key 'layout.zones'", "are all needed"]),
    ("parse-zone-line-after-zones",
     model_case([("edit", "cyl_skew", "cyl_skew = 0.14\nzone = 0 10 100")]),
     ["key 'zone': cannot mix zone lines with zones/outer_spt/inner_spt"]),
    ("parse-zones-after-zone-line",
     model_case([("add", "layout", "zone = 0 122815 1400")]),
     ["key 'zones': cannot mix with zone lines"]),
    ("parse-zone-syntax", model_case("[layout]\nzone = 0 100\n"),
     ["key 'zone': expected: zone = first_cylinder cylinders spt"]),
    ("parse-zone-number", model_case("[layout]\nzone = 0 x 100\n"),
     ["key 'zone': expected unsigned integers"]),
    ("parse-seek-point-syntax", model_case("[seek]\npoint = 10\n"),
     ["key 'point': expected: point = distance milliseconds"]),
    ("parse-seek-points-decrease",
     model_case("[seek]\npoint = 10 1.0\npoint = 5 2.0\n"),
     ["key 'point': distances must increase"]),
    # -- the model file: values out of range or inconsistent ------------
    ("model-capacity-zero", model_case([("edit", "capacity",
                                         "capacity = 0")]),
     ["st3400620as: capacity must be 1 or more sectors"]),
    ("model-queue-depth", model_case([("edit", "queue_depth",
                                       "queue_depth = 33")]),
     ["queue_depth must be 1..32"]),
    ("model-rpm", model_case([("edit", "rpm", "rpm = 100")]),
     ["rpm must be 1000..30000"]),
    ("model-heads", model_case([("edit", "heads", "heads = 0")]),
     ["heads must be 1..255"]),
    ("model-bus", model_case([("edit", "bus_mb_s", "bus_mb_s = 0")]),
     ["bus_mb_s must be 1 or more MB/s"]),
    ("model-bus-above-link", model_case([("edit", "bus_mb_s",
                                          "bus_mb_s = 400")]),
     ["st3400620as: bus_mb_s 400.000 is above the SATA Gen2 link's "
      "300 MB/s; lower bus_mb_s or raise sata_gen"]),
    ("model-sata-gen", model_case([("edit", "sata_gen", "sata_gen = 4")]),
     ["sata_gen must be 1..3 (SATA link, 1, 2, 3 = 1.5, 3.0, 6.0 Gb/s"]),
    ("model-ata-minor", model_case([("edit", "ata_minor",
                                     "ata_minor = 29")]),
     ["key 'ata_minor': expected a hexadecimal code such as 0x001d"]),
    ("model-buffer", model_case([("edit", "buffer_kib",
                                  "buffer_kib = 65536")]),
     ["buffer_kib must be 0..32767 KiB (IDENTIFY word 21, 0: not reported"]),
    ("model-time", model_case([("edit", "a_ms", "a_ms = 20000")]),
     ["a_ms must be 0..10000 ms"]),
    ("model-recovery", model_case([("add", "firmware",
                                    "recovery_ms = 3600001")]),
     ["recovery_ms must be 0..3600000 ms"]),
    ("model-timeout", model_case([("edit", "starvation_timeout_ms",
                                   "starvation_timeout_ms = 3600001")]),
     ["starvation_timeout_ms must be 0..3600000 ms"]),
    ("model-clustering", model_case([("edit", "clustering_sectors",
                                      "clustering_sectors = 65537")]),
     ["clustering_sectors must be 0..65536 sectors"]),
    ("model-layout-too-small", model_case([("edit", "cylinders",
                                            "cylinders = 1000")]),
     ["layout holds", "less than capacity 781422768"]),
    ("model-zones-inconsistent",
     model_case([("edit", "zones", None), ("edit", "outer_spt", None),
                 ("edit", "inner_spt", None),
                 ("add", "layout", "zone = 0 60000 1400\n"
                                   "zone = 60001 62814 720")]),
     ["zone 1 must start at cylinder 60000"]),
    ("model-zone-spt", model_case([("edit", "spare_per_track",
                                    "spare_per_track = 720")]),
     ["sectors per track out of range"]),
    ("model-seek-table", model_case([("edit", "type", "type = table")]),
     ["seek table needs at least 2 points"]),
    ("model-segment", model_case([("edit", "segment_kib",
                                   "segment_kib = 0")]),
     ["segment_kib must be positive"]),
    ("model-ssd-channels", model_case([("edit", "channels",
                                        "channels = 0")], base="intel-530"),
     ["intel-530: channels must be 1..16 (flash channels)"]),
    ("model-ssd-page", model_case([("edit", "page_kib", "page_kib = 0.3")],
                                  base="intel-530"),
     ["ssd page_kib must be a multiple of 0.5"]),
    ("model-ssd-buffer", model_case([("edit", "write_buffer_kib",
                                      "write_buffer_kib = 8")],
                                    base="intel-530"),
     ["ssd write buffer must hold"]),
]


@pytest.mark.parametrize("setup,words", [pytest.param(s, w, id=i)
                                         for i, s, w in CASES])
def test_bad_input_stops_qemu_with_one_line(run_qemu, qemu_build, tmp_path,
                                            setup, words):
    subprocess.run([str(qemu_build / "qemu-img"), "create", "-q", "-f",
                    "qcow2", str(tmp_path / "own.qcow2"), "64M"], check=True)
    args, prefix = setup(tmp_path)
    p = run_qemu(*args, prefix=prefix, qmp=[])
    assert p.returncode == 1, (p.returncode, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    for w in words:
        assert w.format(tmp=tmp_path) in lines[0], lines[0]


def test_case_ids_are_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("base", ["st3400620as", "intel-530"])
def test_unedited_model_file_starts(run_qemu, tmp_path, base):
    """The files the model cases edit are valid as they are, so each case
    fails for its own edit only."""
    args, _ = model_case([], base=base)(tmp_path)
    p = run_qemu(*args, qmp=[])
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


@pytest.mark.parametrize("model,capacity", [
    ("fujitsu-max3036rc", 71819496),
    ("intel-530", 468862128),
])
def test_image_larger_than_model_is_refused(run_qemu, qemu_build, tmp_path,
                                             model, capacity):
    def start(sectors):
        img = tmp_path / f"{model}-{sectors}.qcow2"
        subprocess.run([str(qemu_build / "qemu-img"), "create", "-q", "-f",
                        "qcow2", str(img), str(sectors * SECTOR)], check=True)
        return run_qemu("-drive", f"if=none,id=big,file={img},format=qcow2",
                        "-device", f"ncq-disk,drive=big,bus=ide.0,"
                                   f"model={model}",
                        qmp=[])

    exact = start(capacity)
    assert exact.returncode == 0, exact.stderr
    p = start(capacity + 1)
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert f"{capacity + 1} sectors" in lines[0]
    assert f"capacity of {capacity}" in lines[0]
    assert "use a smaller image or another model" in lines[0]


# The device's own properties (the block and IDE bus ones are QEMU's)
OWN_PROPERTIES = ["model", "model-file", "queue-depth", "policy",
                  "starvation-timeout", "prio-timeout", "clustering",
                  "aging-weight", "honour-prio", "zero-latency", "seed",
                  "trace", "timing", "ncq-prio", "faults", "power-loss",
                  "x-host-wait-ms", "ver", "serial", "wwn",
                  "discard_granularity"]


def test_help_describes_every_property(run_qemu):
    """-device ncq-disk,help gives each property a description with its
    range, and defaults as a user would write them: a setting whose
    default is the model's says so instead of printing the internal
    'unset' value."""
    p = run_qemu("-device", "ncq-disk,help")
    assert p.returncode == 0, p.stderr
    help_of = {}
    for line in p.stdout.splitlines():
        m = re.match(r"  ([\w-]+)=<[^>]+>\s+- (.*)$", line)
        if m:
            help_of[m.group(1)] = m.group(2)
    for name in OWN_PROPERTIES:
        assert len(help_of.get(name, "")) > 20, (name, p.stdout)
    assert "(default: the model's)" in help_of["clustering"]
    assert "4294967295" not in help_of["clustering"]
    assert "0..65536 sectors" in help_of["clustering"]
    assert "1 to 32" in help_of["queue-depth"]
    assert "(default: 32)" in help_of["queue-depth"]
    for name in ("starvation-timeout", "prio-timeout"):
        assert "0..3600000 ms" in help_of[name], help_of[name]
        assert "(default: the model's)" in help_of[name]
    assert "auto: the model's" in help_of["write-cache"]
    assert "(default: st3400620as" in help_of["model"]
    assert "intel-530" in help_of["model"]
