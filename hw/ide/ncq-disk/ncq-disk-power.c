/*
 * ncq-disk: power loss (docs/faults.md)
 *
 * The device writes guest data to the image at once, but a drive with a
 * write cache keeps it in volatile memory until it destages it.  So before a
 * write reaches the image, the old contents of its sectors are kept (the
 * model library's undo store, as extents) unless they are kept already for
 * data the drive still holds; when power is cut, the sectors the model says
 * never reached the media (ncq_model_volatile()) get their old contents
 * back.  Kept data for sectors that did reach the media is stale: dropped
 * when they are written again and pruned when the store has doubled.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/memalign.h"
#include "block/block.h"
#include "block/graph-lock.h"
#include "system/block-backend.h"
#include "system/runstate.h"
#include "../ide-internal.h"
#include "ncq-disk.h"
#include "trace.h"

void ncq_disk_power_init(NcqDisk *d)
{
    d->power.undo = ncq_undo_new();
    d->power.prune_at = 0;      /* the first prune sets the real bound */
}

void ncq_disk_power_cleanup(NcqDisk *d)
{
    ncq_undo_free(d->power.undo);
    d->power.undo = NULL;
}

static void ncq_disk_undo_lost(uint64_t first, uint32_t n)
{
    warn_report("ncq-disk: cannot read sectors %" PRIu64 "-%" PRIu64
                " to keep their old contents; a power cut will not "
                "restore them", first, first + n - 1);
}

/*
 * Before a write of [lba, lba + n) reaches the image: say which of its
 * sectors (*first, return value: count; 0 for none) need their old
 * contents read and kept.
 */
uint32_t ncq_disk_undo_prepare(NcqDisk *d, uint64_t lba, uint32_t n,
                               int64_t now, uint64_t *first)
{
    NcqRange v[NCQ_MAX_VOLATILE];
    int nv, i;

    if (!d->prop.power_loss || !d->power.undo) {
        return 0;
    }
    /* A write in flight to these sectors lands first: no race with it. */
    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        NcqDiskReq *r = &d->reqs[i];

        if (r->cmd && r->kind == NCQ_DISK_WRITE && !r->host_done &&
            r->cmd->lba < lba + n && lba < r->cmd->lba + r->cmd->sector_count) {
            ncq_disk_wait_host(r);
        }
    }
    /* The caller's time: the model must not run past the submit's */
    nv = ncq_model_volatile(d->model, now, v, ARRAY_SIZE(v));
    if (nv <= 0) {
        ncq_undo_clear(d->power.undo);
        nv = 0;
    } else if (ncq_undo_sectors(d->power.undo) > d->power.prune_at) {
        /*
         * Prune when the store has doubled since the last time (or
         * outgrown twice the write cache): each kept sector is then
         * visited O(1) times, however many queued writes keep theirs.
         */
        uint64_t floor = 2 * ((uint64_t)d->params->write_cache_sectors +
                              NCQ_MAX_SECTORS);

        ncq_undo_prune(d->power.undo, v, nv);
        d->power.prune_at = MAX(floor, 2 * ncq_undo_sectors(d->power.undo));
    }
    return ncq_undo_prepare(d->power.undo, lba, n, v, nv, first);
}

/* Keep the old contents @buf of [first, first + n) where none are kept. */
static void ncq_disk_undo_keep(NcqDisk *d, uint64_t first, uint32_t n,
                               const uint8_t *buf)
{
    if (ncq_undo_keep(d->power.undo, first, n, buf) < 0) {
        ncq_disk_undo_lost(first, n);
    }
}

static void ncq_disk_undo_read_done(void *opaque, int ret)
{
    NcqDiskHostIO *io = opaque;
    NcqDiskReq *r = io->req;
    uint32_t n = io->undo_qiov.size / BDRV_SECTOR_SIZE;

    if (!r) {
        /* Dropped and no longer waited for: the write never happens */
        ncq_disk_host_io_orphan_end(io);
        return;
    }
    r->aiocb = NULL;
    if (ret < 0) {
        ncq_disk_undo_lost(io->undo_first, n);
    } else {
        ncq_disk_undo_keep(r->disk, io->undo_first, n, io->undo_buf);
    }
    qemu_vfree(io->undo_buf);
    io->undo_buf = NULL;
    if (!r->cmd) {
        /* Dropped while reading: the write never reaches the image. */
        ncq_disk_host_io_free(io);
        r->host_done = true;
        r->host_ret = ret;
        return;
    }
    ncq_disk_host_io(r);
}

/*
 * A queued write whose sectors' old contents must be kept first: read
 * them as part of its host I/O, so the vCPU does not wait for the read.
 * Nothing can overwrite them meanwhile: an overlapping write waits for
 * this one (ncq_disk_undo_prepare()), and the guest's own data goes to
 * the image only after the read.
 */
void ncq_disk_undo_read(NcqDiskReq *r, uint64_t first, uint32_t n)
{
    IDEState *s = ncq_disk_state(r->disk);
    NcqDiskHostIO *io = ncq_disk_host_io_new(r);

    io->undo_first = first;
    io->undo_buf = blk_blockalign(s->blk, n * BDRV_SECTOR_SIZE);
    qemu_iovec_init_buf(&io->undo_qiov, io->undo_buf, n * BDRV_SECTOR_SIZE);
    r->aiocb = blk_aio_preadv(s->blk, first * BDRV_SECTOR_SIZE,
                              &io->undo_qiov, 0, ncq_disk_undo_read_done, io);
}

/* A held non-queued write's undo read (ncq_disk_held_undo_start()) */
typedef struct NcqDiskUndoRead {
    NcqDisk *disk;
    uint64_t first;
    uint8_t *buf;
    QEMUIOVector qiov;
    bool abandoned;         /* given up on: what it reads is not kept */
} NcqDiskUndoRead;

static void ncq_disk_held_undo_done(void *opaque, int ret)
{
    NcqDiskUndoRead *u = opaque;
    NcqDisk *d = u->disk;
    uint32_t n = u->qiov.size / BDRV_SECTOR_SIZE;

    if (!u->abandoned && d->power.undo) {
        if (ret < 0) {
            ncq_disk_undo_lost(u->first, n);
        } else {
            ncq_disk_undo_keep(d, u->first, n, u->buf);
        }
    }
    if (d->held.undo == u) {
        d->held.undo = NULL;
    }
    qemu_vfree(u->buf);
    g_free(u);
    object_unref(OBJECT(d));
}

/*
 * For a held non-queued write: read the old contents of its sectors
 * while the drive holds it, not in the vCPU's register write; its
 * deadline waits for the read (ncq_disk_run_held()).  The device stays
 * alive until the read ends, whatever happens to it meanwhile.
 */
void ncq_disk_held_undo_start(NcqDisk *d, uint64_t lba, uint32_t n,
                              int64_t now)
{
    IDEState *s = ncq_disk_state(d);
    NcqDiskUndoRead *u;
    uint64_t first;
    uint32_t count = ncq_disk_undo_prepare(d, lba, n, now, &first);

    if (!count) {
        return;
    }
    u = g_new0(NcqDiskUndoRead, 1);
    u->disk = d;
    u->first = first;
    u->buf = blk_blockalign(s->blk, count * BDRV_SECTOR_SIZE);
    qemu_iovec_init_buf(&u->qiov, u->buf, count * BDRV_SECTOR_SIZE);
    object_ref(OBJECT(d));
    d->held.undo = u;
    blk_aio_preadv(s->blk, first * BDRV_SECTOR_SIZE, &u->qiov, 0,
                   ncq_disk_held_undo_done, u);
}

/*
 * Go on without the held write's undo read (it took longer than
 * x-host-wait-ms, or the write is dropped): a power cut will not give
 * those sectors back.
 */
void ncq_disk_held_undo_abandon(NcqDisk *d)
{
    NcqDiskUndoRead *u = d->held.undo;

    if (!u) {
        return;
    }
    u->abandoned = true;
    d->held.undo = NULL;
    ncq_disk_undo_lost(u->first, u->qiov.size / BDRV_SECTOR_SIZE);
}

/*
 * After an incoming migration QEMU leaves the image inactive until the VM
 * runs (or blockdev-set-active); a power cut then could not restore it.
 */
bool ncq_disk_image_inactive(NcqDisk *d)
{
    BlockDriverState *bs = blk_bs(ncq_disk_state(d)->blk);

    GRAPH_RDLOCK_GUARD_MAINLOOP();
    return bs && bdrv_is_inactive(bs);
}

/* Give kept sectors their old contents back (a power cut). */
static int ncq_disk_restore(void *opaque, uint64_t lba, uint64_t n,
                            const uint8_t *data)
{
    BlockBackend *blk = opaque;

    if (blk_pwrite(blk, lba * BDRV_SECTOR_SIZE, n * BDRV_SECTOR_SIZE, data,
                   0) < 0) {
        warn_report("ncq-disk: power cut: cannot restore sectors %" PRIu64
                    "-%" PRIu64, lba, lba + n - 1);
    }
    return 0;
}

uint64_t ncq_disk_power_cut(NcqDisk *d, bool quit, NcqRange *lost,
                            int *nlost)
{
    IDEState *s = ncq_disk_state(d);
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    NcqRange v[NCQ_MAX_VOLATILE];
    uint64_t sectors = 0;
    int nv = 0, i;

    d->power.off = true;
    d->queue_gen++;
    /* Freeze the machine: nothing it does from now on reaches the disk. */
    vm_stop(RUN_STATE_SHUTDOWN);
    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        if (d->reqs[i].cmd) {
            ncq_disk_drop(&d->reqs[i]);
        }
    }
    d->held.active = false;
    blk_drain(s->blk);
    timer_del(d->timer);
    if (d->prop.timing) {
        nv = ncq_model_volatile(d->model, now, v, ARRAY_SIZE(v));
        nv = MAX(nv, 0);
        ncq_model_power_loss(d->model, now);
    }
    for (i = 0; i < nv; i++) {
        sectors += v[i].sectors;
        if (lost) {
            lost[i] = v[i];
        }
    }
    if (nlost) {
        *nlost = nv;
    }
    ncq_undo_foreach(d->power.undo, v, nv, ncq_disk_restore, s->blk);
    ncq_undo_clear(d->power.undo);
    blk_flush(s->blk);
    ncq_disk_smart_save_file(d);
    /* what the drive keeps: pointers as the power loss left them */
    ncq_disk_zstate_save(d, "power-cut");
    trace_ncq_disk_power_cut(d, sectors, nv);
    /* A fault rule may cut the power with no one asking: say what it did */
    info_report("ncq-disk %s: power cut; %" PRIu64 " sectors in %d ranges "
                "never reached the media", d->dev.qdev.id ? d->dev.qdev.id :
                "(no id)", sectors, nv);
    if (quit) {
        qemu_system_shutdown_request(SHUTDOWN_CAUSE_HOST_QMP_QUIT);
    }
    return sectors;
}

static int ncq_disk_collect_powered(Object *obj, void *opaque)
{
    GSList **list = opaque;
    NcqDisk *d = (NcqDisk *)object_dynamic_cast(obj, TYPE_NCQ_DISK);

    if (d && !d->power.off && d->prop.power_loss &&
        !ncq_disk_image_inactive(d)) {
        *list = g_slist_append(*list, d);
    }
    return 0;
}

/*
 * A powercut rule pulls the machine's plug: every ncq-disk of the machine
 * loses what its cache held at this same virtual instant (the machine is
 * stopped by the first cut, so the clock stands still for the others),
 * the trigger drive first, then the others in QOM tree order.  Then QEMU
 * quits.
 */
void ncq_disk_power_cut_machine(NcqDisk *trigger)
{
    g_autoptr(GSList) all = NULL;
    GSList *l;

    ncq_disk_power_cut(trigger, false, NULL, NULL);
    object_child_foreach_recursive(object_get_root(),
                                   ncq_disk_collect_powered, &all);
    for (l = all; l; l = l->next) {
        ncq_disk_power_cut(l->data, false, NULL, NULL);
    }
    qemu_system_shutdown_request(SHUTDOWN_CAUSE_HOST_QMP_QUIT);
}
