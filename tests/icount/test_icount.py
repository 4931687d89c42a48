"""QEMU's -icount sleep=off: guest-visible virtual time independent of the host.

The patches of patches/qemu/1-icount/ make the virtual clock under
``-icount shift=N,sleep=off`` independent of when QEMU's main loop happens
to wake up, and what the guest reads independent of the host's speed.
These tests show it with plain QEMU: no kernel, no disk, no ncq-disk; a
64 KiB firmware (fw.S beside this file, tlb.S for the case tlb, assembled
here with binutils) prints the TSC, which under -icount is QEMU_CLOCK_VIRTUAL, on
the debug console.  The main loop's wake-ups come from the RTC, whose
periodic timer runs on the host's clock (``-rtc clock=rt``, 8192 Hz, its
interrupt masked): at moments that have nothing to do with the guest's.
Every run of a case must print the same bytes.

- halt, for 0001 "accel/tcg: do not warp icount before a halted vCPU's
  slice is accounted": the firmware arms the PIT, executes some 4,000
  instructions and halts, 16,384 times.  A main-loop wake-up between HLT
  and the vCPU thread's icount_process_data() warped the clock from a
  value that lacked those instructions: the interrupt came late by the
  instructions not yet counted (up to 32 us).
- tlb, for 0003 "accel/tcg: under icount, do not size the TLB by the
  host's clock": tlb.S (paging on) reads, at each of up to 65,536 CR3
  writes, a page whose PTE it changed without invalidating it, after ten
  reads that evict it only from a 64-entry TLB, and prints when it first
  saw the new page: when QEMU shrank the TLB from 1,024 entries.  QEMU did
  that after 100 ms of the host's time: each run printed another number.
- stop, for 0002 "icount: do not warp the clock while a VM stop is
  pending": the firmware arms the PIT and stops the VM with pvpanic
  (-action panic=pause), the test answers with "cont", and the firmware
  prints the TSC at once, 300 times.  A warp between the stop request and
  the main loop carrying it out moved the clock to the PIT's deadline
  (and fired it) before the VM stopped.  (This case halts too: it fails
  without 0001 as well.)

scripts/test.sh runs them with its build (NCQ_QEMU_BUILD).  By hand, also
to measure how often a QEMU without a fix differs:

    python3 tests/icount/test_icount.py --qemu BUILD/qemu-system-x86_64 \\
        [--runs N] [halt|stop ...]
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

# case: (source, MODE, ITER, WORK); MODE, ITER and WORK are for fw.S
CASES = {
    "halt": ("fw.S", 1, 16384, 2000),
    "stop": ("fw.S", 2, 300, 0),
    "tlb": ("tlb.S", 0, 0, 0),
}
RUNS = 3            # runs per case in the test suite: all must match
TIMEOUT = 60        # seconds for one QEMU run


def build_firmware(case, outdir):
    source, mode, iters, work = CASES[case]
    obj = Path(outdir) / f"fw-{case}.o"
    fw = Path(outdir) / f"fw-{case}.bin"
    subprocess.run(["as", "--32", "--defsym", f"MODE={mode}",
                    "--defsym", f"ITER={iters}", "--defsym", f"WORK={work}",
                    "-o", str(obj), str(HERE / source)], check=True)
    subprocess.run(["ld", "-m", "elf_i386", "-Ttext=0", "--oformat", "binary",
                    "-o", str(fw), str(obj)], check=True)
    assert fw.stat().st_size == 65536, fw
    return fw


class Qmp:
    """A minimal QMP client on a unix socket."""

    def __init__(self, path, deadline):
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.sock.connect(str(path))
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        self.sock.settimeout(max(1.0, deadline - time.monotonic()))
        self.file = self.sock.makefile("rwb", buffering=0)
        self.recv()                                     # the greeting
        self.send("qmp_capabilities")
        while "return" not in self.recv():
            pass

    def recv(self):
        line = self.file.readline()
        if not line:
            raise EOFError("QMP closed")
        return json.loads(line)

    def send(self, name):
        self.file.write(json.dumps({"execute": name}).encode() + b"\n")

    def close(self):
        self.sock.close()


def run_once(qemu, fw, workdir):
    """One QEMU run; returns what the guest printed."""
    workdir = Path(workdir)
    out, ctl = workdir / "out.txt", workdir / "qmp.sock"
    for p in (out, ctl):
        p.unlink(missing_ok=True)
    args = [
        qemu, "-M", "pc", "-accel", "tcg", "-nodefaults", "-display", "none",
        "-m", "16", "-bios", str(fw),
        "-icount", "shift=3,sleep=off,align=off",
        "-rtc", "base=2026-01-01T00:00:00,clock=rt",
        "-chardev", f"file,id=out,path={out}",
        "-device", "isa-debugcon,iobase=0xe9,chardev=out",
        "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
        "-device", "pvpanic", "-action", "panic=pause",
        "-qmp", f"unix:{ctl},server=on,wait=off", "-S",
    ]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + TIMEOUT
    try:
        qmp = Qmp(ctl, deadline)
        qmp.send("cont")
        # every STOP (pvpanic) is answered with cont, until QEMU exits
        while True:
            try:
                msg = qmp.recv()
            except (EOFError, OSError):
                break
            if msg.get("event") == "STOP":
                qmp.send("cont")
        qmp.close()
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = proc.stdout.read().decode(errors="replace")
    # isa-debug-exit with 0: exit status 1
    assert proc.returncode == 1, f"QEMU exited with {proc.returncode}: {log}"
    text = out.read_text()
    assert text.endswith("end\n"), f"the guest did not finish: {text[-200:]!r}"
    return text


def runs(qemu, case, n):
    """n runs of one case; what each printed."""
    tmp = tempfile.mkdtemp(prefix=f"icount-{case}-")
    try:
        fw = build_firmware(case, tmp)
        return [run_once(qemu, fw, tmp) for _ in range(n)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {i + 1}: {x} against {y}"
    return "lengths differ"


def qemu_binary():
    build = os.environ.get("NCQ_QEMU_BUILD")
    if not build:
        pytest.fail("NCQ_QEMU_BUILD is not set (scripts/test.sh sets it; "
                    "or run this file with --qemu)")
    return str(Path(build) / "qemu-system-x86_64")


@pytest.mark.parametrize("case", sorted(CASES))
def test_icount_virtual_time_is_deterministic(case):
    outs = runs(qemu_binary(), case, RUNS)
    for i, o in enumerate(outs[1:], 2):
        assert o == outs[0], (
            f"{case}: run {i} printed other virtual times than run 1 "
            f"({first_difference(outs[0], o)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qemu", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("cases", nargs="*", default=sorted(CASES))
    a = ap.parse_args()
    bad = 0
    for case in a.cases:
        t0 = time.monotonic()
        outs = runs(a.qemu, case, a.runs)
        diff = [i for i, o in enumerate(outs) if o != outs[0]]
        bad += bool(diff)
        print(f"{case}: {len(diff)} of {a.runs - 1} runs differ from run 1, "
              f"{len(set(outs))} distinct outputs "
              f"({time.monotonic() - t0:.1f} s)")
        for i in diff[:3]:
            print(f"  run {i + 1}: {first_difference(outs[0], outs[i])}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
