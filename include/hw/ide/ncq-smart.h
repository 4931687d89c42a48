/*
 * ncq-model: the drive's SMART state (attributes, error and self-test logs,
 * self-tests in virtual time), QEMU-free.  docs/smart.md says where each
 * value comes from.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_IDE_NCQ_SMART_H
#define HW_IDE_NCQ_SMART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hw/ide/ncq-model.h"

#define NCQ_SMART_MAX_ERRORS    20  /* error log entries kept (SMART 02h) */
#define NCQ_SMART_MAX_TESTS     21  /* self-test log entries (SMART 06h) */
#define NCQ_SMART_MAX_PENDING   256 /* pending sectors remembered */
#define NCQ_SMART_MAX_REMAP     4096 /* reallocated sectors remembered */
#define NCQ_SMART_SPANS         5   /* selective self-test spans (log 09h) */
#define NCQ_SMART_MAX_ATTRS     30  /* attribute slots of the SMART data */
#define NCQ_SMART_HISTORY       4   /* commands kept before a failing one */

/* SMART EXECUTE OFF-LINE IMMEDIATE subcommands (LBA low), ACS-3 7.48.6 */
#define NCQ_SMART_OFFLINE       0x00
#define NCQ_SMART_SHORT         0x01
#define NCQ_SMART_EXTENDED      0x02
#define NCQ_SMART_SELECTIVE     0x04
#define NCQ_SMART_ABORT         0x7f
#define NCQ_SMART_CAPTIVE       0x80    /* with 1, 2 or 4: captive mode */

/* Self-test execution status, high nibble (ACS-3 table 130) */
#define NCQ_SMART_ST_OK         0x0
#define NCQ_SMART_ST_ABORTED    0x1     /* by the host */
#define NCQ_SMART_ST_RESET      0x2     /* interrupted by a reset */
#define NCQ_SMART_ST_READ       0x7     /* a read element failed */
#define NCQ_SMART_ST_RUNNING    0xf

/* One command as the error log records it */
typedef struct NcqSmartCmdRec {
    uint8_t cmd;            /* ATA command code */
    uint8_t feature;
    uint16_t count;
    uint64_t lba;
    uint8_t device;
    uint32_t at_ms;         /* power-on time, ms (wraps at 2^32) */
} NcqSmartCmdRec;

/* One error log entry: the failing command and the ones before it */
typedef struct NcqSmartError {
    NcqSmartCmdRec cmd[NCQ_SMART_HISTORY + 1];  /* oldest first, failing last */
    uint8_t error;
    uint8_t status;
    uint64_t lba;
    uint16_t count;
    uint16_t poh;           /* power-on hours at the error */
} NcqSmartError;

/* One self-test log entry */
typedef struct NcqSmartTestRec {
    uint8_t type;           /* subcommand that started it (LBA low) */
    uint8_t status;         /* execution status byte at its end */
    uint16_t poh;
    uint64_t fail_lba;      /* UINT64_MAX: none */
} NcqSmartTestRec;

/* The self-test being run (test time counts only while it runs) */
typedef struct NcqSmartRun {
    uint8_t type;           /* 0: none running */
    bool captive;
    int64_t total_ns;       /* test time of the whole routine */
    int64_t stop_ns;        /* test time at which it stops */
    uint64_t fail_lba;      /* sector that stops it; UINT64_MAX: none */
    int64_t done_ns;        /* test time done so far */
} NcqSmartRun;

/* A selective self-test span (log 09h): [start, end], inclusive */
typedef struct NcqSmartSpan {
    uint64_t start;
    uint64_t end;
} NcqSmartSpan;

typedef struct NcqSmart {
    /* Lifetime counters */
    uint64_t power_on_ns;       /* powered time up to at_ns */
    int64_t at_ns;              /* virtual time of the last update */
    uint64_t cycle_ns;          /* powered time of this power cycle */
    uint32_t power_cycles;
    uint32_t start_stops;
    /*
     * Spindle time (device statistics' spindle motor and head flying
     * hours): it stops counting spindown_ns after a spin-down
     */
    uint64_t spindle_ns;
    bool spindle_off;
    int64_t spindle_stop_ns;
    uint64_t read_cmds, write_cmds;
    uint64_t sectors_read, sectors_written;
    uint64_t reported_unc;      /* UNC errors reported to the host */
    uint64_t resets;            /* system resets */
    uint32_t crc_errors;        /* no fault kind makes them: 0 */
    uint32_t realloc;           /* sectors reallocated */
    uint32_t npending;
    uint64_t pending[NCQ_SMART_MAX_PENDING];
    bool pending_offline[NCQ_SMART_MAX_PENDING];    /* found by a test */
    uint32_t nremap;
    uint64_t remap[NCQ_SMART_MAX_REMAP];

    /*
     * Temperature: busy fraction as a first-order lag, in 1/1000, folded
     * in at each change of @busy only, so that the values do not depend
     * on how often the state is looked at
     */
    bool busy;
    uint32_t activity_milli;    /* at act_at_ns */
    int64_t act_at_ns;
    int32_t temp_min, temp_max;     /* this power cycle, deg C */
    int32_t life_min, life_max;
    uint8_t worst[NCQ_SMART_MAX_ATTRS];

    /* Error log */
    NcqSmartCmdRec recent[NCQ_SMART_HISTORY];
    uint32_t nrecent;
    NcqSmartError err[NCQ_SMART_MAX_ERRORS];
    uint32_t nerr;              /* errors ever logged */

    /* Self-tests */
    NcqSmartTestRec test[NCQ_SMART_MAX_TESTS];
    uint32_t ntests;            /* tests ever logged */
    NcqSmartRun run;
    uint8_t exec_status;        /* SMART data byte 363 when none runs */
    NcqSmartSpan span[NCQ_SMART_SPANS];
    uint16_t sel_flags;
    uint16_t sel_pending_min;
    uint8_t offline_status;     /* SMART data byte 362 */

    /* Settings */
    bool enabled;
    bool autosave;
    bool auto_offline;
} NcqSmart;

/* Attribute IDs the tables use */
typedef enum NcqSmartSource {
    NCQ_SMART_SRC_ZERO = 0,     /* no modelled cause: raw 0 */
    NCQ_SMART_SRC_READ_ERR,     /* raw24/raw32: errors / reads */
    NCQ_SMART_SRC_SEEK_ERR,     /* raw24/raw32: 0 / commands */
    NCQ_SMART_SRC_ECC,          /* raw24/raw32: 0 / reads */
    NCQ_SMART_SRC_START_STOP,
    NCQ_SMART_SRC_REALLOC,
    NCQ_SMART_SRC_POH,
    NCQ_SMART_SRC_CYCLES,
    NCQ_SMART_SRC_REPORTED_UNC,
    NCQ_SMART_SRC_AIRFLOW,      /* 100 - temperature */
    NCQ_SMART_SRC_TEMP,
    NCQ_SMART_SRC_PENDING,
    NCQ_SMART_SRC_OFFLINE_UNC,
    NCQ_SMART_SRC_CRC,
    NCQ_SMART_SRC_REALLOC_EVENTS,
} NcqSmartSource;

/* One attribute as the drive reports it */
typedef struct NcqSmartAttr {
    uint8_t id;
    uint16_t flags;
    uint8_t value;
    uint8_t worst;
    uint8_t threshold;
    uint64_t raw;           /* 48 bits */
    const char *name;       /* smartctl's name, for QMP and docs */
} NcqSmartAttr;

/* A model's attribute set: one per maker style */
typedef struct NcqSmartAttrDef {
    uint8_t id;
    uint16_t flags;
    uint8_t threshold;
    NcqSmartSource src;
    const char *name;
} NcqSmartAttrDef;

/* Let @m's fault rules see @sm's reallocated sectors (NULL: detach) */
void ncq_model_attach_smart(NcqModel *m, const NcqSmart *sm);
/* Power on (QEMU start, system reset): a power cycle and a spin-up */
void ncq_smart_init(NcqSmart *sm, int64_t now_ns);
void ncq_smart_power_cycle(NcqSmart *sm, const NcqModel *m, int64_t now_ns);
/*
 * The state of a drive powered off earlier (a saved file) powers on at
 * @now_ns: a test that ran is logged as interrupted
 */
void ncq_smart_resume(NcqSmart *sm, const NcqModel *m, int64_t now_ns);
/* Account time up to @now_ns: power-on time, temperature, self-test */
void ncq_smart_update(NcqSmart *sm, const NcqModel *m, int64_t now_ns);
/* The drive has host commands (@busy) or none from @now_ns on */
void ncq_smart_activity(NcqSmart *sm, const NcqModel *m, int64_t now_ns,
                        bool busy);

/* A READ/WRITE the drive completed: counters, pending, reallocation */
void ncq_smart_command_done(NcqSmart *sm, const NcqModel *m,
                            const NcqSmartCmdRec *rec, NcqOp op,
                            uint64_t lba, uint32_t sectors, int fault,
                            uint64_t fault_lba, int64_t now_ns);
/* An error the drive reported: one error log entry */
void ncq_smart_log_error(NcqSmart *sm, const NcqSmartCmdRec *rec,
                         uint8_t status, uint8_t error, uint64_t lba);
/* Is @lba reallocated (reads fine whatever the fault rules say)? */
bool ncq_smart_remapped(const NcqSmart *sm, uint64_t lba);

/* Attributes and health */
int ncq_smart_attrs(const NcqSmart *sm, const NcqModel *m,
                    NcqSmartAttr *out, int max);
/* SMART READ DATA reported @a: remember the lowest values */
void ncq_smart_keep_worst(NcqSmart *sm, const NcqSmartAttr *a, int n);
bool ncq_smart_failing(const NcqSmart *sm, const NcqModel *m);
int32_t ncq_smart_temperature(const NcqSmart *sm);
uint64_t ncq_smart_power_on_hours(const NcqSmart *sm);
uint64_t ncq_smart_spindle_hours(const NcqSmart *sm);
/*
 * The spindle starts (@on: a spin-up from standby, Start_Stop_Count) or is
 * stopped at @now_ns (it turns on for the model's spindown_ns)
 */
void ncq_smart_spindle(NcqSmart *sm, const NcqModel *m, int64_t now_ns,
                       bool on);

/* Self-tests */
int ncq_smart_test_start(NcqSmart *sm, const NcqModel *m, uint8_t sub,
                         int64_t now_ns);
void ncq_smart_test_abort(NcqSmart *sm, const NcqModel *m, uint8_t status,
                          int64_t now_ns);
uint8_t ncq_smart_exec_status(const NcqSmart *sm);
int64_t ncq_smart_test_ns(const NcqModel *m, const NcqSmart *sm, uint8_t sub);
/* Virtual time left until the running test ends (captive: all of it) */
int64_t ncq_smart_test_left_ns(const NcqSmart *sm);
const NcqSmartTestRec *ncq_smart_test_rec(const NcqSmart *sm, uint32_t back);
const NcqSmartError *ncq_smart_error_rec(const NcqSmart *sm, uint32_t back);
int ncq_smart_set_spans(NcqSmart *sm, const NcqModel *m,
                        const NcqSmartSpan *span, uint16_t flags,
                        uint16_t pending_min);

/* State as bytes (migration, snapshots) */
size_t ncq_smart_state_size(const NcqSmart *sm);
void ncq_smart_state_save(const NcqSmart *sm, uint8_t *buf);
int ncq_smart_state_load(NcqSmart *sm, const uint8_t *buf, size_t len);

#endif
