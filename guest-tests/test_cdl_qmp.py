"""Command Duration Limits over QMP and HMP (docs/cdl.md), without a
guest: the descriptors shown and set, bad descriptors refused whole, and
a disk without CDL, and a migration."""
import json
import subprocess
import time

CDL_DISK = "ncq-disk,drive=d0,bus=ide.0,id=disk0,model=st3400620as,cdl=on"


def _desc(index, total_us=0, total_policy=0, active_us=0, active_policy=0,
          inactive_us=0, inactive_policy=0):
    return {"index": index, "total-us": total_us,
            "total-policy": total_policy, "active-us": active_us,
            "active-policy": active_policy, "inactive-us": inactive_us,
            "inactive-policy": inactive_policy}


def test_query_and_set(run_qemu):
    p = run_qemu("-device", CDL_DISK, qmp=[
        ("query-ncq-disk-cdl", {"id": "disk0"}),
        ("ncq-disk-set-cdl", {"id": "disk0", "enabled": True,
                              "read": [_desc(2, 20000, 0xF)],
                              "write": [_desc(7, active_us=5000,
                                              active_policy=0xD)]}),
        ("query-ncq-disk-cdl", {"id": "disk0"}),
    ])
    before, done, after = p.replies
    assert before["return"]["supported"] is True
    assert before["return"]["enabled"] is False
    assert [d["index"] for d in before["return"]["read"]] == list(range(1, 8))
    assert all(d == _desc(d["index"]) for d in
               before["return"]["read"] + before["return"]["write"])
    assert done == {"return": {}}
    assert after["return"]["enabled"] is True
    assert after["return"]["read"][1] == _desc(2, 20000, 0xF)
    assert after["return"]["write"][6] == _desc(7, active_us=5000,
                                                active_policy=0xD)
    assert after["return"]["read"][0] == _desc(1)


def test_bad_descriptors_refused_whole(run_qemu):
    good = _desc(1, 50000, 0xD)
    p = run_qemu("-device", CDL_DISK, qmp=[
        # policy 1 (next descriptor) is for the total time limit only
        ("ncq-disk-set-cdl", {"id": "disk0",
                              "read": [good, _desc(3, inactive_us=1000,
                                                   inactive_policy=1)]}),
        ("ncq-disk-set-cdl", {"id": "disk0",
                              "write": [_desc(2, total_us=700000000)]}),
        ("ncq-disk-set-cdl", {"id": "disk0", "read": [_desc(8, 1000)]}),
        # Eh (abort due to error recovery) is SCSI's; reserved for ATA
        ("ncq-disk-set-cdl", {"id": "disk0",
                              "read": [_desc(4, active_us=1000,
                                             active_policy=0xE)]}),
        ("query-ncq-disk-cdl", {"id": "disk0"}),
    ])
    reserved, too_long, index, scsi_only, after = p.replies
    assert "read descriptor 3: max inactive time policy 0x1 is reserved" \
        in reserved["error"]["desc"]
    assert "write descriptor 2: total time 700000000 us is beyond the " \
        "longest limit" in too_long["error"]["desc"]
    assert "index 8: give 1 to 7" in index["error"]["desc"]
    assert "read descriptor 4: max active time policy 0xe is reserved" \
        in scsi_only["error"]["desc"]
    # nothing of the refused commands was stored, not even the good one
    assert after["return"]["read"][0] == _desc(1)


def test_disk_without_cdl(run_qemu):
    p = run_qemu("-device", "ncq-disk,drive=d0,bus=ide.0,id=disk0,"
                 "model=st3400620as", qmp=[
                     ("query-ncq-disk-cdl", {"id": "disk0"}),
                     ("ncq-disk-set-cdl", {"id": "disk0", "enabled": True}),
                 ])
    query, setting = p.replies
    assert query["return"]["supported"] is False
    assert "has no Command Duration Limits; give it cdl=on" in \
        setting["error"]["desc"]


def test_hmp(run_qemu):
    def hmp(line):
        return ("human-monitor-command", {"command-line": line})

    p = run_qemu("-device", CDL_DISK, qmp=[
        hmp("ncq_disk_set disk0 cdl on"),
        hmp("ncq_disk_set disk0 cdl-read 3:total=50ms/abort,"
            "inactive=10ms/unavailable"),
        hmp("ncq_disk_set disk0 cdl-write 1:active=2ms/next"),
        hmp("ncq_disk_set disk0 cdl-read 9:total=1ms"),
        hmp("info ncq-disk"),
    ])
    on, read, bad_policy, bad_index, info = [r["return"] for r in p.replies]
    assert on == "" and read == ""
    assert "active time policy 0x1 is reserved" in bad_policy
    assert "descriptor index 1 to 7" in bad_index
    assert "  cdl on\r\n" in info
    assert "  cdl-read 3: total 50.000 ms/0xf inactive 10.000 ms/0xd" in info


class _Qmp:
    """QEMU with '-qmp stdio', one command at a time."""

    def __init__(self, qemu_build, img, *args):
        self.p = subprocess.Popen(
            [str(qemu_build / "qemu-system-x86_64"), "-M", "q35",
             "-nodefaults", "-display", "none", "-vga", "none", "-nic",
             "none", "-S", "-drive", f"if=none,id=d0,file={img},"
             "format=qcow2", "-qmp", "stdio", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.p.stdout.readline()                # greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        self.p.stdin.write(json.dumps({"execute": name,
                                       "arguments": args}) + "\n")
        self.p.stdin.flush()
        while True:
            reply = json.loads(self.p.stdout.readline())
            if "return" in reply or "error" in reply:
                return reply

    def quit(self):
        self.cmd("quit")
        self.p.wait(timeout=30)


def test_migration_carries_cdl(qemu_build, tmp_path):
    """The table and the enabled bit (model state) and the drive's CDL
    settings reach the destination of a migration."""
    img = tmp_path / "d.qcow2"
    subprocess.run([str(qemu_build / "qemu-img"), "create", "-q", "-f",
                    "qcow2", str(img), "64M"], check=True)
    state = tmp_path / "state"
    src = _Qmp(qemu_build, img, "-device", CDL_DISK)
    assert src.cmd("ncq-disk-set-cdl", id="disk0", enabled=True,
                   read=[_desc(4, 30000, 0xD, inactive_us=7000,
                               inactive_policy=0xF)]) == {"return": {}}
    want = src.cmd("query-ncq-disk-cdl", id="disk0")["return"]
    assert src.cmd("migrate", uri=f"file:{state}") == {"return": {}}
    for _ in range(300):
        status = src.cmd("query-migrate")["return"].get("status")
        if status in ("completed", "failed"):
            break
        time.sleep(0.1)
    assert status == "completed"
    src.quit()
    dst = _Qmp(qemu_build, img, "-device", CDL_DISK, "-incoming",
               f"file:{state}")
    for _ in range(300):
        status = dst.cmd("query-status")["return"]["status"]
        if status != "inmigrate":
            break
        time.sleep(0.1)
    got = dst.cmd("query-ncq-disk-cdl", id="disk0")["return"]
    dst.quit()
    assert got == want
    assert got["enabled"] is True
    assert got["read"][3] == _desc(4, 30000, 0xD, inactive_us=7000,
                                   inactive_policy=0xF)
