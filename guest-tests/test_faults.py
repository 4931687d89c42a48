"""Fault injection seen from Linux (docs/faults.md): libata's handling of
an injected UNC (queued and non-queued), a write error, a command that
never completes, and a slow region, asserted on dmesg and fio results.

One boot runs every step in turn (the faults are in different LBA ranges);
each test checks its own step.  Under icount the run is deterministic.
The write error comes last but one: after repeated device errors libata
turns NCQ off ("NCQ disabled due to excessive errors"), so the last UNC is
met by a non-queued READ DMA.
"""
import json
import re

import pytest

from ncqguest import Workload

# sectors: 512 bytes; every read/write is 4 KiB (8 sectors), O_DIRECT
FAULTS = ("unc@2002+1;werr@4000+8;hang@6000:once;"
          "slow@8000+8:delay=200ms;unc@3003+1")

SCRIPT = r"""
io() {  # name rw sector
    fio --name=$1 --filename=/dev/sda --rw=$2 --bs=4k --size=4k \
        --offset=$(($3 * 512)) --direct=1 --ioengine=psync \
        --output-format=json --output=/results/$1.json >/dev/null 2>&1
    echo "$1 status $?"
}
io unc read 2000
io hang read 6000
io slow read 8000
io fast read 16000
# a write that always fails: libata retries, then turns NCQ off
io werr write 4000
# NCQ is off now: reads are READ DMA
io unc-nq read 3000
io after read 20000
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory, qemu_build, guest_image):
    from ncqguest import Guest
    guest = Guest(tmp_path_factory.mktemp("faults"),
                  device=f"ncq-disk,model=st3400620as,faults={FAULTS}",
                  extra_args=["-trace", "ncq_disk_fault"])
    res = guest.run(Workload(script=SCRIPT))
    steps = dict(re.findall(r"^(\S+) status (\d+)$", res.output, re.M))
    res.qemu_stderr = (guest.workdir / "qemu.stderr").read_text(
        errors="replace")
    return res, steps


def _block(dmesg, start, end):
    """dmesg from the first line matching @start to the one matching @end."""
    i = dmesg.index(start)
    return dmesg[i:dmesg.index(end, i)]


def _clat_ms(res, name):
    job = json.loads(res.files[f"{name}.json"])["jobs"][0]
    return job["read"]["clat_ns"]["mean"] / 1e6


def test_unc_ncq(run):
    res, steps = run
    assert steps["unc"] != "0", "the read of the UNC sector must fail"
    d = res.dmesg_since_attach
    assert "failed command: READ FPDMA QUEUED" in d
    assert re.search(r"status: \{ DRDY ERR \}", d)
    assert re.search(r"error: \{ UNC \}", d)
    # the kernel reports the injected sector, not the request's first
    assert re.search(r"I/O error, dev sda, sector 2002 op 0x0:\(READ\)", d)


def test_write_error(run):
    res, steps = run
    assert steps["werr"] != "0", "the write to the failing range must fail"
    d = res.dmesg_since_attach
    assert "failed command: WRITE FPDMA QUEUED" in d
    assert re.search(r"error: \{ ABRT \}", d)
    assert re.search(r"I/O error, dev sda, sector 4000 op 0x1:\(WRITE\)", d)
    # every retry failed too: libata gave up on NCQ
    assert "NCQ disabled due to excessive errors" in d


def test_hang_timeout_reset(run):
    res, steps = run
    # one-shot hang: libata times out (30 s), resets the link, retries
    assert steps["hang"] == "0"
    d = res.dmesg_since_attach
    assert re.search(r"action 0x6 frozen\n.*failed command: READ FPDMA "
                     r"QUEUED\n.*cmd 60/.* tag \d+ ncq dma 4096 in\n.*"
                     r"Emask 0x4 \(timeout\)", d)
    assert re.search(r"ata\d: hard resetting link", d)
    assert re.search(r"ata\d: EH complete", d)
    assert _clat_ms(res, "hang") >= 30000


def test_slow_region(run):
    res, steps = run
    assert steps["slow"] == "0" and steps["fast"] == "0"
    slow, fast = _clat_ms(res, "slow"), _clat_ms(res, "fast")
    assert slow >= 200, f"slow region read took {slow:.1f} ms"
    assert fast < 100, f"read elsewhere took {fast:.1f} ms"


def test_unc_non_queued_and_still_usable(run):
    res, steps = run
    assert steps["unc-nq"] != "0"
    d = res.dmesg_since_attach
    # the D2H FIS names the failing sector: res 41/40:..:bb:0b:00 = 3003
    assert re.search(r"failed command: READ DMA\n.*\n.*res 41/40:08:bb:0b:00/"
                     r".*Emask 0x9 \(media error\)\n.*\n.*error: \{ UNC \}",
                     d)
    assert re.search(r"I/O error, dev sda, sector 3003 op 0x0:\(READ\)", d)
    assert steps["after"] == "0", "the disk serves after all the faults"


def test_faults_show_as_qemu_trace_events(run):
    """-trace ncq_disk_fault names each command an injected fault failed,
    the fault's kind, the tag (32: non-queued) and the sector, for whoever
    debugs from the host side.  A slow rule fails nothing (it shows in the
    completion times) and a hang never completes (it shows as the reset),
    so neither appears."""
    res, _ = run
    hits = re.findall(r"ncq_disk_fault disk 0x[0-9a-f]+ tag (\d+): injected "
                      r"fault (\w+) at lba (\d+)", res.qemu_stderr)
    kinds = {(k, int(lba)) for _, k, lba in hits}
    assert ("unc", 2002) in kinds, res.qemu_stderr[-2000:]
    assert ("werr", 4000) in kinds
    assert ("unc", 3003) in kinds
    assert ("32", "unc", "3003") in hits, "the non-queued UNC has tag 32"
    assert not any(k in ("hang", "slow") for k, _ in kinds)
