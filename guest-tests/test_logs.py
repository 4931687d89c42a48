"""The drive's logs seen from real clients (docs/device.md "Logs"):
sg_sat_read_gplog reads every log the GP directory lists, every page, with
READ LOG EXT and with READ LOG DMA EXT (--dma), the two giving the same
bytes, and the page after the last is refused; smartctl -x, -a, -l sataphy,
-l devstat and -l scterc say "not supported" of nothing the drive claims,
and smartctl reads every log the SMART directory lists.  One boot of a guest on
the model with CDL (seagate-exos-x18: ACS-4, so READ/WRITE LOG DMA EXT
are in IDENTIFY and Linux itself reads its logs with them)."""
import re

import pytest

from ncqguest import Guest, Workload

SCRIPT = r"""
D=/dev/sda
hexbytes() { awk '{for (i = 2; i <= NF; i++) if ($i ~ /^[0-9a-f][0-9a-f]$/) print $i}'; }
sg_sat_read_gplog -H --log=0 $D > /results/gpdir.txt; echo "gpdir $?"
i=0
for b in $(hexbytes < /results/gpdir.txt); do eval "B$i=$b"; i=$((i + 1)); done
echo "gpdir_bytes $i"
a=1
while [ $a -lt 256 ]; do
    eval "lo=\$B$((2 * a)) hi=\$B$((2 * a + 1))"
    n=$((0x$lo + 256 * 0x$hi))
    p=0
    while [ $p -lt $n ]; do
        sg_sat_read_gplog -H --log=$a --page=$p $D > /tmp/pio 2>&1; r1=$?
        sg_sat_read_gplog -H --dma --log=$a --page=$p $D > /tmp/dma 2>&1
        r2=$?
        cmp -s /tmp/pio /tmp/dma && same=same || same=differ
        echo "gplog $a $p $r1 $r2 $same"
        p=$((p + 1))
    done
    if [ $n -gt 0 ]; then
        sg_sat_read_gplog -H --log=$a --page=$n $D >/dev/null 2>&1
        echo "beyond $a $n $?"
    fi
    a=$((a + 1))
done
sg_sat_read_gplog -H --log=0x30 --page=1 $D > /results/id-page1.txt
sg_sat_read_gplog -H --dma --log=0x30 --page=0 $D > /results/id-page0.txt
smartctl -x $D > /results/x.txt; echo "smartctl_x $?"
smartctl -a $D > /results/a.txt; echo "smartctl_a $?"
smartctl -l sataphy $D > /results/sataphy.txt; echo "sataphy $?"
smartctl -l devstat $D > /results/devstat.txt; echo "devstat $?"
smartctl -l scterc $D > /results/scterc.txt; echo "scterc $?"
smartctl -l directory $D > /results/directory.txt; echo "directory $?"
# every log of the SMART directory (access SL), read by SMART READ LOG;
# E1h (SCT data transfer) holds data only after an SCT command that has
# some: the temperature history's (-l scttemphist) is the last one here
smartctl -l scttemphist $D > /results/scttemphist.txt; echo "scttemphist $?"
for a in $(awk '/^0x[0-9a-f][0-9a-f] +[^ ]*SL/ {print $1}' /results/directory.txt); do
    smartctl -l smartlog,$a $D > /results/smartlog-$a.txt 2>&1
    echo "smartlog $a $?"
done
echo done
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory, qemu_build, guest_image):
    work = tmp_path_factory.mktemp("logs")
    guest = Guest(work, disk_size="64G",
                  device="ncq-disk,model=seagate-exos-x18")
    res = guest.run(Workload(script=SCRIPT))
    assert "done" in res.output, res.output[-2000:]
    return res


def _text(res, name):
    return res.files[name].decode(errors="replace")


def _hexbytes(text):
    """The bytes of sg_sat_read_gplog -H: offset, 16 bytes, ASCII."""
    out = []
    for line in text.splitlines():
        out += [int(f, 16) for f in line.split()[1:17]
                if re.fullmatch(r"[0-9a-f]{2}", f)]
    return out


def test_every_listed_log_reads_pio_and_dma(run):
    out = run.output
    assert "gpdir 0" in out and "gpdir_bytes 512" in out, out[-2000:]
    reads = re.findall(r"^gplog (\d+) (\d+) (\d+) (\d+) (\w+)$", out, re.M)
    logs = {int(a) for a, *_ in reads}
    # the directory's logs: 03h 04h 07h 0Fh 10h 11h 18h 30h, SCT's E0h E1h
    assert logs == {0x03, 0x04, 0x07, 0x0F, 0x10, 0x11, 0x18, 0x30,
                    0xE0, 0xE1}, reads
    bad = [r for r in reads
           if int(r[0]) != 0xE1 and r[2:] != ("0", "0", "same")]
    assert not bad, bad
    # E1h, SCT data transfer, has data only after an SCT command (smartctl
    # -x's below): before one both forms are refused (status 000Bh)
    sct_data = [r for r in reads if int(r[0]) == 0xE1]
    assert sct_data and all(r[2] != "0" and r[3] != "0"
                            for r in sct_data), sct_data
    beyond = re.findall(r"^beyond (\d+) (\d+) (\d+)$", out, re.M)
    assert len(beyond) == len(logs) and all(r != "0" for *_, r in beyond)


def test_identify_data_log(run):
    """Page 00h lists 00h-06h and 08h; cdladm reads word 80 of page 01h."""
    page0 = _hexbytes(_text(run, "id-page0.txt"))
    assert len(page0) == 512
    assert page0[8:8 + 9] == [8, 0, 1, 2, 3, 4, 5, 6, 8], page0[:24]
    page1 = _hexbytes(_text(run, "id-page1.txt"))
    # word 80: ATA8-ACS to ACS-5 (bits 8-12), what cdladm reads
    assert len(page1) == 512 and page1[161] & 0x1f == 0x1f, page1[160:162]


def test_smartctl_finds_the_logs(run):
    steps = dict(re.findall(r"^(smartctl_x|sataphy|devstat) (\d+)$",
                            run.output, re.M))
    sataphy = _text(run, "sataphy.txt")
    assert "not supported" not in sataphy, sataphy
    assert re.search(r"SATA Phy Event Counters \(GP Log 0x11\)", sataphy)
    devstat = _text(run, "devstat.txt")
    assert "Device Statistics (GP Log 0x04)" in devstat, devstat
    x = _text(run, "x.txt")
    # what -x calls unsupported is a log the drive does not claim (0Ch,
    # Pending Defects; SCT, another feature), and no read of one failed
    listed = {int(a) for a in re.findall(r"^gplog (\d+) 0 ", run.output,
                                        re.M)}
    unsupported = {int(a, 16) for a in
                   re.findall(r"Log 0x([0-9a-f]{2})\) not supported", x)}
    assert not unsupported & listed, unsupported
    failed = [line for line in x.splitlines()
              if re.match(r"Read .* failed", line)]
    assert not failed and steps["smartctl_x"] == "0", (failed, steps)


def _not_supported(text):
    return [line.strip() for line in text.splitlines()
            if "not supported" in line]


def test_smartctl_says_not_supported_of_nothing_claimed(run):
    """Issue 26 item 4: the only "not supported" smartctl may print is of a
    log the drive does not list (-x asks for 0Ch, Pending Defects); SCT,
    Error Recovery Control, the Phy event counters, the statistics, the
    error and self-test logs are all claimed, so any other such line is a
    claim the drive does not keep."""
    listed = {int(a, 16) for a in
              re.findall(r"^0x([0-9a-f]{2}) ", _text(run, "directory.txt"),
                         re.M)}
    assert {0x00, 0x04, 0x11, 0x30, 0xE0, 0xE1} <= listed, listed
    for name in ("x.txt", "a.txt", "sataphy.txt", "devstat.txt",
                 "scterc.txt"):
        for line in _not_supported(_text(run, name)):
            m = re.search(r"\(GP Log 0x([0-9a-f]{2})\) not supported", line)
            assert m and int(m[1], 16) not in listed, (name, line)
    scterc = _text(run, "scterc.txt")
    assert re.search(r"SCT Error Recovery Control:\s+Read:", scterc), scterc


def test_smartctl_reads_every_smart_log(run):
    """Every log the SMART directory lists reads through SMART READ LOG
    (smartctl -l smartlog,ADDR exits 0 and prints its bytes); E1h after
    an SCT command that left data in it (-l scttemphist)."""
    reads = dict(re.findall(r"^smartlog (0x[0-9a-f]{2}) (\d+)$", run.output,
                            re.M))
    # 00h 01h 02h 04h 06h 09h 30h E0h E1h
    assert set(reads) == {"0x00", "0x01", "0x02", "0x04", "0x06", "0x09",
                          "0x30", "0xe0", "0xe1"}, reads
    bad = {a: rc for a, rc in reads.items() if rc != "0"}
    assert not bad, {a: _text(run, f"smartlog-{a}.txt")[-400:] for a in bad}
    for a in reads:
        assert re.search(r"^0000000: ", _text(run, f"smartlog-{a}.txt"),
                         re.M), a
