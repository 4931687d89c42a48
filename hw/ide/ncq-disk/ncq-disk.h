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
#include "qapi/qapi-types-common.h"
#include "qapi/qapi-types-ncq-disk.h"
#include "hw/ide/ncq-smart.h"
#include "qemu/iov.h"
#include "qemu/timer.h"
#include "qom/object.h"

#define TYPE_NCQ_DISK "ncq-disk"
OBJECT_DECLARE_SIMPLE_TYPE(NcqDisk, NCQ_DISK)

#define NCQ_DISK_MAX_DEPTH      32
#define NCQ_DISK_DEFAULT_MODEL  "st3400620as"
#define NCQ_DISK_TAG_NONQUEUED  0xff    /* error log: not a queued command */
#define NCQ_DISK_CDL_STATS      4       /* CDL statistic selectors 1h-4h */

/*
 * What a queued command is, by its command code (ACS-4 13.6): decided
 * once, when the drive takes the command (ncq_disk_ncq_take() in
 * ncq-disk-queue.c), and carried in its slot for the timing, the
 * completion and the power-loss undo.
 */
typedef enum NcqDiskKind {
    NCQ_DISK_READ,          /* READ FPDMA QUEUED (60h): the medium */
    NCQ_DISK_WRITE,         /* WRITE FPDMA QUEUED (61h): the medium */
    NCQ_DISK_NON_DATA,      /* NCQ NON-DATA (63h): ZAC MANAGEMENT OUT */
    NCQ_DISK_RECEIVE,       /* RECEIVE FPDMA QUEUED (65h): ZAC MGMT IN */
    NCQ_DISK_OTHER,         /* SEND FPDMA QUEUED (64h): none implemented */
} NcqDiskKind;

/*
 * How long the drive waits for a host I/O in the main loop (or the vCPU's
 * register write) before it goes on without blocking (x-hold-clock): a
 * host that answers does so well within it (a file in the page cache:
 * microseconds), and QEMU stays responsive when the host does not.
 */
#define NCQ_DISK_BRIEF_WAIT_MS  20

/* One NCQ tag's command while the drive holds it. */
typedef struct NcqDiskReq {
    NcqDisk *disk;
    IDENCQCmd *cmd;         /* NULL: tag free */
    NcqDiskKind kind;       /* what cmd is */
    BlockAIOCB *aiocb;      /* host I/O in flight */
    bool host_done;
    int host_ret;
    bool mig_active;        /* migration: the tag was in the drive */
    uint8_t *undo_buf;      /* power loss: old contents being read */
    uint64_t undo_first;
    QEMUIOVector undo_qiov;
} NcqDiskReq;

/*
 * The model's completions due at a deadline whose turn came while a
 * queued command's host I/O was still in flight (ncq-disk-queue.c): the
 * drive goes on with them when that I/O ends.  Under icount virtual time
 * is held meanwhile (icount_hold()); the main loop is not blocked.
 */
typedef struct NcqDiskWait {
    NcqCompletion done[NCQ_DISK_MAX_DEPTH + 1];
    int next, n;            /* done[next..n-1] are left */
    bool more;              /* the batch was full: ask the model again */
    bool active;            /* done[next] waits for its host I/O */
    bool resumed;           /* done[next]'s fault trace and SMART are done */
    bool hold;              /* icount_hold() taken */
    uint32_t gen;           /* queue_gen when the wait began */
    int64_t since;          /* QEMU_CLOCK_REALTIME ns the wait began */
    QEMUBH *bh;             /* the host I/O ended: go on */
    QEMUTimer *give_up;     /* x-host-wait-ms of wall time */
    QEMUTimer *keepalive;   /* virtual: a next event while any wait lasts */
    VMChangeStateEntry *vm_change;
} NcqDiskWait;

/* Status bit 1: sense data available (ACS-5) */
#define SENSE_AVAIL_STAT        0x02

/* NCQ Command Error log (log address 10h) */
typedef struct NcqDiskErrorLog {
    bool valid;
    bool nq;                /* error not caused by a queued command */
    uint8_t tag;
    uint8_t status;
    uint8_t error;
    uint64_t lba;
    uint32_t count;
    uint8_t sense[3];       /* NCQ autosense: key, ASC, ASCQ (0: none) */
} NcqDiskErrorLog;

/*
 * Command Duration Limits (ncq-disk-cdl.c, docs/cdl.md).  The table and
 * whether CDL is enabled live in the model (ncq_model_cdl_get()).
 */
typedef struct NcqDiskCdl {
    bool on;                /* the drive offers CDL (cdl property) */
    bool sense_reporting;   /* SET FEATURES C3h: sense data reporting */
    bool success_sense;     /* C4h: sense data for successful NCQ cmds */
    uint32_t sense_valid;   /* log 0Fh: tags that hold sense data */
    uint8_t sense[NCQ_DISK_MAX_DEPTH * 3];  /* key, ASC, ASCQ per tag */
    /* a non-queued command's sense, for REQUEST SENSE DATA EXT */
    bool nq_sense_valid;
    uint8_t nq_sense[3];
    /*
     * CDL statistics (log 04h page 09h): each descriptor's selectors A
     * and B (log 18h bytes 12, 13), read then write, and per descriptor
     * the counts the selectors choose from, NCQ_DISK_CDL_STATS of them
     */
    uint8_t stat_sel[2 * NCQ_CDL_DESCS * 2];
    uint32_t stat[2 * NCQ_CDL_DESCS * NCQ_DISK_CDL_STATS];
} NcqDiskCdl;

/*
 * The properties, as the user gave them (ncq-disk.c checks them in
 * realize).  A NULL string leaves the model's value.
 */
typedef struct NcqDiskProps {
    char *model_name;
    char *model_file;
    uint32_t queue_depth;   /* ncq-disk-set may change it while running */
    char *setting[NCQ_SETTING__MAX];   /* -device NAME=text, a setting */
    char *recovery;         /* unrecoverable sector: the model's recovery */
    uint64_t seed;
    char *trace_path;
    bool timing;
    bool ncq_prio;
    char *faults;           /* fault rules (docs/faults.md) */
    bool power_loss;        /* keep old contents for power cuts */
    uint32_t host_wait_ms;  /* give up on a stuck host I/O */
    bool hold_clock;        /* wait for host I/O without blocking */
    OnOffAuto cdl;          /* Command Duration Limits; auto: the model's */
    char *smart_file;       /* SMART state kept across QEMU runs */
    char *zone_state;       /* zone state kept across QEMU runs */
} NcqDiskProps;

/* The non-queued command the drive holds busy until its deadline */
typedef struct NcqDiskHeld {
    bool active;
    uint8_t cmd;            /* its ATA command code */
    bool passthrough;       /* it is running through the generic handler */
    uint8_t error;          /* it fails with this error register (0: ok) */
    uint64_t error_lba;     /* at this sector */
    uint8_t cdl_outcome;    /* NcqCdlOutcome at its deadline */
    /*
     * Its host I/O, waited for without blocking (ncq-disk-queue.c): its
     * deadline came before its undo read ended, or the generic handler's
     * I/O is in flight.  Virtual time is held meanwhile (icount_hold()),
     * for at most x-host-wait-ms of wall time.
     */
    struct NcqDiskUndoRead *undo;   /* its undo read in flight */
    bool deferred;          /* its deadline came while undo was in flight */
    bool running;           /* the generic handler's host I/O is in flight */
    bool hold;              /* icount_hold() taken */
    uint32_t drop_writes;   /* dropped writes on their way to the image */
    int64_t since_ms;       /* QEMU_CLOCK_REALTIME when the wait began */
    QEMUTimer *poll;        /* realtime, main AioContext: has it ended? */
    VMChangeStateEntry *vm_change;
} NcqDiskHeld;

/* Power loss (ncq-disk-power.c, docs/faults.md) */
typedef struct NcqDiskPower {
    NcqUndo *undo;          /* old contents a power cut gives back */
    uint64_t prune_at;      /* undo table size that triggers a prune */
    bool off;               /* power cut: the drive answers nothing */
} NcqDiskPower;

/* Power modes (ncq-disk-pm.c, docs/power-modes.md) */
typedef enum NcqDiskPmMode {
    NCQ_DISK_PM_ACTIVE = 0,     /* CHECK POWER MODE: FFh */
    NCQ_DISK_PM_IDLE = 1,       /* 80h: after IDLE (IMMEDIATE) */
    NCQ_DISK_PM_STANDBY = 2,    /* 00h: spindle at rest */
    NCQ_DISK_PM_SLEEP = 3,      /* only a reset is answered */
} NcqDiskPmMode;

typedef struct NcqDiskPm {
    uint8_t mode;           /* NcqDiskPmMode */
    uint8_t timer_count;    /* standby timer as IDLE/STANDBY set it; 0 off */
    bool spinning_up;       /* a held IDLE waits for the spin-up it began */
    QEMUTimer *timer;       /* the standby timer (virtual clock) */
} NcqDiskPm;

/* Counters of the device (the model counts the commands it timed) */
typedef struct NcqDiskCounters {
    uint64_t guest_errors;      /* commands failed for the guest's mistakes */
    uint64_t injected_errors;   /* commands failed by fault rules */
    uint64_t host_waits;        /* deadlines that had to wait for host I/O */
} NcqDiskCounters;

/* ncq-disk-migrate.c: blobs that exist only while state is saved/loaded */
typedef struct NcqDiskMigState {
    uint8_t *model;         /* the model's state (ncq_model_state_save) */
    uint32_t model_len;
    uint8_t *undo;          /* the undo store (ncq_undo_save) */
    uint32_t undo_len;
    /*
     * Incoming: the HBA's commands and the drive's state meet in either
     * order (each is a device of its own in the stream); the tags are
     * matched once both are in.
     */
    IDENCQCmd *handed[NCQ_DISK_MAX_DEPTH];  /* what the HBA handed back */
    bool handed_all;        /* the HBA handed back all it had */
    bool loaded;            /* the drive's own state is loaded */
} NcqDiskMigState;

/* SMART (ncq-disk-smart.c, docs/smart.md) */
typedef struct NcqDiskSmart {
    NcqSmart st;            /* the model library's SMART state */
    QEMUTimer *captive;     /* a captive self-test's end */
    uint8_t *mig;           /* migration: the state as bytes */
    uint32_t mig_len;
    Notifier exit;          /* QEMU exits: write smart-file */
    bool has_exit;
} NcqDiskSmart;

/* The zone-state file (ncq-disk-zstate.c, docs/smr.md) */
typedef struct NcqDiskZstate {
    char *last;             /* the text last written (malloc'd) */
    uint64_t writes;        /* write-backs this run */
    const char *reason;     /* why the last one: flush, stop, exit, ... */
    int64_t last_ns;        /* its virtual time */
    bool failing;           /* the last write failed (warned once) */
    Notifier exit;          /* QEMU exits: write it */
    bool has_exit;
    VMChangeStateEntry *vm; /* the VM stops: write it */
} NcqDiskZstate;

/* SCT Command Transport (ncq-disk-sct.c, docs/smart.md) */
typedef struct NcqDiskSct {
    uint16_t erc[2];            /* ERC read, write limits, 100 ms; 0: none */
    uint16_t erc_power_on[2];   /* what a power-on sets them to */
    uint16_t status;            /* the last SCT command's extended status */
    uint16_t action, function;  /* ...its action and function codes */
    uint16_t ret;               /* its return value (a Get's), not state */
    bool table_ready;           /* a Data Table command: log E1h holds it */
    uint8_t hist[128];          /* temperatures, one a minute; 80h: none */
    uint32_t hist_index;        /* the newest entry */
    int64_t hist_next_ns;       /* when the next entry is due */
    /*
     * A non-queued command that arrived while the firmware retries a bad
     * sector: it waits (BSY) until the retries end (docs/faults.md)
     */
    bool parked;
    uint8_t parked_cmd;
    bool releasing;             /* the parked command runs now */
    QEMUTimer *wake;
} NcqDiskSct;

struct NcqDisk {
    IDEDevice dev;
    NcqDiskProps prop;

    /* The model the properties chose (realize) */
    NcqParams *params;
    NcqModel *model;
    FILE *trace;

    /* The queue (ncq-disk-queue.c) */
    QEMUTimer *timer;       /* the model's next deadline */
    NcqDiskReq reqs[NCQ_DISK_MAX_DEPTH];
    NcqDiskErrorLog errlog;
    bool ncq_halted;        /* NCQ error reported, log 10h not read yet */
    bool aborting;          /* dropping the queue: waiting for host I/O */
    uint32_t queue_gen;     /* bumped when the queue is dropped */
    NcqDiskWait wait;

    NcqDiskHeld held;
    NcqDiskPower power;
    NcqDiskCounters count;
    NcqDiskMigState mig;
    NcqDiskCdl cdl;
    NcqDiskSmart smart;
    NcqDiskPm pm;
    NcqDiskSct sct;
    NcqDiskZstate zstate;
};

/* ncq-disk.c: checks shared by properties and QMP, one message each */
bool ncq_disk_check_depth(uint32_t depth, Error **errp);
/* ncq-disk.c: the model's write cache as QEMU's block layer's, too */
void ncq_disk_set_write_cache(NcqDisk *d, bool on);
bool ncq_disk_add_faults(NcqDisk *d, const char *text, Error **errp);
/* ncq-disk.c: the resets, each part's share in turn */
void ncq_disk_bus_reset(IDEDevice *dev);
void ncq_disk_hba_stop(IDEDevice *dev);

/*
 * ncq-disk-host.c: the leaf every part calls down to: the drive's IDE
 * state, a queued command handed back to the HBA, its host I/O
 */
IDEState *ncq_disk_state(NcqDisk *d);
int ncq_disk_outstanding(NcqDisk *d);
void ncq_disk_done(NcqDisk *d, IDENCQCmd *cmd, int ret, uint8_t ata_error);
void ncq_disk_finish(NcqDiskReq *r, int ret);
IDENCQCmd *ncq_disk_drop(NcqDiskReq *r);
bool ncq_disk_wait_bounded(bool (*busy)(void *opaque), void *opaque,
                           uint32_t ms);
bool ncq_disk_wait_host(NcqDiskReq *r);
bool ncq_disk_wait_host_briefly(NcqDiskReq *r);
void ncq_disk_host_io(NcqDiskReq *r);

/* ncq-disk-queue.c */
void ncq_disk_queue_init(NcqDisk *d);
void ncq_disk_queue_cleanup(NcqDisk *d);
void ncq_disk_ncq_submit(IDEDevice *dev, IDENCQCmd *cmd);
/* a command the HBA hands back after migration takes its slot again */
void ncq_disk_ncq_resume(NcqDiskReq *r, IDENCQCmd *cmd);
void ncq_disk_ncq_error(IDEDevice *dev, uint8_t tag);
void ncq_disk_nonqueued_error(NcqDisk *d);
void ncq_disk_arm_timer(NcqDisk *d);
void ncq_disk_run_held(NcqDisk *d);
void ncq_disk_ncq_halt(NcqDisk *d, IDENCQCmd *failed, uint8_t tag,
                       uint8_t error, uint64_t lba);
/* dropping the queue: void its waits, (the held command), drop the rest */
void ncq_disk_queue_void(NcqDisk *d);
void ncq_disk_queue_drop(NcqDisk *d);

/* ncq-disk-power.c: power loss (docs/faults.md) */
void ncq_disk_power_init(NcqDisk *d);
void ncq_disk_power_cleanup(NcqDisk *d);
uint32_t ncq_disk_undo_prepare(NcqDisk *d, uint64_t lba, uint32_t n,
                               int64_t now, uint64_t *first);
void ncq_disk_undo_read(NcqDiskReq *r, uint64_t first, uint32_t n);
void ncq_disk_held_undo_start(NcqDisk *d, uint64_t lba, uint32_t n,
                              int64_t now);
void ncq_disk_held_undo_abandon(NcqDisk *d);
uint64_t ncq_disk_power_cut(NcqDisk *d, bool quit, NcqRange *lost,
                            int *nlost);
bool ncq_disk_image_inactive(NcqDisk *d);
/* A powercut rule fired: cut every ncq-disk of the machine, then quit. */
void ncq_disk_power_cut_machine(NcqDisk *trigger);

/* ncq-disk-pm.c: power modes (docs/power-modes.md) */
extern const VMStateDescription vmstate_ncq_disk_pm;
void ncq_disk_pm_init(NcqDisk *d);
void ncq_disk_pm_identify(uint16_t *words);
void ncq_disk_pm_cleanup(NcqDisk *d);
bool ncq_disk_pm_refuse(NcqDisk *d, IDEState *s);
bool ncq_disk_pm_prepare(NcqDisk *d, IDEState *s, uint8_t cmd);
bool ncq_disk_pm_cmd(NcqDisk *d, IDEState *s, uint8_t cmd);
void ncq_disk_pm_media(NcqDisk *d);
void ncq_disk_pm_rearm(NcqDisk *d);
void ncq_disk_pm_reset(NcqDisk *d);
void ncq_disk_pm_power_on(NcqDisk *d);
int64_t ncq_disk_pm_timer_ns(uint8_t count);
const char *ncq_disk_pm_mode_name(uint8_t mode);

/* ncq-disk-migrate.c */
extern const VMStateDescription vmstate_ncq_disk;
bool ncq_disk_ncq_restore(IDEDevice *dev, IDENCQCmd *cmd);

/*
 * ncq-disk-qmp.c (ncq-disk-qmp-stub.c without the device): ncq-disk-set
 * with one setting given as text, for HMP's ncq_disk_set
 */
void ncq_disk_set_text(const char *id, const char *key, const char *value,
                       Error **errp);

/* ncq-disk-identify.c: the model's words; true if AHCI sets up queues */
bool ncq_disk_identify_model(NcqDisk *d, uint16_t *words);
void ncq_disk_identify_checksum(uint16_t *words);
/* before IDENTIFY is served: word 255 again, after SET FEATURES' changes */
void ncq_disk_identify_refresh(IDEState *s);
uint8_t ncq_disk_sata_gen(IDEDevice *dev);

/* ncq-disk-cmd.c */
bool ncq_disk_exec_cmd(IDEDevice *dev, IDEState *s, uint8_t cmd,
                       bool *complete);
void ncq_disk_drop_held(NcqDisk *d);

/*
 * ncq-disk-log.c: the table of logs (ncq_disk_logs[]).  A row's read
 * function fills one zeroed 512-byte page below the row's page count;
 * @how says which command set asks (NCQ_LOG_GPL or NCQ_LOG_SMART) and
 * whether the host asked to read then initialize (NCQ_LOG_INIT: READ LOG
 * EXT FEATURES bit 0).  A write function takes @count pages from @page
 * (the table checked the range and that the pages are writable) and
 * stores them all, or returns false to abort with nothing stored.  A
 * returns function sets the registers a write command's completion
 * returns, @stored or refused (the range, or the write function), @count
 * its page count.
 */
#define NCQ_LOG_GPL     (1u << 0)
#define NCQ_LOG_SMART   (1u << 1)
#define NCQ_LOG_INIT    (1u << 2)
typedef void NcqDiskLogRead(NcqDisk *d, uint16_t page, uint8_t *buf,
                            unsigned how);
typedef bool NcqDiskLogWrite(NcqDisk *d, uint16_t page, uint16_t count,
                             const uint8_t *buf);
typedef void NcqDiskLogReturns(NcqDisk *d, IDEState *s, uint32_t count,
                               bool stored);
bool ncq_disk_log_cmd(NcqDisk *d, IDEState *s, uint8_t cmd);
bool ncq_disk_log_smart_read(NcqDisk *d, IDEState *s);
bool ncq_disk_log_smart_write(NcqDisk *d, IDEState *s);
bool ncq_disk_log_dma_supported(NcqDisk *d);
void ncq_disk_log_identify(NcqDisk *d, uint16_t *words);

/* A log's data structure ends with a checksum: all 512 bytes sum to 0. */
static inline void ncq_disk_log_checksum(uint8_t *buf)
{
    uint8_t sum = 0;
    int i;

    for (i = 0; i < 511; i++) {
        sum += buf[i];
    }
    buf[511] = -sum;
}

/* ncq-disk-identify.c: the IDENTIFY DEVICE data log, a row of the table */
NcqDiskLogRead ncq_disk_id_log;                    /* 30h */
uint16_t ncq_disk_id_npages(NcqDisk *d);

/* ncq-disk-cdl.c: Command Duration Limits (docs/cdl.md) */
bool ncq_disk_cdl_realize(NcqDisk *d, Error **errp);
void ncq_disk_cdl_identify(NcqDisk *d, uint16_t *words);
bool ncq_disk_cdl_set_features(NcqDisk *d, IDEState *s);
NcqDiskLogRead ncq_disk_cdl_success_log;       /* 0Fh */
NcqDiskLogRead ncq_disk_cdl_log_read;          /* 18h */
NcqDiskLogWrite ncq_disk_cdl_log_write;
/* CDL's bits in IDENTIFY DEVICE data log pages 03h and 04h */
void ncq_disk_cdl_id_caps(NcqDisk *d, uint8_t *buf);
void ncq_disk_cdl_id_settings(NcqDisk *d, uint8_t *buf);
/* A queued command's CDL outcome; true: the caller aborts it with @sense */
bool ncq_disk_cdl_complete(NcqDisk *d, IDENCQCmd *cmd, const NcqCompletion *c,
                           uint8_t sense[3]);
/*
 * The held non-queued command's CDL outcome at its deadline: 0 if it
 * runs as usual, else the status bits it ends with (sense data available,
 * and ERR|ABRT for an abort: then it has ended here).
 */
uint8_t ncq_disk_cdl_held(NcqDisk *d, IDEState *s);
/* A command with a CDL index completed: the statistics count it */
void ncq_disk_cdl_count(NcqDisk *d, const NcqCompletion *c);
/* Device Statistics log page 09h; @init: read then initialize */
void ncq_disk_cdl_stats(NcqDisk *d, uint8_t *buf, bool init);
bool ncq_disk_cdl_request_sense(NcqDisk *d, IDEState *s);
extern const VMStateDescription vmstate_ncq_disk_cdl;
/* QMP */
NcqDiskCdlInfo *ncq_disk_cdl_query(NcqDisk *d);
bool ncq_disk_cdl_set(NcqDisk *d, bool has_enabled, bool enabled,
                      NcqDiskCdlDescriptorList *rd,
                      NcqDiskCdlDescriptorList *wr, Error **errp);
/* ncq-disk-zstate.c: the zone-state file (docs/smr.md) */
bool ncq_disk_zstate_init(NcqDisk *d, Error **errp);
void ncq_disk_zstate_cleanup(NcqDisk *d);
void ncq_disk_zstate_save(NcqDisk *d, const char *why);
void ncq_disk_zstate_action(NcqDisk *d, uint8_t action);

/* ncq-disk-smart.c: SMART (docs/smart.md) */
extern const VMStateDescription vmstate_ncq_disk_smart;
bool ncq_disk_smart_init(NcqDisk *d, Error **errp);
void ncq_disk_smart_save_file(NcqDisk *d);
void ncq_disk_smart_cleanup(NcqDisk *d);
void ncq_disk_smart_reset(NcqDisk *d);
void ncq_disk_smart_identify(NcqDisk *d, uint16_t *words);
/* What the SMART command did, or leaves to its caller (ncq-disk-cmd.c) */
typedef enum NcqDiskSmartDone {
    NCQ_DISK_SMART_COMPLETE,    /* it has completed */
    NCQ_DISK_SMART_DATA,        /* its data moves; the transfer ends it */
    NCQ_DISK_SMART_READ_LOG,    /* SMART READ LOG: for the log table */
    NCQ_DISK_SMART_WRITE_LOG,   /* SMART WRITE LOG: likewise */
} NcqDiskSmartDone;
NcqDiskSmartDone ncq_disk_smart_cmd(NcqDisk *d, IDEState *s);
/* SMART's logs, rows of ncq-disk-log.c's table */
#define NCQ_DISK_ERROR_PAGES        4   /* SMART 02h: 20 errors, 5 a page */
#define NCQ_DISK_EXT_ERROR_PAGES    5   /* GP 03h: 20 errors, 4 a page */
NcqDiskLogRead ncq_disk_smart_summary_error_log;   /* 01h */
NcqDiskLogRead ncq_disk_smart_error_log;           /* 02h */
NcqDiskLogRead ncq_disk_smart_ext_error_log;       /* 03h */
NcqDiskLogRead ncq_disk_smart_stats_log;           /* 04h */
uint16_t ncq_disk_stat_pages(NcqDisk *d);
NcqDiskLogRead ncq_disk_smart_selftest_log;        /* 06h */
NcqDiskLogRead ncq_disk_smart_ext_selftest_log;    /* 07h */
NcqDiskLogRead ncq_disk_smart_selective_log;       /* 09h */
NcqDiskLogWrite ncq_disk_smart_selective_write;
NcqDiskLogRead ncq_disk_smart_phy_events;          /* 11h */
void ncq_disk_smart_update(NcqDisk *d);
void ncq_disk_smart_done(NcqDisk *d, const NcqCompletion *c);
void ncq_disk_smart_activity(NcqDisk *d);
void ncq_disk_smart_cancel(NcqDisk *d);
void ncq_disk_smart_spindle(NcqDisk *d, bool on);
/* ncq-disk-sct.c: SCT Command Transport, logs E0h/E1h (docs/smart.md) */
extern const VMStateDescription vmstate_ncq_disk_sct;
void ncq_disk_sct_identify(NcqDisk *d, uint16_t *words);
/* logs E0h and E1h, rows of ncq-disk-log.c's table */
NcqDiskLogRead ncq_disk_sct_status_log;            /* E0h */
NcqDiskLogWrite ncq_disk_sct_command;
NcqDiskLogReturns ncq_disk_sct_returns;            /* E0h, E1h */
NcqDiskLogRead ncq_disk_sct_data_log;              /* E1h */
bool ncq_disk_sct_data_ready(NcqDisk *d, uint16_t page);
void ncq_disk_sct_reset(NcqDisk *d);
void ncq_disk_sct_init(NcqDisk *d);
void ncq_disk_sct_cleanup(NcqDisk *d);
bool ncq_disk_sct_park(NcqDisk *d, uint8_t cmd);
void ncq_disk_sct_drop(NcqDisk *d);
/* ncq-disk-zac.c: host-managed zones over ATA (docs/smr.md) */
bool ncq_disk_zoned(NcqDisk *d);
bool ncq_disk_zac_check(NcqDisk *d, int64_t image_sectors, Error **errp);
void ncq_disk_zac_signature(IDEDevice *dev, uint8_t *lba_mid,
                            uint8_t *lba_high);
void ncq_disk_zac_identify(NcqDisk *d, uint16_t *words);
/* IDENTIFY DEVICE data log page 09h (a row of ncq-disk-log.c's table) */
void ncq_disk_zac_id_page(NcqDisk *d, IDEState *s, uint8_t *buf);
bool ncq_disk_zac_sense(int err, uint8_t *sense);
/* a command the zones refused: ABRT and its sense; false: not a zone error */
bool ncq_disk_zac_fail(NcqDisk *d, IDEState *s, int err);
/* a queued command the zones refused: its sense in log 10h */
void ncq_disk_zac_ncq_sense(NcqDisk *d, int err);
bool ncq_disk_zac_decode(NcqDisk *d, IDEState *s, uint8_t cmd, NcqCmd *mc);
bool ncq_disk_zac_run(NcqDisk *d, IDEState *s, uint8_t cmd, bool applied);
/* The queued forms: NCQ NON-DATA 63h/07h, RECEIVE FPDMA QUEUED 65h/02h */
int ncq_disk_zac_ncq_decode(NcqDisk *d, const IDENCQCmd *cmd,
                            NcqDiskKind kind, NcqCmd *mc);
void ncq_disk_zac_ncq_complete(NcqDisk *d, IDENCQCmd *cmd, NcqDiskKind kind);
uint16_t ncq_disk_zac_ncq_log_pages(NcqDisk *d);
NcqDiskLogRead ncq_disk_zac_ncq_nd_log;         /* 12h */
NcqDiskLogRead ncq_disk_zac_ncq_sr_log;         /* 13h */

#endif
