/*
 * ncq-disk: the drive's link to QEMU's IDE bus and to its image
 *
 * The leaf of the device's files: the IDE state of the drive, handing a
 * queued command back to the HBA, and a queued command's host I/O (its
 * data to or from the image: started, waited for, dropped).  Every other
 * part calls down to these; they call no other part of the device
 * (tests/repo/test_code_shape.py checks that the device's files call each
 * other in no circle).
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/memalign.h"
#include "block/aio-wait.h"
#include "system/block-backend.h"
#include "system/dma.h"
#include "system/cpu-timers.h"
#include "../ide-internal.h"
#include "ncq-disk.h"
#include "trace.h"

IDEState *ncq_disk_state(NcqDisk *d)
{
    IDEBus *bus = DO_UPCAST(IDEBus, qbus, d->dev.qdev.parent_bus);

    return &bus->ifs[d->dev.unit];
}

int ncq_disk_outstanding(NcqDisk *d)
{
    int i, n = 0;

    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        n += d->reqs[i].cmd != NULL;
    }
    return n;
}

/*
 * Hand a command back to the HBA: @ret 0 or -errno of the host's I/O
 * (the drive's rerror/werror policy applies), or @ata_error, an error the
 * drive reports itself.
 */
void ncq_disk_done(NcqDisk *d, IDENCQCmd *cmd, int ret,
                   uint8_t ata_error)
{
    ide_bus_ncq_done(ncq_disk_state(d)->bus, cmd, ret, ata_error);
}

/* Hand a finished command back to the HBA. */
void ncq_disk_finish(NcqDiskReq *r, int ret)
{
    IDENCQCmd *cmd = r->cmd;

    r->cmd = NULL;
    ncq_disk_done(r->disk, cmd, ret, 0);
}

/* The state of @r's host I/O, which is starting */
NcqDiskHostIO *ncq_disk_host_io_new(NcqDiskReq *r)
{
    NcqDiskHostIO *io = g_new0(NcqDiskHostIO, 1);

    io->req = r;
    io->disk = r->disk;
    r->io = io;
    return io;
}

void ncq_disk_host_io_free(NcqDiskHostIO *io)
{
    if (io->req) {
        io->req->io = NULL;
    }
    if (io->hold) {
        icount_release();
    }
    if (io->bound) {
        timer_free(io->bound);
    }
    qemu_sglist_destroy(&io->sg);
    qemu_vfree(io->undo_buf);
    g_free(io);
}

/* A dropped command's host I/O has ended: nothing of it is kept. */
void ncq_disk_host_io_orphan_end(NcqDiskHostIO *io)
{
    NcqDisk *d = io->disk;

    trace_ncq_disk_drop_late_end(d);
    ncq_disk_host_io_free(io);
    object_unref(OBJECT(d));
}

static void ncq_disk_host_io_late(void *opaque)
{
    NcqDiskHostIO *io = opaque;

    warn_report("ncq-disk: the host I/O of a dropped command has not ended "
                "in %u ms; virtual time goes on", io->disk->prop.host_wait_ms);
    if (io->hold) {
        io->hold = false;
        icount_release();
    }
}

/*
 * Stop waiting for a dropped command's host I/O: it ends on its own, its
 * data through its own scatter list, and is then discarded; the tag is
 * free.  Under icount virtual time waits for it (icount_hold()), at most
 * x-host-wait-ms of wall time, so that the guest sees it end where a
 * host that answers would: before its next instruction.
 */
static void ncq_disk_host_io_abandon(NcqDiskReq *r)
{
    NcqDiskHostIO *io = r->io;
    NcqDisk *d = r->disk;

    trace_ncq_disk_drop_late(d, r - d->reqs);
    r->io = NULL;
    r->aiocb = NULL;
    r->host_done = true;
    r->host_ret = -ECANCELED;
    io->req = NULL;
    object_ref(OBJECT(d));
    icount_hold();
    io->hold = true;
    io->bound = aio_timer_new(qemu_get_aio_context(), QEMU_CLOCK_REALTIME,
                              SCALE_MS, ncq_disk_host_io_late, io);
    timer_mod(io->bound, qemu_clock_get_ms(QEMU_CLOCK_REALTIME) +
              d->prop.host_wait_ms);
}

static void ncq_disk_host_done(void *opaque, int ret)
{
    NcqDiskHostIO *io = opaque;
    NcqDiskReq *r = io->req;
    NcqDiskWait *w;

    if (!r) {
        ncq_disk_host_io_orphan_end(io);
        return;
    }
    ncq_disk_host_io_free(io);
    if (ret < 0) {
        trace_ncq_disk_host_error(r->disk, r - r->disk->reqs, ret);
    }
    w = &r->disk->wait;
    r->aiocb = NULL;
    r->host_done = true;
    r->host_ret = ret;
    if (r->cmd && !r->disk->prop.timing) {
        ncq_disk_finish(r, ret);
    }
    if (w->active && r == &r->disk->reqs[w->done[w->next].id]) {
        qemu_bh_schedule(w->bh);
    }
}

static bool ncq_disk_req_busy(void *opaque)
{
    return !((NcqDiskReq *)opaque)->host_done;
}

/*
 * Drop a command: no completion will follow for it.  Its host I/O is
 * cancelled (a DMA parked for a bounce buffer ends at once) and waited
 * for NCQ_DISK_BRIEF_WAIT_MS at most: a host that answers has ended it
 * when this returns, so no DMA reaches the guest after the reset.  One
 * that does not answer must not hold the vCPU's register write or the
 * main loop: the I/O is left to end on its own (its own scatter list,
 * virtual time held under icount).  Not blk_aio_cancel(): that waits,
 * without a bound, for the AIOCB's last reference.
 */
IDENCQCmd *ncq_disk_drop(NcqDiskReq *r)
{
    NcqDisk *d = r->disk;
    IDENCQCmd *cmd = r->cmd;
    bool was_aborting = d->aborting;

    r->cmd = NULL;
    if (r->aiocb) {
        blk_aio_cancel_async(r->aiocb);
        /*
         * The wait runs the main loop's bottom halves, AHCI's command
         * fetch among them: the drive takes no new command meanwhile.
         */
        d->aborting = true;
        ncq_disk_wait_bounded(ncq_disk_req_busy, r, NCQ_DISK_BRIEF_WAIT_MS);
        d->aborting = was_aborting;
        if (!r->host_done) {
            ncq_disk_host_io_abandon(r);
        }
        r->aiocb = NULL;
    }
    return cmd;
}

static void ncq_disk_wait_expired(void *opaque)
{
    *(bool *)opaque = true;
}

/*
 * Wait, running the main AioContext's handlers, while @busy(@opaque) and
 * for at most @ms of wall time; true if it ended in time.
 */
bool ncq_disk_wait_bounded(bool (*busy)(void *opaque), void *opaque,
                           uint32_t ms)
{
    bool expired = false;
    QEMUTimer *t;

    if (!busy(opaque)) {
        return true;
    }
    t = aio_timer_new(qemu_get_aio_context(), QEMU_CLOCK_REALTIME, SCALE_MS,
                      ncq_disk_wait_expired, &expired);
    timer_mod(t, qemu_clock_get_ms(QEMU_CLOCK_REALTIME) + ms);
    AIO_WAIT_WHILE(NULL, busy(opaque) && !expired);
    timer_free(t);
    return !busy(opaque);
}

/*
 * Wait for @r's host I/O without letting virtual time move (the caller
 * is about to complete it, or to overwrite its sectors); true if it has
 * ended.  Host I/O may never end: a DMA parked for a bounce buffer that
 * nothing will free (a guest can point PRDs at MMIO after filling the
 * bounce buffer with command lists mapped there too), or a host that
 * does not answer.  So after x-host-wait-ms of wall time it is cancelled
 * (a parked DMA then ends at once, and its command fails), and after as
 * long again the caller goes on without it rather than hang QEMU.
 */
bool ncq_disk_wait_host(NcqDiskReq *r)
{
    NcqDisk *d = r->disk;

    if (ncq_disk_wait_bounded(ncq_disk_req_busy, r, d->prop.host_wait_ms)) {
        return true;
    }
    warn_report("ncq-disk: host I/O of tag %td has not finished in %u "
                "ms (DMA to a non-RAM address?); failing its command",
                r - d->reqs, d->prop.host_wait_ms);
    blk_aio_cancel_async(r->aiocb);
    return ncq_disk_wait_bounded(ncq_disk_req_busy, r, d->prop.host_wait_ms);
}

/* Wait for @r's host I/O NCQ_DISK_BRIEF_WAIT_MS at most; true if ended. */
bool ncq_disk_wait_host_briefly(NcqDiskReq *r)
{
    return ncq_disk_wait_bounded(ncq_disk_req_busy, r,
                                 NCQ_DISK_BRIEF_WAIT_MS);
}

/* A copy of @from in @to, for a DMA that may outlive @from */
static void ncq_disk_sg_copy(QEMUSGList *to, const QEMUSGList *from)
{
    int i;

    qemu_sglist_init(to, from->dev, from->nsg, from->as);
    for (i = 0; i < from->nsg; i++) {
        qemu_sglist_add(to, from->sg[i].base, from->sg[i].len);
    }
}

/* The command's own host I/O: its data to or from the image. */
void ncq_disk_host_io(NcqDiskReq *r)
{
    IDEState *s = ncq_disk_state(r->disk);
    NcqDiskHostIO *io = r->io ? r->io : ncq_disk_host_io_new(r);
    IDENCQCmd *cmd = r->cmd;
    BlockAIOCB *acb;

    ncq_disk_sg_copy(&io->sg, cmd->sg);
    if (r->kind == NCQ_DISK_WRITE) {
        acb = dma_blk_write(s->blk, &io->sg, cmd->lba << BDRV_SECTOR_BITS,
                            BDRV_SECTOR_SIZE, ncq_disk_host_done, io);
    } else {
        acb = dma_blk_read(s->blk, &io->sg, cmd->lba << BDRV_SECTOR_BITS,
                           BDRV_SECTOR_SIZE, ncq_disk_host_done, io);
    }
    /* With nothing to transfer the callback has run already */
    r->aiocb = r->host_done ? NULL : acb;
}
