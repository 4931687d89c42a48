/*
 * ncq-disk: non-queued commands
 *
 * Commands the generic IDE table does not know (READ LOG EXT) are served
 * here; media commands (reads, writes, FLUSH CACHE) and TRIM are held busy
 * until the model's deadline and then carried out by the generic handlers, with
 * their host I/O finished inside the deadline's timer callback so that
 * virtual time does not depend on the host.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "system/block-backend.h"
#include "ide-internal.h"
#include "hw/ide/ncq-disk.h"

#define ATA_CMD_READ_LOG_EXT    0x2f

/* Decode a non-queued media command; false if it is none. */
static bool ncq_disk_media_cmd(IDEState *s, uint8_t cmd, NcqCmd *mc)
{
    bool lba48 = false;
    uint32_t count;

    *mc = (NcqCmd) { .op = NCQ_OP_READ, .id = NCQ_ID_NONQUEUED };
    switch (cmd) {
    case WIN_READ_EXT:
    case WIN_READDMA_EXT:
    case WIN_MULTREAD_EXT:
        lba48 = true;
        break;
    case WIN_READ:
    case WIN_READDMA:
    case WIN_MULTREAD:
        break;
    case WIN_WRITE_EXT:
    case WIN_WRITEDMA_EXT:
    case WIN_MULTWRITE_EXT:
        lba48 = true;
        mc->op = NCQ_OP_WRITE;
        break;
    case WIN_WRITE:
    case WIN_WRITEDMA:
    case WIN_MULTWRITE:
        mc->op = NCQ_OP_WRITE;
        break;
    case WIN_FLUSH_CACHE:
    case WIN_FLUSH_CACHE_EXT:
        mc->op = NCQ_OP_FLUSH;
        return true;
    default:
        return false;
    }
    if (!(s->select & (1 << 6))) {
        return false;           /* CHS addressing: leave it to the core */
    }
    if (lba48) {
        mc->lba = ((uint64_t)s->hob_hcyl << 40) |
                  ((uint64_t)s->hob_lcyl << 32) |
                  ((uint64_t)s->hob_sector << 24) |
                  ((uint64_t)s->hcyl << 16) | (s->lcyl << 8) | s->sector;
        count = (s->hob_nsector << 8) | s->nsector;
        mc->sectors = count ? count : 65536;
    } else {
        mc->lba = ((uint64_t)(s->select & 0x0f) << 24) |
                  ((uint64_t)s->hcyl << 16) | (s->lcyl << 8) | s->sector;
        count = s->nsector & 0xff;
        mc->sectors = count ? count : 256;
    }
    return mc->lba + mc->sectors <= s->nb_sectors;
}

/*
 * The held command meets an injected media error at its deadline: status
 * DRDY|ERR, the error register, and the LBA registers naming the first
 * failing sector, as ACS asks of READ/WRITE (DMA) EXT.
 */
static void ncq_disk_held_error(NcqDisk *d, IDEState *s, uint8_t cmd)
{
    switch (cmd) {
    case WIN_READ_EXT:
    case WIN_READDMA_EXT:
    case WIN_MULTREAD_EXT:
    case WIN_WRITE_EXT:
    case WIN_WRITEDMA_EXT:
    case WIN_MULTWRITE_EXT:
        s->lba48 = 1;
        break;
    default:
        s->lba48 = 0;
    }
    s->status = READY_STAT | ERR_STAT;
    s->error = d->held_error;
    ide_set_sector(s, d->held_error_lba);
    d->held_error = 0;
    d->injected_errors++;
}

bool ncq_disk_exec_cmd(IDEDevice *dev, IDEState *s, uint8_t cmd,
                       bool *complete)
{
    NcqDisk *d = NCQ_DISK(dev);
    int64_t now;
    NcqCmd mc;

    if (d->passthrough) {
        if (d->held_error) {
            ncq_disk_held_error(d, s, cmd);
            *complete = true;
            return true;
        }
        return false;
    }
    if (d->powered_off) {
        *complete = false;      /* a dead drive stays busy */
        return true;
    }
    if (d->aborting) {
        /*
         * Fetched while the drive drops its queue (ncq_disk_drop()): it
         * came with the queued commands, so it is aborted like any
         * non-queued command that meets queued ones, and the error being
         * reported already covers it.
         */
        d->guest_errors++;
        ide_abort_command(s);
        *complete = true;
        return true;
    }
    if (ncq_disk_outstanding(d)) {
        ncq_disk_nonqueued_error(d);
        ide_abort_command(s);
        *complete = true;
        return true;
    }
    if (cmd == ATA_CMD_READ_LOG_EXT) {
        *complete = ncq_disk_read_log(d, s);
        return true;
    }
    if (cmd == WIN_DSM && !d->dev.conf.discard_granularity) {
        /* IDENTIFY word 169 says no TRIM: the drive knows no DSM. */
        ide_abort_command(s);
        *complete = true;
        return true;
    }
    if (!d->timing) {
        return false;           /* the generic handler, at once */
    }
    if (cmd == WIN_DSM) {
        /*
         * TRIM: the generic handler completes it from a bottom half, at a
         * host-dependent point of the guest's run.  Held until the
         * model's deadline like a media command, it completes inside the
         * deadline's timer callback: at a virtual time.
         */
        mc = (NcqCmd) { .op = NCQ_OP_OTHER, .id = NCQ_ID_NONQUEUED };
    } else if (!ncq_disk_media_cmd(s, cmd, &mc)) {
        return false;           /* the generic handler, at once */
    }
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    if (mc.op == NCQ_OP_WRITE) {
        ncq_disk_save_undo(d, mc.lba, mc.sectors, now);
    }
    if (ncq_model_submit(d->model, &mc, now) < 0) {
        return false;
    }
    /* Busy until the model's deadline; ncq_disk_run_held() then. */
    d->held = true;
    d->held_cmd = cmd;
    ncq_disk_arm_timer(d);
    *complete = false;
    return true;
}
