"""Boot an unmodified Linux guest on ncq-disk, deterministically, and collect
what its workload produced.

The guest image (images/build-image.sh) runs /workload/run.sh or
/workload/job.fio from a cpio archive this module passes as the fw_cfg file
opt/ncq/workload, then sends /results as a base64 tarball over the second
serial port, framed by NCQ-RESULTS-BEGIN / NCQ-RESULTS-END, and reboots;
QEMU runs with -no-reboot so it exits.  Every run has a wall-clock bound: a
guest that hangs is killed and the error carries the console tail.

A run does not boot when it can restore: the first run with given inputs
boots to the snapshot point and saves the VM there (ncqsnapshot.py); the
others restore that state and only run their workload.  The saved boot
has no drive under test: each restored run plugs its own drive in at the
snapshot point (drive_add and device_add while the guest is stopped
there, so at the same instruction every time), and libata finds it as a
hot-plugged drive.  So every device line shares its kernel's one boot.
NCQ_SNAPSHOT=0 boots every run.
"""

import asyncio
import base64
import dataclasses
import io
import json
import os
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.parse
from pathlib import Path

import ncqqemu
import ncqsnapshot

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("NCQ_CACHE", Path.home() / ".cache" / "ncq-disk"))

# fio's [global] section for jobs on the ncq-disk: 4 KiB direct I/O through
# libaio, 32 deep, the same random offsets every run.
FIO_GLOBAL = """[global]
filename=/dev/sda
direct=1
ioengine=libaio
bs=4k
iodepth=32
randrepeat=1
"""

KERNEL_CMDLINE = "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init"
# fw_cfg file the guest's /init reads its workload from (images/init)
FW_CFG_WORKLOAD = "opt/ncq/workload"
# Wall-clock bound of the boot that makes a snapshot
SNAPSHOT_BOOT_TIMEOUT_S = 300
# Deterministic time: guest time follows the instruction count; idle time
# is skipped (sleep=off), so disk-bound runs can beat real time.
ICOUNT_OPTS = "sleep=off,align=off"
ICOUNT = f"shift=3,{ICOUNT_OPTS}"    # the default shift (Guest(icount_shift=))
# -rtc clock=vm alone starts the guest's RTC at the host's current date, so
# two runs started in different seconds boot differently (different
# instruction counts, hence different virtual times).  Pass
# The guest's clock starts at this date (the default), so that runs are
# byte-identical whatever the host's date; rtc_base=None takes the host's.
FIXED_RTC_BASE = "2026-01-01T00:00:00"
# TCG's translation buffer.  QEMU sizes it from the host's RAM (an eighth,
# at most 1 GiB) and flushes it when it is full; under icount a flush can
# move the guest's timing (scenario 3 run with a 32 MiB buffer departs
# from the same run with 256 MiB to 1 GiB, all else equal).  A fixed size
# makes runs independent of the host's RAM: 1 GiB, what QEMU picks on any
# host with 8 GiB or more, so that results from such hosts stay valid.
TB_SIZE_MIB = 1024


class GuestError(Exception):
    """The guest did not produce results; the message ends with the console
    tail so a failing test shows what the guest printed."""


def _last_line(cmd, what):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{p.stderr.strip()[-2000:]}")
    return p.stdout.strip().splitlines()[-1]


def _built_dir(env_var, script):
    """$env_var if set, else the directory the build script prints last
    (the scripts are quick when their inputs did not change)."""
    env = os.environ.get(env_var)
    if env:
        return Path(env)
    return Path(_last_line([str(ROOT / script)], script))


def qemu_build_dir():
    """The QEMU build directory: $NCQ_QEMU_BUILD or scripts/build-qemu.sh."""
    return _built_dir("NCQ_QEMU_BUILD", "scripts/build-qemu.sh")


def image_dir():
    """The guest image directory: $NCQ_IMAGE_DIR or images/build-image.sh."""
    return _built_dir("NCQ_IMAGE_DIR", "images/build-image.sh")


def firmware_path():
    """The qboot.rom the guest boots with (-bios qboot.rom: QEMU finds it
    in the host's firmware directories, scripts/build-qemu.sh links them
    into the build), or None."""
    for d in ("/usr/share/qemu", "/usr/share/seabios"):
        if (Path(d) / "qboot.rom").exists():
            return Path(d) / "qboot.rom"
    return None


def boot_kernel(image):
    """The kernel file a guest boots: the image's vmlinux (uncompressed,
    loaded by QEMU as it is and entered through PVH: no decompression
    under TCG) when it has one, else its vmlinuz."""
    vmlinux = Path(image) / "vmlinux"
    return vmlinux if vmlinux.is_file() else Path(image) / "vmlinuz"


def image_manifest(image=None):
    """The 'key value' lines of an image's manifest.txt (images/build-
    image.sh) as a dict, first value of a key kept ({} without one)."""
    path = Path(image or image_dir()) / "manifest.txt"
    out = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            if k and not k.startswith("#"):
                out.setdefault(k, v)
    return out


def newc_archive(files):
    """A cpio (newc) archive of {path: bytes}, byte-identical for the same
    input: fixed inode numbers, owner root, mtime 0."""
    out = io.BytesIO()
    ino = 1000

    def entry(name, mode, data):
        nonlocal ino
        ino += 1
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0))
        out.write(hdr.encode() + name_b)
        out.write(b"\0" * ((4 - (110 + len(name_b)) % 4) % 4))
        out.write(data)
        out.write(b"\0" * ((4 - len(data) % 4) % 4))

    dirs = set()
    for path in files:
        parts = path.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    for d in sorted(dirs):
        entry(d, 0o040755, b"")
    for path in sorted(files):
        data = files[path]
        if isinstance(data, str):
            data = data.encode()
        entry(path.strip("/"), 0o100755, data)
    entry("TRAILER!!!", 0, b"")
    out.write(b"\0" * ((512 - out.tell() % 512) % 512))
    return out.getvalue()


@dataclasses.dataclass
class Workload:
    """What the guest runs: a fio job file or a shell script (both may be
    given; the script wins), extra files for /workload, and guest files to
    bring back (they land in Result.collected)."""
    fio: str = None
    script: str = None
    files: dict = dataclasses.field(default_factory=dict)
    collect: tuple = ()
    # Guest seconds after which /init kills the workload (its whole process
    # group; the run then ends with the results so far, status 137).  It
    # travels with the workload, so a restored snapshot honours it.
    timeout_s: int = None

    def cpio(self):
        """The archive the guest reads (fw_cfg file opt/ncq/workload, by
        fw_cfg's DMA interface: tens of MB take seconds)."""
        files = {f"workload/{k}": v for k, v in self.files.items()}
        if self.timeout_s is not None:
            if int(self.timeout_s) <= 0:
                raise ValueError(f"Workload.timeout_s must be a positive "
                                 f"number of seconds, got {self.timeout_s}")
            files["workload/timeout"] = f"{int(self.timeout_s)}\n"
        if self.fio is not None:
            files["workload/job.fio"] = self.fio
        if self.script is not None:
            files["workload/run.sh"] = self.script
        if self.collect:
            files["workload/collect"] = "\n".join(self.collect) + "\n"
        return newc_archive(files)


@dataclasses.dataclass
class Result:
    status: int
    console: str
    output: str
    dmesg: str
    files: dict           # name under /results -> bytes
    collected: dict       # guest path -> text
    wall_s: float
    qmp: object = None    # what the test's qmp_actions returned

    # the guest's init writes this to the kernel log once a drive plugged
    # in at the snapshot point is up (images/init)
    ATTACH_MARK = "ncq-init: drive attached"

    @property
    def dmesg_since_attach(self):
        """The kernel log from the moment the drive was up: a restored
        run's dmesg less the boot and libata's hot-plug of the drive
        (its link reset among them); a booted run's whole dmesg."""
        i = self.dmesg.find(self.ATTACH_MARK)
        if i < 0:
            return self.dmesg
        return self.dmesg[self.dmesg.find("\n", i) + 1:]

    @property
    def fio(self):
        raw = self.files.get("fio.json")
        if raw is None:
            raise KeyError("the workload produced no fio.json")
        text = raw.decode(errors="replace")
        # fio may print notes before the JSON object
        return json.loads(text[text.index("{"):])


class Guest:
    """One QEMU process with one ncq-disk (or any -device line) attached."""

    def __init__(self, workdir, device="ncq-disk,model=st3400620as",
                 disk_size="1G", disk=None, extra_args=(), memory="512M",
                 timeout_s=300, icount=True, rtc_base=FIXED_RTC_BASE,
                 icount_shift=3, snapshot=None, snapshot_dir=None, smp=1,
                 backend="qcow2"):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.device = device
        self.disk = Path(disk) if disk else self.workdir / "disk.qcow2"
        self.disk_size = disk_size
        # "null": QEMU's null-co driver, reads give zeroes and writes are
        # dropped: a suite that never checks data (cdl-tools) can write
        # over a 16 TB drive's whole stroke without host disk.  The VM
        # state cannot be saved with it (savevm needs a qcow2 image).
        if backend not in ("qcow2", "null"):
            raise ValueError(f"backend must be qcow2 or null, got {backend!r}")
        self.backend = backend
        if backend == "null":
            if disk:
                raise ValueError("backend null takes no disk file")
            snapshot = False
        # A run on an existing disk boots, and so does one whose
        # zone-state file exists: both are a drive that lived before,
        # which a test means to see come up at power-on.  (The saved boot
        # holds no drive, so a restored run would not mix the snapshot's
        # state with theirs; booting keeps what such tests assert.)
        if snapshot is None:
            snapshot = ncqsnapshot.enabled()
        self.snapshot = snapshot and not self.disk.exists() and \
            not any(Path(p[len("zone-state="):]).exists()
                    for p in device.split(",") if p.startswith("zone-state="))
        self.snapshot_dir = Path(snapshot_dir) if snapshot_dir \
            else ncqsnapshot.root(CACHE)
        self.icount_shift = icount_shift
        self.restored_from = None   # the snapshot entry of the last run
        self.extra_args = list(extra_args)
        self.memory = memory
        # vCPUs (-smp); part of the snapshot key, like every option
        if int(smp) < 1:
            raise ValueError(f"smp must be 1 or more, got {smp}")
        self.smp = int(smp)
        self.timeout_s = timeout_s
        self.icount = icount
        self.rtc_base = rtc_base
        self.build = qemu_build_dir()
        self.image = image_dir()
        self.qemu = self.build / "qemu-system-x86_64"
        self.kernel = boot_kernel(self.image)

    def _make_disk(self):
        if self.backend == "null" or self.disk.exists():
            return
        subprocess.run([str(self.build / "qemu-img"), "create", "-q", "-f",
                        "qcow2", str(self.disk), self.disk_size], check=True)

    def _device_option(self, device=None):
        return f"{device or self.device},drive=d0,bus=ide.0,id=disk0"

    def hotplug_commands(self):
        """The monitor (HMP) commands that plug this guest's drive in at
        the snapshot point of a restored run: the -drive and -device
        options of a booted run, as drive_add and device_add."""
        return [f"drive_add 0 {self._drive_option()}",
                f"device_add {self._device_option()}"]

    async def _plug(self, qmp):
        """Plug the drive in (the guest is stopped at the snapshot
        point).  A refused device (a bad property) is a GuestError with
        QEMU's one-line reason, as a booted run's startup error is."""
        for c in self.hotplug_commands():
            out = await qmp.execute("human-monitor-command",
                                    {"command-line": c})
            out = out.strip()
            # drive_add answers OK, device_add nothing, when they work
            if out not in ("", "OK"):
                raise GuestError(f"QEMU refused '{c}': {out}")

    def _drive_option(self, disk=None):
        if self.backend == "null":
            return ("if=none,id=d0,driver=null-co,read-zeroes=on,"
                    f"size={self.disk_size}")
        return f"if=none,id=d0,file={disk or self.disk},format=qcow2"

    def command(self, workload_file, workdir=None, disk=None, device=None,
                snapshot_point=False, hotplug=False):
        """The QEMU command line.  workdir, disk and device default to the
        guest's own; snapshot_point adds what stops the guest at the
        snapshot point (the same for the boot that saves the state and
        the runs that restore it); hotplug leaves the drive out (the
        harness plugs it in at the snapshot point: hotplug_commands())
        and has the guest wait for it there."""
        workdir = Path(workdir or self.workdir)
        append = KERNEL_CMDLINE + (" ncq.snapshot" if snapshot_point else "")
        if hotplug:
            append += " ncq.hotplug"
        # q35's AHCI links at 1.5 Gb/s unless told its ports are Gen3
        # (docs/device.md, "IDENTIFY DEVICE and the SATA link"): the
        # drive's own speed, as on a modern host
        args = [str(self.qemu), "-M", "q35", "-m", self.memory,
                "-smp", str(self.smp),
                "-global", "ich9-ahci.sata-gen=3",
                "-nodefaults", "-display", "none", "-vga", "none",
                "-nic", "none", "-no-reboot",
                "-bios", "qboot.rom",
                "-kernel", str(self.kernel),
                "-initrd", str(self.image / "initrd.img"),
                "-append", append,
                "-fw_cfg", f"name={FW_CFG_WORKLOAD},file={workload_file}",
                "-serial", f"file:{workdir / 'console.log'}",
                "-serial", f"file:{workdir / 'results.txt'}",
                "-qmp", f"unix:{workdir / 'qmp.sock'},server=on,wait=off"]
        if not hotplug:
            args += ["-drive", self._drive_option(disk),
                     "-device", self._device_option(device)]
        if snapshot_point:
            args += ["-device", "pvpanic", "-action", "panic=pause"]
        if self.icount:
            rtc = "clock=vm"
            if self.rtc_base:
                rtc = f"base={self.rtc_base},clock=vm"
            icount = f"shift={self.icount_shift},{ICOUNT_OPTS}"
            args += ["-icount", icount, "-rtc", rtc,
                     "-accel", f"tcg,tb-size={TB_SIZE_MIB}"]
        else:
            args += ["-accel", os.environ.get("NCQ_ACCEL", "tcg")]
        return args + self.extra_args

    def run(self, workload, qmp_actions=None, timeout_s=None):
        """Run the workload (restoring the snapshot of this guest's boot,
        or booting), return its Result.  qmp_actions, if given, is an
        async function called with a connected qemu.qmp.QMPClient once
        the guest runs; its return value lands in Result.qmp.  timeout_s
        replaces the guest's wall-clock bound for this run (the guest's
        own bound is Workload.timeout_s)."""
        if timeout_s is not None:
            saved = self.timeout_s
            self.timeout_s = timeout_s
            try:
                return self.run(workload, qmp_actions)
            finally:
                self.timeout_s = saved
        entry = self.snapshot_entry() if self.snapshot else None
        try:
            return asyncio.run(self._run(workload, qmp_actions, entry))
        except ncqqemu.RestoreFailed as e:
            # A state this QEMU cannot load (e.g. a cache entry left by
            # an interrupted save): make it again, once.
            print(f"ncq-guest: snapshot {entry.key} did not restore "
                  f"({e}); booting to make it again")
            entry.drop()
            entry = self.snapshot_entry()
            return asyncio.run(self._run(workload, qmp_actions, entry))

    def prepare(self, workload, snapshot_point=False, hotplug=False):
        """Make the disk (if missing) and the workload file; return the
        QEMU command line of a run that boots (for tests that drive QEMU
        themselves, e.g. migration; Guest.run does the rest).  With
        hotplug (a restored run) the file cmdline also lists the monitor
        commands that plug the drive in."""
        self._make_disk()
        wfile = self.workdir / "workload.cpio"
        wfile.write_bytes(workload.cpio())
        for f in ("console.log", "results.txt", "qmp.sock"):
            (self.workdir / f).unlink(missing_ok=True)
        cmd = self.command(wfile, snapshot_point=snapshot_point,
                           hotplug=hotplug)
        text = shlex.join(cmd) + "\n"
        if hotplug:
            text += "".join(f"# at the snapshot point: {c}\n"
                            for c in self.hotplug_commands())
        (self.workdir / "cmdline").write_text(text)
        return cmd

    def results(self, wall=0.0):
        """The Result the guest sent over its results port."""
        return self._parse(wall)

    async def _run(self, workload, qmp_actions, entry):
        cmd = self.prepare(workload, snapshot_point=entry is not None,
                           hotplug=entry is not None)
        if entry is not None:
            cmd += ["-incoming", f"file:{entry.state}"]
            self.restored_from = entry
        stderr_path = self.workdir / "qemu.stderr"
        t0 = time.monotonic()
        deadline = t0 + self.timeout_s
        try:
            async with ncqqemu.QemuProcess(cmd, stderr_path, self.workdir / "qmp.sock",
                             deadline) as q:
                if entry is not None:
                    await q.resume(before_cont=self._plug)
                qmp_result = None
                if qmp_actions and q.qmp is not None:
                    qmp_result = await asyncio.wait_for(
                        qmp_actions(q.qmp), deadline - time.monotonic())
                await q.wait_exit()
        except asyncio.TimeoutError:
            raise GuestError(
                f"guest did not finish within {self.timeout_s} s "
                f"(wall clock); killed.\n{self.tail()}")
        finally:
            if entry is not None:
                self._prefix_boot_console(entry)
        wall = time.monotonic() - t0
        if q.returncode != 0:
            raise GuestError(
                f"QEMU exited with {q.returncode}: "
                f"{stderr_path.read_text(errors='replace').strip()[-2000:]}"
                f"\n{self.tail()}")
        result = self._parse(wall)
        result.qmp = qmp_result
        return result

    def _prefix_boot_console(self, entry):
        """A restored run's console.log starts at the snapshot point: put
        the boot's console before it, so the log reads as one boot."""
        path = self.workdir / "console.log"
        run = path.read_bytes() if path.exists() else b""
        boot = entry.boot_log.read_bytes() if entry.boot_log.exists() \
            else b""
        if boot and not run.startswith(boot):
            path.write_bytes(boot + f"ncq-guest: restored from snapshot "
                             f"{entry.key}\n".encode() + run)

    # ------------------------------------------------------------ snapshots
    def _canonical_command(self):
        """This guest's restored command line with the run's own paths
        replaced by placeholders: what the snapshot key is made of."""
        cmd = self.command("WORKLOAD", workdir="WORK", snapshot_point=True,
                           hotplug=True)
        subs = ((str(self.workdir), "WORK"), (str(self.qemu), "QEMU"),
                (str(self.image), "IMAGE"))
        out = []
        for a in cmd:
            for old, new in subs:
                a = a.replace(old, new)
            out.append(a)
        return out

    def _key_files(self):
        files = {"qemu": self.qemu, "kernel": self.kernel,
                 "initrd": self.image / "initrd.img"}
        fw = firmware_path()
        if fw is not None:
            files["qboot.rom"] = fw
        return files

    def snapshot_entry(self):
        """The snapshot of this guest's boot; boots and saves it first if
        the cache has none (once, whatever runs at the same time)."""
        canon, files = self._canonical_command(), self._key_files()
        entry = ncqsnapshot.Entry(self.snapshot_dir,
                                  ncqsnapshot.key(canon, files))
        # Used now, before anything else: another run's prune() spares an
        # entry touched in the last minute, so it cannot delete this one
        # between the check below and the restore.
        entry.touch()
        if not entry.ready():
            with entry.lock():
                if not entry.ready():
                    asyncio.run(self._save_snapshot(entry))
                    entry.inputs.write_text(
                        ncqsnapshot.inputs_text(canon, files))
            if ncqsnapshot.prune_now():
                ncqsnapshot.prune(self.snapshot_dir)
        entry.touch()
        return entry

    async def _save_snapshot(self, entry):
        """Boot to the snapshot point and save the paused VM in entry."""
        # a short path: QEMU's QMP socket path must stay under 108 bytes
        work = Path(tempfile.mkdtemp(prefix="ncq-snapshot-boot-"))
        wfile = work / "workload.cpio"
        wfile.write_bytes(Workload().cpio())
        cmd = self.command(wfile, workdir=work, snapshot_point=True,
                           hotplug=True)
        (work / "cmdline").write_text(shlex.join(cmd) + "\n")
        deadline = time.monotonic() + SNAPSHOT_BOOT_TIMEOUT_S
        tmp = entry.dir / f"state.{os.getpid()}"
        try:
            async with ncqqemu.QemuProcess(cmd, work / "qemu.stderr", work / "qmp.sock",
                             deadline) as q:
                await q.save(tmp)
        except (asyncio.TimeoutError, ncqqemu.QemuExited) as e:
            raise GuestError(f"the boot for snapshot {entry.key} failed "
                             f"(its files: {work}): {e}\n"
                             f"{ncqqemu.console_tail(work / 'console.log')}")
        shutil.copyfile(work / "console.log", entry.boot_log)
        os.rename(tmp, entry.state)
        shutil.rmtree(work, ignore_errors=True)

    def tail(self, lines=40):
        return ncqqemu.console_tail(self.workdir / "console.log", lines)

    def _parse(self, wall):
        raw = (self.workdir / "results.txt").read_text(errors="replace") \
            if (self.workdir / "results.txt").exists() else ""
        lines = raw.replace("\r", "").splitlines()
        try:
            b = lines.index("NCQ-RESULTS-BEGIN")
            e = lines.index("NCQ-RESULTS-END", b)
        except ValueError:
            raise GuestError(f"guest sent no results.\n{self.tail()}")
        blob = base64.b64decode("".join(lines[b + 1:e]))
        status = None
        for line in lines[e + 1:]:
            if line.startswith("NCQ-EXIT "):
                status = int(line.split()[1])
        files = {}
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            for m in tar.getmembers():
                if m.isfile():
                    name = m.name[2:] if m.name.startswith("./") else m.name
                    files[name] = tar.extractfile(m).read()
        collected = {}
        for name, data in files.items():
            if name.startswith("collect/"):
                guest_path = urllib.parse.unquote(name[len("collect/"):])
                collected[guest_path] = data.decode(errors="replace").strip()
        console = (self.workdir / "console.log").read_text(errors="replace")
        return Result(
            status=status if status is not None else -1,
            console=console,
            output=files.get("output.txt", b"").decode(errors="replace"),
            dmesg=files.get("dmesg.txt", b"").decode(errors="replace"),
            files=files, collected=collected, wall_s=wall)


TRACE_COLUMNS = ("tag,op,lba,sectors,fua,prio,arrival_ns,dispatch_ns,"
                 "complete_ns,seek_ns,rotate_ns,transfer_ns,cache,queue_len,"
                 "delay_count,reason,cdl,cdl_outcome").split(",")
# version 1 had no CDL columns
_TRACE_COLUMNS_V1 = TRACE_COLUMNS[:16]
_TRACE_TEXT = ("op", "cache", "reason", "cdl_outcome")


def read_trace(path):
    """Parse an ncq-trace v1 or v2 file (docs/trace-schema.md), as the
    device's trace=PATH property writes it.  Returns (header, records):
    header is the dict of key=value words of line 1 plus 'version';
    records are dicts keyed by column name in file (completion) order,
    integers converted, 'op', 'cache', 'reason' and 'cdl_outcome' left as
    strings (v1 records have no cdl columns)."""
    lines = Path(path).read_text().splitlines()
    if not lines or not lines[0].startswith("# ncq-trace v"):
        raise ValueError(f"{path}: not an ncq-trace file")
    words = lines[0][len("# ncq-trace v"):].split()
    header = {"version": int(words[0])}
    if header["version"] not in (1, 2):
        raise ValueError(f"{path}: trace version {header['version']}, "
                         "this reader knows versions 1 and 2")
    for w in words[1:]:
        k, _, v = w.partition("=")
        header[k] = v
    columns = TRACE_COLUMNS if header["version"] == 2 else _TRACE_COLUMNS_V1
    if lines[1].split(",") != columns:
        raise ValueError(f"{path}: unexpected column line {lines[1]!r}")
    records = []
    for line in lines[2:]:
        if not line or line.startswith("#"):
            continue
        vals = line.split(",")
        rec = {}
        for k, v in zip(columns, vals):
            rec[k] = v if k in _TRACE_TEXT else int(v)
        records.append(rec)
    return header, records


def fio_json(result, name="fio.json"):
    """fio's JSON output from a file the workload wrote under $RESULTS
    (fio --output-format=json --output=$RESULTS/NAME), parsed."""
    raw = result.files.get(name)
    if raw is None:
        raise KeyError(f"the workload produced no {name}")
    text = raw.decode(errors="replace")
    return json.loads(text[text.index("{"):])


# q35's AHCI (ich9-ahci) has six ports, ide.0 to ide.5; so has each extra
AHCI_PORTS = 6


def multi_drive_args(workdir, devices, disk_size="256M", first_port=1,
                     serial_prefix=None, keep_images=False):
    """QEMU arguments that add one drive per entry of devices (a -device
    line without drive=, bus= or id=, e.g. "ncq-disk,model=hp-c2247a") to
    a Guest, whose own disk sits on ide.0: q35's AHCI ports ide.1 to ide.5
    first, then extra ich9-ahci controllers (ahci1, ahci2, ...) of six
    ports each, as many as needed.  Each drive gets a fresh qcow2 image of
    disk_size in workdir, the drive id x<N> and the device id extra<N>
    (N from 0, in the order of devices).  One boot then serves many drives
    (a boot costs about 13 s under TCG).

    serial_prefix gives drive N the serial number <prefix><N> (a guest
    finds its drives by serial: ncqmd.GUEST_SH's `disk`), unless its line
    sets serial= itself.  keep_images reuses the images a previous run left
    in workdir (a second boot on the same drives: a reboot after a power
    cut, a re-assembly).

    Use it as Guest(extra_args=multi_drive_args(...), snapshot=False): a
    snapshot's key names these lines but not the images' size, and the
    boot that saves it would open this run's own images, so such guests
    boot (docs/guest-image.md)."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    qemu_img = qemu_build_dir() / "qemu-img"
    args, controllers = [], 0
    for i, device in enumerate(devices):
        port = first_port + i
        hba, slot = divmod(port, AHCI_PORTS)
        if hba > controllers:
            controllers = hba
            args += ["-device", f"ich9-ahci,id=ahci{hba}"]
        bus = f"ide.{slot}" if hba == 0 else f"ahci{hba}.{slot}"
        img = workdir / f"extra{i}.qcow2"
        if not (keep_images and img.exists()):
            img.unlink(missing_ok=True)
            subprocess.run([str(qemu_img), "create", "-q", "-f", "qcow2",
                            str(img), disk_size], check=True)
        if serial_prefix and "serial=" not in device:
            device += f",serial={serial_prefix}{i}"
        args += ["-drive", f"if=none,id=x{i},file={img},format=qcow2",
                 "-device", f"{device},drive=x{i},bus={bus},id=extra{i}"]
    return args
