/*
 * ncq-disk: a SATA hard disk with a modelled NCQ command queue
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_IDE_NCQ_DISK_H
#define HW_IDE_NCQ_DISK_H

#include "hw/ide/ide-dev.h"
#include "qom/object.h"

#define TYPE_NCQ_DISK "ncq-disk"
OBJECT_DECLARE_SIMPLE_TYPE(NcqDisk, NCQ_DISK)

#define NCQ_DISK_MAX_DEPTH      32
#define NCQ_DISK_DEFAULT_MODEL  "st3400620as"

typedef struct NcqDiskModelInfo NcqDiskModelInfo;

struct NcqDisk {
    IDEDevice dev;

    /* properties */
    char *model_name;
    uint32_t queue_depth;

    const NcqDiskModelInfo *info;
};

#endif
