/*
 * ncq-disk: non-queued commands
 *
 * Commands the generic IDE table does not know (the log commands) are served
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
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/memalign.h"
#include "qemu/timer.h"
#include "block/aio-wait.h"
#include "system/block-backend.h"
#include "system/cpu-timers.h"
#include "system/dma.h"
#include "../ide-internal.h"
#include "ncq-disk.h"
#include "trace.h"

/* Command codes the generic IDE core does not name */
#define ATA_CMD_REQ_SENSE_DATA      0x0b
#define ATA_CMD_READ_LOG_EXT        0x2f
#define ATA_CMD_WRITE_LOG_EXT       0x3f
#define ATA_CMD_READ_LOG_DMA_EXT    0x47
#define ATA_CMD_WRITE_LOG_DMA_EXT   0x57
#define ATA_CMD_READ_FPDMA_QUEUED   0x60
#define ATA_CMD_WRITE_FPDMA_QUEUED  0x61
#define ATA_CMD_ZAC_MGMT_IN         0x4a
#define ATA_CMD_ZAC_MGMT_OUT        0x9f

/* SET FEATURES subcommand: disable the volatile write cache */
#define ATA_SETFEATURES_WC_OFF      0x82

/* A sector count register of 0 means the largest count */
#define ATA_LBA28_MAX_SECTORS       256
#define ATA_LBA48_MAX_SECTORS       65536

/* What the drive does with a command: NcqDiskCmd.flags */
/* The model times it: busy until its deadline, then the core runs it */
#define NCQ_CMD_TIMED       (1u << 0)
/* It moves the sectors its LBA and count registers name */
#define NCQ_CMD_SECTORS     (1u << 1)
/* ...with a 48-bit LBA and a 16-bit count (the EXT commands) */
#define NCQ_CMD_LBA48       (1u << 2)
/* READ/WRITE FPDMA QUEUED: AHCI hands them over through ncq_submit() */
#define NCQ_CMD_QUEUED      (1u << 3)
/* Served by this device: READ/WRITE LOG (DMA) EXT (ncq-disk-log.c) */
#define NCQ_CMD_LOG         (1u << 4)
/* DATA SET MANAGEMENT (TRIM): refused when IDENTIFY offers no TRIM */
#define NCQ_CMD_TRIM        (1u << 5)
/* SET FEATURES: the drive's own subcommands first (ncq-disk-cdl.c) */
#define NCQ_CMD_FEATURES    (1u << 7)
/* SMART: served by this device (ncq-disk-smart.c) */
#define NCQ_CMD_SMART       (1u << 8)
/* A CDL index in FEATURE bits 2:0 (ACS-5; ncq-disk-cdl.c) */
#define NCQ_CMD_CDL         (1u << 9)
/* REQUEST SENSE DATA EXT (ncq-disk-cdl.c) */
#define NCQ_CMD_SENSE       (1u << 10)
/*
 * Power modes (ncq-disk-pm.c): held as a FLUSH when the cache must be
 * written or the spindle come up first
 */
#define NCQ_CMD_PM          (NCQ_CMD_TIMED | (1u << 11))
/* ZAC MANAGEMENT IN/OUT: a host-managed model's zones (ncq-disk-zac.c) */
#define NCQ_CMD_ZAC         (NCQ_CMD_TIMED | (1u << 12))

/* A read or write of sectors, 28-bit and 48-bit */
#define NCQ_CMD_MEDIA       (NCQ_CMD_TIMED | NCQ_CMD_SECTORS)
#define NCQ_CMD_MEDIA_EXT   (NCQ_CMD_MEDIA | NCQ_CMD_LBA48)

typedef struct NcqDiskCmd {
    NcqOp op;               /* what the model times */
    unsigned flags;
} NcqDiskCmd;

/*
 * The commands the drive treats apart from the generic IDE table; any
 * other command goes to the generic handler at once.  Indexed by command
 * code, as hw/ide/core.c's ide_cmd_table.  FLUSH CACHE EXT names no
 * sectors, so it has no NCQ_CMD_LBA48: an error it meets reports its LBA
 * in the 28-bit registers, as DSM's does.
 */
static const NcqDiskCmd ncq_disk_cmd_table[0x100] = {
    [WIN_DSM]                   = { NCQ_OP_OTHER, NCQ_CMD_TIMED |
                                                  NCQ_CMD_TRIM },
    [WIN_READ]                  = { NCQ_OP_READ,  NCQ_CMD_MEDIA },
    [WIN_READ_EXT]              = { NCQ_OP_READ,  NCQ_CMD_MEDIA_EXT },
    [WIN_READDMA_EXT]           = { NCQ_OP_READ,  NCQ_CMD_MEDIA_EXT |
                                                  NCQ_CMD_CDL },
    [WIN_MULTREAD_EXT]          = { NCQ_OP_READ,  NCQ_CMD_MEDIA_EXT },
    [ATA_CMD_READ_LOG_EXT]      = { NCQ_OP_OTHER, NCQ_CMD_LOG },
    [ATA_CMD_WRITE_LOG_EXT]     = { NCQ_OP_OTHER, NCQ_CMD_LOG },
    [ATA_CMD_READ_LOG_DMA_EXT]  = { NCQ_OP_OTHER, NCQ_CMD_LOG },
    [ATA_CMD_WRITE_LOG_DMA_EXT] = { NCQ_OP_OTHER, NCQ_CMD_LOG },
    [WIN_SETFEATURES]           = { NCQ_OP_OTHER, NCQ_CMD_FEATURES },
    [WIN_WRITE]                 = { NCQ_OP_WRITE, NCQ_CMD_MEDIA },
    [WIN_WRITE_EXT]             = { NCQ_OP_WRITE, NCQ_CMD_MEDIA_EXT },
    [WIN_WRITEDMA_EXT]          = { NCQ_OP_WRITE, NCQ_CMD_MEDIA_EXT |
                                                  NCQ_CMD_CDL },
    [WIN_MULTWRITE_EXT]         = { NCQ_OP_WRITE, NCQ_CMD_MEDIA_EXT },
    [ATA_CMD_READ_FPDMA_QUEUED] = { NCQ_OP_READ,  NCQ_CMD_QUEUED },
    [ATA_CMD_WRITE_FPDMA_QUEUED] = { NCQ_OP_WRITE, NCQ_CMD_QUEUED },
    [WIN_MULTREAD]              = { NCQ_OP_READ,  NCQ_CMD_MEDIA },
    [WIN_MULTWRITE]             = { NCQ_OP_WRITE, NCQ_CMD_MEDIA },
    [WIN_READDMA]               = { NCQ_OP_READ,  NCQ_CMD_MEDIA },
    [WIN_WRITEDMA]              = { NCQ_OP_WRITE, NCQ_CMD_MEDIA },
    [WIN_FLUSH_CACHE]           = { NCQ_OP_FLUSH, NCQ_CMD_TIMED },
    [WIN_FLUSH_CACHE_EXT]       = { NCQ_OP_FLUSH, NCQ_CMD_TIMED },
    [WIN_SMART]                 = { NCQ_OP_OTHER, NCQ_CMD_SMART },
    [ATA_CMD_REQ_SENSE_DATA]    = { NCQ_OP_OTHER, NCQ_CMD_SENSE },
    [ATA_CMD_ZAC_MGMT_IN]       = { NCQ_OP_OTHER, NCQ_CMD_ZAC },
    [ATA_CMD_ZAC_MGMT_OUT]      = { NCQ_OP_OTHER, NCQ_CMD_ZAC },
    [WIN_VERIFY]                = { NCQ_OP_READ,  NCQ_CMD_MEDIA },
    [WIN_VERIFY_EXT]            = { NCQ_OP_READ,  NCQ_CMD_MEDIA_EXT },
    /*
     * Retired forms the generic table still runs: the "without retries"
     * commands (ATA-3) and WRITE VERIFY.  Timed as their plain forms, or
     * they would complete when the host does.
     */
    [WIN_READ_ONCE]             = { NCQ_OP_READ,  NCQ_CMD_MEDIA },
    [WIN_WRITE_ONCE]            = { NCQ_OP_WRITE, NCQ_CMD_MEDIA },
    [WIN_WRITE_VERIFY]          = { NCQ_OP_WRITE, NCQ_CMD_MEDIA },
    [WIN_VERIFY_ONCE]           = { NCQ_OP_READ,  NCQ_CMD_MEDIA },
    [WIN_READDMA_ONCE]          = { NCQ_OP_READ,  NCQ_CMD_MEDIA },
    [WIN_WRITEDMA_ONCE]         = { NCQ_OP_WRITE, NCQ_CMD_MEDIA },
    [WIN_STANDBYNOW1]           = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_IDLEIMMEDIATE]         = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_STANDBY]               = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_SETIDLE1]              = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_CHECKPOWERMODE1]       = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_SLEEPNOW1]             = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    /* retired in ATA-4; hdparm tries them when the above fail */
    [WIN_STANDBYNOW2]           = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_IDLEIMMEDIATE2]        = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_STANDBY2]              = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_SETIDLE2]              = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_CHECKPOWERMODE2]       = { NCQ_OP_FLUSH, NCQ_CMD_PM },
    [WIN_SLEEPNOW2]             = { NCQ_OP_FLUSH, NCQ_CMD_PM },
};

/*
 * SET FEATURES 82h writes the cache back before it turns it off: the
 * generic handler flushes the image, and completes when the host's flush
 * returns.  Timed as a FLUSH CACHE, it is held until the model's deadline
 * and its flush finishes inside the deadline's timer callback, so the
 * guest sees it complete at a virtual time the host does not choose.
 */
static const NcqDiskCmd ncq_disk_wc_off_cmd = { NCQ_OP_FLUSH,
                                                NCQ_CMD_TIMED };

/*
 * Decode a timed command for the model; false if the core must handle it
 * at once (CHS addressing, or sectors beyond the disk: its error).
 */
static bool ncq_disk_decode(IDEState *s, const NcqDiskCmd *c, NcqCmd *mc)
{
    bool lba48 = c->flags & NCQ_CMD_LBA48;
    uint8_t was_lba48 = s->lba48;
    uint32_t count;

    *mc = (NcqCmd) { .op = c->op, .id = NCQ_ID_NONQUEUED };
    if (!(c->flags & NCQ_CMD_SECTORS)) {
        return true;
    }
    if (!(s->select & ATA_DEV_LBA)) {
        return false;           /* CHS addressing: leave it to the core */
    }
    /*
     * The core's own reading of the LBA registers.  The command has not
     * started, so the core has not set s->lba48 for it yet: lend it.
     */
    s->lba48 = lba48;
    mc->lba = ide_get_sector(s);
    s->lba48 = was_lba48;
    if (lba48) {
        count = (s->hob_nsector << 8) | s->nsector;
        mc->sectors = count ? count : ATA_LBA48_MAX_SECTORS;
    } else {
        count = (uint8_t)s->nsector;
        mc->sectors = count ? count : ATA_LBA28_MAX_SECTORS;
    }
    return mc->lba + mc->sectors <= s->nb_sectors;
}

/*
 * The held command meets an injected media error at its deadline: status
 * DRDY|ERR, the error register, and the LBA registers naming the first
 * failing sector, as ACS asks of READ/WRITE (DMA) EXT.
 */
static void ncq_disk_held_error(NcqDisk *d, IDEState *s, const NcqDiskCmd *c)
{
    s->lba48 = !!(c->flags & NCQ_CMD_LBA48);
    s->status = READY_STAT | ERR_STAT;
    s->error = d->held.error;
    ide_set_sector(s, d->held.error_lba);
    d->held.error = 0;
    d->count.injected_errors++;
}

/*
 * A command the drive cannot take now: true (with *complete) if it is
 * refused, false if it may run.
 */
static bool ncq_disk_refuse(NcqDisk *d, IDEState *s, bool *complete)
{
    if (d->power.off) {
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
        d->count.guest_errors++;
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
    return false;
}

/* What ncq_disk_hold() did with a command */
typedef enum NcqDiskHoldResult {
    NCQ_DISK_RUN_NOW,       /* not held: the core runs it at once */
    NCQ_DISK_HELD,          /* busy until the model's deadline */
    NCQ_DISK_REFUSED,       /* the zones refused it: ended with its error */
} NcqDiskHoldResult;

/*
 * Hand a timed command to the model and hold it busy until its deadline
 * (ncq_disk_run_held() then).  A host-managed model's zones may refuse
 * a read, a write or a zone action: it ends with ABRT and its sense.
 */
static NcqDiskHoldResult ncq_disk_hold(NcqDisk *d, IDEState *s, uint8_t cmd,
                                       const NcqDiskCmd *c)
{
    int64_t now;
    NcqCmd mc;
    int rc;

    if ((c->flags & NCQ_CMD_ZAC) == NCQ_CMD_ZAC) {
        if (!ncq_disk_zac_decode(d, s, cmd, &mc)) {
            d->count.guest_errors++;
            ide_abort_command(s);
            return NCQ_DISK_REFUSED;
        }
    } else if (!ncq_disk_decode(s, c, &mc)) {
        return NCQ_DISK_RUN_NOW;
    }
    if ((c->flags & NCQ_CMD_CDL) && d->cdl.on) {
        mc.cdl = s->feature & 7;
    }
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    if (mc.op == NCQ_OP_WRITE) {
        ncq_disk_held_undo_start(d, mc.lba, mc.sectors, now);
    }
    rc = ncq_model_submit(d->model, &mc, now);
    if (mc.zone_action && mc.zone_action != NCQ_ZONE_REPORT) {
        trace_ncq_disk_zac_action(d, mc.zone_action, mc.lba, mc.zone_all,
                                  rc);
    }
    if (rc < 0) {
        if (ncq_disk_zac_fail(d, s, rc)) {
            return NCQ_DISK_REFUSED;
        }
        if ((c->flags & NCQ_CMD_ZAC) == NCQ_CMD_ZAC) {
            d->count.guest_errors++;
            ide_abort_command(s);
            return NCQ_DISK_REFUSED;
        }
        return NCQ_DISK_RUN_NOW;
    }
    d->held.active = true;
    d->held.cmd = cmd;
    ncq_disk_arm_timer(d);
    return NCQ_DISK_HELD;
}

/* A dropped held WRITE's data on its way to the image */
typedef struct NcqDiskDropWrite {
    NcqDisk *disk;
    uint8_t *buf;
    QEMUIOVector qiov;
    bool hold;              /* icount_hold() taken */
    QEMUTimer *bound;       /* x-host-wait-ms: virtual time goes on */
} NcqDiskDropWrite;

static void ncq_disk_drop_write_release(NcqDiskDropWrite *w)
{
    if (w->hold) {
        w->hold = false;
        icount_release();
    }
}

static void ncq_disk_drop_write_late(void *opaque)
{
    NcqDiskDropWrite *w = opaque;

    warn_report("ncq-disk: a dropped write has not reached the image in "
                "%u ms; virtual time goes on", w->disk->prop.host_wait_ms);
    ncq_disk_drop_write_release(w);
}

static void ncq_disk_drop_write_done(void *opaque, int ret)
{
    NcqDiskDropWrite *w = opaque;
    NcqDisk *d = w->disk;

    ncq_disk_drop_write_release(w);
    timer_free(w->bound);
    qemu_vfree(w->buf);
    g_free(w);
    d->held.drop_writes--;
    object_unref(OBJECT(d));
}

static bool ncq_disk_drop_writes_busy(void *opaque)
{
    return ((NcqDisk *)opaque)->held.drop_writes > 0;
}

/*
 * The held command is dropped: a reset, or the HBA forgot it (its port
 * stopped).  No completion follows.  A WRITE's data went to the drive
 * right after the command, as a real drive takes it into its buffer long
 * before its deadline: it is copied from guest memory now, through the
 * HBA's scatter list, which is still there (a copy, not a DMA: PRDs in
 * MMIO cannot park it for a bounce buffer), and goes to the image
 * without the register write waiting for the host.  Under icount
 * virtual time waits for it (icount_hold()), at most x-host-wait-ms of
 * wall time, so that the guest's next read finds it there.  A READ has
 * read nothing and moves nothing; FLUSH and TRIM have done nothing.
 */
void ncq_disk_drop_held(NcqDisk *d)
{
    IDEState *s = ncq_disk_state(d);
    const NcqDiskCmd *c = &ncq_disk_cmd_table[d->held.cmd];
    const IDEDMAOps *ops = s->bus->dma ? s->bus->dma->ops : NULL;
    NcqDiskDropWrite *w;
    int32_t prepared;
    dma_addr_t len;
    NcqCmd mc;

    if (!d->held.active) {
        return;
    }
    d->held.active = false;
    d->held.error = 0;
    trace_ncq_disk_held_dropped(d, d->held.cmd);
    ncq_disk_held_undo_abandon(d);
    if (c->op != NCQ_OP_WRITE || !ncq_disk_decode(s, c, &mc) ||
        !ops || !ops->prepare_buf) {
        return;
    }
    s->io_buffer_offset = 0;
    prepared = ops->prepare_buf(s->bus->dma, mc.sectors * BDRV_SECTOR_SIZE);
    len = QEMU_ALIGN_DOWN(MAX(prepared, 0), BDRV_SECTOR_SIZE);
    if (!len) {
        qemu_sglist_destroy(&s->sg);
        return;
    }
    w = g_new0(NcqDiskDropWrite, 1);
    w->disk = d;
    w->buf = blk_blockalign(s->blk, len);
    /* dma_buf_write: from guest memory */
    dma_buf_write(w->buf, len, NULL, &s->sg, MEMTXATTRS_UNSPECIFIED);
    qemu_sglist_destroy(&s->sg);
    qemu_iovec_init_buf(&w->qiov, w->buf, len);
    w->bound = aio_timer_new(qemu_get_aio_context(), QEMU_CLOCK_REALTIME,
                             SCALE_MS, ncq_disk_drop_write_late, w);
    timer_mod(w->bound, qemu_clock_get_ms(QEMU_CLOCK_REALTIME) +
              d->prop.host_wait_ms);
    icount_hold();
    w->hold = true;
    object_ref(OBJECT(d));
    d->held.drop_writes++;
    blk_aio_pwritev(s->blk, mc.lba << BDRV_SECTOR_BITS, &w->qiov, 0,
                    ncq_disk_drop_write_done, w);
    /* A host that answers has it on the image before the reset returns */
    ncq_disk_wait_bounded(ncq_disk_drop_writes_busy, d,
                          NCQ_DISK_BRIEF_WAIT_MS);
}

typedef struct NcqDiskHeldIO {
    bool done;
    int ret;
    bool abandoned;         /* the caller went on: free it when done */
    QEMUSGList sg;          /* the HBA's list, kept for the DMA */
} NcqDiskHeldIO;

static void ncq_disk_held_io_done(void *opaque, int ret)
{
    NcqDiskHeldIO *io = opaque;

    io->ret = ret;
    io->done = true;
    if (io->abandoned) {
        qemu_sglist_destroy(&io->sg);
        g_free(io);
    }
}

static bool ncq_disk_held_io_busy(void *opaque)
{
    return !((NcqDiskHeldIO *)opaque)->done;
}

/*
 * Move the held READ/WRITE DMA's data now, between the image and the
 * HBA's scatter list, as the generic handler would; false if the list is
 * too short or the image fails.  The wait is bounded: after
 * x-host-wait-ms the DMA is cancelled (a parked one ends at once), and
 * after as long again the command fails without it; the DMA keeps its
 * own copy of the list until it ends.
 */
static bool ncq_disk_held_transfer(NcqDisk *d, IDEState *s,
                                   const NcqDiskCmd *c)
{
    const IDEDMAOps *ops = s->bus->dma ? s->bus->dma->ops : NULL;
    NcqDiskHeldIO *io;
    BlockAIOCB *acb;
    int64_t bytes;
    NcqCmd mc;
    bool ok;

    if (!ncq_disk_decode(s, c, &mc) || !ops || !ops->prepare_buf) {
        return false;
    }
    bytes = (int64_t)mc.sectors * BDRV_SECTOR_SIZE;
    s->io_buffer_offset = 0;
    if (ops->prepare_buf(s->bus->dma, bytes) < bytes) {
        qemu_sglist_destroy(&s->sg);
        return false;
    }
    io = g_new0(NcqDiskHeldIO, 1);
    io->sg = s->sg;             /* the list moves to the I/O */
    memset(&s->sg, 0, sizeof(s->sg));
    if (c->op == NCQ_OP_WRITE) {
        acb = dma_blk_write(s->blk, &io->sg, mc.lba << BDRV_SECTOR_BITS,
                            BDRV_SECTOR_SIZE, ncq_disk_held_io_done, io);
    } else {
        acb = dma_blk_read(s->blk, &io->sg, mc.lba << BDRV_SECTOR_BITS,
                           BDRV_SECTOR_SIZE, ncq_disk_held_io_done, io);
    }
    if (!ncq_disk_wait_bounded(ncq_disk_held_io_busy, io,
                               d->prop.host_wait_ms)) {
        warn_report("ncq-disk: a held command's data has not moved in %u "
                    "ms (DMA to a non-RAM address?); failing it",
                    d->prop.host_wait_ms);
        blk_aio_cancel_async(acb);
        if (!ncq_disk_wait_bounded(ncq_disk_held_io_busy, io,
                                   d->prop.host_wait_ms)) {
            io->abandoned = true;
            return false;
        }
    }
    ok = io->ret == 0;
    qemu_sglist_destroy(&io->sg);
    g_free(io);
    return ok;
}

/*
 * The held command's turn, with a CDL outcome (ncq_disk_cdl_held()): an
 * abort has ended it; "data currently unavailable" moves its data here
 * and completes it with status bit 1.  False: it runs as usual.
 */
static bool ncq_disk_held_cdl(NcqDisk *d, IDEState *s, const NcqDiskCmd *c)
{
    uint8_t bits = ncq_disk_cdl_held(d, s);

    if (!bits || (bits & ERR_STAT)) {
        return bits;
    }
    if (!ncq_disk_held_transfer(d, s, c)) {
        ide_abort_command(s);
        return true;
    }
    s->status = READY_STAT | SEEK_STAT | bits;
    return true;
}

/*
 * The held command runs now, at the model's deadline (the hook's result:
 * true if it ended here): its injected error, its power mode change, or
 * its CDL outcome; else the generic handler runs it.
 */
static bool ncq_disk_held_turn(NcqDisk *d, IDEState *s, uint8_t cmd,
                               const NcqDiskCmd *c, bool *complete)
{
    if (d->held.error) {
        d->held.cdl_outcome = NCQ_CDL_NONE;
        ncq_disk_held_error(d, s, c);
        *complete = true;
        return true;
    }
    if ((c->flags & NCQ_CMD_PM) == NCQ_CMD_PM) {
        *complete = ncq_disk_pm_cmd(d, s, cmd);
        return true;
    }
    if ((c->flags & NCQ_CMD_ZAC) == NCQ_CMD_ZAC) {
        *complete = ncq_disk_zac_run(d, s, cmd, true);
        return true;
    }
    *complete = true;
    return ncq_disk_held_cdl(d, s, c);
}

/*
 * SMART (B0h): ncq-disk-smart.c runs it, except SMART READ LOG and SMART
 * WRITE LOG, which it leaves to the log table (ncq-disk-log.c); true if
 * the command has completed.
 */
static bool ncq_disk_smart(NcqDisk *d, IDEState *s)
{
    switch (ncq_disk_smart_cmd(d, s)) {
    case NCQ_DISK_SMART_READ_LOG:
        return ncq_disk_log_smart_read(d, s);
    case NCQ_DISK_SMART_WRITE_LOG:
        return ncq_disk_log_smart_write(d, s);
    case NCQ_DISK_SMART_DATA:
        return false;
    case NCQ_DISK_SMART_COMPLETE:
    default:
        return true;
    }
}

/*
 * A command the drive has taken, past its checks: held until the model's
 * deadline, or refused by the zones, or (false) run by the generic
 * handler at once.  Queued commands never come here.  Untimed ones (all
 * with timing=off) go to the generic handler at once.  TRIM is timed
 * too: the generic handler completes it from a bottom half, at a
 * host-dependent point of the guest's run; held until the model's
 * deadline, it completes inside the deadline's timer callback.  So does
 * SET FEATURES 82h (ncq_disk_wc_off_cmd).
 */
static bool ncq_disk_timed_cmd(NcqDisk *d, IDEState *s, uint8_t cmd,
                               const NcqDiskCmd *c, bool *complete)
{
    if ((c->flags & NCQ_CMD_ZAC) == NCQ_CMD_ZAC && !d->prop.timing) {
        *complete = ncq_disk_zac_run(d, s, cmd, false);
        return true;
    }
    if (!d->prop.timing || !(c->flags & NCQ_CMD_TIMED)) {
        return false;
    }
    switch (ncq_disk_hold(d, s, cmd, c)) {
    case NCQ_DISK_HELD:
        *complete = false;
        return true;
    case NCQ_DISK_REFUSED:
        *complete = true;
        return true;
    default:
        return false;
    }
}

bool ncq_disk_exec_cmd(IDEDevice *dev, IDEState *s, uint8_t cmd,
                       bool *complete)
{
    NcqDisk *d = NCQ_DISK(dev);
    const NcqDiskCmd *c = &ncq_disk_cmd_table[cmd];

    if (cmd == WIN_IDENTIFY) {
        ncq_disk_identify_refresh(s);
    }
    if (d->held.passthrough) {
        return ncq_disk_held_turn(d, s, cmd, c, complete);
    }
    if (ncq_disk_refuse(d, s, complete)) {
        return true;
    }
    if (ncq_disk_sct_park(d, cmd)) {
        *complete = false;      /* busy until the firmware's retries end */
        return true;
    }
    if (ncq_disk_pm_refuse(d, s)) {
        *complete = true;
        return true;
    }
    if ((c->flags & NCQ_CMD_PM) == NCQ_CMD_PM) {
        if (d->prop.timing && ncq_disk_pm_prepare(d, s, cmd) &&
            ncq_disk_hold(d, s, cmd, c) == NCQ_DISK_HELD) {
            *complete = false;
            return true;
        }
        *complete = ncq_disk_pm_cmd(d, s, cmd);
        return true;
    }
    if (c->flags & NCQ_CMD_SECTORS) {
        ncq_disk_pm_media(d);
    }
    if (c->flags & NCQ_CMD_LOG) {
        *complete = ncq_disk_log_cmd(d, s, cmd);
        return true;
    }
    if (c->flags & NCQ_CMD_FEATURES) {
        if (ncq_disk_cdl_set_features(d, s)) {
            *complete = true;
            return true;
        }
        if (s->feature == ATA_SETFEATURES_WC_OFF) {
            c = &ncq_disk_wc_off_cmd;
        }
    }
    if (c->flags & NCQ_CMD_SMART) {
        *complete = ncq_disk_smart(d, s);
        return true;
    }
    if (c->flags & NCQ_CMD_SENSE) {
        *complete = ncq_disk_cdl_request_sense(d, s);
        return true;
    }
    if ((c->flags & NCQ_CMD_TRIM) && !d->dev.conf.discard_granularity) {
        /* IDENTIFY word 169 says no TRIM: the drive knows no DSM. */
        ide_abort_command(s);
        *complete = true;
        return true;
    }
    return ncq_disk_timed_cmd(d, s, cmd, c, complete);
}
