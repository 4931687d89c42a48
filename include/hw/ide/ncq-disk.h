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
#include "hw/ide/ncq-model.h"
#include "qemu/iov.h"
#include "qemu/timer.h"
#include "qom/object.h"

#define TYPE_NCQ_DISK "ncq-disk"
OBJECT_DECLARE_SIMPLE_TYPE(NcqDisk, NCQ_DISK)

#define NCQ_DISK_MAX_DEPTH      32
#define NCQ_DISK_DEFAULT_MODEL  "st3400620as"
#define NCQ_DISK_UNSET          UINT32_MAX
#define NCQ_DISK_TAG_NONQUEUED  0xff    /* error log: not a queued command */

/* One NCQ tag's command while the drive holds it. */
typedef struct NcqDiskReq {
    NcqDisk *disk;
    IDENCQCmd *cmd;         /* NULL: tag free */
    BlockAIOCB *aiocb;      /* host I/O in flight */
    bool host_done;
    int host_ret;
    bool mig_active;        /* migration: the tag was in the drive */
    bool restored;          /* migration: the HBA handed it back */
    uint8_t *undo_buf;      /* power loss: old contents being read */
    uint64_t undo_first;
    QEMUIOVector undo_qiov;
} NcqDiskReq;

/* NCQ Command Error log (log address 10h) */
typedef struct NcqDiskErrorLog {
    bool valid;
    bool nq;                /* error not caused by a queued command */
    uint8_t tag;
    uint8_t status;
    uint8_t error;
    uint64_t lba;
    uint32_t count;
} NcqDiskErrorLog;

struct NcqDisk {
    IDEDevice dev;

    /* properties */
    char *model_name;
    char *model_file;
    uint32_t queue_depth;
    char *policy;
    char *starvation_timeout;
    char *prio_timeout;
    uint32_t clustering;
    uint64_t seed;
    char *trace_path;
    bool timing;
    bool ncq_prio;

    NcqParams *params;
    NcqModel *model;
    QEMUTimer *timer;
    FILE *trace;
    NcqDiskReq reqs[NCQ_DISK_MAX_DEPTH];
    NcqDiskErrorLog errlog;
    bool ncq_halted;        /* NCQ error reported, log 10h not read yet */
    bool aborting;          /* dropping the queue: waiting for host I/O */
    uint32_t queue_gen;     /* bumped when the queue is dropped */
    bool held;              /* a non-queued command waits for its deadline */
    uint8_t held_cmd;
    bool passthrough;       /* re-executing the held command */
    uint64_t guest_errors;  /* commands failed for the guest's mistakes */
    char *faults;           /* property: fault rules (docs/faults.md) */
    bool power_loss;        /* property: keep old contents for power cuts */
    uint32_t host_wait_ms;  /* property: give up on a stuck host I/O */
    uint64_t injected_errors;   /* commands failed by fault rules */
    uint8_t held_error;     /* the held command fails with this error */
    uint64_t held_error_lba;
    NcqUndo *undo;          /* old contents a power cut gives back */
    uint64_t undo_prune_at; /* table size that triggers the next prune */
    bool powered_off;       /* power cut: the drive answers nothing */
    uint64_t host_waits;    /* deadlines that had to wait for host I/O */
    uint8_t *mig_state;     /* migration: the model's state blob */
    uint32_t mig_state_len;
    uint8_t *mig_undo;      /* migration: the undo store (ncq_undo_save) */
    uint32_t mig_undo_len;
};

/* ncq-disk-queue.c */
void ncq_disk_queue_init(NcqDisk *d);
void ncq_disk_queue_cleanup(NcqDisk *d);
void ncq_disk_ncq_submit(IDEDevice *dev, IDENCQCmd *cmd);
void ncq_disk_ncq_error(IDEDevice *dev, uint8_t tag);
void ncq_disk_ncq_cancel(IDEDevice *dev);
void ncq_disk_hba_stop(IDEDevice *dev);
void ncq_disk_nonqueued_error(NcqDisk *d);
int ncq_disk_outstanding(NcqDisk *d);
void ncq_disk_arm_timer(NcqDisk *d);

void ncq_disk_run_held(NcqDisk *d);

/* ncq-disk-queue.c: power loss (docs/faults.md) */
void ncq_disk_save_undo(NcqDisk *d, uint64_t lba, uint32_t n,
                        int64_t now);
uint64_t ncq_disk_power_cut(NcqDisk *d, bool quit, NcqRange *lost,
                            int *nlost);
bool ncq_disk_image_inactive(NcqDisk *d);

/* ncq-disk.c */
bool ncq_disk_add_faults(NcqDisk *d, const char *text, Error **errp);

/* ncq-disk-migrate.c */
extern const VMStateDescription vmstate_ncq_disk;
bool ncq_disk_ncq_restore(IDEDevice *dev, IDENCQCmd *cmd);

/* ncq-disk-cmd.c */
bool ncq_disk_exec_cmd(IDEDevice *dev, IDEState *s, uint8_t cmd,
                       bool *complete);

/* ncq-disk-log.c */
bool ncq_disk_read_log(NcqDisk *d, IDEState *s);

#endif
