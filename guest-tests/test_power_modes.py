"""Power modes seen from hdparm in the guest (docs/power-modes.md): `hdparm -y`
(STANDBY IMMEDIATE) puts the drive in standby, `hdparm -C` (CHECK POWER
MODE) says so, the next read waits the model's spin-up (st3400620as: 10 s,
the Barracuda 7200.8 manual's "standby to ready"), and `hdparm -C` then
says active/idle; `hdparm -S 1` (IDLE with a standby timer of 5 s) spins
the idle drive down 5 s after its last command; after `hdparm -Y` (SLEEP)
Linux resets the link before the next read, which wakes the drive into
standby, and the read spins it up.  The device's trace records each
spin-down and spin-up as a comment line.

One boot; under -icount the guest's sleeps and the spin-up wait cost no
wall time, and the figures are the same on every run.
"""
import json
import re

import pytest

from ncqguest import Guest, Workload

SPINUP_S = 10.0         # st3400620as.ncqm [power] spinup_ms

SCRIPT = r"""
io() {  # name sector: one 4 KiB O_DIRECT read, its latency in fio's JSON
    fio --name=$1 --filename=/dev/sda --rw=read --bs=4k --size=4k \
        --offset=$(($2 * 512)) --direct=1 --ioengine=psync \
        --output-format=json --output=/results/$1.json >/dev/null 2>&1
    echo "$1 status $?"
}
hd() {  # name args...: hdparm's output
    n=$1; shift
    hdparm "$@" /dev/sda >/results/$n.txt 2>&1
    echo "$n status $?"
}
hd c-boot -C
io read-spinning 1000000
hd y -y
hd c-after-y -C
io read-standby 2000000
hd c-after-read -C
hd S -S 1
sleep 4
hd c-4s -C
sleep 2
hd c-6s -C
io read-after-timer 1500000
hd c-end -C
hd Y -Y
io read-after-sleep 1700000
hd c-after-sleep -C
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory, qemu_build, guest_image):
    work = tmp_path_factory.mktemp("pm")
    guest = Guest(work, device="ncq-disk,model=st3400620as,"
                  f"trace={work}/device.trace", timeout_s=300)
    res = guest.run(Workload(script=SCRIPT))
    steps = dict(re.findall(r"^(\S+) status (\d+)$", res.output, re.M))
    assert all(v == "0" for v in steps.values()), (steps, res.output)
    res.spin = re.findall(r"^# spin-(up|down) t_ns=(\d+) (\S+)$",
                          (work / "device.trace").read_text(), re.M)
    return res


def _text(res, name):
    return res.files[f"{name}.txt"].decode()


def _state(res, name):
    m = re.search(r"drive state is:\s+(\S+)", _text(res, name))
    assert m, _text(res, name)
    return m.group(1)


def _latency_s(res, name):
    job = json.loads(res.files[f"{name}.json"])["jobs"][0]
    return job["read"]["lat_ns"]["max"] / 1e9


def test_standby_then_read_spins_up(run):
    assert _state(run, "c-boot") == "active/idle"
    assert "issuing standby command" in _text(run, "y")
    assert _state(run, "c-after-y") == "standby"
    assert _latency_s(run, "read-spinning") < 0.05
    lat = _latency_s(run, "read-standby")
    assert SPINUP_S <= lat < SPINUP_S + 0.1, lat
    assert _state(run, "c-after-read") == "active/idle"
    # the trace: STANDBY's spin-down, then the read's spin-up 10 s long
    (down, t0, why), (up, t1, ready) = run.spin[:2]
    assert (down, why, up) == ("down", "why=STANDBY", "up")
    assert int(ready.split("=")[1]) - int(t1) == SPINUP_S * 1e9


def test_standby_timer(run):
    assert "setting standby to 1 (5 seconds)" in _text(run, "S")
    # IDLE leaves the drive idle (80h) until the timer runs out
    assert _state(run, "c-4s") == "idle"
    assert _state(run, "c-6s") == "standby"
    assert _latency_s(run, "read-after-timer") >= SPINUP_S
    assert _state(run, "c-end") == "active/idle"
    # the timer's spin-down, then the last read's spin-up
    (down, _, why), (up, _, _) = run.spin[2:4]
    assert (down, why, up) == ("down", "why=standby-timer", "up")

def test_sleep_then_libata_reset(run):
    assert "issuing sleep command" in _text(run, "Y")
    assert _latency_s(run, "read-after-sleep") >= SPINUP_S
    assert _state(run, "c-after-sleep") == "active/idle"
    assert [(k, w) for k, _, w in run.spin[4:]][:1] == [("down", "why=SLEEP")]
    assert run.spin[5][0] == "up" and len(run.spin) == 6
