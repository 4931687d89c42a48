/*
 * ncq-disk: snapshots and migration with commands in the drive
 *
 * What moves: the model's whole state (queue, mechanism, buffer, seeded
 * generator, counters) as the model library's blob, which tags the drive
 * holds, the held non-queued command, the NCQ error log and the device's
 * counters.  The commands themselves live in the HBA's slots: AHCI
 * rebuilds each one from its own migrated state (FUA, PRIO and the CDL
 * index included) and hands it back with ncq_restore(), then calls it with
 * NULL.  The two states load in whichever order the stream has them; the
 * drive matches its tags with the HBA's once both are in
 * (ncq_disk_mig_match()), so no load order is assumed.
 * The VM stops with its block I/O drained, so every held command's data
 * has already moved; on the other side it only has to complete, at the
 * virtual time the model says, exactly as it would have without the
 * migration.  With power-loss=on the old contents of sectors the drive
 * still holds in its cache move too (a subsection), so a power cut on
 * the other side restores what it would have restored here.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "migration/vmstate.h"
#include "ncq-disk.h"

/*
 * Both halves of an incoming state are in: the drive's (which tags it
 * held) and the HBA's (the commands in its slots).  They must agree.
 */
static bool ncq_disk_mig_match(NcqDisk *d)
{
    bool ok = true;
    int i;

    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        NcqDiskReq *r = &d->reqs[i];
        IDENCQCmd *cmd = d->mig.handed[i];

        if (r->mig_active != !!cmd && ok) {
            error_report("ncq-disk: tag %d is in %s queue but not in the "
                         "%s; was the state saved by another controller?",
                         i, cmd ? "the HBA's" : "the drive's",
                         cmd ? "drive's" : "HBA's");
            ok = false;
        }
        ncq_disk_ncq_resume(r, r->mig_active ? cmd : NULL);
        d->mig.handed[i] = NULL;
    }
    d->mig.handed_all = false;
    d->mig.loaded = false;
    return ok;
}

/*
 * IDEDeviceClass.ncq_restore: the HBA hands back, after migration, each
 * command the drive held, then NULL.  The drive's own state may come
 * before or after (no load order is assumed): the tags are matched when
 * both are in.
 */
bool ncq_disk_ncq_restore(IDEDevice *dev, IDENCQCmd *cmd)
{
    NcqDisk *d = NCQ_DISK(dev);

    if (!cmd) {
        d->mig.handed_all = true;
        return d->mig.loaded ? ncq_disk_mig_match(d) : true;
    }
    if (cmd->tag >= NCQ_DISK_MAX_DEPTH || d->mig.handed[cmd->tag]) {
        error_report("ncq-disk: the HBA hands back tag %u %s", cmd->tag,
                     cmd->tag >= NCQ_DISK_MAX_DEPTH ?
                     "beyond the drive's queue" : "twice");
        return false;
    }
    d->mig.handed[cmd->tag] = cmd;
    return true;
}

static bool ncq_disk_undo_needed(void *opaque)
{
    NcqDisk *d = opaque;

    return d->power.undo && ncq_undo_sectors(d->power.undo) > 0;
}

static int ncq_disk_undo_pre_save(void *opaque)
{
    NcqDisk *d = opaque;
    size_t len = ncq_undo_save_size(d->power.undo);

    if (len > UINT32_MAX) {
        error_report("ncq-disk: %" PRIu64 " sectors of power-loss undo data "
                     "do not fit a migration stream; use power-loss=off",
                     ncq_undo_sectors(d->power.undo));
        return -E2BIG;
    }
    g_free(d->mig.undo);
    d->mig.undo_len = len;
    d->mig.undo = g_malloc(len);
    ncq_undo_save(d->power.undo, d->mig.undo);
    return 0;
}

static int ncq_disk_undo_post_save(void *opaque)
{
    NcqDisk *d = opaque;

    g_free(d->mig.undo);
    d->mig.undo = NULL;
    return 0;
}

static int ncq_disk_undo_post_load(void *opaque, int version_id)
{
    NcqDisk *d = opaque;
    char err[256];
    int ret = 0;

    if (ncq_undo_load(d->power.undo, d->mig.undo, d->mig.undo_len, err,
                      sizeof(err)) < 0) {
        error_report("ncq-disk: %s", err);
        ret = -EINVAL;
    }
    g_free(d->mig.undo);
    d->mig.undo = NULL;
    return ret;
}

static const VMStateDescription vmstate_ncq_disk_undo = {
    .name = "ncq-disk/undo",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ncq_disk_undo_needed,
    .pre_save = ncq_disk_undo_pre_save,
    .post_save = ncq_disk_undo_post_save,
    .post_load = ncq_disk_undo_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(mig.undo_len, NcqDisk),
        VMSTATE_VBUFFER_ALLOC_UINT32(mig.undo, NcqDisk, 1, NULL,
                                     mig.undo_len),
        VMSTATE_END_OF_LIST()
    },
};

static int ncq_disk_pre_load(void *opaque)
{
    NcqDisk *d = opaque;

    /* The incoming state's undo data (if any) replaces what we kept */
    if (d->power.undo) {
        ncq_undo_clear(d->power.undo);
    }
    return 0;
}

static int ncq_disk_pre_save(void *opaque)
{
    NcqDisk *d = opaque;
    int i;

    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        NcqDiskReq *r = &d->reqs[i];

        if (r->cmd && !r->host_done) {
            /* The VM stops with its I/O drained; this cannot happen. */
            error_report("ncq-disk: tag %d still has host I/O in flight", i);
            return -EBUSY;
        }
        r->mig_active = r->cmd != NULL;
    }
    if (d->trace) {
        fflush(d->trace);   /* a snapshot's trace ends where its state does */
    }
    d->mig.model_len = ncq_model_state_size(d->model);
    g_free(d->mig.model);
    d->mig.model = g_malloc(d->mig.model_len);
    ncq_model_state_save(d->model, d->mig.model, d->mig.model_len);
    return 0;
}

static int ncq_disk_post_save(void *opaque)
{
    NcqDisk *d = opaque;

    g_free(d->mig.model);
    d->mig.model = NULL;
    return 0;
}

static int ncq_disk_post_load(void *opaque, int version_id)
{
    NcqDisk *d = opaque;
    char err[256];
    int i, ret = 0;

    if (ncq_model_state_load(d->model, d->mig.model, d->mig.model_len,
                             err, sizeof(err)) < 0) {
        error_report("ncq-disk: %s", err);
        ret = -EINVAL;
    }
    for (i = 0; i < NCQ_DISK_MAX_DEPTH; i++) {
        NcqDiskReq *r = &d->reqs[i];

        r->cmd = NULL;          /* the HBA hands the active ones back */
        r->aiocb = NULL;
        r->host_done = true;
    }
    d->mig.loaded = true;
    if (d->mig.handed_all && !ncq_disk_mig_match(d) && !ret) {
        ret = -EINVAL;
    }
    g_free(d->mig.model);
    d->mig.model = NULL;
    if (d->trace) {
        fflush(d->trace);   /* what ran before a loadvm stays apart */
    }
    if (!ret && d->prop.timing) {
        ncq_disk_arm_timer(d);
    }
    return ret;
}

static const VMStateDescription vmstate_ncq_disk_req = {
    .name = "ncq-disk/tag",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(mig_active, NcqDiskReq),
        VMSTATE_INT32(host_ret, NcqDiskReq),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_ncq_disk_errlog = {
    .name = "ncq-disk/errlog",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, NcqDiskErrorLog),
        VMSTATE_BOOL(nq, NcqDiskErrorLog),
        VMSTATE_UINT8(tag, NcqDiskErrorLog),
        VMSTATE_UINT8(status, NcqDiskErrorLog),
        VMSTATE_UINT8(error, NcqDiskErrorLog),
        VMSTATE_UINT64(lba, NcqDiskErrorLog),
        VMSTATE_UINT32(count, NcqDiskErrorLog),
        VMSTATE_END_OF_LIST()
    },
};

const VMStateDescription vmstate_ncq_disk = {
    .name = "ncq-disk",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = ncq_disk_pre_load,
    .pre_save = ncq_disk_pre_save,
    .post_save = ncq_disk_post_save,
    .post_load = ncq_disk_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_ARRAY(reqs, NcqDisk, NCQ_DISK_MAX_DEPTH, 1,
                             vmstate_ncq_disk_req, NcqDiskReq),
        VMSTATE_STRUCT(errlog, NcqDisk, 1, vmstate_ncq_disk_errlog,
                       NcqDiskErrorLog),
        VMSTATE_BOOL(ncq_halted, NcqDisk),
        VMSTATE_BOOL(held.active, NcqDisk),
        VMSTATE_UINT8(held.cmd, NcqDisk),
        VMSTATE_UINT64(count.guest_errors, NcqDisk),
        VMSTATE_UINT64(count.host_waits, NcqDisk),
        VMSTATE_UINT32(mig.model_len, NcqDisk),
        VMSTATE_VBUFFER_ALLOC_UINT32(mig.model, NcqDisk, 1, NULL,
                                     mig.model_len),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_ncq_disk_undo,
        &vmstate_ncq_disk_cdl,
        &vmstate_ncq_disk_smart,
        &vmstate_ncq_disk_pm,
        &vmstate_ncq_disk_sct,
        NULL
    },
};
