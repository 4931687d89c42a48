/*
 * ncq-disk: a SATA hard disk whose NCQ command queue is owned by a timing
 * model of a real drive.
 *
 * This file is the QEMU glue: properties, realize and IDENTIFY data.  The
 * queue lives in ncq-disk-queue.c, the logs in ncq-disk-log.c; everything
 * about timing and ordering belongs to the model library in
 * hw/ide/ncq-model/, which includes no QEMU header.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/bswap.h"
#include "qemu/module.h"
#include "hw/ide/ide-dev.h"
#include "hw/qdev-properties.h"
#include "system/block-backend.h"
#include "ide-internal.h"
#include "hw/ide/ncq-disk.h"

/* IDENTIFY DEVICE words */
#define ID_QUEUE_DEPTH          75
#define ID_SATA_CAP             76
#define ID_SATA_CAP_NCQ         (1 << 8)
#define ID_SATA_CAP_NCQ_PRIO    (1 << 12)
#define ID_CMDSET_EXT           84      /* and 87: enabled */
#define ID_CMDSET_EXT_GPL       (1 << 5)
#define ID_HW_RESET             93      /* PATA reset result; 0 on SATA */

static void ncq_disk_identify(IDEDevice *dev, uint16_t *words)
{
    NcqDisk *d = NCQ_DISK(dev);
    uint16_t cap = lduw_le_p(&words[ID_SATA_CAP]);

    /* General Purpose Logging: READ LOG EXT (ncq-disk-log.c) */
    stw_le_p(&words[ID_CMDSET_EXT],
             lduw_le_p(&words[ID_CMDSET_EXT]) | ID_CMDSET_EXT_GPL);
    stw_le_p(&words[ID_CMDSET_EXT + 3],
             lduw_le_p(&words[ID_CMDSET_EXT + 3]) | ID_CMDSET_EXT_GPL);

    /* Only AHCI sets up queues; legacy IDE buses get a non-NCQ disk. */
    if (cap & ID_SATA_CAP_NCQ) {
        /*
         * A native SATA drive: with word 93 set, Linux takes the disk for
         * a PATA drive behind a bridge (ata_dev_knobble) and limits it to
         * UDMA/100 and 128 KiB commands.
         */
        stw_le_p(&words[ID_HW_RESET], 0);
        stw_le_p(&words[ID_QUEUE_DEPTH], d->queue_depth - 1);
        if (d->ncq_prio) {
            stw_le_p(&words[ID_SATA_CAP], cap | ID_SATA_CAP_NCQ_PRIO);
        }
    }
}

/* The longest time-out, as in model files (ncq_params_validate()) */
#define NCQ_DISK_MAX_TIMEOUT_NS 3600000000000LL

/*
 * A time property: "2s", "2030ms", "500us", "100000ns"; a bare number is
 * milliseconds; "0" disables the time-out.
 */
static bool ncq_disk_parse_time(const char *prop, const char *text,
                                int64_t *ns, Error **errp)
{
    int64_t v;
    int ret = ncq_parse_duration(text, strlen(text), NCQ_NS_PER_MS, &v);

    /* The model file's limit; it keeps deadlines far from overflow */
    if (ret == NCQ_ERR_RANGE || (ret == 0 && v > NCQ_DISK_MAX_TIMEOUT_NS)) {
        error_setg(errp, "%s='%s' is too long; use at most 3600s",
                   prop, text);
        return false;
    }
    if (ret < 0) {
        error_setg(errp, "%s='%s' is not a time; use e.g. 2s, 2030ms, 500us "
                   "or 0 for none", prop, text);
        return false;
    }
    *ns = v;
    return true;
}

/* Properties override the model file's defaults. */
static bool ncq_disk_apply_settings(NcqDisk *d, Error **errp)
{
    NcqSettings st;
    char err[256];

    ncq_model_get_settings(d->model, &st);
    if (d->policy && ncq_policy_from_name(d->policy, &st.policy) < 0) {
        error_setg(errp, "unknown policy '%s'; use fcfs, sstf, clook, sptf "
                   "or aged-sptf", d->policy);
        return false;
    }
    if (d->starvation_timeout &&
        !ncq_disk_parse_time("starvation-timeout", d->starvation_timeout,
                             &st.starvation_timeout_ns, errp)) {
        return false;
    }
    if (d->prio_timeout &&
        !ncq_disk_parse_time("prio-timeout", d->prio_timeout,
                             &st.prio_timeout_ns, errp)) {
        return false;
    }
    if (d->clustering != NCQ_DISK_UNSET) {
        if (d->clustering > NCQ_MAX_SECTORS) {
            error_setg(errp, "clustering=%u is too large; use 0 (off) to %u "
                       "sectors", d->clustering, NCQ_MAX_SECTORS);
            return false;
        }
        st.clustering_sectors = d->clustering;
    }
    st.honour_prio = st.honour_prio && d->ncq_prio;
    if (ncq_model_set_settings(d->model, &st, err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return false;
    }
    return true;
}

/* Add fault rules (docs/faults.md): all of them, or none. */
bool ncq_disk_add_faults(NcqDisk *d, const char *text, Error **errp)
{
    NcqFaultRule r[NCQ_MAX_FAULTS];
    char err[512];
    int n, i, first = ncq_model_fault_list(d->model, r, NCQ_MAX_FAULTS);

    n = ncq_fault_parse(text, r, NCQ_MAX_FAULTS, err, sizeof(err));
    if (n < 0) {
        error_setg(errp, "faults: %s", err);
        return false;
    }
    for (i = 0; i < n; i++) {
        if (ncq_model_fault_add(d->model, &r[i], err, sizeof(err)) < 0) {
            while (i--) {
                ncq_model_fault_clear(d->model, first + i);
            }
            error_setg(errp, "faults: %s", err);
            return false;
        }
    }
    return true;
}

static bool ncq_disk_load_model(NcqDisk *d, Error **errp)
{
    char err[512];

    /* Both would leave one silently ignored; a typo'd command line. */
    if (d->model_file && d->model_name) {
        error_setg(errp, "model=%s and model-file=%s both given; give one "
                   "(model-file is a model of your own)", d->model_name,
                   d->model_file);
        return false;
    }
    if (d->model_file) {
        struct stat st;

        if (access(d->model_file, R_OK) < 0) {
            error_setg_errno(errp, errno, "model-file=%s cannot be read",
                             d->model_file);
            return false;
        }
        /* A directory opens fine and fails only on read: say what it is. */
        if (stat(d->model_file, &st) == 0 && !S_ISREG(st.st_mode)) {
            error_setg(errp, "model-file=%s is not a regular file; give the "
                       "path of a .ncqm model file", d->model_file);
            return false;
        }
        if (ncq_params_load_file(d->model_file, &d->params,
                                 err, sizeof(err)) < 0) {
            error_setg(errp, "model-file: %s (the format is in "
                       "docs/model.md)", err);
            return false;
        }
    } else {
        /* qom-get model then names the model in use */
        if (!d->model_name) {
            d->model_name = g_strdup(NCQ_DISK_DEFAULT_MODEL);
        }
        d->params = ncq_params_builtin(d->model_name);
        if (!d->params) {
            error_setg(errp, "unknown model '%s'; known models: %s "
                       "(or give model-file=PATH)", d->model_name,
                       ncq_params_builtin_names());
            return false;
        }
    }
    d->model = ncq_model_new(d->params, d->seed, err, sizeof(err));
    if (!d->model) {
        error_setg(errp, "model '%s': %s", d->params->name, err);
        return false;
    }
    return true;
}

static void ncq_disk_release(NcqDisk *d)
{
    g_free(d->mig_state);
    d->mig_state = NULL;
    ncq_disk_queue_cleanup(d);
    if (d->trace) {
        fclose(d->trace);
        d->trace = NULL;
    }
    ncq_model_free(d->model);
    d->model = NULL;
    ncq_params_free(d->params);
    d->params = NULL;
}

static void ncq_disk_realize(IDEDevice *dev, Error **errp)
{
    NcqDisk *d = NCQ_DISK(dev);
    int64_t len;

    if (d->queue_depth < 1 || d->queue_depth > NCQ_DISK_MAX_DEPTH) {
        error_setg(errp, "queue-depth=%u is out of range; use 1 to %d",
                   d->queue_depth, NCQ_DISK_MAX_DEPTH);
        return;
    }
    if (!dev->conf.blk) {
        error_setg(errp, "drive property not set; give drive=ID of a "
                   "-drive if=none,id=ID,...");
        return;
    }
    if (!blk_is_inserted(dev->conf.blk)) {
        error_setg(errp, "drive '%s' has no medium; give its -drive a "
                   "file=IMAGE", blk_name(dev->conf.blk));
        return;
    }
    /* Caught here, the generic "Block node is read-only" says no fix. */
    if (!blk_supports_write_perm(dev->conf.blk)) {
        error_setg(errp, "drive '%s' is read-only; ncq-disk needs a "
                   "writable image: drop readonly=on from its -drive",
                   blk_name(dev->conf.blk));
        return;
    }
    /* IDENTIFY has room for 20 and 8 characters; do not cut them. */
    if (dev->serial && strlen(dev->serial) > 20) {
        error_setg(errp, "serial='%s' is longer than ATA's 20 characters; "
                   "shorten it", dev->serial);
        return;
    }
    if (dev->version && strlen(dev->version) > 8) {
        error_setg(errp, "ver='%s' is longer than ATA's 8 characters; "
                   "shorten it", dev->version);
        return;
    }
    if (!ncq_disk_load_model(d, errp) || !ncq_disk_apply_settings(d, errp)) {
        goto fail;
    }
    if (d->faults && !ncq_disk_add_faults(d, d->faults, errp)) {
        goto fail;
    }

    len = blk_getlength(dev->conf.blk);
    if (len < 0) {
        error_setg_errno(errp, -len, "cannot get the image size");
        goto fail;
    }
    if (len / BDRV_SECTOR_SIZE > d->params->capacity) {
        error_setg(errp, "image has %" PRId64 " sectors, more than model "
                   "%s's capacity of %" PRIu64 "; use a smaller image or "
                   "another model", (int64_t)(len / BDRV_SECTOR_SIZE),
                   d->params->name,
                   (uint64_t)d->params->capacity);
        goto fail;
    }

    if (d->trace_path) {
        d->trace = fopen(d->trace_path, "w");
        if (!d->trace) {
            error_setg_errno(errp, errno, "cannot open trace file '%s'",
                             d->trace_path);
            goto fail;
        }
        ncq_trace_header(d->trace, d->params->name, d->seed);
    }

    g_free(dev->model);
    dev->model = g_strdup(d->params->model);
    if (!dev->version) {
        dev->version = g_strdup(d->params->firmware);
    }
    dev->rotation_rate = d->params->kind == NCQ_KIND_SSD ? 1 : d->params->rpm;
    /*
     * TRIM (DATA SET MANAGEMENT) is an SSD's command: the hard disks
     * modelled here predate it.  discard_granularity=512 gives a hard
     * disk TRIM all the same; 0 takes it from an SSD.
     */
    if (dev->conf.discard_granularity == (uint32_t)-1) {
        dev->conf.discard_granularity =
            d->params->kind == NCQ_KIND_SSD ? BDRV_SECTOR_SIZE : 0;
    }
    ncq_disk_queue_init(d);
    ide_dev_initfn(dev, IDE_HD, errp);
    if (*errp) {
        goto fail;
    }
    return;

fail:
    ncq_disk_release(d);
}

static void ncq_disk_unrealize(DeviceState *qdev)
{
    ncq_disk_release(NCQ_DISK(qdev));
}

static const Property ncq_disk_properties[] = {
    DEFINE_BLOCK_PROPERTIES(NcqDisk, dev.conf),
    DEFINE_BLOCK_ERROR_PROPERTIES(NcqDisk, dev.conf),
    DEFINE_PROP_STRING("ver", NcqDisk, dev.version),
    DEFINE_PROP_UINT64("wwn", NcqDisk, dev.wwn, 0),
    DEFINE_PROP_STRING("serial", NcqDisk, dev.serial),
    DEFINE_PROP_STRING("model", NcqDisk, model_name),
    DEFINE_PROP_STRING("model-file", NcqDisk, model_file),
    DEFINE_PROP_UINT32("queue-depth", NcqDisk, queue_depth,
                       NCQ_DISK_MAX_DEPTH),
    DEFINE_PROP_STRING("policy", NcqDisk, policy),
    DEFINE_PROP_STRING("starvation-timeout", NcqDisk, starvation_timeout),
    DEFINE_PROP_STRING("prio-timeout", NcqDisk, prio_timeout),
    DEFINE_PROP_UINT32("clustering", NcqDisk, clustering, NCQ_DISK_UNSET),
    DEFINE_PROP_UINT64("seed", NcqDisk, seed, 1),
    DEFINE_PROP_STRING("trace", NcqDisk, trace_path),
    DEFINE_PROP_BOOL("timing", NcqDisk, timing, true),
    DEFINE_PROP_BOOL("ncq-prio", NcqDisk, ncq_prio, true),
    DEFINE_PROP_STRING("faults", NcqDisk, faults),
    DEFINE_PROP_BOOL("power-loss", NcqDisk, power_loss, true),
    /* For tests: how long a stuck host I/O may hold virtual time */
    DEFINE_PROP_UINT32("x-host-wait-ms", NcqDisk, host_wait_ms, 30000),
};

static void ncq_disk_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    IDEDeviceClass *k = IDE_DEVICE_CLASS(klass);

    k->realize = ncq_disk_realize;
    k->identify = ncq_disk_identify;
    k->exec_cmd = ncq_disk_exec_cmd;
    k->hba_stop = ncq_disk_hba_stop;
    k->ncq_submit = ncq_disk_ncq_submit;
    k->ncq_error = ncq_disk_ncq_error;
    k->ncq_cancel = ncq_disk_ncq_cancel;
    k->ncq_restore = ncq_disk_ncq_restore;
    dc->vmsd = &vmstate_ncq_disk;
    dc->unrealize = ncq_disk_unrealize;
    dc->fw_name = "drive";
    dc->desc = "SATA hard disk with a modelled NCQ queue";
    device_class_set_props(dc, ncq_disk_properties);
}

static const TypeInfo ncq_disk_info = {
    .name          = TYPE_NCQ_DISK,
    .parent        = TYPE_IDE_DEVICE,
    .instance_size = sizeof(NcqDisk),
    .class_init    = ncq_disk_class_init,
};

static void ncq_disk_register_types(void)
{
    type_register_static(&ncq_disk_info);
}

type_init(ncq_disk_register_types)
