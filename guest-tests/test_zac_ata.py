"""The host-managed drive as a raw-ATA client sees it, beside libata's
translation (docs/smr.md, "Both paths").

One boot of wd-hc620 at full capacity (a sparse qcow2 image).  In the
guest, sg_raw sends every case of CASES twice from the same zone state:
once as ATA commands in ATA PASS-THROUGH (the way libzbc and SMR
qualification tools drive a SATA drive) and once as the SCSI ZBC
commands libata translates (what sd_zbc, sg_rep_zones or sg_zone send).
Each step's answer (success, or the sense key and additional sense code
libata returns; the zones of a report; a checksum of the data read) and
the zones' conditions and write pointers after the case must be the same
both ways.  Before the table: EXECUTE DEVICE DIAGNOSTIC through ATA
PASS-THROUGH with CK_COND (libzbc's classification) and the IDENTIFY
DEVICE data log's page 09h (sg_sat_read_gplog).
"""

import re

import pytest

import ncqguest
from ncqguest import Workload

ZONE = 524288                   # sectors: 256 MiB
CONV = 524                      # conventional zones at LBA 0
ZONES = 52156
CAPACITY = ZONES * ZONE
SWR0 = CONV * ZONE              # the first sequential-write-required zone


def Z(n):
    """The start LBA of the n-th sequential zone."""
    return SWR0 + n * ZONE


# ATA PASS-THROUGH protocols (SAT-5) and commands (ACS-4, ZAC-2)
NON_DATA, DMA, FPDMA = 3, 6, 12
ATA_READ_DMA, ATA_WRITE_DMA = 0x25, 0x35
ATA_READ_FPDMA, ATA_WRITE_FPDMA = 0x60, 0x61
ATA_NCQ_NON_DATA, ATA_RECV_FPDMA = 0x63, 0x65
ATA_ZAC_IN, ATA_ZAC_OUT = 0x4A, 0x9F
# ZAC MANAGEMENT OUT actions = ZBC OUT service actions
CLOSE, FINISH, OPEN, RESET = 1, 2, 3, 4

# The table: each case is a list of steps run from all zones empty.
#   ("report", lba, options, partial, pages)   REPORT ZONES (EXT)
#   ("out", action, lba, all, count)           zone CLOSE/FINISH/OPEN/RESET
#   ("write", lba, sectors) / ("read", lba, sectors)
# A step's form: "" non-queued (ZAC MANAGEMENT IN/OUT, READ/WRITE DMA EXT),
# "q" queued (RECEIVE FPDMA QUEUED, NCQ NON-DATA, READ/WRITE FPDMA
# QUEUED); the SCSI side is the same ZBC command either way (libata
# chooses the queued form itself).
CASES = [
    ("report all from a conventional zone",
     [("report", SWR0 - 2 * ZONE, 0x00, 0, 1, "")]),
    ("report partial, queued",
     [("report", SWR0 - ZONE, 0x00, 1, 1, "q")]),
] + [
    (f"report option {opt:02x}",
     [("write", Z(0), 8, ""), ("out", OPEN, Z(1), 0, 0, ""),
      ("write", Z(2), 8, ""), ("out", CLOSE, Z(2), 0, 0, ""),
      ("out", FINISH, Z(3), 0, 0, ""),
      ("report", Z(0), opt, 1, 1, "")])
    for opt in (0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x10, 0x11, 0x3f)
] + [
    ("report reserved option 08h", [("report", 0, 0x08, 0, 1, "")]),
    ("report beyond the capacity", [("report", CAPACITY, 0x00, 0, 1, "")]),
    ("report reserved option 08h, queued",
     [("report", 0, 0x08, 0, 1, "q")]),
] + [
    (f"zone action {name}{' queued' if q else ''}",
     [("write", Z(0), 8, ""), ("out", action, Z(0), 0, 0, q),
      ("out", action, Z(1), 0, 0, q)])
    for name, action in (("close", CLOSE), ("finish", FINISH),
                         ("open", OPEN), ("reset", RESET))
    for q in ("", "q")
] + [
    (f"zone action {name} ALL{' queued' if q else ''}",
     [("write", Z(0), 8, ""), ("out", OPEN, Z(1), 0, 0, ""),
      ("write", Z(2), 8, ""), ("out", CLOSE, Z(2), 0, 0, ""),
      ("out", action, 0, 1, 0, q)])
    for name, action in (("close", CLOSE), ("finish", FINISH),
                         ("open", OPEN), ("reset", RESET))
    for q in ("", "q")
] + [
    (f"zone action {name} with a count of 2",
     [("out", OPEN, Z(0), 0, 0, ""), ("out", OPEN, Z(1), 0, 0, ""),
      ("out", action, Z(0), 0, 2, "")])
    for name, action in (("close", CLOSE), ("finish", FINISH),
                         ("reset", RESET))
] + [
    ("zone action open with a count of 2", [("out", OPEN, Z(0), 0, 2, "")]),
    ("zone action on a conventional zone",
     [("out", RESET, SWR0 - ZONE, 0, 0, "")]),
    ("zone action inside a zone", [("out", OPEN, Z(0) + 8, 0, 0, "")]),
    ("zone action beyond the capacity",
     [("out", OPEN, CAPACITY, 0, 0, "")]),
    ("zone action inside a zone, queued",
     [("out", OPEN, Z(0) + 8, 0, 0, "q")]),
] + [
    (f"{what}{' queued' if q else ''}", [*steps(q)])
    for q in ("", "q")
    for what, steps in (
        ("write at the write pointer",
         lambda q: [("write", Z(0), 8, q), ("write", Z(0) + 8, 8, q)]),
        ("write off the write pointer",
         lambda q: [("write", Z(0), 8, q), ("write", Z(0) + 16, 8, q)]),
        ("write across into a sequential zone",
         lambda q: [("write", Z(0) - 8, 16, q)]),
        ("write to a full zone",
         lambda q: [("out", FINISH, Z(0), 0, 0, ""),
                    ("write", Z(0), 8, q)]),
        ("read at and across the write pointer",
         lambda q: [("write", Z(0), 8, ""), ("read", Z(0), 8, q),
                    ("read", Z(0) + 4, 8, q)]),
        ("read across zones",
         lambda q: [("write", Z(0), 8, ""), ("read", Z(1) - 8, 16, q)]),
    )
]

# Cases libata answers itself, the command never reaching the drive: the
# last step's answer on each path.  ZBC OUT's zone count (CDB bytes 12-13,
# ZBC-2) is refused by ata_scsi_zbc_out_xlat() (a ZAC MANAGEMENT OUT has
# no length), and it checks the zone ID against the capacity itself.  The
# drive reports ZAC revision 05 (page 09h), whose ZAC MANAGEMENT OUT has
# no zone count: COUNT is reserved and ignored, the action is on one zone.
COUNT_IGNORED = {"ok": True}
LIBATA_ANSWERS = {
    "zone action close with a count of 2":
        (COUNT_IGNORED, "Parameter list length error"),
    "zone action finish with a count of 2":
        (COUNT_IGNORED, "Parameter list length error"),
    "zone action reset with a count of 2":
        (COUNT_IGNORED, "Parameter list length error"),
    "zone action open with a count of 2":
        (COUNT_IGNORED, "Parameter list length error"),
    "zone action beyond the capacity":
        ({"ok": False, "sense": ("Illegal Request",
                                 "Logical block address out of range")},
         "Invalid field in cdb"),
}

# Zones whose condition and write pointer are compared after each case
WATCHED = [Z(n) for n in range(4)]


def _hex(*b):
    return " ".join(f"{x & 0xff:02x}" for x in b)


def ata16(proto, command, feature=0, count=0, lba=0, device=0x40,
          ck_cond=0, t_dir=0, t_length=0):
    """An ATA PASS-THROUGH(16) CDB (SAT-5), 48-bit."""
    flags = ck_cond << 5 | t_dir << 3 | (1 << 2 if t_length else 0) | t_length
    return _hex(0x85, proto << 1 | 1, flags, feature >> 8, feature,
                count >> 8, count, lba >> 24, lba, lba >> 32, lba >> 8,
                lba >> 40, lba >> 16, device, command, 0)


def ata32(proto, command, feature=0, count=0, lba=0, aux=0, device=0x40,
          t_dir=0, t_length=0):
    """An ATA PASS-THROUGH(32) CDB (SAT-5): the queued ZAC forms need its
    AUXILIARY field."""
    flags = t_dir << 3 | (1 << 2 if t_length else 0) | t_length
    return _hex(0x7F, 0, 0, 0, 0, 0, 0, 0x18, 0x1F, 0xF0, proto << 1 | 1,
                flags, 0, 0, lba >> 40, lba >> 32, lba >> 24, lba >> 16,
                lba >> 8, lba, feature >> 8, feature, count >> 8, count,
                device, command, 0, 0, aux >> 24, aux >> 16, aux >> 8, aux)


def scsi16(op, sa, lba, length, byte14=0):
    return _hex(op, sa, *(lba >> s for s in range(56, -1, -8)),
                *(length >> s for s in (24, 16, 8, 0)), byte14, 0)


def ata_step(step):
    """sg_raw arguments of a step sent as ATA commands."""
    kind, *a = step
    q = a[-1]
    if kind == "report":
        lba, opt, partial, pages, _ = a
        if q:
            return (f"-r {512 * pages}",
                    ata32(FPDMA, ATA_RECV_FPDMA, feature=pages,
                          count=0x02 << 8, lba=lba,
                          aux=(opt | partial << 7) << 8, t_dir=1,
                          t_length=1))
        return (f"-r {512 * pages}",
                ata16(DMA, ATA_ZAC_IN, feature=(opt | partial << 7) << 8,
                      count=pages, lba=lba, t_dir=1, t_length=2))
    if kind == "out":
        action, lba, all_, count, _ = a
        if q:
            return ("", ata32(FPDMA, ATA_NCQ_NON_DATA, feature=0x07,
                              lba=lba, aux=action | all_ << 8))
        return ("", ata16(NON_DATA, ATA_ZAC_OUT, feature=action | all_ << 8,
                          count=count, lba=lba))
    lba, sectors, _ = a
    write = kind == "write"
    io = f"-s {512 * sectors} -i /tmp/w" if write else f"-r {512 * sectors}"
    if q:
        return (io, ata16(FPDMA, ATA_WRITE_FPDMA if write else ATA_READ_FPDMA,
                          feature=sectors, lba=lba, t_dir=0 if write else 1,
                          t_length=1))
    return (io, ata16(DMA, ATA_WRITE_DMA if write else ATA_READ_DMA,
                      count=sectors, lba=lba, t_dir=0 if write else 1,
                      t_length=2))


def scsi_step(step):
    """sg_raw arguments of the same step as SCSI ZBC/SBC commands."""
    kind, *a = step
    if kind == "report":
        lba, opt, partial, pages, _ = a
        return (f"-r {512 * pages}",
                scsi16(0x95, 0x00, lba, 512 * pages, opt | partial << 7))
    if kind == "out":
        action, lba, all_, count, _ = a
        return ("", _hex(0x94, action, *(lba >> s for s in range(56, -1, -8)),
                         0, 0, count >> 8, count, all_, 0))
    lba, sectors, _ = a
    if kind == "write":
        return (f"-s {512 * sectors} -i /tmp/w",
                scsi16(0x8A, 0, lba, sectors))
    return (f"-r {512 * sectors}", scsi16(0x88, 0, lba, sectors))


def _run_step(io, cdb):
    return (f"sg_raw {io} -o /tmp/d $SG {cdb} >/tmp/o 2>&1; echo \"rc=$?\"\n"
            "cat /tmp/o; if [ -s /tmp/d ]; then "
            "echo \"data=$(od -An -v -tx1 /tmp/d | tr -d ' \\n' | head -c 8192)\"; "
            "echo \"sum=$(cksum < /tmp/d)\"; fi; rm -f /tmp/d\n"
            if "-r" in io else
            f"sg_raw {io} $SG {cdb} >/tmp/o 2>&1; echo \"rc=$?\"\n"
            "cat /tmp/o\n")


def _observe():
    """The watched zones after a case, by one SCSI REPORT ZONES."""
    return ("echo '@state'\n" +
            _run_step("-r 512", scsi16(0x95, 0x00, WATCHED[0], 512, 0x80)))


RESET_ALL = _hex(0x94, RESET, *([0] * 12), 1, 0)


def guest_script():
    lines = [
        # SG_IO on the disk's block device, as hdparm and libzbc use it
        "SG=/dev/sda",
        "echo \"kernel=$(uname -r)\"",
        "head -c 65536 /dev/urandom > /tmp/w",
        # EXECUTE DEVICE DIAGNOSTIC, non-data, CK_COND: the signature
        "t0=$(date +%s.%N)",
        f"sg_raw -R $SG {ata16(NON_DATA, 0x90, device=0, ck_cond=1)}"
        " > /tmp/diag 2>&1; echo \"diag_rc=$?\"",
        "t1=$(date +%s.%N)",
        "echo \"diag_s=$(echo \"$t1 - $t0\" | bc)\"",
        "sed 's/^/diag: /' /tmp/diag",
        "sg_sat_read_gplog --log=0x30 --page=9 $SG 2>&1 | sed 's/^/gplog: /'",
    ]
    for i, (name, steps) in enumerate(CASES):
        for path, render in (("ata", ata_step), ("scsi", scsi_step)):
            lines.append(f"sg_raw $SG {RESET_ALL} >/dev/null 2>&1")
            lines.append(f"echo '@case {i} {path}'")
            for j, step in enumerate(steps):
                lines.append(f"echo '@step {j}'")
                lines.append(_run_step(*render(step)))
            lines.append(_observe())
    lines.append("echo '@end'")
    return "\n".join(lines) + "\n"


def _le(b, off, n):
    return int.from_bytes(b[off:off + n], "little")


def _be(b, off, n):
    return int.from_bytes(b[off:off + n], "big")


def zones_of(data, path):
    """A zone report as (list length, SAME, max LBA, zones), each zone
    (type, condition, non_seq/reset bits, length, start, write pointer),
    from ZAC's little-endian or ZBC's big-endian form."""
    get = _le if path == "ata" else _be
    zones = []
    length = get(data, 0, 4)
    for off in range(64, min(len(data), 64 + length), 64):
        d = data[off:off + 64]
        zones.append((d[0] & 0xf, d[1] >> 4, d[1] & 3, get(d, 8, 8),
                      get(d, 16, 8), get(d, 24, 8)))
    return length, data[4] & 0xf, get(data, 8, 8), zones


def parse_step(text, path, kind):
    """What a client learns from one step: success, or the sense key and
    additional sense libata returned; a report's zones; the data's sum."""
    sense = re.search(r"Sense key: ([A-Za-z ]+)", text)
    asc = re.search(r"Additional sense: (.+)", text)
    key = sense.group(1).strip() if sense else None
    ok = key in (None, "No Sense", "Recovered Error")
    out = {"ok": ok}
    if not ok:
        out["sense"] = (key, asc.group(1).strip() if asc else None)
    data = re.search(r"^data=([0-9a-f]*)$", text, re.M)
    if ok and data and kind == "report":
        out["zones"] = zones_of(bytes.fromhex(data.group(1)), path)
    elif ok and data:
        out["sum"] = re.search(r"^sum=(.*)$", text, re.M).group(1)
    return out


def parse(output):
    """{(case, path): [step results..., state]} from the guest's output."""
    runs = {}
    blocks = re.split(r"^@case (\d+) (\w+)\n", output, flags=re.M)
    for i in range(1, len(blocks), 3):
        case, path, body = int(blocks[i]), blocks[i + 1], blocks[i + 2]
        body = body.split("@end")[0]
        steps_text, _, state = body.partition("@state\n")
        results = []
        for j, text in enumerate(re.split(r"^@step \d+\n", steps_text,
                                          flags=re.M)[1:]):
            results.append(parse_step(text, path, CASES[case][1][j][0]))
        st = parse_step(state, "scsi", "report")
        results.append(("state", [(z[1], z[5]) for z in
                                  st.get("zones", (0, 0, 0, []))[3][:4]]))
        runs[(case, path)] = results
    return runs


@pytest.fixture(scope="module")
def run(tmp_path_factory, qemu_build, guest_image):
    guest = ncqguest.Guest(tmp_path_factory.mktemp("zac_ata"),
                           device="ncq-disk,model=wd-hc620",
                           disk_size=str(CAPACITY * 512), timeout_s=600)
    res = guest.run(Workload(script=guest_script(), timeout_s=540))
    print("\n".join(line for line in res.output.splitlines()
                    if line.startswith(("diag", "gplog"))))
    assert res.status == 0, f"workload failed:\n{res.output[-4000:]}"
    return res


def test_execute_device_diagnostic_gives_the_zac_signature(run):
    """libzbc's classification: EXECUTE DEVICE DIAGNOSTIC, non-data, with
    CK_COND completes at once and its ATA Status Return descriptor holds
    the host-managed signature, LBA mid CDh and LBA high ABh."""
    out = run.output
    secs = float(re.search(r"^diag_s=([0-9.]+)$", out, re.M).group(1))
    assert secs < 1.0, out
    ret = re.search(r"lba=0x([0-9a-f]+)", out)
    assert ret, out
    lba = int(ret.group(1), 16)
    assert (lba >> 8) & 0xffff == 0xabcd, hex(lba)
    assert re.search(r"status=0x50\b", out), out
    assert re.search(r"error=0x1\b|error=0x01\b", out), out


def test_zoned_device_information_has_a_zac_minor_version(run):
    """sg_sat_read_gplog's page 09h: qword 6 (bytes 48-55) holds the ZAC
    minor version 05CFh with its valid bit."""
    rows = dict(re.findall(r"^gplog: +([0-9a-f]+) +((?:[0-9a-f]{4} ){8})",
                           run.output, re.M))
    assert "18" in rows, run.output          # words 24-31: bytes 48-63
    words = [int(w, 16) for w in rows["18"].split()]
    assert words[:4] == [0x05cf, 0, 0, 0x8000], rows["18"]
    # the page it is in: header 09h, and 128 open zones at most (qword 5)
    assert rows["00"].split()[:2] == ["0001", "0009"], rows["00"]
    assert rows["10"].split()[4] == "0080", rows["10"]


# libata before 6.12 (seen on 6.1) returns a queued pass-through command
# the drive refused as ABORTED COMMAND without the sense the drive gave in
# log 10h; the translated command keeps it.  6.12 returns it both ways.
DROPPED = {"ok": False, "sense": ("Aborted Command",
                                  "No additional sense information")}


def _old_libata(ata, scsi, step):
    """The translated path's answer where an older libata drops the
    drive's sense of a queued pass-through command, else @ata itself."""
    if step and step[-1] == "q" and step[0] in ("read", "write") and \
            ata == DROPPED and isinstance(scsi, dict) and not scsi["ok"]:
        return scsi
    return ata


def test_both_paths_answer_alike(run):
    runs = parse(run.output)
    assert len(runs) == 2 * len(CASES), sorted(runs)
    kernel = tuple(int(x) for x in re.search(
        r"^kernel=(\d+)\.(\d+)", run.output, re.M).groups())
    differ = []
    for i, (name, steps) in enumerate(CASES):
        a, s = runs[(i, "ata")], runs[(i, "scsi")]
        if kernel < (6, 12):
            a = [_old_libata(x, s[j], steps[j] if j < len(steps) else None)
                 for j, x in enumerate(a)]
        if name in LIBATA_ANSWERS:
            drive, asc = LIBATA_ANSWERS[name]
            a, s = a[-2], s[-2]
            ours = {"ok": False, "sense": ("Illegal Request", asc)}
            if a != drive or s != ours:
                differ.append(f"{name}:\n  ata:  {a} (want {drive})\n"
                              f"  scsi: {s} (want {ours})")
        elif a != s:
            differ.append(f"{name}:\n  ata:  {a}\n  scsi: {s}")
    assert not differ, "\n".join(differ)
    assert set(LIBATA_ANSWERS) <= {name for name, _ in CASES}
    # the table is not vacuous: errors and data both ways
    errors = sum(1 for r in runs.values() for x in r
                 if isinstance(x, dict) and not x["ok"])
    reports = sum(1 for r in runs.values() for x in r
                  if isinstance(x, dict) and "zones" in x)
    assert errors >= 20 and reports >= 20, (errors, reports)
    print(f"both paths agree: {len(CASES)} cases, "
          f"{sum(len(s) for _, s in CASES)} steps each way")
