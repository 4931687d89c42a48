#!/usr/bin/env python3
"""Write seed inputs for QEMU's generic fuzzer that drive ncq-disk's
command path: set up AHCI port 0 and issue queued and non-queued
commands, then step the virtual clock so the model completes them.

Blind mutation does not find this on its own (docs/fuzzing.md): issuing a
command takes PxCLB, PxFB, PxCMD.ST/FRE and PxCI writes in that order plus
the command header, FIS and PRDT in guest memory.  The generic fuzzer fills
guest memory only when the device reads it, from the DMA patterns of the
input, taking the patterns in turn.  So each seed clears the patterns and
adds exactly the ones the next register write will consume: the command
list when the port starts; the command table (FIS) and then the PRDT when a
slot is issued.  libFuzzer mutates from there: other commands, counts,
LBAs, tags, registers, orders.

    scripts/fuzz-seeds.py DIR      writes DIR/<name> for each seed
    scripts/fuzz-seeds.py --check FUZZER DIR
                                   writes them, runs each once through
                                   FUZZER (qemu-fuzz-x86_64, environment as
                                   scripts/fuzz.sh sets it) with the
                                   device's trace on, and fails unless each
                                   completed the commands it should

--check is what keeps the seeds honest: a seed that no longer reaches the
device (a changed register, a pattern taken out of turn) completes nothing.

The input format is generic_fuzz.c's: operations separated by "FUZZ", the
first byte of each an opcode (modulo the number of operations).
"""

import collections
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

SEP = b"FUZZ"
OP_WRITE, OP_ADD_DMA, OP_CLEAR_DMA, OP_CLOCK_STEP = 3, 7, 8, 9
MMIO_LONG = 2

# AHCI: generic host control, port 0 registers (AHCI 1.3.1 section 3)
GHC = 0x04
P0 = 0x100
PxCLB, PxCLBU, PxFB, PxFBU = P0 + 0x00, P0 + 0x04, P0 + 0x08, P0 + 0x0C
PxIS, PxIE, PxCMD, PxSERR = P0 + 0x10, P0 + 0x14, P0 + 0x18, P0 + 0x30
PxSCTL, PxSACT, PxCI = P0 + 0x2C, P0 + 0x34, P0 + 0x38
CMD_ST, CMD_FRE = 1 << 0, 1 << 4
GHC_HR, GHC_IE, GHC_AE = 1 << 0, 1 << 1, 1 << 31

# Guest memory layout the seeds use
CLB, FB = 0x100000, 0x101000
CTBA = 0x200000          # slot n's command table at CTBA + n * 0x100
DATA = 0x400000          # every PRDT points here
PRD_BYTES = 0x10000      # one PRD entry covers up to 128 sectors

# ATA commands (ACS-3)
READ_FPDMA, WRITE_FPDMA = 0x60, 0x61
READ_DMA_EXT, WRITE_DMA_EXT = 0x25, 0x35
FLUSH_EXT, IDENTIFY, SET_FEATURES = 0xEA, 0xEC, 0xEF
READ_LOG_EXT, READ_LOG_DMA_EXT = 0x2F, 0x47
WRITE_LOG_EXT, WRITE_LOG_DMA_EXT = 0x3F, 0x57


def op_write(off, value):
    return bytes([OP_WRITE]) + struct.pack("<BBxxIQ", MMIO_LONG, 0, off,
                                           value)


def op_pattern(data, index=0, stride=0):
    return bytes([OP_ADD_DMA, index, stride]) + data


def op_clear():
    return bytes([OP_CLEAR_DMA])


def op_clock(n=1):
    return [bytes([OP_CLOCK_STEP])] * n


def port_start():
    """Program the port and start it: the command list is mapped (and
    filled from the one pattern) when PxCMD.ST is set."""
    # Command header (AHCI 4.2.2): CFL 5 dwords, one PRD entry, CTBA
    # incremented by 0x100 per slot through the pattern's index/stride.
    hdr = struct.pack("<HHIQ16x", 5, 1, 0, CTBA)
    return [
        op_write(GHC, GHC_AE | GHC_IE),
        op_write(PxCLB, CLB), op_write(PxCLBU, 0),
        op_write(PxFB, FB), op_write(PxFBU, 0),
        op_write(PxSERR, 0xFFFFFFFF), op_write(PxIS, 0xFFFFFFFF),
        op_write(PxIE, 0xFFFFFFFF),
        op_clear(), op_pattern(hdr, index=9, stride=1),
        op_write(PxCMD, CMD_ST | CMD_FRE),
    ]


def h2d(cmd, lba=0, count=0, features=0, device=0x40, icc=0):
    """Register H2D FIS (SATA 3.x 10.5.6), padded to the 0x80-byte
    command table header."""
    fis = struct.pack("<BBBB3BB3BBHBB", 0x27, 0x80, cmd, features & 0xFF,
                      lba & 0xFF, (lba >> 8) & 0xFF, (lba >> 16) & 0xFF,
                      device, (lba >> 24) & 0xFF, (lba >> 32) & 0xFF,
                      (lba >> 40) & 0xFF, features >> 8, count, icc, 0)
    return fis + bytes(0x80 - len(fis))


def fpdma(write, tag, lba, sectors, fua=False, prio=False):
    """READ/WRITE FPDMA QUEUED: count in FEATURES, tag in COUNT 7:3,
    priority in COUNT 15:14, FUA in DEVICE 7."""
    return h2d(WRITE_FPDMA if write else READ_FPDMA, lba,
               count=(tag << 3) | (0x8000 if prio else 0),
               features=sectors & 0xFFFF,
               device=0x40 | (0x80 if fua else 0))


def issue(slot, fis, ncq=True):
    """Issue one slot: its command table then its PRDT are read in this
    order while PxCI is written, so they take patterns 0 and 1."""
    prd = struct.pack("<QII", DATA, 0, PRD_BYTES - 1)
    ops = [op_clear(), op_pattern(fis), op_pattern(prd)]
    if ncq:
        ops.append(op_write(PxSACT, 1 << slot))
    return ops + [op_write(PxCI, 1 << slot)]


# What each seed completes, by trace op (docs/trace-schema.md): the reset
# seed's reads are cancelled, and of its writes only the one that
# completed before the port stopped counts (a port stop drops what the
# drive still holds, docs/device.md "Resets"); the tag-reuse seed aborts
# its queue, the error seed completes only the read issued after the log
# was read.
EXPECTED = {
    "ncq-read-1": {"R": 1},
    "ncq-read-8": {"R": 8},
    "ncq-mixed-flush": {"R": 3, "W": 3, "F": 1},
    "ncq-error-log": {"R": 1},
    "non-queued": {"R": 1, "W": 1, "F": 1},
    "ncq-tag-reuse": {},
    "ncq-reset": {"W": 1},
    "logs": {"R": 1},
}


def seeds():
    s = {}
    s["ncq-read-1"] = (port_start()
                       + issue(0, fpdma(False, 0, 0x1000, 8))
                       + op_clock(16))

    ops = port_start()
    for tag in range(8):
        ops += issue(tag, fpdma(False, tag, (tag * 7919 * 4096 * 97) % 781422768, 8))
    s["ncq-read-8"] = ops + op_clock(48)

    ops = port_start()
    mix = [(False, 0, 0x2000, 8, False, False),
           (True, 1, 0x800000, 16, False, False),
           (True, 2, 0x900000, 8, True, False),
           (False, 3, 0x4000000, 128, False, True),
           (True, 4, 0x2008, 8, False, False),
           (False, 5, 0x2000, 8, False, False)]
    for write, tag, lba, n, fua, prio in mix:
        ops += issue(tag, fpdma(write, tag, lba, n, fua, prio))
    ops += op_clock(24)
    ops += issue(0, h2d(FLUSH_EXT, device=0), ncq=False) + op_clock(8)
    s["ncq-mixed-flush"] = ops

    # An NCQ error (LBA past the end) halts the queue until the host reads
    # the NCQ command error log (page 10h) with READ LOG EXT.
    ops = port_start()
    ops += issue(0, fpdma(False, 0, 0x1000, 8))
    ops += issue(1, fpdma(False, 1, 0xFFFFFFFF00, 8))
    ops += op_clock(16)
    ops += issue(2, h2d(READ_LOG_EXT, lba=0x10, count=1, device=0),
                 ncq=False)
    ops += op_clock(8) + issue(3, fpdma(False, 3, 0x3000, 8)) + op_clock(8)
    s["ncq-error-log"] = ops

    ops = port_start()
    for slot, fis in enumerate([
            h2d(IDENTIFY, device=0),
            h2d(SET_FEATURES, features=0x82, device=0),   # write cache off
            h2d(WRITE_DMA_EXT, lba=0x5000, count=8),
            h2d(READ_DMA_EXT, lba=0x5000, count=8),
            h2d(SET_FEATURES, features=0x02, device=0),   # write cache on
            h2d(READ_LOG_EXT, lba=0x00, count=1, device=0),
            h2d(READ_LOG_DMA_EXT, lba=0x30, count=1, device=0),
            h2d(FLUSH_EXT, device=0)]):
        ops += issue(slot, fis, ncq=False) + op_clock(4)
    s["non-queued"] = ops

    # A tag reused while still queued is an NCQ error.
    ops = port_start()
    ops += issue(4, fpdma(False, 4, 0x8000, 8))
    ops += issue(5, fpdma(False, 4, 0x9000, 8))
    s["ncq-tag-reuse"] = ops + op_clock(16)

    # Queued commands cut short: the port stopped, COMRESET, HBA reset.
    ops = port_start()
    for tag in range(4):
        ops += issue(tag, fpdma(tag & 1, tag, 0x10000 * (tag + 1), 8))
    ops += op_clock(1) + [op_write(PxCMD, CMD_FRE)] + op_clock(2)
    ops += [op_write(PxSCTL, 1), op_write(PxSCTL, 0)] + op_clock(2)
    ops += port_start() + issue(0, fpdma(False, 0, 0x1000, 8))
    ops += [op_write(GHC, GHC_HR)] + op_clock(4)
    s["ncq-reset"] = ops

    # The log commands, PIO and DMA (hw/ide/ncq-disk/ncq-disk-log.c's
    # table), a READ DMA EXT with a CDL index in FEATURE; last a WRITE LOG
    # DMA EXT of the CDL log (18h: refused without cdl=on, which halts the
    # port; stored with it) and a WRITE LOG EXT of a read-only log.
    ops = port_start()
    for slot, fis in enumerate([
            h2d(IDENTIFY, device=0),
            h2d(READ_LOG_DMA_EXT, lba=0x04, count=2, device=0),
            h2d(READ_LOG_EXT, lba=0x11, count=1, device=0),
            h2d(READ_LOG_DMA_EXT, lba=0x30, count=9, device=0),
            h2d(READ_DMA_EXT, lba=0x6000, count=8, features=1),
            h2d(WRITE_LOG_DMA_EXT, lba=0x18, count=1, device=0),
            h2d(WRITE_LOG_EXT, lba=0x10, count=1, device=0)]):
        ops += issue(slot, fis, ncq=False) + op_clock(4)
    s["logs"] = ops
    return s


def encode(ops):
    for op in ops:
        if SEP in op:
            raise ValueError(f"operation {op.hex()} contains the separator")
    return SEP.join(ops)


def write(out):
    out.mkdir(parents=True, exist_ok=True)
    for name, ops in seeds().items():
        (out / name).write_bytes(encode(ops))
    return sorted(seeds())


def trace_ops(path):
    ops = collections.Counter()
    for line in path.read_text().splitlines()[2:]:
        if line and not line.startswith("#"):
            ops[line.split(",")[1]] += 1
    return dict(ops)


def check(fuzzer, out):
    base = os.environ.get("QEMU_FUZZ_ARGS")
    if not base or "ncq-disk" not in base.split()[-1]:
        sys.exit("fuzz-seeds: QEMU_FUZZ_ARGS must end with the ncq-disk "
                 "-device (run it through scripts/fuzz.sh --check-seeds)")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in write(out):
            trace = Path(tmp) / f"{name}.trace"
            env = dict(os.environ, QEMU_FUZZ_ARGS=f"{base},trace={trace}")
            # -detect_leaks=0: libFuzzer otherwise runs an input a second
            # time whenever it saw more mallocs than frees, which QEMU's
            # helper threads make depend on host timing (1 run in 40 did).
            run = subprocess.run([fuzzer, "--fuzz-target=generic-fuzz",
                                  "-detect_leaks=0", str(out / name)],
                                 env=env,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True,
                                 errors="replace", timeout=300)
            got = trace_ops(trace) if trace.exists() else None
            ok = run.returncode == 0 and got == EXPECTED[name]
            bad += not ok
            print(f"seed {name}: {'ok' if ok else 'FAILED'}, completed "
                  f"{got} (want {EXPECTED[name]}), fuzzer exit "
                  f"{run.returncode}")
            if run.returncode != 0:
                print(run.stdout[-3000:])
    return bad == 0


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "--check":
        sys.exit(0 if check(args[1], Path(args[2])) else 1)
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit("usage: fuzz-seeds.py DIR | fuzz-seeds.py --check FUZZER DIR")
    for name in write(Path(args[0])):
        print(Path(args[0]) / name)


if __name__ == "__main__":
    main()
