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
import math
import os
import re
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
# Power modes (docs/power-modes.md)
STANDBY_IMM, IDLE, CHECK_POWER, SLEEP = 0xE0, 0xE3, 0xE5, 0xE6
# SMART READ LOG / WRITE LOG (B0h, FEATURE D5h/D6h, LBA mid/high 4Fh/C2h)
SMART, SMART_READ_LOG, SMART_WRITE_LOG = 0xB0, 0xD5, 0xD6
SMART_LBA = 0x4F << 8 | 0xC2 << 16
# SCT command transport (docs/smart.md): logs E0h and E1h
LOG_SCT_STATUS, LOG_SCT_DATA = 0xE0, 0xE1
# Host-managed zones (docs/smr.md): ZAC MANAGEMENT IN/OUT, REQUEST SENSE
# DATA EXT, the queued forms NCQ NON-DATA 63h/07h and RECEIVE FPDMA
# QUEUED 65h/02h; wd-hc620's first sequential zone
ZAC_IN, ZAC_OUT, REQ_SENSE_EXT = 0x4A, 0x9F, 0x0B
NCQ_NON_DATA, RECV_FPDMA = 0x63, 0x65
ZAC_OPEN, ZAC_CLOSE, ZAC_FINISH, ZAC_RESET = 0x03, 0x01, 0x02, 0x04
ZAC_Z1 = 524 * 524288


def op_write(off, value):
    return bytes([OP_WRITE]) + struct.pack("<BBxxIQ", MMIO_LONG, 0, off,
                                           value)


def op_pattern(data, index=0, stride=0):
    return bytes([OP_ADD_DMA, index, stride]) + data


def op_clear():
    return bytes([OP_CLEAR_DMA])


def op_clock(n=1):
    return [bytes([OP_CLOCK_STEP])] * n


# The generic fuzzer's clock step (qtest "clock_step") advances virtual
# time to the next deadline of any timer, and q35's PIT runs from reset
# (channel 0, mode 3, count 65536): its output changes every 27.46 ms,
# two deadlines 1 ns apart each time (measured: "clock_step" answers OK
# 27462700, 27462701, 54925401, ...).  The drive's deadlines come between.
PIT_TICK_MS = 65536 / 1193182 / 2 * 1000
SPINUP_MS = 10000       # st3400620as, the fuzzer's model (power-modes.md)


def op_wait(ms):
    """Clock steps enough for @ms of virtual time to pass (two per PIT
    tick, and some for the drive's own deadlines on the way)."""
    return op_clock(2 * math.ceil(ms / PIT_TICK_MS) + 8)


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


def h2d(cmd, lba=0, count=0, features=0, device=0x40, icc=0, aux=0):
    """Register H2D FIS (SATA 3.x 10.5.6), with the AUXILIARY field of an
    NCQ command, padded to the 0x80-byte command table header."""
    fis = struct.pack("<BBBB3BB3BBHBBI", 0x27, 0x80, cmd, features & 0xFF,
                      lba & 0xFF, (lba >> 8) & 0xFF, (lba >> 16) & 0xFF,
                      device, (lba >> 24) & 0xFF, (lba >> 32) & 0xFF,
                      (lba >> 40) & 0xFF, features >> 8, count, icc, 0, aux)
    return fis + bytes(0x80 - len(fis))


def fpdma(write, tag, lba, sectors, fua=False, prio=False):
    """READ/WRITE FPDMA QUEUED: count in FEATURES, tag in COUNT 7:3,
    priority in COUNT 15:14, FUA in DEVICE 7."""
    return h2d(WRITE_FPDMA if write else READ_FPDMA, lba,
               count=(tag << 3) | (0x8000 if prio else 0),
               features=sectors & 0xFFFF,
               device=0x40 | (0x80 if fua else 0))


def zac_ncq_out(tag, action, lba, all_zones=False):
    """NCQ NON-DATA, subcommand 07h (ZAC MANAGEMENT OUT): the action in
    AUXILIARY 7:0, ALL in bit 8 (Linux's ata_scsi_zbc_out_xlat())."""
    return h2d(NCQ_NON_DATA, lba, count=tag << 3, features=0x07,
               aux=action | (0x100 if all_zones else 0))


def zac_ncq_report(tag, lba, pages=1, options=0x80):
    """RECEIVE FPDMA QUEUED, subcommand 02h in COUNT 12:8 (ZAC MANAGEMENT
    IN): the pages in FEATURE, REPORT ZONES (00h) with its options in
    AUXILIARY 15:8 (Linux's ata_scsi_zbc_in_xlat())."""
    return h2d(RECV_FPDMA, lba, count=(tag << 3) | (0x02 << 8),
               features=pages, aux=options << 8)


def issue(slot, fis, ncq=True, data=None):
    """Issue one slot: its command table then its PRDT are read in this
    order while PxCI is written, so they take patterns 0 and 1; a data-out
    command's data (a WRITE LOG's sector) is read next, from pattern 2."""
    prd = struct.pack("<QII", DATA, 0, PRD_BYTES - 1)
    ops = [op_clear(), op_pattern(fis), op_pattern(prd)]
    if data is not None:
        ops.append(op_pattern(data))
    if ncq:
        ops.append(op_write(PxSACT, 1 << slot))
    return ops + [op_write(PxCI, 1 << slot)]


# The zac seeds' completions and zone trace events, as --check-seeds
# counted them on 2026-11-27 (docs/fuzzing.md), checked by the comment:
# zac: of its six actions OPEN, CLOSE, FINISH and RESET ALL are done, the
# RESET of a conventional zone and the OPEN inside a zone refused (each
# traced); errors: the write off the pointer, the reserved reporting
# option and those two.  zac-queued: OPEN, the good REPORT ZONES and the
# RESET complete, the reserved option is the one NCQ error, the read after
# the error log completes.
ZAC_EXPECTED = {"O": 6, "W": 1}
ZAC_QUEUED_EXPECTED = {"O": 3, "W": 1, "R": 1}
ZAC_EVENTS = {"report": 2, "action": 6, "error": 4}
ZAC_QUEUED_EVENTS = {"queued": 4, "report": 1, "error": 1}

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
    # SET FEATURES 82h writes the cache back first: a flush (F) of its own
    "non-queued": {"R": 1, "W": 1, "F": 2},
    "ncq-tag-reuse": {},
    "ncq-reset": {"W": 1},
    "logs": {"R": 1},
    "sct": {"R": 1},
    "power-modes": {"R": 2, "F": 2},
    "zac": ZAC_EXPECTED,
    "zac-queued": ZAC_QUEUED_EXPECTED,
    # the held writes are dropped by the resets, so none completes
    "held-write-reset": {},
    # the write fails on the host (its slot halts, the model completed
    # it), the read after it completes: the fuzzer serves no VM stop
    "werror-stop-reset": {"W": 1, "R": 1},
}

# Seeds for another drive than the campaign's (QEMU_FUZZ_ARGS'): the
# ncq-disk properties they add; where they name a model the null-co disk
# is then its capacity (scripts/model-bytes.sh), which a host-managed
# model needs exactly.  --check-seeds runs them so; a campaign runs every seed on its
# own drive (the fuzz.sh --ci leg model=wd-hc620 runs these on theirs).
SEED_DRIVE = {
    "zac": "model=wd-hc620",
    "zac-queued": "model=wd-hc620",
    "werror-stop-reset": "werror=stop,rerror=stop",
}

# Seeds whose drive's first write fails on the host (EIO): --check-seeds
# puts blkdebug between the drive and its null-co disk.  A campaign's
# drive has no such errors (its null-co disk never fails): there these
# seeds reach only what follows the write.
SEED_HOST_ERRORS = {"werror-stop-reset"}


def host_errors(args):
    """QEMU_FUZZ_ARGS @args with blkdebug failing the first write."""
    return re.sub(r"file=null-co://,(.*?)file\.read-zeroes=on,file\.size=",
                  r"\1file.driver=blkdebug,file.image.driver=null-co,"
                  r"file.inject-error.0.event=write_aio,"
                  r"file.inject-error.0.errno=5,file.inject-error.0.once=on,"
                  r"file.image.read-zeroes=on,file.image.size=", args)


def model_bytes(props):
    """The capacity in bytes of the model @props names."""
    return int(subprocess.run(
        [str(Path(__file__).resolve().parent / "model-bytes.sh"),
         "ncq-disk," + props], check=True, capture_output=True,
        text=True).stdout)

# What each seed must do that the device trace does not record: QEMU trace
# events of the device (hw/ide/ncq-disk/trace-events) in the fuzzer's log.
# "logs": the log commands that reached the drive's log code, each once at
# least (the trace's name and log: a WRITE LOG (DMA) EXT whose data
# arrived is traced as such; READ/WRITE LOG DMA EXT are refused before
# that on the fuzzer's ATA-7 model, which predates them, and served with
# --props cdl=on); "spin-up"/"spin-down": how many, the last spin-up the
# power-on at the fuzzer's reset after the input.
EXPECTED_EVENTS = {
    "logs": {"logs": {"READ LOG EXT log 0x11", "WRITE LOG EXT log 0x10"}},
    "sct": {"logs": {"SMART WRITE LOG log 0xe0", "SMART READ LOG log 0xe0",
                     "WRITE LOG (DMA) EXT log 0xe0", "READ LOG EXT log 0xe1",
                     "READ LOG EXT log 0xe0"}},
    "power-modes": {"spin-up": 3, "spin-down": 3},
    "zac": {"zac": ZAC_EVENTS},
    "zac-queued": {"zac": ZAC_QUEUED_EVENTS},
    # a COMRESET, a port stop and an HBA reset, each with a write held
    "held-write-reset": {"held-dropped": 3},
    # one host I/O failed: the first write, through blkdebug
    "werror-stop-reset": {"host-error": 1},
}
TRACE_EVENTS = ("ncq_disk_read_log", "ncq_disk_write_log", "ncq_disk_spin_up",
                "ncq_disk_spin_down", "ncq_disk_zac_*", "ncq_disk_held_dropped",
                "ncq_disk_host_error")


def sct(action, function, *words):
    """An SCT command: one sector, action and function codes, then its
    words (ACS-3 8.3: ERC's selection code and value, a table's id)."""
    return struct.pack(f"<{2 + len(words)}H", action, function,
                       *words).ljust(512, b"\0")


def smart_log(feature, log, count=1):
    return h2d(SMART, lba=log | SMART_LBA, count=count, features=feature,
               device=0)


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

    # SCT command transport: Error Recovery Control set to 7 s and read
    # back through SMART WRITE LOG E0h, the SCT status read through SMART
    # READ LOG and READ LOG EXT E0h, the temperature history table asked
    # for through WRITE LOG EXT E0h and read from E1h; a READ DMA EXT; then
    # what the drive refuses (ABRT, the SCT status's error code): an
    # unknown action code, a read timer below the minimum, and READ/WRITE
    # LOG DMA EXT of E0h/E1h (refused by the ATA-7 model, served with
    # cdl=on).  Every command in slot 0: with a PIO data-out command
    # (SMART WRITE LOG) in slot n, the next slot's command table took the
    # wrong pattern (handle_cmd_unhandled_fis in QEMU's trace) and the
    # commands after it ran again (the READ DMA EXT four times).
    ops = port_start()
    for slot, (fis, data) in enumerate([
            (h2d(IDENTIFY, device=0), None),
            (smart_log(SMART_WRITE_LOG, LOG_SCT_STATUS), sct(3, 1, 1, 70)),
            (smart_log(SMART_READ_LOG, LOG_SCT_STATUS), None),
            (smart_log(SMART_WRITE_LOG, LOG_SCT_STATUS), sct(3, 2, 1)),
            (h2d(WRITE_LOG_EXT, lba=LOG_SCT_STATUS, count=1, device=0),
             sct(5, 1, 2)),
            (h2d(READ_LOG_EXT, lba=LOG_SCT_DATA, count=1, device=0), None),
            (h2d(READ_LOG_EXT, lba=LOG_SCT_STATUS, count=1, device=0), None),
            (h2d(READ_DMA_EXT, lba=0x6000, count=8), None),
            (smart_log(SMART_WRITE_LOG, LOG_SCT_STATUS), sct(0x99, 1)),
            (smart_log(SMART_WRITE_LOG, LOG_SCT_STATUS), sct(3, 1, 1, 1)),
            (h2d(WRITE_LOG_DMA_EXT, lba=LOG_SCT_STATUS, count=1, device=0),
             sct(5, 1, 2)),
            (h2d(READ_LOG_DMA_EXT, lba=LOG_SCT_DATA, count=1, device=0),
             None)]):
        ops += issue(0, fis, ncq=False, data=data) + op_clock(4)
    s["sct"] = ops

    # Power modes: STANDBY IMMEDIATE (a FLUSH in the trace) and a read
    # that waits the 10 s spin-up; SLEEP (a FLUSH), a command aborted in
    # it, a COMRESET that wakes the drive into standby, a queued read that
    # spins it up again; IDLE with a 5 s standby timer, and the timer
    # running out (a spin-down).  op_wait(): each clock step goes only to
    # the PIT's next tick (see op_wait), so a wait of seconds takes
    # hundreds of steps.
    ops = port_start()
    ops += issue(0, h2d(CHECK_POWER, device=0), ncq=False) + op_clock(1)
    ops += issue(1, h2d(STANDBY_IMM, device=0), ncq=False) + op_wait(200)
    ops += issue(2, h2d(READ_DMA_EXT, lba=0x6000, count=8), ncq=False)
    ops += op_wait(SPINUP_MS + 200)
    ops += issue(3, h2d(SLEEP, device=0), ncq=False) + op_wait(200)
    ops += issue(4, h2d(CHECK_POWER, device=0), ncq=False) + op_clock(2)
    ops += [op_write(PxSCTL, 1), op_write(PxSCTL, 0)] + op_clock(2)
    ops += port_start()
    ops += issue(1, fpdma(False, 1, 0x7000, 8)) + op_wait(SPINUP_MS + 200)
    ops += issue(2, h2d(IDLE, count=1, device=0), ncq=False)
    ops += op_wait(5000 + 200)
    s["power-modes"] = ops

    # Host-managed zones on wd-hc620 (docs/smr.md), non-queued: sense data
    # reporting on (SET FEATURES C3h, as Linux does), page 09h and logs
    # 12h/13h, REPORT ZONES (partial, one page) from inside a zone, OPEN,
    # a write at the pointer, CLOSE, a write off it (refused, its sense
    # read by REQUEST SENSE DATA EXT), FINISH, RESET ALL; then what ZAC
    # refuses: a reserved reporting option, a RESET of a conventional
    # zone, an OPEN inside a zone.  Slot 0 throughout.
    ops = port_start()
    for fis in [
            h2d(IDENTIFY, device=0),
            h2d(SET_FEATURES, features=0xC3, count=1, device=0),
            h2d(READ_LOG_EXT, lba=0x30 | 0x09 << 8, count=1, device=0),
            h2d(READ_LOG_EXT, lba=0x12, count=1, device=0),
            h2d(READ_LOG_EXT, lba=0x13, count=1, device=0),
            h2d(ZAC_IN, lba=ZAC_Z1 - 1000, count=1, features=0x8000),
            h2d(ZAC_OUT, lba=ZAC_Z1, features=ZAC_OPEN),
            h2d(WRITE_DMA_EXT, lba=ZAC_Z1, count=8),
            h2d(ZAC_OUT, lba=ZAC_Z1, features=ZAC_CLOSE),
            h2d(WRITE_DMA_EXT, lba=ZAC_Z1 + 64, count=8),
            h2d(REQ_SENSE_EXT, device=0),
            h2d(ZAC_OUT, lba=ZAC_Z1, features=ZAC_FINISH),
            h2d(ZAC_OUT, lba=0, features=ZAC_RESET | 0x100),
            h2d(ZAC_IN, lba=0, count=1, features=0x0800),
            h2d(ZAC_OUT, lba=0, features=ZAC_RESET),
            h2d(ZAC_OUT, lba=ZAC_Z1 + 8, features=ZAC_OPEN)]:
        ops += issue(0, fis, ncq=False) + op_clock(4)
    s["zac"] = ops

    # The queued forms: NCQ NON-DATA OPEN, RECEIVE FPDMA QUEUED REPORT
    # ZONES, a WRITE FPDMA QUEUED at the pointer, NCQ NON-DATA RESET of
    # the zone in flight with it; then a reserved reporting option (an
    # NCQ error, the sense in log 10h), READ LOG EXT 10h, a queued read.
    ops = port_start()
    ops += issue(0, h2d(SET_FEATURES, features=0xC3, count=1, device=0),
                 ncq=False) + op_clock(4)
    ops += issue(1, zac_ncq_out(1, ZAC_OPEN, ZAC_Z1)) + op_clock(8)
    ops += issue(2, zac_ncq_report(2, ZAC_Z1)) + op_clock(8)
    ops += issue(3, fpdma(True, 3, ZAC_Z1, 8))
    ops += issue(4, zac_ncq_out(4, ZAC_RESET, ZAC_Z1)) + op_clock(16)
    ops += issue(5, zac_ncq_report(5, 0, options=0x08)) + op_clock(8)
    ops += issue(6, h2d(READ_LOG_EXT, lba=0x10, count=1, device=0),
                 ncq=False) + op_clock(8)
    ops += issue(7, fpdma(False, 7, 0x1000, 8)) + op_clock(8)
    s["zac-queued"] = ops

    # A non-queued WRITE DMA EXT the drive holds until its deadline,
    # dropped by a COMRESET, then by a port stop, then by an HBA reset,
    # each issued before the clock moves: the drive writes the held data
    # (docs/device.md, "Resets") while the reset runs.
    ops = port_start()
    ops += issue(0, h2d(WRITE_DMA_EXT, lba=0x7000, count=8), ncq=False)
    ops += [op_write(PxSCTL, 1), op_write(PxSCTL, 0)] + op_clock(2)
    ops += port_start()
    ops += issue(1, h2d(WRITE_DMA_EXT, lba=0x7100, count=8), ncq=False)
    ops += [op_write(PxCMD, CMD_FRE)] + op_clock(2)
    ops += port_start()
    ops += issue(2, h2d(WRITE_DMA_EXT, lba=0x7200, count=8), ncq=False)
    ops += [op_write(GHC, GHC_HR)] + op_clock(4)
    s["held-write-reset"] = ops

    # A queued write whose host write fails under werror=stop (with
    # --check-seeds; SEED_HOST_ERRORS): at its deadline AHCI halts its
    # slot and asks for a VM stop, which the generic fuzzer never serves
    # (it runs the main loop itself and does not look for stop requests).
    # A read completes, then a COMRESET, a port stop and an HBA reset meet
    # the halted slot.  (No monitor either: no device_del, no cont.)
    ops = port_start()
    ops += issue(0, fpdma(True, 0, 0x8000, 8))
    ops += issue(1, fpdma(False, 1, 0x9000, 8)) + op_clock(16)
    ops += [op_write(PxSCTL, 1), op_write(PxSCTL, 0)] + op_clock(2)
    ops += port_start() + [op_write(PxCMD, CMD_FRE)]
    ops += [op_write(GHC, GHC_HR)] + op_clock(4)
    s["werror-stop-reset"] = ops
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


def event_counts(path, want):
    """What the fuzzer log's trace events say of each key of @want: the
    set of log commands ("NAME log 0xNN"), the number of spin-ups and
    spin-downs."""
    text = path.read_text(errors="replace") if path.exists() else ""
    got = {}
    for key in want:
        if key == "zac":
            got[key] = collections.Counter(
                re.findall(r"\bncq_disk_zac_(\w+) disk ", text))
            got[key] = dict(got[key])
        elif key == "held-dropped":
            got[key] = len(re.findall(r"\bncq_disk_held_dropped disk \S+ "
                                      r"held command 0x35 ", text))
        elif key == "host-error":
            got[key] = len(re.findall(r"\bncq_disk_host_error disk \S+ "
                                      r"tag 0: its host I/O failed \(-5\)",
                                      text))
        elif key == "logs":
            got[key] = set(re.findall(r"\bncq_disk_\w+_log disk \S+ "
                                      r"(.+? log 0x[0-9a-f]{2}) ", text))
        else:
            got[key] = len(re.findall(r"\bncq_disk_spin_" + key[5:] + " ",
                                      text))
    return got


def check(fuzzer, out):
    base = os.environ.get("QEMU_FUZZ_ARGS")
    if not base or "ncq-disk" not in base.split()[-1]:
        sys.exit("fuzz-seeds: QEMU_FUZZ_ARGS must end with the ncq-disk "
                 "-device (run it through scripts/fuzz.sh --check-seeds)")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in write(out):
            trace = Path(tmp) / f"{name}.trace"
            events = Path(tmp) / f"{name}.events"
            # the device trace (trace=) and QEMU's trace events of the
            # device (-d trace:..., to -D's file)
            dflag = ",".join(f"trace:{e}" for e in TRACE_EVENTS)
            args = base
            if name in SEED_DRIVE:
                props = SEED_DRIVE[name]
                if "model=" in props:
                    args = re.sub(r"file\.size=\d+",
                                  f"file.size={model_bytes(props)}", args)
                args += "," + props
            if name in SEED_HOST_ERRORS:
                args = host_errors(args)
            env = dict(os.environ, QEMU_FUZZ_ARGS=f"-d {dflag} -D {events} "
                       f"{args},trace={trace}")
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
            want_ev = EXPECTED_EVENTS.get(name, {})
            got_ev = event_counts(events, want_ev)
            ok = (run.returncode == 0 and got == EXPECTED[name] and
                  got_ev == want_ev)
            bad += not ok
            print(f"seed {name}: {'ok' if ok else 'FAILED'}, completed "
                  f"{got} (want {EXPECTED[name]})"
                  + (f", events {got_ev} (want {want_ev})" if want_ev
                     else "") + f", fuzzer exit {run.returncode}")
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
