"""SCT Command Transport seen from smartctl in the guest (docs/smart.md,
"SCT"): the SCT status with its temperatures (`smartctl -l scttempsts`),
Error Recovery Control read and set (`smartctl -l scterc`,
`-l scterc,70,70`), and the firmware honouring it: a read of an
unrecoverable sector fails with UNC after the 7 s limit instead of the
drive's own recovery time (`recovery=`, docs/faults.md).

One boot; everything runs in virtual time (-icount, sleep=off).
"""
import json
import re

import pytest

from ncqguest import Guest, Workload

BAD = 1500000           # an unrecoverable sector
RECOVERY_S = 150        # the drive's own recovery (property recovery=)

SCRIPT = rf"""
smartctl -l scterc /dev/sda >/results/erc0.txt
smartctl -l scttempsts --json /dev/sda >/results/temp.json
sleep 300
smartctl -l scttemp /dev/sda >/results/temp.txt
smartctl -l scttemp --json /dev/sda >/results/hist.json
smartctl -l scterc,70,70 /dev/sda >/results/erc-set.txt
echo "set status $?"
smartctl -l scterc /dev/sda >/results/erc1.txt
smartctl -l scterc --json /dev/sda >/results/erc1.json
t0=$(cut -d' ' -f1 /proc/uptime)
dd if=/dev/sda of=/dev/null bs=4096 skip={BAD // 8} count=1 2>/dev/null
echo "read status $?"
t1=$(cut -d' ' -f1 /proc/uptime)
echo "read ms $(echo "$t0 $t1" | awk '{{printf "%d", ($2 - $1) * 1000}}')"
smartctl -x /dev/sda >/results/x.txt
echo "x status $?"
smartctl -l scterc,5,5 /dev/sda >/results/erc-low.txt
echo "low status $?"
smartctl -l scterc /dev/sda >/results/erc2.txt
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory, qemu_build, guest_image):
    guest = Guest(tmp_path_factory.mktemp("sct"),
                  device=f"ncq-disk,model=st3400620as,recovery={RECOVERY_S}s,"
                         f"faults=unc@{BAD}+1",
                  timeout_s=600)
    res = guest.run(Workload(script=SCRIPT))
    steps = dict(re.findall(r"^(\S+ \S+) (\d+)$", res.output, re.M))
    return res, steps


def _text(res, name):
    return res.files[name].decode()


def test_erc_disabled_at_power_on(run):
    res, _ = run
    txt = _text(res, "erc0.txt")
    assert "SCT Error Recovery Control:" in txt, txt
    assert re.search(r"Read: Disabled", txt) and \
        re.search(r"Write: Disabled", txt), txt


def test_sct_status_temperatures(run):
    res, _ = run
    doc = json.loads(res.files["temp.json"])
    sts = doc["ata_sct_status"]
    assert sts["format_version"] == 3
    t = sts["temperature"]
    assert 20 <= t["current"] <= 45
    assert t["power_cycle_min"] <= t["current"] <= t["power_cycle_max"]
    assert t["lifetime_min"] <= t["power_cycle_min"]
    assert t["lifetime_max"] >= t["power_cycle_max"]
    assert t["op_limit_max"] == 60
    assert sts["smart_status"]["passed"]
    assert "not supported" not in _text(res, "temp.txt")


def test_sct_temperature_history(run):
    """smartctl -l scttemp: an entry a minute since power-on, 5 minutes
    after the status above."""
    res, _ = run
    doc = json.loads(res.files["hist.json"])
    hist = doc["ata_sct_temperature_history"]
    assert hist["version"] == 2
    assert hist["sampling_period_minutes"] == 1
    assert hist["logging_interval_minutes"] == 1
    assert hist["size"] == 128
    table = [t for t in hist["table"] if t is not None]
    assert len(table) >= 5, hist
    assert all(20 <= t <= 45 for t in table), table
    assert "SCT Temperature History Version:     2" in \
        _text(res, "temp.txt")


def test_erc_set_and_read_back(run):
    res, steps = run
    assert steps["set status"] == "0", _text(res, "erc-set.txt")
    txt = _text(res, "erc1.txt")
    assert re.search(r"Read:\s+70 \(7\.0 seconds\)", txt), txt
    assert re.search(r"Write:\s+70 \(7\.0 seconds\)", txt), txt


def test_unc_after_the_erc_limit(run):
    """7 s of retries, then UNC: not the drive's 150 s, not Linux's 30 s."""
    res, steps = run
    assert steps["read status"] != "0"
    # the page cache reads the 4 KiB block twice (read-ahead, then the
    # page itself): two commands, each failing 7 s after it reached the
    # drive (sd's cmd_age)
    ages = re.findall(r"cmd_age=(\d+)s", res.dmesg)
    assert ages and set(ages) == {"7"}, ages
    ms = int(steps["read ms"])
    assert 2 * 7000 <= ms < 2 * 7000 + 1000, ms
    assert "error: { UNC }" in res.dmesg
    assert "timeout" not in res.dmesg_since_attach and \
        "resetting link" not in res.dmesg_since_attach


def test_timer_below_minimum_refused(run):
    """0.5 s is below the drive's 1.0 s minimum: SCT status 0006h, ABRT."""
    res, steps = run
    assert steps["low status"] != "0"
    assert "SCT (Set) Error Recovery Control command failed" in \
        _text(res, "erc-low.txt")
    txt = _text(res, "erc2.txt")
    assert re.search(r"Read:\s+70 \(7\.0 seconds\)", txt), txt


def test_x_claims_only_what_it_serves(run):
    res, steps = run
    txt = _text(res, "x.txt")
    assert "SCT Status Version:" in txt and "SCT Error Recovery Control:" \
        in txt, txt
    assert "SCT Temperature History Version:" in txt
    # word 206 claims SCT, ERC and data tables: nothing of them missing,
    # no command failed (exit status bit 2)
    bad = [ln for ln in txt.splitlines() if "not supported" in ln and
           ln.startswith("SCT")]
    assert not bad, bad
    assert not int(steps["x status"]) & 0x04, steps
