/*
 * ncq-disk: the drive's command queue in virtual time
 *
 * Every queued command goes to the model at its arrival time; the host
 * I/O starts at once, but the command completes to the guest only at the
 * model's deadline on QEMU_CLOCK_VIRTUAL.  If the host has not finished
 * by then, the timer callback waits for it without letting virtual time
 * move (under icount the vCPU cannot pass a pending timer), so what the
 * guest sees never depends on host timing.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "block/aio-wait.h"
#include "system/block-backend.h"
#include "system/dma.h"
#include "ide-internal.h"
#include "hw/ide/ncq-disk.h"
#include "trace.h"

static IDEState *ncq_disk_state(NcqDisk *d)
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

void ncq_disk_arm_timer(NcqDisk *d)
{
    int64_t next = ncq_model_next_event(d->model);

    if (next == INT64_MAX) {
        timer_del(d->timer);
    } else {
        timer_mod_anticipate_ns(d->timer, next);
    }
}

/* Hand a finished command back to the HBA. */
static void ncq_disk_finish(NcqDiskReq *r, int ret)
{
    IDENCQCmd *cmd = r->cmd;

    r->cmd = NULL;
    cmd->complete(cmd, ret);
}

static void ncq_disk_host_done(void *opaque, int ret)
{
    NcqDiskReq *r = opaque;

    r->aiocb = NULL;
    r->host_done = true;
    r->host_ret = ret;
    if (r->cmd && !r->disk->timing) {
        ncq_disk_finish(r, ret);
    }
}

/* Drop a command: no completion will follow for it. */
static IDENCQCmd *ncq_disk_drop(NcqDiskReq *r)
{
    IDENCQCmd *cmd = r->cmd;

    r->cmd = NULL;
    if (r->aiocb) {
        blk_aio_cancel(r->aiocb);
        r->aiocb = NULL;
    }
    return cmd;
}

/*
 * An NCQ error: the drive aborts every outstanding command, reports the
 * failing one in the NCQ Command Error log and refuses new queued
 * commands until the host has read that log (SATA 3.x, 13.6.3).
 */
static void ncq_disk_ncq_fail(NcqDisk *d, IDENCQCmd *failed, uint8_t tag,
                              uint8_t error)
{
    IDENCQCmd *aborted[NCQ_DISK_MAX_DEPTH];
    int i, n = 0;

    d->guest_errors++;
    d->errlog = (NcqDiskErrorLog) {
        .valid = true,
        .nq = tag == NCQ_DISK_TAG_NONQUEUED,
        .tag = tag == NCQ_DISK_TAG_NONQUEUED ? 0 : tag,
        .status = READY_STAT | ERR_STAT,
        .error = error,
        .lba = failed ? failed->lba : 0,
        .count = failed ? failed->sector_count : 0,
    };
    d->ncq_halted = true;
    trace_ncq_disk_ncq_error(d, tag, error);

    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        if (d->reqs[i].cmd && d->reqs[i].cmd != failed) {
            aborted[n++] = ncq_disk_drop(&d->reqs[i]);
        }
    }
    ncq_model_reset(d->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    timer_del(d->timer);
    if (failed) {
        failed->complete(failed, error);
    }
    for (i = 0; i < n; i++) {
        aborted[i]->complete(aborted[i], ABRT_ERR);
    }
}

/* Keep the model's write cache in step with SET FEATURES. */
static void ncq_disk_sync_write_cache(NcqDisk *d, IDEState *s)
{
    NcqSettings st;
    bool wce = blk_enable_write_cache(s->blk);

    ncq_model_get_settings(d->model, &st);
    if (st.write_cache != wce) {
        st.write_cache = wce;
        ncq_model_set_settings_at(d->model, &st,
                                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
                                  NULL, 0);
    }
}

void ncq_disk_ncq_submit(IDEDevice *dev, IDENCQCmd *cmd)
{
    NcqDisk *d = NCQ_DISK(dev);
    IDEState *s = ncq_disk_state(d);
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    NcqDiskReq *r;
    NcqCmd mc;
    int ret;

    trace_ncq_disk_submit(d, cmd->tag, cmd->is_write, cmd->lba,
                          cmd->sector_count, cmd->fua, cmd->prio, now);
    if (d->ncq_halted) {
        /* Until log 10h is read, queued commands are aborted. */
        cmd->complete(cmd, ABRT_ERR);
        return;
    }
    if (cmd->tag >= d->queue_depth) {
        ncq_disk_ncq_fail(d, cmd, cmd->tag, ABRT_ERR);
        return;
    }
    if (cmd->lba + cmd->sector_count > s->nb_sectors) {
        ncq_disk_ncq_fail(d, cmd, cmd->tag, ID_ERR);
        return;
    }
    r = &d->reqs[cmd->tag];
    if (r->cmd) {
        /* AHCI reports active tags through ncq_error(); be safe anyway. */
        ncq_disk_ncq_fail(d, NULL, cmd->tag, ABRT_ERR);
        cmd->complete(cmd, ABRT_ERR);
        return;
    }

    if (d->timing) {
        ncq_disk_sync_write_cache(d, s);
        mc = (NcqCmd) {
            .id = cmd->tag,
            .op = cmd->is_write ? NCQ_OP_WRITE : NCQ_OP_READ,
            .lba = cmd->lba,
            .sectors = cmd->sector_count,
            .fua = cmd->fua,
            .prio = cmd->prio,
            .queued = true,
        };
        ret = ncq_model_submit(d->model, &mc, now);
        if (ret < 0) {
            ncq_disk_ncq_fail(d, cmd, cmd->tag,
                              ret == NCQ_ERR_RANGE ? ID_ERR : ABRT_ERR);
            return;
        }
    }

    r->cmd = cmd;
    r->host_done = false;
    r->host_ret = 0;
    if (cmd->is_write) {
        r->aiocb = dma_blk_write(s->blk, cmd->sg,
                                 cmd->lba << BDRV_SECTOR_BITS,
                                 BDRV_SECTOR_SIZE, ncq_disk_host_done, r);
    } else {
        r->aiocb = dma_blk_read(s->blk, cmd->sg,
                                cmd->lba << BDRV_SECTOR_BITS,
                                BDRV_SECTOR_SIZE, ncq_disk_host_done, r);
    }
    if (d->timing) {
        ncq_disk_arm_timer(d);
    }
}

/*
 * A non-queued command arrived while queued ones are outstanding: the
 * drive aborts it and every queued command (NQ set in log 10h).
 */
void ncq_disk_nonqueued_error(NcqDisk *d)
{
    qemu_log_mask(LOG_GUEST_ERROR, "ncq-disk: non-queued command while "
                  "%d queued commands are outstanding\n",
                  ncq_disk_outstanding(d));
    ncq_disk_ncq_fail(d, NULL, NCQ_DISK_TAG_NONQUEUED, ABRT_ERR);
}

void ncq_disk_ncq_error(IDEDevice *dev, uint8_t tag)
{
    NcqDisk *d = NCQ_DISK(dev);

    qemu_log_mask(LOG_GUEST_ERROR, "ncq-disk: tag %u is already active\n",
                  tag);
    ncq_disk_ncq_fail(d, NULL, tag, ABRT_ERR);
}

void ncq_disk_ncq_cancel(IDEDevice *dev)
{
    NcqDisk *d = NCQ_DISK(dev);
    int i;

    trace_ncq_disk_reset(d, ncq_disk_outstanding(d));
    /*
     * A non-queued command has its data in the drive's buffer already: the
     * drive finishes it, just before the reset takes effect.
     */
    ncq_disk_run_held(d);
    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        if (d->reqs[i].cmd) {
            ncq_disk_drop(&d->reqs[i]);
        }
    }
    ncq_model_reset(d->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    timer_del(d->timer);
    d->ncq_halted = false;
    d->errlog.valid = false;
}

static void ncq_disk_timer_cb(void *opaque)
{
    NcqDisk *d = opaque;
    NcqCompletion done[NCQ_DISK_MAX_DEPTH + 1];
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int i, n;

    do {
        n = ncq_model_advance(d->model, now, done, ARRAY_SIZE(done));
        for (i = 0; i < n; i++) {
            NcqCompletion *c = &done[i];
            NcqDiskReq *r;

            if (!c->queued) {
                if (d->trace) {
                    ncq_trace_record(d->trace, c);
                }
                ncq_disk_run_held(d);
                continue;
            }
            if (c->id >= NCQ_DISK_MAX_DEPTH) {
                continue;
            }
            r = &d->reqs[c->id];
            if (!r->cmd) {
                continue;
            }
            if (!r->host_done) {
                /* Virtual time stands still while we wait. */
                d->host_waits++;
                AIO_WAIT_WHILE(NULL, !r->host_done);
            }
            trace_ncq_disk_complete(d, c->id, c->lba, c->sectors,
                                    c->arrival_ns, c->dispatch_ns,
                                    c->complete_ns, c->delay_count,
                                    ncq_reason_name(c->reason));
            if (d->trace) {
                ncq_trace_record(d->trace, c);
            }
            ncq_disk_finish(r, r->host_ret);
        }
    } while (n == ARRAY_SIZE(done));
    ncq_disk_arm_timer(d);
}

/*
 * The held non-queued command's deadline: run it through the generic
 * handler now and finish its host I/O before virtual time moves on.
 */
void ncq_disk_run_held(NcqDisk *d)
{
    IDEState *s = ncq_disk_state(d);

    if (!d->held) {
        return;
    }
    d->held = false;
    s->status = READY_STAT;     /* ide_bus_exec_cmd() refuses a busy drive */
    d->passthrough = true;
    ide_bus_exec_cmd(s->bus, d->held_cmd);
    d->passthrough = false;
    blk_drain(s->blk);
}

void ncq_disk_queue_init(NcqDisk *d)
{
    int i;

    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        d->reqs[i].disk = d;
    }
    d->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ncq_disk_timer_cb, d);
}

void ncq_disk_queue_cleanup(NcqDisk *d)
{
    if (d->timer) {
        timer_free(d->timer);
        d->timer = NULL;
    }
}
