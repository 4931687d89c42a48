"""Host-managed SMR over ATA (ZAC) as Linux meets it (docs/smr.md).

One boot of the built-in host-managed model wd-hc620 (52,156 zones of
256 MiB, the first 524 conventional) on an image of its capacity: libata
classifies the drive by its signature (ATA_DEV_ZAC), reads IDENTIFY DEVICE
data log page 09h and translates the SCSI ZBC commands sd_zbc sends into
ZAC MANAGEMENT IN/OUT.  In the guest: the block layer's zoned attributes,
`blkzone report` and `blkzone reset` (util-linux), a direct write at the
first sequential zone's write pointer, and a write past it, which reaches
the application as EIO.
"""

import re

import pytest

import ncqguest
from ncqguest import Workload

ZONE = 524288                   # sectors: 256 MiB
CONV = 524                      # conventional zones at LBA 0
ZONES = 52156
CAPACITY = ZONES * ZONE         # 27,344,764,928 sectors
SWR0 = CONV * ZONE              # the first sequential-write-required zone
SWR0_MIB = SWR0 * 512 // (1 << 20)

Q = "/sys/block/sda/queue/"
ATTRS = ("zoned", "nr_zones", "chunk_sectors", "max_open_zones",
         "max_active_zones")

# libata's ata_qc_issue tracepoint names each command it issues: blkzone's
# REPORT ZONES and RESET go queued (RECEIVE FPDMA QUEUED 65h, NCQ NON-DATA
# 63h) when logs 13h and 12h list the ZAC subcommands (docs/smr.md, "The
# queued forms").
T = "/sys/kernel/tracing"

SCRIPT = rf"""
mountpoint -q {T} || mount -t tracefs nodev {T}
echo 1 > {T}/events/libata/ata_qc_issue/enable
for a in {' '.join(ATTRS)}; do echo "$a=$(cat {Q}$a)"; done
echo "reported=$(blkzone report /dev/sda | wc -l)"
blkzone report -o {SWR0 - ZONE} -c 2 /dev/sda
dd if=/dev/urandom of=/dev/sda bs=1M count=1 seek={SWR0_MIB} \
    oflag=direct 2>&1 | grep -v records
echo "write=$?"
blkzone report -o {SWR0} -c 1 /dev/sda
if dd if=/dev/zero of=/dev/sda bs=1M count=1 seek={SWR0_MIB + 8} \
        oflag=direct 2>/tmp/dd.err; then
    echo "unaligned=accepted"
else
    echo "unaligned=failed: $(grep -o 'Input/output error' /tmp/dd.err)"
fi
blkzone reset -o {SWR0} -c 1 /dev/sda
echo "reset=$?"
blkzone report -o {SWR0} -c 1 /dev/sda
echo 0 > {T}/events/libata/ata_qc_issue/enable
grep -o 'cmd=[A-Z_ ]*[A-Z]' {T}/trace | sort | uniq -c | sed 's/^ */issued /'
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory, qemu_build, guest_image):
    guest = ncqguest.Guest(tmp_path_factory.mktemp("zac"),
                           device="ncq-disk,model=wd-hc620",
                           disk_size=str(CAPACITY * 512), timeout_s=400)
    res = guest.run(Workload(script=SCRIPT))
    print(res.output)
    print("\n".join(line for line in res.dmesg.splitlines()
                    if re.search(r"ata\d|sd \d|sda", line)))
    assert res.status == 0, f"workload failed:\n{res.output}"
    return res


def _values(output):
    return dict(line.split("=", 1) for line in output.splitlines()
                if re.match(r"^[a-z_]+=", line))


def test_linux_sees_a_host_managed_disk(run):
    v = _values(run.output)
    assert v["zoned"] == "host-managed"
    assert int(v["nr_zones"]) == ZONES
    assert int(v["chunk_sectors"]) == ZONE
    # IDENTIFY DEVICE data log page 09h: 128 open zones at most
    assert int(v["max_open_zones"]) == 128
    assert int(v["reported"]) == ZONES
    assert "ATA-" in run.dmesg and "Host-managed zoned block device" in \
        run.dmesg


def test_blkzone_report_and_reset(run):
    out = run.output
    conv = re.search(rf"start: 0x0*{SWR0 - ZONE:x}, len 0x0*{ZONE:x}, "
                     r"(cap 0x[0-9a-f]+, )?wptr 0x[0-9a-f]+ reset:0 "
                     r"non-seq:0, zcond: ?0\(nw\) \[type: 1\(CONVENTIONAL\)\]",
                     out)
    assert conv, out
    # after the 1 MiB write: implicitly open, pointer 2048 sectors in
    assert re.search(rf"start: 0x0*{SWR0:x}, len 0x0*{ZONE:x}, "
                     r"(cap 0x[0-9a-f]+, )?wptr 0x0*800 reset:0 non-seq:0, "
                     r"zcond: ?2\(oi\) \[type: 2\(SEQ_WRITE_REQUIRED\)\]",
                     out), out
    assert "reset=0" in out
    # after the reset: empty
    assert re.search(rf"start: 0x0*{SWR0:x}, len 0x0*{ZONE:x}, "
                     r"(cap 0x[0-9a-f]+, )?wptr 0x0* reset:0 non-seq:0, "
                     r"zcond: ?1\(em\) \[type: 2\(SEQ_WRITE_REQUIRED\)\]",
                     out), out


def test_unaligned_write_is_eio(run):
    assert "unaligned=failed: Input/output error" in run.output


def test_zone_commands_go_queued(run):
    """libata issued REPORT ZONES as RECEIVE FPDMA QUEUED and the zone
    reset as NCQ NON-DATA, never the non-queued ZAC MANAGEMENT IN/OUT."""
    issued = dict((m.group(2), int(m.group(1))) for m in re.finditer(
        r"^issued (\d+) cmd=(.+)$", run.output, re.M))
    assert issued, run.output
    recv = [c for c in issued if "RECV" in c or "RECEIVE" in c]
    nodata = [c for c in issued if "NON_DATA" in c or "NON-DATA" in c or
              "NCQ_NON" in c]
    assert recv and nodata, issued
    assert not [c for c in issued if c.startswith("ATA_CMD_ZAC_MGMT")], \
        issued
