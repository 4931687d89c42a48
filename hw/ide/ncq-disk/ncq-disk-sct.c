/*
 * ncq-disk: SMART Command Transport (SCT), as smartctl uses it
 *
 * The host writes an SCT command to log E0h (SMART WRITE LOG, or WRITE
 * LOG EXT) and reads the SCT status back from the same log (ACS-3 8.1,
 * "SCT Command Transport").  The drive offers SCT Status (temperatures,
 * the last command's outcome) and Error Recovery Control (action code
 * 3): read and write limits on the firmware's retries of a sector it
 * cannot read or write, in 100 ms units, current (volatile) and power-on
 * values.  The model applies them (ncq_model_set_erc(), docs/faults.md).
 * Logs E0h and E1h are rows of ncq-disk-log.c's table, which moves their
 * data; docs/smart.md says what each field holds.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/timer.h"
#include "migration/vmstate.h"
#include "../ide-internal.h"
#include "ncq-disk.h"

#define LOG_SCT_STATUS              0xe0
#define LOG_SCT_DATA                0xe1

/* IDENTIFY word 206: SCT Command Transport and the actions it offers */
#define SCT_ID_SUPPORTED            (1 << 0)
#define SCT_ID_ERC                  (1 << 3)
#define SCT_ID_DATA_TABLE           (1 << 5)

/* SCT status: format version 3 (ACS-3 table 189), SCT spec level 1 */
#define SCT_FORMAT_VERSION          3
#define SCT_VENDOR_VERSION          1
#define SCT_SPEC                    1
#define SCT_TEMP_INVALID            0x80

/* Action codes (ACS-3 table 184) */
#define SCT_ACTION_ERC              3
#define SCT_ACTION_DATA_TABLE       5

/* Data Tables: read (function 1) the HDA temperature history (table 2) */
#define SCT_TABLE_READ              1
#define SCT_TABLE_TEMP_HISTORY      2
#define SCT_HIST_VERSION            2
#define SCT_HIST_MIN                1       /* sampling and logging */
#define SCT_HIST_INVALID            (-128)
#define NS_PER_MIN                  (60 * NANOSECONDS_PER_SECOND)

/* Error Recovery Control function and selection codes (ACS-4 table 201) */
#define ERC_SET                     1
#define ERC_GET                     2
#define ERC_SET_POWER_ON            3
#define ERC_GET_POWER_ON            4
#define ERC_RESTORE_DEFAULT         5
#define ERC_READ_TIMER              1
#define ERC_WRITE_TIMER             2

/*
 * Extended status codes (ACS-3 table 186; the same list in drive
 * makers' manuals, e.g. Fujitsu MHW2xxxBS table 5.26)
 */
#define SCT_OK                      0x0000
#define SCT_BAD_FUNCTION            0x0001
#define SCT_COUNT_OVERFLOW          0x0003
#define SCT_BAD_ERC_FUNCTION        0x0004
#define SCT_BAD_ERC_SELECTION       0x0005
#define SCT_READ_TIMER_TOO_LOW      0x0006
#define SCT_WRITE_TIMER_TOO_LOW     0x0007
#define SCT_NO_COMMAND              0x000b
#define SCT_BAD_ACTION              0x0010
#define SCT_BAD_TABLE               0x0011

/*
 * The smallest limit the drive takes (ACS-4's "minimum supported ERC
 * time", SCT status bytes 216-217): 1.0 s, an estimate (makers do not
 * publish it for these drives)
 */
#define SCT_ERC_MIN                 10
/* The highest temperature the drive is specified for: as log 04h page 5 */
#define SCT_MAX_OP_TEMP             60

#define NS_PER_ERC_UNIT             (100 * (int64_t)SCALE_MS)

/* The model follows the current limits. */
static void ncq_disk_sct_apply(NcqDisk *d)
{
    if (d->model) {
        ncq_model_set_erc(d->model, d->sct.erc[0] * NS_PER_ERC_UNIT,
                          d->sct.erc[1] * NS_PER_ERC_UNIT);
    }
}

/* IDENTIFY word 206 */
void ncq_disk_sct_identify(NcqDisk *d, uint16_t *words)
{
    stw_le_p(&words[206], SCT_ID_SUPPORTED | SCT_ID_ERC | SCT_ID_DATA_TABLE);
}

/*
 * The temperature history: an entry a minute since power-on.  The model
 * computes the temperature when asked, not on a timer, so the entries
 * due since the last look take the temperature of this look.
 */
static void ncq_disk_sct_sample(NcqDisk *d)
{
    NcqDiskSct *t = &d->sct;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint8_t temp;
    int n = 0;

    if (now < t->hist_next_ns) {
        return;
    }
    ncq_smart_update(&d->smart.st, d->model, now);
    temp = (int8_t)ncq_smart_temperature(&d->smart.st);
    while (t->hist_next_ns <= now && n++ < ARRAY_SIZE(t->hist)) {
        t->hist_index = (t->hist_index + 1) % ARRAY_SIZE(t->hist);
        t->hist[t->hist_index] = temp;
        t->hist_next_ns += SCT_HIST_MIN * NS_PER_MIN;
    }
    if (t->hist_next_ns <= now) {
        /* a gap longer than the table: start the count from now */
        t->hist_next_ns = now + SCT_HIST_MIN * NS_PER_MIN;
    }
}

/* Log E1h after a Data Table command: the temperature history table */
static void ncq_disk_sct_history(NcqDisk *d, uint8_t *buf)
{
    NcqDiskSct *t = &d->sct;

    ncq_disk_sct_sample(d);
    stw_le_p(buf, SCT_HIST_VERSION);
    stw_le_p(buf + 2, SCT_HIST_MIN);        /* sampling period */
    stw_le_p(buf + 4, SCT_HIST_MIN);        /* logging interval */
    buf[6] = SCT_MAX_OP_TEMP;               /* max recommended */
    buf[7] = SCT_MAX_OP_TEMP;               /* max limit */
    buf[8] = 0;                             /* min recommended */
    buf[9] = 0;                             /* min limit */
    stw_le_p(buf + 30, ARRAY_SIZE(t->hist));
    stw_le_p(buf + 32, t->hist_index);
    memcpy(buf + 34, t->hist, sizeof(t->hist));
}

/* Log E0h read: the SCT status (ACS-3 table 189, ACS-4 table 194) */
static void ncq_disk_sct_status(NcqDisk *d, uint8_t *buf)
{
    NcqSmart *sm = &d->smart.st;
    bool failing;
    int32_t t;

    ncq_smart_update(sm, d->model, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    failing = ncq_smart_failing(sm, d->model);
    stw_le_p(buf, SCT_FORMAT_VERSION);
    stw_le_p(buf + 2, SCT_VENDOR_VERSION);
    stw_le_p(buf + 4, SCT_SPEC);
    /* device state: 3 while a self-test runs in the background */
    buf[10] = sm->run.type && !sm->run.captive ? 3 : 0;
    stw_le_p(buf + 14, d->sct.status);
    stw_le_p(buf + 16, d->sct.action);
    stw_le_p(buf + 18, d->sct.function);
    /* the model keeps the extremes at each change of activity: now too */
    t = ncq_smart_temperature(sm);
    buf[200] = (int8_t)t;
    buf[201] = (int8_t)MIN(sm->temp_min, t);
    buf[202] = (int8_t)MAX(sm->temp_max, t);
    buf[203] = (int8_t)MIN(sm->life_min, t);
    buf[204] = (int8_t)MAX(sm->life_max, t);
    buf[205] = SCT_MAX_OP_TEMP;
    /* over/under limit counts (206-213): 0, the drive never leaves 0-60 */
    /* SMART RETURN STATUS's LBA mid/high */
    stw_le_p(buf + 214, failing ? 0x2cf4 : 0xc24f);
    stw_le_p(buf + 216, SCT_ERC_MIN);
}

/* Log E0h read: the SCT status */
void ncq_disk_sct_status_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                             unsigned how)
{
    ncq_disk_sct_sample(d);
    ncq_disk_sct_status(d, buf);
}

/*
 * Log E1h holds data only after a Data Table command: else nothing to
 * transfer (ABRT, extended status 000Bh)
 */
bool ncq_disk_sct_data_ready(NcqDisk *d, uint16_t page)
{
    if (!d->sct.table_ready) {
        d->sct.status = SCT_NO_COMMAND;
        return false;
    }
    return true;
}

/* Log E1h read after a Data Table command: the temperature history */
void ncq_disk_sct_data_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                           unsigned how)
{
    ncq_disk_sct_history(d, buf);
}

/* Data Tables (action code 5): the temperature history goes to E1h */
static uint16_t ncq_disk_sct_table(NcqDisk *d, const uint8_t *cmd)
{
    if (lduw_le_p(cmd + 2) != SCT_TABLE_READ) {
        return SCT_BAD_FUNCTION;
    }
    if (lduw_le_p(cmd + 4) != SCT_TABLE_TEMP_HISTORY) {
        return SCT_BAD_TABLE;
    }
    d->sct.table_ready = true;
    return SCT_OK;
}

/*
 * Error Recovery Control (action code 3): the extended status code;
 * *ret is the value a Get returns in the Count and LBA Low registers.
 */
static uint16_t ncq_disk_sct_erc(NcqDisk *d, const uint8_t *cmd,
                                 uint16_t *ret)
{
    uint16_t function = lduw_le_p(cmd + 2);
    uint16_t selection = lduw_le_p(cmd + 4);
    uint16_t limit = lduw_le_p(cmd + 6);
    int i = selection - ERC_READ_TIMER;

    if (function < ERC_SET || function > ERC_RESTORE_DEFAULT) {
        return SCT_BAD_ERC_FUNCTION;
    }
    if (selection != ERC_READ_TIMER && selection != ERC_WRITE_TIMER) {
        return SCT_BAD_ERC_SELECTION;
    }
    switch (function) {
    case ERC_SET:
    case ERC_SET_POWER_ON:
        if (limit && limit < SCT_ERC_MIN) {
            return i ? SCT_WRITE_TIMER_TOO_LOW : SCT_READ_TIMER_TOO_LOW;
        }
        if (function == ERC_SET) {
            d->sct.erc[i] = limit;
        } else {
            d->sct.erc_power_on[i] = limit;
        }
        break;
    case ERC_GET:
        *ret = d->sct.erc[i];
        break;
    case ERC_GET_POWER_ON:
        *ret = d->sct.erc_power_on[i];
        break;
    case ERC_RESTORE_DEFAULT:
        /* the factory's: no limit, as desktop drives ship */
        d->sct.erc[i] = 0;
        d->sct.erc_power_on[i] = 0;
        break;
    }
    ncq_disk_sct_apply(d);
    return SCT_OK;
}

/*
 * Log E0h written (SMART WRITE LOG, WRITE LOG (DMA) EXT): the SCT
 * command's 512 bytes.  False: ABRT, its extended status code returned
 * by ncq_disk_sct_returns().
 */
bool ncq_disk_sct_command(NcqDisk *d, uint16_t page, uint16_t count,
                          const uint8_t *cmd)
{
    uint16_t status;

    d->sct.action = lduw_le_p(cmd);
    d->sct.function = lduw_le_p(cmd + 2);
    d->sct.table_ready = false;
    d->sct.ret = 0;
    if (d->sct.action == SCT_ACTION_ERC) {
        status = ncq_disk_sct_erc(d, cmd, &d->sct.ret);
    } else if (d->sct.action == SCT_ACTION_DATA_TABLE) {
        status = ncq_disk_sct_table(d, cmd);
    } else {
        /* Long Sector Access, Write Same, Feature Control */
        status = SCT_BAD_ACTION;
    }
    d->sct.status = status;
    return status == SCT_OK;
}

/*
 * A write command to log E0h or E1h ends, @stored or refused.  ACS: the
 * return value (an ERC Get's), or on an error the extended status code,
 * in Count and LBA Low; the log table calls this before the completion,
 * which sends them (AHCI's D2H Register FIS).  Without them smartctl
 * says the command "returns COUNT and LBA_LOW register unchanged".
 */
void ncq_disk_sct_returns(NcqDisk *d, IDEState *s, uint32_t count,
                          bool stored)
{
    uint16_t ret = d->sct.ret;

    if (!stored) {
        if (s->sector == LOG_SCT_DATA) {
            /* E1h is written only with a Write Same or Long Sector command */
            d->sct.status = SCT_NO_COMMAND;
        } else if (count != 1) {
            /* an SCT command is one sector: refused before any data */
            d->sct.status = SCT_COUNT_OVERFLOW;
        }
        ret = d->sct.status;
    }
    s->nsector = ret & 0xff;
    s->sector = ret >> 8;
}

/*
 * A non-queued command arriving while the firmware retries a sector it
 * cannot read or write (ncq_model_recovery_until()) waits until the
 * retries end: the drive stays busy, as a desktop drive in deep recovery
 * "fails to respond" (docs/faults.md).  True if @cmd is parked.
 */
bool ncq_disk_sct_park(NcqDisk *d, uint8_t cmd)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t until;

    if (d->sct.releasing || !d->prop.timing || !d->model) {
        return false;
    }
    until = ncq_model_recovery_until(d->model);
    if (until <= now) {
        return false;
    }
    d->sct.parked = true;
    d->sct.parked_cmd = cmd;
    timer_mod(d->sct.wake, until);
    return true;
}

/* The retries have ended: the parked command runs as if it came now. */
static void ncq_disk_sct_wake(void *opaque)
{
    NcqDisk *d = opaque;
    IDEState *s = ncq_disk_state(d);
    int64_t until = ncq_model_recovery_until(d->model);

    if (!d->sct.parked) {
        return;
    }
    if (until > qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)) {
        timer_mod(d->sct.wake, until);      /* after a load: not yet */
        return;
    }
    d->sct.parked = false;
    s->status = READY_STAT;     /* ide_bus_exec_cmd() refuses a busy drive */
    d->sct.releasing = true;
    ide_bus_exec_cmd(s->bus, d->sct.parked_cmd);
    d->sct.releasing = false;
}

/* A reset or a port stop: the parked command is gone, no completion */
void ncq_disk_sct_drop(NcqDisk *d)
{
    d->sct.parked = false;
    if (d->sct.wake) {
        timer_del(d->sct.wake);
    }
}

void ncq_disk_sct_init(NcqDisk *d)
{
    d->sct.wake = timer_new_ns(QEMU_CLOCK_VIRTUAL, ncq_disk_sct_wake, d);
    memset(d->sct.hist, SCT_HIST_INVALID & 0xff, sizeof(d->sct.hist));
    d->sct.hist_index = ARRAY_SIZE(d->sct.hist) - 1;
    d->sct.hist_next_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

void ncq_disk_sct_cleanup(NcqDisk *d)
{
    if (d->sct.wake) {
        timer_free(d->sct.wake);
        d->sct.wake = NULL;
    }
}

/* Power on: the limits take their power-on values */
void ncq_disk_sct_reset(NcqDisk *d)
{
    memcpy(d->sct.erc, d->sct.erc_power_on, sizeof(d->sct.erc));
    d->sct.status = SCT_OK;
    d->sct.action = 0;
    d->sct.function = 0;
    ncq_disk_sct_apply(d);
}

static int ncq_disk_sct_post_load(void *opaque, int version_id)
{
    NcqDisk *d = opaque;

    ncq_disk_sct_apply(d);
    if (d->sct.parked) {
        /* the model's state may load after this: look again at once */
        timer_mod(d->sct.wake, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    }
    return 0;
}

static bool ncq_disk_sct_needed(void *opaque)
{
    return true;        /* the temperature history at least */
}

/* The limits and the last command's status travel with the drive. */
const VMStateDescription vmstate_ncq_disk_sct = {
    .name = "ncq-disk/sct",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ncq_disk_sct_needed,
    .post_load = ncq_disk_sct_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16_ARRAY(sct.erc, NcqDisk, 2),
        VMSTATE_UINT16_ARRAY(sct.erc_power_on, NcqDisk, 2),
        VMSTATE_UINT16(sct.status, NcqDisk),
        VMSTATE_UINT16(sct.action, NcqDisk),
        VMSTATE_UINT16(sct.function, NcqDisk),
        VMSTATE_BOOL(sct.parked, NcqDisk),
        VMSTATE_UINT8(sct.parked_cmd, NcqDisk),
        VMSTATE_BOOL(sct.table_ready, NcqDisk),
        VMSTATE_UINT8_ARRAY(sct.hist, NcqDisk, 128),
        VMSTATE_UINT32(sct.hist_index, NcqDisk),
        VMSTATE_INT64(sct.hist_next_ns, NcqDisk),
        VMSTATE_END_OF_LIST()
    },
};
