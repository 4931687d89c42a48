"""IDENTIFY as the guest's tools read it: `hdparm -I` (Debian's hdparm
9.65) on every shipped hard-disk model prints no warning, and shows the
model's name, firmware, ATA version, SATA generations and buffer; the
kernel names the same ATA version and brings each link up at the model's
SATA speed (dmesg).

All seventeen hard-disk models ride in one guest (one boot): the usual disk
(st3400620as on ide.0) and the other sixteen on the remaining ports of
q35's AHCI and two more ich9-ahci controllers
(ncqguest.multi_drive_args).  The expected values come from the model
files themselves: a key the file sets, or the default docs/model.md gives
for it.  A model that declares CDL (cdl = yes) claims ACS-5 whatever its
ata_major (docs/cdl.md), and one whose buffer_kib is 0 does not report its
buffer, so hdparm prints "cache/buffer size = unknown" for it, as for a
real Exos.
"""

import re
from pathlib import Path

import pytest

import ncqguest
from ncqguest import Workload

MODELS_DIR = (Path(__file__).resolve().parent.parent / "hw" / "ide" /
              "ncq-model" / "models")
MAIN_MODEL = "st3400620as"
GBPS = {1: "1.5", 2: "3.0", 3: "6.0"}
# hdparm 9.65's text for the word 81 codes the models use
MINOR_TEXT = {0x001d: "ATA/ATAPI-7 published, ANSI INCITS 397-2005"}
# what hdparm -I prints only when it finds something wrong or unknown
WARNING = re.compile(r"(?i)warning|integrity word|checksum: incorrect|"
                     r"\(\?\)|unknown|sg_io|failed|bad/missing|questionable|"
                     r"not supported: |invalid")
# IDENTIFY bits of CDL's companions that hdparm 9.65 has no name for, so it
# prints them as "unknown": sense data reporting (ACS-3, word 119/120 bit
# 6) and NCQ autosense (SATA 3.2, word 78 bit 7).  A real drive with these
# features shows the same lines; they are not the drive's mistakes.
HDPARM_UNNAMED_CDL = {"*\tunknown 119[6]", "unknown 78[7]"}

SCRIPT = """
for d in /sys/block/sd*; do
    n=${d##*/}
    hdparm -I /dev/$n > $RESULTS/hdparm-$n.txt 2>&1
    echo "hdparm-exit $?" >> $RESULTS/hdparm-$n.txt
done
"""


def model_keys(name):
    """The [drive], [cache], [firmware] and [zones] keys of a model file."""
    keys, section = {}, None
    for line in (MODELS_DIR / f"{name}.ncqm").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and section in ("drive", "cache", "firmware",
                                         "zones"):
            k, v = (s.strip() for s in line.split("=", 1))
            keys.setdefault(f"{section}.{k}", v)
    return keys


def expected(name):
    """What IDENTIFY should say of a model: its keys, or their defaults
    (docs/model.md#identify-and-the-sata-link)."""
    k = model_keys(name)
    bus = float(k.get("drive.bus_mb_s", 300))
    gen = int(k["drive.sata_gen"]) if "drive.sata_gen" in k else \
        next(g for g in (1, 2, 3) if bus <= 150 * 2 ** (g - 1) or g == 3)
    if "drive.buffer_kib" in k:
        buffer_kib = float(k["drive.buffer_kib"])
    else:
        # segments x segment_kib + write_cache_kib, in whole sectors
        sectors = int(k.get("cache.segments", 16)) * \
            int(float(k.get("cache.segment_kib", 512)) * 2) + \
            int(float(k.get("cache.write_cache_kib", 4096)) * 2)
        buffer_kib = sectors / 2
    return {"model": k["drive.model"], "firmware": k.get("drive.firmware",
                                                          "1.0"),
            "sata_gen": gen, "buffer_kib": int(buffer_kib),
            # CDL's IDENTIFY claims ACS-5, where CDL is defined
            "ata_major": 12 if k.get("firmware.cdl") in ("yes", "on") else
            int(k.get("drive.ata_major", 7)),
            "cdl": k.get("firmware.cdl") in ("yes", "on"),
            "ata_minor": int(k.get("drive.ata_minor", "0x001d"), 16)}


def hard_disk_models():
    # host-managed models (a [zones] section, docs/smr.md) need an image
    # of their capacity, not this test's shared small one; test_zac.py
    # boots them (hdparm -I of one is not checked yet)
    return sorted(p.stem for p in MODELS_DIR.glob("*.ncqm")
                  if model_keys(p.stem).get("drive.kind") == "hdd" and
                  "zones.zone_sectors" not in model_keys(p.stem))


def field(text, label):
    m = re.search(rf"^\s*{re.escape(label)}\s*(.*?)\s*$", text, re.M)
    return m.group(1) if m else None


@pytest.fixture(scope="module")
def identify_run(tmp_path_factory):
    models = hard_disk_models()
    assert MAIN_MODEL in models and "intel-530" not in models
    others = [m for m in models if m != MAIN_MODEL]
    work = tmp_path_factory.mktemp("identify")
    extra = ncqguest.multi_drive_args(
        work / "extra", [f"ncq-disk,model={m}" for m in others])
    guest = ncqguest.Guest(work / "guest",
                           device=f"ncq-disk,model={MAIN_MODEL}",
                           extra_args=extra, snapshot=False, timeout_s=600)
    result = guest.run(Workload(script=SCRIPT))
    assert result.status == 0, guest.tail()
    reports = {}
    for name, data in result.files.items():
        if name.startswith("hdparm-sd"):
            text = data.decode(errors="replace")
            reports[field(text, "Model Number:")] = text
    return models, reports, result.dmesg


def test_every_model_answers(identify_run):
    models, reports, _ = identify_run
    want = sorted(expected(m)["model"] for m in models)
    assert sorted(k for k in reports if k) == want


@pytest.mark.parametrize("name", hard_disk_models())
def test_hdparm_identify(identify_run, name):
    _, reports, _ = identify_run
    e = expected(name)
    text = reports.get(e["model"])
    assert text is not None, f"no drive answered as {e['model']}"
    assert "hdparm-exit 0" in text, text
    buffer_line = "cache/buffer size  = " + \
        ("unknown" if e["buffer_kib"] == 0 else f"{e['buffer_kib']} KBytes")
    # the one "unknown" a drive that leaves word 21 at 0 gets
    bad = [line for line in text.splitlines() if WARNING.search(line) and
           not (e["buffer_kib"] == 0 and line.strip() == buffer_line) and
           not (e["cdl"] and line.strip() in HDPARM_UNNAMED_CDL)]
    assert bad == [], "\n".join(bad)
    assert "Checksum: correct" in text
    assert field(text, "Firmware Revision:") == e["firmware"]
    supported = field(text, "Supported:")
    assert supported is not None and \
        supported.split()[0] == str(e["ata_major"]), supported
    if e["ata_minor"] in MINOR_TEXT:
        assert field(text, "Used:") == MINOR_TEXT[e["ata_minor"]]
    for gen in (1, 2, 3):
        line = f"Gen{gen} signaling speed ({GBPS[gen]}Gb/s)"
        assert (line in text) == (gen <= e["sata_gen"]), (gen, text)
    assert buffer_line in text, text
    # A SATA drive offers UDMA modes 0-6, and libata selects the fastest
    # (word 88, put back after QEMU's SET FEATURES rewrites it).
    dma = field(text, "DMA:") or ""
    assert "*udma6" in dma and "sdma" not in dma, dma


@pytest.mark.parametrize("name", hard_disk_models())
def test_kernel_link_and_version(identify_run, name):
    """libata's 'ataN.00: ATA-<major>: <model>, <fw>' and 'ataN: SATA link
    up <speed> Gbps' for the same port."""
    _, _, dmesg = identify_run
    e = expected(name)
    ident = re.search(rf"(ata\d+)\.00: ATA-(\d+): {re.escape(e['model'])}, "
                      rf"{re.escape(e['firmware'])}, max UDMA/133", dmesg)
    assert ident, f"no libata IDENTIFY line for {e['model']}"
    assert int(ident.group(2)) == e["ata_major"]
    link = re.search(rf"{ident.group(1)}: SATA link up ([\d.]+) Gbps", dmesg)
    assert link, f"no link line for {ident.group(1)}"
    assert link.group(1) == GBPS[e["sata_gen"]]
