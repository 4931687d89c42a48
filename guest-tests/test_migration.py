"""Snapshots and migration with NCQ commands in the drive.

One workload, three ways, all under -icount:

  straight   the workload runs uninterrupted;
  migrated   QEMU A runs it until the device trace shows a few hundred
             completions, stops with commands queued in the drive,
             migrates to a file and quits; QEMU B starts from that file
             (-incoming) on the same image and runs to the end;
  snapshot   one QEMU takes 'savevm' mid-run, runs on, then 'loadvm's
             the snapshot and runs to the end;
  power cut  A migrates at the cut as above; B starts from the state on
             a copy of the image and cuts the power before running: the
             write cache's old contents moved with the state, so B
             restores exactly the sectors the drive had not written.

The drive's queue, the model's whole state and the HBA's slots move, so
the guest cannot tell: B's fio results equal the straight run's, and the
device traces stitched at the cut equal the straight run's byte for byte
(the straight run is the reference; a lossy migration shows up as a
different completion time, a lost or repeated command, or a data-verify
error in fio).
"""

import asyncio
import concurrent.futures
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import ncqguest
from ncqguest import Workload, fio_json

# Writes with a verify pass, then reads over the whole stroke; depth 32,
# so the queue is full most of the time.
JOB = ncqguest.FIO_GLOBAL + """[write-verify]
rw=randwrite
offset=64M
size=4M
verify=crc32c
do_verify=1
[reads]
stonewall
rw=randread
offset=1G
size=300G
number_ios=600
"""
SCRIPT = """#!/bin/sh
fio --output-format=json --output=$RESULTS/fio.json /workload/job.fio
echo fio-exit $?
"""
DISK = "8G"
# Cut after this many trace records (of about 2,700): in the write phase.
CUT_RECORDS = 700


def workload():
    return Workload(script=SCRIPT, files={"job.fio": JOB})


def make(workdir, trace):
    # snapshot=False: these tests start QEMU themselves (prepare()) and
    # migrate it; a run that restores the harness's snapshot is in
    # test_snapshot.py.
    return ncqguest.Guest(
        workdir, disk_size=str(781422768 * 512),   # the whole drive
        device=f"ncq-disk,model=st3400620as,trace={trace}", snapshot=False)


def trace_records(path):
    if not path.exists():
        return 0
    return max(0, path.read_bytes().count(b"\n") - 2)


async def qmp_connect(sock, proc, timeout=30):
    from qemu.qmp import QMPClient

    t0 = time.monotonic()
    while not Path(sock).exists():
        if proc.poll() is not None or time.monotonic() > t0 + timeout:
            raise RuntimeError(f"QEMU left no QMP socket at {sock}")
        await asyncio.sleep(0.05)
    qmp = QMPClient("migration-test")
    while True:
        try:
            await qmp.connect(str(sock))
            return qmp
        except Exception:
            # the socket appears at bind(), a moment before QEMU listens
            if proc.poll() is not None or time.monotonic() > t0 + timeout:
                raise
            await asyncio.sleep(0.05)


async def wait_records(trace, proc, n, timeout=600):
    t0 = time.monotonic()
    while trace_records(trace) < n:
        if proc.poll() is not None:
            raise RuntimeError("guest finished before the cut point")
        if time.monotonic() > t0 + timeout:
            raise RuntimeError("cut point not reached in time")
        await asyncio.sleep(0.01)


async def stop_with_commands_queued(qmp, trace, proc, tries=20):
    """Stop the VM at the cut point with commands in the drive.  The cut is
    taken by the host's clock, so the guest may be anywhere, and in the
    write phase the write cache often leaves the drive idle for a moment
    (the CI run of 8ae8a30 met it so); if it is idle, run on until the
    trace grows and try again.  Stopping and going on under -icount does
    not change the guest's run.  Returns query-ncq-disk's answer."""
    for _ in range(tries):
        await qmp.execute("stop")
        info = (await qmp.execute("query-ncq-disk", {"id": "disk0"}))[0]
        if info["queue"]:
            return info
        await qmp.execute("cont")
        await wait_records(trace, proc, trace_records(trace) + 1)
    raise RuntimeError(f"the drive was idle at each of {tries} stops")


async def hmp(qmp, line):
    out = await qmp.execute("human-monitor-command",
                            {"command-line": line})
    if out.strip():
        raise RuntimeError(f"{line}: {out.strip()}")


async def hang_up(qmp):
    """Disconnect; QEMU may already have closed the socket (quit, or the
    guest powered off), which the QMP library reports as EOF."""
    try:
        await qmp.disconnect()
    except (EOFError, ConnectionError):
        pass


def wait_exit(proc, guest, timeout=600):
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise ncqguest.GuestError(f"guest did not finish\n{guest.tail()}")
    if proc.returncode != 0:
        raise ncqguest.GuestError(
            f"QEMU exited with {proc.returncode}: "
            f"{(guest.workdir / 'qemu.stderr').read_text()[-2000:]}")


def popen(cmd, workdir):
    err = open(workdir / "qemu.stderr", "wb")
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=err,
                            stderr=err)


def run_straight(root):
    trace = root / "straight.trace"
    guest = make(root / "straight", trace)
    res = guest.run(workload())
    return res, trace.read_text()


def run_migrated(root):
    """A runs to the cut, migrates to a file, quits; B continues."""
    trace_a, trace_b = root / "a.trace", root / "b.trace"
    state = root / "migration.state"
    a = make(root / "a", trace_a)
    cmd_a = a.prepare(workload())
    b = make(root / "b", trace_b)
    b.disk = a.disk                      # shared storage, as migration needs
    cmd_b = b.prepare(workload()) + ["-incoming", f"file:{state}"]

    async def source():
        proc = popen(cmd_a, a.workdir)
        try:
            qmp = await qmp_connect(a.workdir / "qmp.sock", proc)
            await wait_records(trace_a, proc, CUT_RECORDS)
            info = await stop_with_commands_queued(qmp, trace_a, proc)
            await qmp.execute("migrate", {"uri": f"file:{state}"})
            while True:
                st = await qmp.execute("query-migrate")
                if st.get("status") in ("completed", "failed"):
                    break
                await asyncio.sleep(0.1)
            await qmp.execute("quit")
            await hang_up(qmp)
            proc.wait(60)
            return info, st
        finally:
            if proc.poll() is None:
                proc.kill()

    info, st = asyncio.run(source())
    assert st["status"] == "completed", st
    proc = popen(cmd_b, b.workdir)

    async def destination():
        # The source was stopped when it migrated, so B stays paused.
        qmp = await qmp_connect(b.workdir / "qmp.sock", proc)
        while (await qmp.execute("query-status"))["status"] == "inmigrate":
            await asyncio.sleep(0.1)
        await qmp.execute("cont")
        await hang_up(qmp)

    try:
        asyncio.run(destination())
    except BaseException:
        proc.kill()
        raise
    wait_exit(proc, b)
    res = b.results()
    stitched = trace_a.read_text() + "".join(
        trace_b.read_text().splitlines(keepends=True)[2:])
    return res, stitched, info, b


def run_snapshot(root):
    """savevm at the cut, run on, loadvm, run to the end."""
    trace = root / "snap.trace"
    g = make(root / "snap", trace)
    cmd = g.prepare(workload())
    cuts = {}

    async def drive():
        proc = popen(cmd, g.workdir)
        try:
            qmp = await qmp_connect(g.workdir / "qmp.sock", proc)
            await wait_records(trace, proc, CUT_RECORDS)
            cuts["queued"] = len((await stop_with_commands_queued(
                qmp, trace, proc))["queue"])
            await hmp(qmp, "savevm mid")
            cuts["saved"] = trace_records(trace)     # flushed by pre_save
            await qmp.execute("cont")
            await wait_records(trace, proc, cuts["saved"] + 150)
            await qmp.execute("stop")
            await hmp(qmp, "loadvm mid")
            cuts["loaded"] = trace_records(trace)    # flushed by post_load
            await qmp.execute("cont")
            await hang_up(qmp)
        except BaseException:
            proc.kill()
            raise
        return proc

    proc = asyncio.run(drive())
    wait_exit(proc, g)
    return g.results(), trace.read_text(), cuts


# fio's write phase covers [64 MiB, 68 MiB) of a fresh image, each 4 KiB
# block once: what was there before is zeros.
WRITE_AREA = (64 << 20, 4 << 20)


def read_area(disk, tmp):
    out = tmp / "area.raw"
    subprocess.run([str(ncqguest.qemu_build_dir() / "qemu-img"), "dd",
                    "-f", "qcow2", "-O", "raw", "bs=1M",
                    # count, like skip, is from the image's start
                    f"skip={WRITE_AREA[0] >> 20}",
                    f"count={(WRITE_AREA[0] + WRITE_AREA[1]) >> 20}",
                    f"if={disk}",
                    f"of={out}"], check=True, capture_output=True)
    data = out.read_bytes()
    out.unlink()
    assert len(data) == WRITE_AREA[1], f"qemu-img dd gave {len(data)} bytes"
    return data


def run_power_cut(root):
    """A runs to the cut and migrates; B loads the state on a copy of the
    image as it was at the cut and pulls the plug before running."""
    state = root / "cut.state"
    a = make(root / "cut-a", root / "cut-a.trace")
    cmd_a = a.prepare(workload())
    b = make(root / "cut-b", root / "cut-b.trace")
    b.disk = root / "cut-b.qcow2"

    async def source():
        proc = popen(cmd_a, a.workdir)
        try:
            qmp = await qmp_connect(a.workdir / "qmp.sock", proc)
            await wait_records(a.workdir.parent / "cut-a.trace", proc,
                               CUT_RECORDS)
            await qmp.execute("stop")       # drains and flushes the image
            shutil.copy(a.disk, b.disk)
            await qmp.execute("migrate", {"uri": f"file:{state}"})
            while (await qmp.execute("query-migrate")).get("status") not in \
                    ("completed", "failed"):
                await asyncio.sleep(0.1)
            await qmp.execute("quit")
            await hang_up(qmp)
            proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()

    asyncio.run(source())
    before = read_area(b.disk, root)
    proc = popen(b.prepare(workload()) + ["-incoming", f"file:{state}"],
                 b.workdir)
    got = {}

    async def destination():
        from qemu.qmp import ExecuteError

        qmp = await qmp_connect(b.workdir / "qmp.sock", proc)
        while (await qmp.execute("query-status"))["status"] == "inmigrate":
            await asyncio.sleep(0.1)
        try:
            await qmp.execute("ncq-disk-power-cut", {"id": "disk0"})
        except ExecuteError as e:
            got["refused"] = str(e)
        await qmp.execute("blockdev-set-active", {"active": True})
        got["cut"] = await qmp.execute("ncq-disk-power-cut",
                                       {"id": "disk0"})
        await hang_up(qmp)

    try:
        asyncio.run(destination())
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return before, read_area(b.disk, root), got


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("migration")
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        straight = ex.submit(run_straight, root)
        migrated = ex.submit(run_migrated, root)
        snapshot = ex.submit(run_snapshot, root)
        return {"straight": straight.result(), "migrated": migrated.result(),
                "snapshot": snapshot.result()}


def fio_summary(res):
    assert res.status == 0, res.output
    assert "fio-exit 0" in res.output, res.output
    jobs = {j["jobname"]: j for j in fio_json(res)["jobs"]}
    return {name: (j["read"]["total_ios"], j["write"]["total_ios"],
                   j["read"]["clat_ns"]["mean"], j["write"]["clat_ns"]["mean"],
                   j["error"])
            for name, j in jobs.items()}


def test_migration_with_queued_commands_is_invisible(runs):
    res_s, trace_s = runs["straight"]
    res_m, stitched, info, _ = runs["migrated"]
    queued = len(info["queue"])
    print(f"\nmigrated with {queued} commands in the drive; "
          f"{trace_s.count(chr(10)) - 2} trace records")
    assert queued > 0, "the cut found the drive idle; move CUT_RECORDS"
    assert fio_summary(res_m) == fio_summary(res_s)
    assert stitched == trace_s, "stitched trace differs from the straight run"


def test_loadvm_with_queued_commands_replays_the_same_run(runs):
    res_s, trace_s = runs["straight"]
    res, trace, cuts = runs["snapshot"]
    lines = trace.splitlines(keepends=True)
    prefix = lines[:2 + cuts["saved"]]
    between = lines[2 + cuts["saved"]:2 + cuts["loaded"]]
    after = lines[2 + cuts["loaded"]:]
    print(f"\nsavevm with {cuts['queued']} commands in the drive after "
          f"{cuts['saved']} records; {len(between)} records ran before "
          "loadvm")
    assert cuts["queued"] > 0, "the cut found the drive idle"
    assert len(between) >= 100
    assert fio_summary(res) == fio_summary(res_s)
    assert "".join(prefix + after) == trace_s
    # What ran between savevm and loadvm was the same future, cut short.
    assert between == after[:len(between)]


def test_incoming_state_for_other_parameters_is_refused(runs, tmp_path):
    """The state of an st3400620as does not load into a drive with other
    parameters (here one edited estimate): one clear line, QEMU exits
    non-zero instead of running a drive that is not the one saved."""
    _, _, _, b = runs["migrated"]
    model = Path(ncqguest.ROOT / "hw/ide/ncq-model/models/st3400620as.ncqm")
    other = tmp_path / "other.ncqm"
    other.write_text(model.read_text().replace(
        "name = st3400620as", "name = st3400620as-edited", 1))
    g = make(tmp_path / "other", tmp_path / "other.trace")
    g.device = g.device.replace("model=st3400620as",
                                f"model-file={other}")
    g.disk = b.disk
    cmd = g.prepare(workload()) + [
        "-incoming", f"file:{b.workdir.parent / 'migration.state'}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    print(p.stderr)
    assert p.returncode != 0
    assert "model state is for model 'st3400620as', this drive has " \
        "'st3400620as-edited'" in p.stderr, p.stderr


def test_power_cut_after_migration_restores_the_drives_cache(
        tmp_path_factory):
    """The old contents of sectors in the write cache migrate with the
    drive: a power cut on the destination gives exactly those sectors
    their old contents (zeros) back and leaves every other sector as it
    was at the cut."""
    before, after, got = run_power_cut(tmp_path_factory.mktemp("cut"))
    assert "image is inactive" in got.get("refused", ""), got
    cut = got["cut"]
    print(f"\npower cut after migration: {cut['lost-sectors']} sectors in "
          f"{len(cut['lost'])} ranges lost")
    assert cut["lost-sectors"] > 0, "the drive had nothing in its cache"
    lost = set()
    first = WRITE_AREA[0] // 512
    for r in cut["lost"]:
        assert first <= r["lba"] and \
            r["lba"] + r["sectors"] <= first + WRITE_AREA[1] // 512, r
        lost.update(range(r["lba"] - first, r["lba"] - first + r["sectors"]))
    zero = bytes(512)
    for i in range(WRITE_AREA[1] // 512):
        old, new = before[i * 512:(i + 1) * 512], after[i * 512:(i + 1) * 512]
        if i in lost:
            assert old != zero and new == zero, f"sector {first + i}"
        else:
            assert new == old, f"sector {first + i} changed"
