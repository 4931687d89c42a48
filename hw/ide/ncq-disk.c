/*
 * ncq-disk: a SATA hard disk whose NCQ command queue is owned by a timing
 * model of a real drive.
 *
 * This file is the QEMU glue: properties, IDENTIFY data and registration.
 * Everything about timing and ordering belongs to the model library in
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
#include "ide-internal.h"
#include "hw/ide/ncq-disk.h"

/* IDENTIFY DEVICE word 76: Serial ATA capabilities */
#define ID_SATA_CAP             76
#define ID_SATA_CAP_NCQ         (1 << 8)
#define ID_SATA_CAP_NCQ_PRIO    (1 << 12)
#define ID_QUEUE_DEPTH          75

typedef struct NcqDiskModelInfo {
    const char *name;       /* value of the model= property */
    const char *ident;      /* IDENTIFY model string */
    const char *firmware;   /* IDENTIFY firmware revision */
    uint16_t rpm;           /* IDENTIFY word 217 */
} NcqDiskModelInfo;

static const NcqDiskModelInfo ncq_disk_models[] = {
    { "st3400620as", "ST3400620AS", "3.AAK", 7200 },
};

static const NcqDiskModelInfo *ncq_disk_find_model(const char *name)
{
    for (size_t i = 0; i < ARRAY_SIZE(ncq_disk_models); i++) {
        if (!strcmp(ncq_disk_models[i].name, name)) {
            return &ncq_disk_models[i];
        }
    }
    return NULL;
}

static char *ncq_disk_model_names(void)
{
    GString *s = g_string_new(NULL);

    for (size_t i = 0; i < ARRAY_SIZE(ncq_disk_models); i++) {
        g_string_append_printf(s, "%s%s", i ? ", " : "",
                               ncq_disk_models[i].name);
    }
    return g_string_free(s, false);
}

static void ncq_disk_identify(IDEDevice *dev, uint16_t *words)
{
    NcqDisk *d = NCQ_DISK(dev);
    uint16_t cap = lduw_le_p(&words[ID_SATA_CAP]);

    /* Only AHCI sets up queues; legacy IDE buses get a non-NCQ disk. */
    if (cap & ID_SATA_CAP_NCQ) {
        stw_le_p(&words[ID_QUEUE_DEPTH], d->queue_depth - 1);
    }
}

static void ncq_disk_realize(IDEDevice *dev, Error **errp)
{
    NcqDisk *d = NCQ_DISK(dev);
    const NcqDiskModelInfo *info = ncq_disk_find_model(d->model_name);

    if (!info) {
        g_autofree char *known = ncq_disk_model_names();

        error_setg(errp, "unknown model '%s'; known models: %s",
                   d->model_name, known);
        return;
    }
    if (d->queue_depth < 1 || d->queue_depth > NCQ_DISK_MAX_DEPTH) {
        error_setg(errp, "queue-depth %u out of range; use 1 to %d",
                   d->queue_depth, NCQ_DISK_MAX_DEPTH);
        return;
    }
    d->info = info;
    dev->model = g_strdup(info->ident);
    if (!dev->version) {
        dev->version = g_strdup(info->firmware);
    }
    dev->rotation_rate = info->rpm;
    ide_dev_initfn(dev, IDE_HD, errp);
}

static void ncq_disk_unrealize(DeviceState *qdev)
{
    IDEDevice *dev = IDE_DEVICE(qdev);

    g_free(dev->model);
    dev->model = NULL;
}

static const Property ncq_disk_properties[] = {
    DEFINE_BLOCK_PROPERTIES(NcqDisk, dev.conf),
    DEFINE_BLOCK_ERROR_PROPERTIES(NcqDisk, dev.conf),
    DEFINE_PROP_STRING("ver", NcqDisk, dev.version),
    DEFINE_PROP_UINT64("wwn", NcqDisk, dev.wwn, 0),
    DEFINE_PROP_STRING("serial", NcqDisk, dev.serial),
    DEFINE_PROP_STRING("model", NcqDisk, model_name),
    DEFINE_PROP_UINT32("queue-depth", NcqDisk, queue_depth,
                       NCQ_DISK_MAX_DEPTH),
};

static void ncq_disk_instance_init(Object *obj)
{
    NcqDisk *d = NCQ_DISK(obj);

    d->model_name = g_strdup(NCQ_DISK_DEFAULT_MODEL);
}

static void ncq_disk_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    IDEDeviceClass *k = IDE_DEVICE_CLASS(klass);

    k->realize = ncq_disk_realize;
    k->identify = ncq_disk_identify;
    dc->unrealize = ncq_disk_unrealize;
    dc->fw_name = "drive";
    dc->desc = "SATA hard disk with a modelled NCQ queue";
    device_class_set_props(dc, ncq_disk_properties);
}

static const TypeInfo ncq_disk_info = {
    .name          = TYPE_NCQ_DISK,
    .parent        = TYPE_IDE_DEVICE,
    .instance_size = sizeof(NcqDisk),
    .instance_init = ncq_disk_instance_init,
    .class_init    = ncq_disk_class_init,
};

static void ncq_disk_register_types(void)
{
    type_register_static(&ncq_disk_info);
}

type_init(ncq_disk_register_types)
