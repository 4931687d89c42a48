"""Foundation: the guest meets an ncq-disk that looks like an ST3400620AS,
its schedulers work, fio runs on it, and the harness bounds a hung guest."""

import pytest

from ncqguest import FIO_GLOBAL, GuestError, Workload

ATA_ID = "/sys/class/ata_device/dev1.0/id"


def identify_words(text):
    """libata's sysfs 'id' file: 256 IDENTIFY words as hex, 8 per line."""
    words = [int(w, 16) for w in text.split()]
    assert len(words) == 256, f"expected 256 IDENTIFY words, got {len(words)}"
    return words


def ata_string(words, first, count):
    raw = b"".join(w.to_bytes(2, "big") for w in words[first:first + count])
    return raw.decode("ascii").strip()


PROBE = r"""
set -e
for s in none mq-deadline bfq kyber; do
    echo $s > /sys/block/sda/queue/scheduler
    echo "sched $s -> $(cat /sys/block/sda/queue/scheduler)"
done
for f in /sys/class/ata_device/*/id; do echo "idfile $f"; done
"""


def test_guest_sees_st3400620as(make_guest):
    async def qmp_model(qmp):
        return await qmp.execute("qom-get", {
            "path": "/machine/peripheral/disk0", "property": "model"})

    guest = make_guest()
    res = guest.run(Workload(script=PROBE, collect=(
        "/sys/block/sda/device/model",
        "/sys/block/sda/device/queue_depth",
        "/sys/block/sda/queue/rotational",
        ATA_ID,
    )), qmp_actions=qmp_model)
    assert res.status == 0, res.output
    assert res.qmp == "st3400620as"
    c = res.collected
    assert c["/sys/block/sda/device/model"] == "ST3400620AS"
    assert c["/sys/block/sda/device/queue_depth"] == "32"
    assert c["/sys/block/sda/queue/rotational"] == "1"

    words = identify_words(c[ATA_ID])
    assert ata_string(words, 27, 20) == "ST3400620AS"
    assert ata_string(words, 10, 10), "serial number is empty"
    assert words[75] & 0x1f == 31, "NCQ depth field must say 32"
    assert words[76] & (1 << 8), "NCQ supported bit (word 76 bit 8)"
    assert words[217] == 7200, "nominal media rotation rate"

    # Each scheduler became the active one (shown in brackets).
    for sched in ("none", "mq-deadline", "bfq", "kyber"):
        line = next(x for x in res.output.splitlines()
                    if x.startswith(f"sched {sched} ->"))
        assert f"[{sched}]" in line, line


FIO_JOB = FIO_GLOBAL + """
[randread]
rw=randread
number_ios=2000
size=512M
"""


def test_fio_completes_requested_ios(make_guest):
    res = make_guest().run(Workload(fio=FIO_JOB))
    assert res.status == 0, res.output
    job = res.fio["jobs"][0]
    assert job["error"] == 0
    assert job["read"]["total_ios"] == 2000
    assert job["read"]["io_bytes"] == 2000 * 4096


def test_unknown_model_stops_qemu_with_one_line(run_qemu):
    p = run_qemu("-device", "ncq-disk,drive=d0,bus=ide.0,model=nosuchdisk")
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "unknown model 'nosuchdisk'" in lines[0]
    assert "known models: " in lines[0] and "st3400620as" in lines[0]


def test_ncq_disk_on_ich9_ahci_controller(run_qemu):
    """An added ich9-ahci controller is a bus for ncq-disk too."""
    p = run_qemu("-device", "ich9-ahci,id=ahci1",
                 "-device", "ncq-disk,drive=d0,bus=ahci1.0,id=disk0",
                 qmp=[("qom-get", {"path": "/machine/peripheral/disk0",
                                   "property": "model"}),
                      ("qom-get", {"path": "/machine/peripheral/disk0",
                                   "property": "queue-depth"})])
    assert p.returncode == 0, p.stderr
    assert p.replies == [{"return": "st3400620as"}, {"return": 32}]


def test_hung_guest_is_killed_with_console_tail(make_guest):
    # 8 s of wall time from the restored boot (the harness's deadline
    # starts after the snapshot is made): the workload runs within a
    # second of it.  (It was 25 s, the suite's fourteenth-slowest test.)
    guest = make_guest(timeout_s=8)
    with pytest.raises(GuestError) as e:
        guest.run(Workload(script="echo spinning-forever\n"
                                  "while :; do :; done\n"))
    msg = str(e.value)
    assert "did not finish within 8 s" in msg
    assert "console tail" in msg
