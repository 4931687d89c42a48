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
#include "block/aio-wait.h"
#include "system/block-backend.h"
#include "system/dma.h"
#include "../ide-internal.h"
#include "ncq-disk.h"

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

static void ncq_disk_host_done(void *opaque, int ret)
{
    NcqDiskReq *r = opaque;

    NcqDiskWait *w = &r->disk->wait;

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

/*
 * Drop a command: no completion will follow for it, and its host I/O has
 * ended (cancelled or finished) when this returns, so no DMA reaches the
 * guest after a reset.  Not blk_aio_cancel(): that waits for the AIOCB's
 * last reference, which a DMA request parked for a bounce buffer (PRDs
 * pointing at MMIO) never drops, as dma_aio_cancel() completes it without
 * releasing it; the guest could hang QEMU.  We wait for our callback.
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
        AIO_WAIT_WHILE(NULL, !r->host_done);
        d->aborting = was_aborting;
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

static bool ncq_disk_req_busy(void *opaque)
{
    return !((NcqDiskReq *)opaque)->host_done;
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

/* The command's own host I/O: its data to or from the image. */
void ncq_disk_host_io(NcqDiskReq *r)
{
    IDEState *s = ncq_disk_state(r->disk);
    IDENCQCmd *cmd = r->cmd;
    BlockAIOCB *acb;

    if (r->kind == NCQ_DISK_WRITE) {
        acb = dma_blk_write(s->blk, cmd->sg, cmd->lba << BDRV_SECTOR_BITS,
                            BDRV_SECTOR_SIZE, ncq_disk_host_done, r);
    } else {
        acb = dma_blk_read(s->blk, cmd->sg, cmd->lba << BDRV_SECTOR_BITS,
                           BDRV_SECTOR_SIZE, ncq_disk_host_done, r);
    }
    /* With nothing to transfer the callback has run already */
    r->aiocb = r->host_done ? NULL : acb;
}
