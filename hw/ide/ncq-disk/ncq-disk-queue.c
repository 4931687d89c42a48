/*
 * ncq-disk: the drive's command queue in virtual time
 *
 * Every queued command goes to the model at its arrival time; the host
 * I/O starts at once, but the command completes to the guest only at the
 * model's deadline on QEMU_CLOCK_VIRTUAL.  If the host has not finished
 * by then, virtual time must not move until it has, so that what the
 * guest sees never depends on host timing.  By default the timer
 * callback waits for it (under icount the vCPU cannot pass a pending
 * timer), blocking the main loop.  With x-hold-clock=on the drive goes on
 * from the host's completion instead, holding virtual time meanwhile
 * under icount (icount_hold()); the main loop is not blocked.  (Under
 * qtest the clock moves only with clock_step: a test that waits for the
 * completion without stepping sees it at the deadline too.)
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
#include "system/cpu-timers.h"
#include "system/runstate.h"
#include "../ide-internal.h"
#include "ncq-disk.h"
#include "trace.h"

static void ncq_disk_held_wait_end(NcqDisk *d);
static void ncq_disk_held_check(NcqDisk *d);

/*
 * While the drive waits for the host (a queued completion, a held
 * command), a virtual timer stays armed a little ahead: virtual time then
 * always has a next event.  Under icount, with the clock held, it never
 * fires; under qtest, clock_step needs one.
 */
#define NCQ_DISK_KEEPALIVE_NS   (100 * SCALE_US)

static void ncq_disk_keepalive_arm(NcqDisk *d)
{
    timer_mod(d->wait.keepalive, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              NCQ_DISK_KEEPALIVE_NS);
}

/* No wait left: it goes, before it can fire (none lingers under icount) */
static void ncq_disk_keepalive_stop(NcqDisk *d)
{
    if (!d->wait.active && !d->held.deferred && !d->held.running) {
        timer_del(d->wait.keepalive);
    }
}

static void ncq_disk_keepalive_cb(void *opaque)
{
    NcqDisk *d = opaque;

    if (d->held.deferred || d->held.running) {
        ncq_disk_held_check(d);     /* re-arms it while it waits */
    } else if (d->wait.active) {
        ncq_disk_keepalive_arm(d);
    }
}

/*
 * The media cache's band cleanings since the last call (drive-managed
 * SMR, docs/smr.md): into the trace file and QEMU's trace events.
 */
static void ncq_disk_mc_events(NcqDisk *d)
{
    NcqMcEvent ev[16];
    int i, n;

    do {
        n = ncq_model_mc_events(d->model, ev, ARRAY_SIZE(ev));
        for (i = 0; i < n; i++) {
            trace_ncq_disk_mc_clean(d, ev[i].band, ev[i].extents,
                                    ev[i].start_ns, ev[i].end_ns,
                                    ev[i].forced, ev[i].done);
            if (d->trace) {
                ncq_trace_clean(d->trace, &ev[i]);
            }
        }
    } while (n == ARRAY_SIZE(ev));
}

void ncq_disk_arm_timer(NcqDisk *d)
{
    int64_t next = ncq_model_next_event(d->model);

    ncq_disk_mc_events(d);
    ncq_disk_smart_activity(d);
    ncq_disk_pm_rearm(d);
    if (next == INT64_MAX) {
        timer_del(d->timer);
    } else {
        timer_mod_anticipate_ns(d->timer, next);
    }
}

/*
 * The queue is dropped while a completion waits for its host I/O: the
 * completions left are void.  Before the drops, whose waits run the
 * bottom half that would otherwise go on with them.
 */
static void ncq_disk_wait_void(NcqDisk *d)
{
    NcqDiskWait *w = &d->wait;

    if (!w->active) {
        return;
    }
    timer_del(w->give_up);
    w->active = false;
    ncq_disk_keepalive_stop(d);
    w->next = w->n;
    w->more = false;
    if (w->hold) {
        w->hold = false;
        icount_release();
    }
}

/*
 * An NCQ error: the drive aborts every outstanding command, reports the
 * failing one in the NCQ Command Error log and refuses new queued
 * commands until the host has read that log (SATA 3.x, 13.6.3).  @lba
 * goes to the log: the first failing sector of a media error.
 */
void ncq_disk_ncq_halt(NcqDisk *d, IDENCQCmd *failed, uint8_t tag,
                       uint8_t error, uint64_t lba)
{
    IDENCQCmd *aborted[NCQ_DISK_MAX_DEPTH];
    int i, n = 0;

    d->queue_gen++;
    ncq_disk_wait_void(d);
    d->errlog = (NcqDiskErrorLog) {
        .valid = true,
        .nq = tag == NCQ_DISK_TAG_NONQUEUED,
        .tag = tag == NCQ_DISK_TAG_NONQUEUED ? 0 : tag,
        .status = READY_STAT | ERR_STAT,
        .error = error,
        .lba = lba,
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
        ncq_disk_done(d, failed, 0, error);
    }
    for (i = 0; i < n; i++) {
        ncq_disk_done(d, aborted[i], 0, ABRT_ERR);
    }
}

/* An NCQ error caused by the guest's command. */
static void ncq_disk_ncq_fail(NcqDisk *d, IDENCQCmd *failed, uint8_t tag,
                              uint8_t error)
{
    d->count.guest_errors++;
    ncq_disk_ncq_halt(d, failed, tag, error, failed ? failed->lba : 0);
}

/*
 * The drive drops its queue (a reset, or the HBA's port stopped;
 * ncq_disk_drop_all() in ncq-disk.c), in two steps around the held
 * command's.  First the completions waiting for host I/O become void:
 * before the drops, whose waits run the bottom half that would otherwise
 * go on with them.
 */
void ncq_disk_queue_void(NcqDisk *d)
{
    trace_ncq_disk_reset(d, ncq_disk_outstanding(d));
    d->queue_gen++;
    ncq_disk_wait_void(d);
    ncq_disk_held_wait_end(d);
}

/* Then every queued command is dropped and the model starts afresh. */
void ncq_disk_queue_drop(NcqDisk *d)
{
    int i;

    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        if (d->reqs[i].cmd) {
            ncq_disk_drop(&d->reqs[i]);
        }
    }
    ncq_model_reset(d->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    timer_del(d->timer);
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

/* The queued command codes (ACS-4 13.6) */
#define ATA_CMD_READ_FPDMA      0x60
#define ATA_CMD_WRITE_FPDMA     0x61
#define ATA_CMD_NCQ_NON_DATA    0x63
#define ATA_CMD_RECV_FPDMA      0x65

/*
 * What a queued command is, by its command code: asked only by
 * ncq_disk_ncq_take(), once per command.
 */
static NcqDiskKind ncq_disk_ncq_kind(const IDENCQCmd *cmd)
{
    switch (cmd->command) {
    case ATA_CMD_READ_FPDMA:
        return NCQ_DISK_READ;
    case ATA_CMD_WRITE_FPDMA:
        return NCQ_DISK_WRITE;
    case ATA_CMD_NCQ_NON_DATA:
        return NCQ_DISK_NON_DATA;
    case ATA_CMD_RECV_FPDMA:
        return NCQ_DISK_RECEIVE;
    default:
        return NCQ_DISK_OTHER;
    }
}

/* A read or write of the medium: the image's data moves */
static bool ncq_disk_kind_media(NcqDiskKind kind)
{
    return kind == NCQ_DISK_READ || kind == NCQ_DISK_WRITE;
}

/* The queued commands the drive holds (tags in use). */
static uint32_t ncq_disk_ncq_held(NcqDisk *d)
{
    uint32_t n = 0;
    int tag;

    for (tag = 0; tag < NCQ_DISK_MAX_DEPTH; tag++) {
        n += d->reqs[tag].cmd != NULL;
    }
    return n;
}

/*
 * A queued command the drive refuses before timing it: true if it was
 * failed or dropped here.
 */
static bool ncq_disk_ncq_refuse(NcqDisk *d, IDEState *s, IDENCQCmd *cmd,
                                NcqDiskKind kind)
{
    if (d->power.off) {
        return true;            /* a dead drive answers nothing */
    }
    if (d->pm.mode == NCQ_DISK_PM_SLEEP) {
        /* in SLEEP only a reset is answered (ncq-disk-pm.c) */
        ncq_disk_ncq_fail(d, cmd, cmd->tag, ABRT_ERR);
        return true;
    }
    if (d->ncq_halted || d->aborting) {
        /*
         * Until log 10h is read, queued commands are aborted; so are
         * those that arrive while the queue is being dropped.
         */
        ncq_disk_done(d, cmd, 0, ABRT_ERR);
        return true;
    }
    if (cmd->tag >= NCQ_DISK_MAX_DEPTH) {
        ncq_disk_ncq_fail(d, cmd, cmd->tag, ABRT_ERR);
        return true;
    }
    if (!ncq_disk_kind_media(kind) && !d->prop.timing) {
        /* the queued ZAC forms go through the model (ncq-disk-zac.c) */
        ncq_disk_ncq_fail(d, cmd, cmd->tag, ABRT_ERR);
        return true;
    }
    if (ncq_disk_kind_media(kind) &&
        cmd->lba + cmd->sector_count > s->nb_sectors) {
        ncq_disk_ncq_fail(d, cmd, cmd->tag, ID_ERR);
        return true;
    }
    if (d->reqs[cmd->tag].cmd) {
        /* AHCI reports active tags through ncq_error(); be safe anyway. */
        ncq_disk_ncq_fail(d, NULL, cmd->tag, ABRT_ERR);
        ncq_disk_done(d, cmd, 0, ABRT_ERR);
        return true;
    }
    /*
     * queue-depth is how many commands the drive holds at once, not a
     * limit on the tag: Linux numbers tags over the port's 32 whatever
     * IDENTIFY word 75 says (docs/device.md, "Queue depth below 32").
     */
    if (ncq_disk_ncq_held(d) >= d->prop.queue_depth) {
        ncq_disk_ncq_fail(d, cmd, cmd->tag, ABRT_ERR);
        return true;
    }
    return false;
}

/*
 * Hand a queued command to the model; false if it failed.  A write's
 * sectors whose old contents must be kept first: *undo_first, *undo_n.
 */
static bool ncq_disk_ncq_time(NcqDisk *d, IDEState *s, IDENCQCmd *cmd,
                              NcqDiskKind kind, int64_t now,
                              uint64_t *undo_first, uint32_t *undo_n)
{
    NcqCmd mc = {
        .id = cmd->tag,
        .op = kind == NCQ_DISK_WRITE ? NCQ_OP_WRITE : NCQ_OP_READ,
        .lba = cmd->lba,
        .sectors = cmd->sector_count,
        .fua = cmd->fua,
        .prio = cmd->prio,
        .queued = true,
        .cdl = cmd->cdl,
    };
    int ret;

    if (!ncq_disk_kind_media(kind)) {
        /* NCQ NON-DATA, SEND or RECEIVE: a ZAC command, or ABRT */
        ret = ncq_disk_zac_ncq_decode(d, cmd, kind, &mc);
        if (ret < 0) {
            trace_ncq_disk_zac_queued(d, cmd->tag, cmd->command, 0, cmd->lba,
                                      cmd->aux, ret);
            ncq_disk_ncq_fail(d, cmd, cmd->tag, ABRT_ERR);
            ncq_disk_zac_ncq_sense(d, ret);
            return false;
        }
    }
    ncq_disk_sync_write_cache(d, s);
    if (kind == NCQ_DISK_WRITE) {
        uint32_t gen = d->queue_gen;

        *undo_n = ncq_disk_undo_prepare(d, cmd->lba, cmd->sector_count, now,
                                        undo_first);
        if (d->queue_gen != gen) {
            /* It waited for a write, and the queue was dropped. */
            ncq_disk_done(d, cmd, 0, ABRT_ERR);
            return false;
        }
    }
    ret = ncq_model_submit(d->model, &mc, now);
    if (!ncq_disk_kind_media(kind)) {
        trace_ncq_disk_zac_queued(d, cmd->tag, cmd->command, mc.zone_action,
                                  cmd->lba, cmd->aux, ret);
    }
    if (ret < 0) {
        ncq_disk_ncq_fail(d, cmd, cmd->tag,
                          ret == NCQ_ERR_RANGE ? ID_ERR : ABRT_ERR);
        if (ret != NCQ_ERR_RANGE) {
            /* a zone error: its sense in log 10h (ncq-disk-zac.c) */
            ncq_disk_zac_ncq_sense(d, ret);
        }
        return false;
    }
    return true;
}

/*
 * The drive starts a queued command the host submitted, of kind @kind:
 * it refuses it, or times it and starts its host I/O.
 */
static void ncq_disk_ncq_start(NcqDisk *d, IDENCQCmd *cmd, NcqDiskKind kind)
{
    IDEState *s = ncq_disk_state(d);
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    NcqDiskReq *r;
    uint64_t undo_first = 0;
    uint32_t undo_n = 0;

    trace_ncq_disk_submit(d, cmd->tag, cmd->is_write, cmd->lba,
                          cmd->sector_count, cmd->fua, cmd->prio, now);
    if (ncq_disk_ncq_refuse(d, s, cmd, kind)) {
        return;
    }
    ncq_disk_pm_media(d);
    if (d->prop.timing &&
        !ncq_disk_ncq_time(d, s, cmd, kind, now, &undo_first, &undo_n)) {
        return;
    }
    r = &d->reqs[cmd->tag];
    r->cmd = cmd;
    r->kind = kind;
    r->host_done = false;
    r->host_ret = 0;
    if (!ncq_disk_kind_media(kind)) {
        r->host_done = true;    /* no data from or to the image */
    } else if (undo_n) {
        ncq_disk_undo_read(r, undo_first, undo_n);
    } else {
        ncq_disk_host_io(r);
    }
    if (d->prop.timing) {
        ncq_disk_arm_timer(d);
    }
}

/*
 * The drive takes a queued command: from the host (ncq_disk_ncq_submit()),
 * or from the HBA after migration (@migrated: ncq_disk_ncq_resume(); the
 * source timed it and moved its data, the model's state holds it, and the
 * stream does not carry its kind).  The one place a queued command's kind
 * is decided; its slot carries it to the timing, the host I/O, the
 * completion and the power-loss undo.
 */
static void ncq_disk_ncq_take(NcqDisk *d, IDENCQCmd *cmd, bool migrated)
{
    NcqDiskKind kind = ncq_disk_ncq_kind(cmd);

    if (migrated) {
        d->reqs[cmd->tag].cmd = cmd;
        d->reqs[cmd->tag].kind = kind;
    } else {
        ncq_disk_ncq_start(d, cmd, kind);
    }
}

void ncq_disk_ncq_submit(IDEDevice *dev, IDENCQCmd *cmd)
{
    ncq_disk_ncq_take(NCQ_DISK(dev), cmd, false);
}

/*
 * The HBA hands back a command the drive held when the state was saved
 * (ncq-disk-migrate.c), or NULL for a tag it did not hold: the drive
 * never saw the command's submission, so it takes it here.
 */
void ncq_disk_ncq_resume(NcqDiskReq *r, IDENCQCmd *cmd)
{
    if (cmd) {
        assert(r == &r->disk->reqs[cmd->tag]);
        ncq_disk_ncq_take(r->disk, cmd, true);
    } else {
        r->cmd = NULL;
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

    if (d->aborting) {
        return;                 /* the error being reported covers it */
    }

    qemu_log_mask(LOG_GUEST_ERROR, "ncq-disk: tag %u is already active\n",
                  tag);
    ncq_disk_ncq_fail(d, NULL, tag, ABRT_ERR);
}

/*
 * The error register of an injected media error.  ACS defines UNC for
 * reads only; a write that cannot be written is reported with ABRT, the
 * one error bit ACS lets WRITE commands set for it (docs/faults.md).
 */
static uint8_t ncq_disk_fault_error(int fault)
{
    switch (fault) {
    case NCQ_FAULT_UNC:
        return ECC_ERR;         /* ACS calls bit 6 UNC */
    case NCQ_FAULT_WRITE:
        return ABRT_ERR;
    default:
        return 0;
    }
}

/*
 * A queued read the model says returns corrupt sectors (a corrupt fault,
 * docs/faults.md): the image's data is in guest memory already; alter it
 * there as the drive's media gives it.  The command ends with good
 * status: the drive does not know.
 */
static void ncq_disk_corrupt_read(NcqDiskReq *r, const NcqCompletion *c)
{
    IDENCQCmd *cmd = r->cmd;
    dma_addr_t len = MIN((dma_addr_t)cmd->sector_count * BDRV_SECTOR_SIZE,
                         cmd->sg->size);
    g_autofree uint8_t *buf = NULL;

    if (r->kind != NCQ_DISK_READ ||
        len < (dma_addr_t)c->sectors * BDRV_SECTOR_SIZE) {
        return;
    }
    buf = g_malloc(len);
    /* dma_buf_write: from guest memory; dma_buf_read: to it */
    dma_buf_write(buf, len, NULL, cmd->sg, MEMTXATTRS_UNSPECIFIED);
    if (ncq_fault_corrupt(c, buf) > 0) {
        dma_buf_read(buf, len, NULL, cmd->sg, MEMTXATTRS_UNSPECIFIED);
    }
}

/* What the timer callback does after one completion */
typedef enum NcqDiskNext {
    NCQ_DISK_NEXT,          /* on to the next completion */
    NCQ_DISK_VOID,          /* the queue was dropped: the rest are void */
    NCQ_DISK_OFF,           /* the power was cut: stop */
    NCQ_DISK_WAIT,          /* its host I/O is in flight: go on after it */
} NcqDiskNext;

/*
 * A queued command fails with an NCQ error: it leaves its slot and the
 * queue halts; @sense (sense key, ASC, ASCQ), if not NULL, goes to log
 * 10h with it (a CDL abort: ncq_disk_cdl_complete() says so).
 */
static void ncq_disk_ncq_abort(NcqDisk *d, NcqDiskReq *r, uint8_t tag,
                               uint8_t error, uint64_t lba,
                               const uint8_t *sense)
{
    IDENCQCmd *cmd = r->cmd;

    r->cmd = NULL;
    ncq_disk_ncq_halt(d, cmd, tag, error, lba);
    if (sense) {
        memcpy(d->errlog.sense, sense, sizeof(d->errlog.sense));
        d->errlog.status |= SENSE_AVAIL_STAT;
    }
}

/* The held non-queued command's deadline */
static NcqDiskNext ncq_disk_complete_held(NcqDisk *d, NcqCompletion *c)
{
    if (d->trace) {
        ncq_trace_record(d->trace, c);
    }
    if (c->fault == NCQ_FAULT_POWERCUT) {
        ncq_disk_power_cut_machine(d);
        return NCQ_DISK_OFF;
    }
    d->held.error = ncq_disk_fault_error(c->fault);
    d->held.error_lba = c->fault_lba;
    d->held.cdl_outcome = c->cdl_outcome;
    if (c->op == NCQ_OP_FLUSH && !d->held.error) {
        /* the cache is on the media: so are the write pointers */
        ncq_disk_zstate_save(d, "flush");
    }
    ncq_disk_run_held(d);
    return NCQ_DISK_NEXT;
}

/* A queued command's deadline: complete it once its host I/O is done. */
static NcqDiskNext ncq_disk_complete_queued(NcqDisk *d, NcqCompletion *c)
{
    uint8_t sense[3];
    NcqDiskReq *r;

    if (c->id >= NCQ_DISK_MAX_DEPTH) {
        return NCQ_DISK_NEXT;
    }
    r = &d->reqs[c->id];
    if (!r->cmd) {
        return NCQ_DISK_NEXT;
    }
    if (!r->host_done) {
        uint32_t gen = d->queue_gen;

        int64_t t0;

        bool done;

        d->count.host_waits++;
        /*
         * Wait here, virtual time standing still, the main loop blocked:
         * briefly by default, then on without blocking, virtual time
         * held meanwhile; with x-hold-clock=off for at most twice
         * x-host-wait-ms.
         */
        trace_ncq_disk_host_wait(d, c->id);
        t0 = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
        done = d->prop.hold_clock ? ncq_disk_wait_host_briefly(r)
                                  : ncq_disk_wait_host(r);
        if (done) {
            trace_ncq_disk_host_wait_done(d, c->id,
                                          qemu_clock_get_ns(QEMU_CLOCK_REALTIME)
                                          - t0);
        }
        if (d->queue_gen == gen && !done) {
            return NCQ_DISK_WAIT;
        }
        if (d->queue_gen != gen) {
            /*
             * The wait ran AHCI's command fetch, and a command made the
             * drive drop its queue: the other completions are void.
             */
            return NCQ_DISK_VOID;
        }
    }
    trace_ncq_disk_complete(d, c->id, c->lba, c->sectors, c->arrival_ns,
                            c->dispatch_ns, c->complete_ns, c->delay_count,
                            ncq_reason_name(c->reason));
    if (d->trace) {
        ncq_trace_record(d->trace, c);
    }
    if (c->fault == NCQ_FAULT_POWERCUT) {
        ncq_disk_power_cut_machine(d);
        return NCQ_DISK_OFF;
    }
    if (ncq_disk_fault_error(c->fault)) {
        /* What a drive reports for a media error (docs/faults.md) */
        d->count.injected_errors++;
        ncq_disk_ncq_abort(d, r, c->id, ncq_disk_fault_error(c->fault),
                           c->fault_lba, NULL);
        return NCQ_DISK_NEXT;
    }
    if (ncq_disk_cdl_complete(d, r->cmd, c, sense)) {
        /* a missed limit aborts it, its sense data in log 10h */
        ncq_disk_ncq_abort(d, r, c->id, ABRT_ERR, c->lba, sense);
        return NCQ_DISK_NEXT;
    }
    if (!ncq_disk_kind_media(r->kind)) {
        ncq_disk_zac_ncq_complete(d, r->cmd, r->kind);
    } else if (c->fault == NCQ_FAULT_CORRUPT && r->host_ret == 0) {
        ncq_disk_corrupt_read(r, c);
    }
    ncq_disk_finish(r, r->host_ret);
    return NCQ_DISK_NEXT;
}

/*
 * A queued command's completion is due but its host I/O is in flight:
 * stop here, hold virtual time (icount) and go on from this completion
 * when the I/O ends (ncq_disk_host_done() schedules wait.bh).  Host I/O
 * always ends, except a DMA parked for a bounce buffer that nothing will
 * free: a guest can point PRDs at MMIO after filling the bounce buffer
 * with command lists mapped there too.  So after x-host-wait-ms of wall
 * time it is cancelled, and its command fails.
 */
static void ncq_disk_wait_begin(NcqDisk *d)
{
    NcqDiskWait *w = &d->wait;

    w->active = true;
    w->gen = d->queue_gen;
    w->since = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    if (!w->hold) {
        icount_hold();
        w->hold = true;
    }
    timer_mod(w->give_up, qemu_clock_get_ms(QEMU_CLOCK_REALTIME) +
              d->prop.host_wait_ms);
    ncq_disk_keepalive_arm(d);
    trace_ncq_disk_host_wait(d, w->done[w->next].id);
}

static void ncq_disk_wait_give_up(void *opaque)
{
    NcqDisk *d = opaque;
    NcqDiskWait *w = &d->wait;
    NcqDiskReq *r;

    if (!w->active) {
        return;
    }
    r = &d->reqs[w->done[w->next].id];
    if (r->aiocb) {
        warn_report("ncq-disk: host I/O of tag %td has not finished in %u "
                    "ms (DMA to a non-RAM address?); failing its command",
                    r - d->reqs, d->prop.host_wait_ms);
        blk_aio_cancel_async(r->aiocb);
    }
}

/*
 * Go through the model's completions due now, from wait.done[wait.next]
 * on; stop at one whose host I/O is still in flight.
 */
static void ncq_disk_run_completions(NcqDisk *d)
{
    NcqDiskWait *w = &d->wait;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    NcqDiskNext next;

    for (;;) {
        while (w->next < w->n) {
            NcqCompletion *c = &w->done[w->next];

            if (!w->resumed) {
                if (c->fault) {
                    trace_ncq_disk_fault(d, c->queued ? c->id :
                                         NCQ_ID_NONQUEUED,
                                         ncq_fault_kind_name(c->fault),
                                         c->fault_lba);
                }
                ncq_disk_smart_done(d, c);
                ncq_disk_cdl_count(d, c);
            }
            w->resumed = false;
            next = c->queued ? ncq_disk_complete_queued(d, c) :
                               ncq_disk_complete_held(d, c);
            if (next == NCQ_DISK_WAIT) {
                ncq_disk_wait_begin(d);
                return;
            }
            w->next++;
            if (next == NCQ_DISK_OFF) {
                w->next = w->n = 0;
                w->more = false;
                return;
            }
            if (next == NCQ_DISK_VOID) {
                w->next = w->n;
            }
        }
        if (!w->more) {
            break;
        }
        w->n = ncq_model_advance(d->model, now, w->done, ARRAY_SIZE(w->done));
        w->next = 0;
        w->more = w->n == ARRAY_SIZE(w->done);
    }
    ncq_disk_arm_timer(d);
}

/* The host I/O a completion waited for has ended: go on from it. */
static void ncq_disk_wait_end(NcqDisk *d)
{
    NcqDiskWait *w = &d->wait;
    bool hold = w->hold;

    if (!w->active) {
        return;
    }
    timer_del(w->give_up);
    trace_ncq_disk_host_wait_done(d, w->done[w->next].id,
                                  qemu_clock_get_ns(QEMU_CLOCK_REALTIME) -
                                  w->since);
    w->active = false;
    w->hold = false;
    ncq_disk_keepalive_stop(d);
    if (d->queue_gen != w->gen) {
        /* The queue was dropped meanwhile: the rest are void */
        w->next = w->n;
    } else {
        w->resumed = true;
    }
    /*
     * Then what became due since (without icount virtual time moved on
     * meanwhile), so that the next deadline armed is not in the past
     */
    w->more = true;
    ncq_disk_run_completions(d);
    if (hold) {
        /* After: a wait that began again took its own hold */
        icount_release();
    }
}

static void ncq_disk_wait_bh(void *opaque)
{
    NcqDisk *d = opaque;
    NcqDiskWait *w = &d->wait;

    if (w->active && d->reqs[w->done[w->next].id].host_done) {
        ncq_disk_wait_end(d);
    }
}

/*
 * The VM stops (a migration, savevm, or the monitor) while a completion
 * waits: finish it first, waiting for the host here, so that the state
 * saved has no completion the model gave and the drive holds back.
 */
static void ncq_disk_wait_vm_change(void *opaque, bool running,
                                    RunState state)
{
    NcqDisk *d = opaque;
    NcqDiskWait *w = &d->wait;

    while (!running && w->active) {
        if (!ncq_disk_wait_host(&d->reqs[w->done[w->next].id])) {
            break;              /* the host does not answer: go on */
        }
        ncq_disk_wait_end(d);
    }
}

static void ncq_disk_timer_cb(void *opaque)
{
    NcqDisk *d = opaque;
    NcqDiskWait *w = &d->wait;

    if (w->active) {
        return;     /* the completions due go on when its host I/O ends */
    }
    w->next = w->n = 0;
    w->more = true;
    ncq_disk_run_completions(d);
}

/* The generic handler's host I/O for the held command is in flight */
static bool ncq_disk_held_busy(IDEState *s)
{
    return (s->status & BUSY_STAT) || s->pio_aiocb ||
           (s->bus->dma && s->bus->dma->aiocb);
}

static bool ncq_disk_held_waiting(void *opaque)
{
    NcqDisk *d = opaque;

    return d->held.deferred || d->held.running;
}

/* Run the held command through the generic handler now. */
static void ncq_disk_held_exec(NcqDisk *d)
{
    IDEState *s = ncq_disk_state(d);

    d->held.active = false;
    s->status = READY_STAT;     /* ide_bus_exec_cmd() refuses a busy drive */
    d->held.passthrough = true;
    ide_bus_exec_cmd(s->bus, d->held.cmd);
    d->held.passthrough = false;
    d->held.running = ncq_disk_held_busy(s);
}

static void ncq_disk_held_wait_end(NcqDisk *d)
{
    d->held.deferred = false;
    d->held.running = false;
    timer_del(d->held.poll);
    ncq_disk_keepalive_stop(d);
    if (d->held.hold) {
        d->held.hold = false;
        icount_release();
    }
}


/*
 * Where the held command's wait stands: its undo read has ended (it runs
 * now), its host I/O has ended (the wait ends), or x-host-wait-ms of
 * wall time have passed: then it runs without its undo data, or virtual
 * time goes on while its host I/O is in flight (it completes when the
 * host answers, as with upstream's ide-hd).
 */
static void ncq_disk_held_check(NcqDisk *d)
{
    IDEState *s = ncq_disk_state(d);
    int64_t now = qemu_clock_get_ms(QEMU_CLOCK_REALTIME);
    bool late = now - d->held.since_ms >= d->prop.host_wait_ms;

    if (d->held.deferred && (!d->held.undo || late)) {
        ncq_disk_held_undo_abandon(d);
        d->held.deferred = false;
        if (d->held.active && !d->power.off) {
            ncq_disk_held_exec(d);
            d->held.since_ms = now;
            late = false;
        }
    }
    if (d->held.running && (!ncq_disk_held_busy(s) || late)) {
        if (ncq_disk_held_busy(s)) {
            warn_report("ncq-disk: the held command's host I/O has not "
                        "finished in %u ms (DMA to a non-RAM address?); "
                        "virtual time goes on", d->prop.host_wait_ms);
        }
        d->held.running = false;
    }
    if (!ncq_disk_held_waiting(d)) {
        ncq_disk_held_wait_end(d);
        return;
    }
    timer_mod(d->held.poll, now + 1);
    ncq_disk_keepalive_arm(d);
}

static void ncq_disk_held_tick(void *opaque)
{
    ncq_disk_held_check(opaque);
}

/*
 * The held non-queued command's deadline: run it through the generic
 * handler now (once its undo read has ended) and finish its host I/O
 * before virtual time moves on.  By default (x-hold-clock) nothing waits
 * for the host here: under icount virtual time is held (icount_hold())
 * and a timer on the main loop sees the I/O end; with x-hold-clock=off
 * the main loop waits here, for at most x-host-wait-ms.
 */
static bool ncq_disk_held_undo_busy(void *opaque)
{
    return ((NcqDisk *)opaque)->held.undo != NULL;
}

static bool ncq_disk_held_io_busy(void *opaque)
{
    return ncq_disk_held_busy(ncq_disk_state(opaque));
}

void ncq_disk_run_held(NcqDisk *d)
{
    if (!d->held.active) {
        return;
    }
    /* Briefly in the main loop first: a host that answers is done by then */
    ncq_disk_wait_bounded(ncq_disk_held_undo_busy, d, NCQ_DISK_BRIEF_WAIT_MS);
    if (!d->held.active) {
        return;                 /* dropped meanwhile */
    }
    if (d->held.undo) {
        d->held.deferred = true;
    } else {
        ncq_disk_held_exec(d);
        if (d->held.running) {
            ncq_disk_wait_bounded(ncq_disk_held_io_busy, d,
                                  NCQ_DISK_BRIEF_WAIT_MS);
            d->held.running = ncq_disk_held_busy(ncq_disk_state(d));
        }
    }
    if (!ncq_disk_held_waiting(d)) {
        return;
    }
    if (!d->held.hold) {
        icount_hold();
        d->held.hold = true;
    }
    d->held.since_ms = qemu_clock_get_ms(QEMU_CLOCK_REALTIME);
    ncq_disk_held_check(d);
    if (!d->prop.hold_clock) {
        /* the poll timer bounds it */
        AIO_WAIT_WHILE(NULL, ncq_disk_held_waiting(d));
    }
}

/*
 * The VM stops (a migration, savevm) while the held command waits for
 * its undo read: run it first, so that no saved state holds a command
 * whose deadline has passed.
 */
static void ncq_disk_held_vm_change(void *opaque, bool running,
                                    RunState state)
{
    NcqDisk *d = opaque;

    if (!running && d->held.deferred) {
        ncq_disk_wait_bounded(ncq_disk_held_waiting, d, d->prop.host_wait_ms);
        d->held.since_ms = INT64_MIN / 2;   /* late: go on */
        ncq_disk_held_check(d);
    }
}

void ncq_disk_queue_init(NcqDisk *d)
{
    int i;

    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        d->reqs[i].disk = d;
    }
    d->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ncq_disk_timer_cb, d);
    d->wait.bh = qemu_bh_new(ncq_disk_wait_bh, d);
    d->wait.give_up = timer_new_ms(QEMU_CLOCK_REALTIME,
                                   ncq_disk_wait_give_up, d);
    d->wait.vm_change = qemu_add_vm_change_state_handler(
        ncq_disk_wait_vm_change, d);
    d->held.poll = aio_timer_new(qemu_get_aio_context(), QEMU_CLOCK_REALTIME,
                                 SCALE_MS, ncq_disk_held_tick, d);
    d->wait.keepalive = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                     ncq_disk_keepalive_cb, d);
    d->held.vm_change = qemu_add_vm_change_state_handler(
        ncq_disk_held_vm_change, d);
}

void ncq_disk_queue_cleanup(NcqDisk *d)
{
    NcqDiskWait *w = &d->wait;

    if (w->vm_change) {
        qemu_del_vm_change_state_handler(w->vm_change);
        w->vm_change = NULL;
    }
    if (d->held.vm_change) {
        qemu_del_vm_change_state_handler(d->held.vm_change);
        d->held.vm_change = NULL;
    }
    if (d->held.poll) {
        ncq_disk_held_wait_end(d);
        timer_free(d->held.poll);
        timer_free(d->wait.keepalive);
        d->held.poll = NULL;
        d->wait.keepalive = NULL;
    }
    if (w->hold) {
        icount_release();
        w->hold = false;
    }
    w->active = false;
    if (w->bh) {
        qemu_bh_delete(w->bh);
        w->bh = NULL;
    }
    if (w->give_up) {
        timer_free(w->give_up);
        w->give_up = NULL;
    }
    if (d->timer) {
        timer_free(d->timer);
        d->timer = NULL;
    }
}
