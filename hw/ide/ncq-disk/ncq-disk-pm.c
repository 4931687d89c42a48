/*
 * ncq-disk: power modes (docs/power-modes.md)
 *
 * STANDBY IMMEDIATE, IDLE IMMEDIATE, STANDBY and IDLE with their standby
 * timer, CHECK POWER MODE and SLEEP, and their codes ATA-4 retired (94h to
 * 99h), which hdparm sends when the current ones fail.  The spindle's
 * stop and spin-up are the model's (ncq_model_spin_down(), the next media
 * access waits spinup_ms); this file keeps the mode the host sees and the
 * standby timer, on the virtual clock.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/timer.h"
#include "qemu/log.h"
#include "migration/vmstate.h"
#include "../ide-internal.h"
#include "ncq-disk.h"
#include "trace.h"

/* The commands, current and retired codes */
#define ATA_CMD_STANDBY_IMMEDIATE   0xe0
#define ATA_CMD_IDLE_IMMEDIATE      0xe1
#define ATA_CMD_STANDBY             0xe2
#define ATA_CMD_IDLE                0xe3
#define ATA_CMD_CHECK_POWER_MODE    0xe5
#define ATA_CMD_SLEEP               0xe6
#define ATA_CMD_RETIRED_FIRST       0x94    /* 94h-99h: E0h-E3h, E5h, E6h */

/* CHECK POWER MODE's count register (ACS-3, CHECK POWER MODE) */
#define PM_COUNT_STANDBY            0x00
#define PM_COUNT_IDLE               0x80
#define PM_COUNT_ACTIVE             0xff

/* Standby timer counts (ACS-3, the STANDBY command's table) */
#define PM_TIMER_RESERVED           254

#define NS_PER_S                    1000000000LL

/* The retired code's current one */
static uint8_t ncq_disk_pm_code(uint8_t cmd)
{
    static const uint8_t retired[] = {
        ATA_CMD_STANDBY_IMMEDIATE, ATA_CMD_IDLE_IMMEDIATE, ATA_CMD_STANDBY,
        ATA_CMD_IDLE, ATA_CMD_CHECK_POWER_MODE, ATA_CMD_SLEEP,
    };

    if (cmd >= ATA_CMD_RETIRED_FIRST &&
        cmd < ATA_CMD_RETIRED_FIRST + ARRAY_SIZE(retired)) {
        return retired[cmd - ATA_CMD_RETIRED_FIRST];
    }
    return cmd;
}

static const char *const ncq_disk_pm_names[] = {
    [NCQ_DISK_PM_ACTIVE] = "active",
    [NCQ_DISK_PM_IDLE] = "idle",
    [NCQ_DISK_PM_STANDBY] = "standby",
    [NCQ_DISK_PM_SLEEP] = "sleep",
};

const char *ncq_disk_pm_mode_name(uint8_t mode)
{
    return mode < ARRAY_SIZE(ncq_disk_pm_names) ? ncq_disk_pm_names[mode] :
           "?";
}

/*
 * The standby timer's period for a count of IDLE or STANDBY, as ACS's
 * table gives it (hdparm -S prints the same): 0 off, 1-240 five seconds
 * each, 241-251 thirty minutes each, 252 21 minutes, 253 vendor specific
 * (this drive: 8 hours, an estimate), 255 21 minutes 15 seconds.
 */
int64_t ncq_disk_pm_timer_ns(uint8_t count)
{
    if (count == 0) {
        return 0;
    }
    if (count <= 240) {
        return count * 5 * NS_PER_S;
    }
    if (count <= 251) {
        return (count - 240) * 30 * 60 * NS_PER_S;
    }
    switch (count) {
    case 252:
        return 21 * 60 * NS_PER_S;
    case 253:
        return 8 * 3600 * NS_PER_S;
    case 255:
        return (21 * 60 + 15) * NS_PER_S;
    default:
        return -1;          /* 254: reserved */
    }
}

static int64_t ncq_disk_pm_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void ncq_disk_pm_set(NcqDisk *d, uint8_t mode)
{
    if (d->pm.mode != mode) {
        trace_ncq_disk_pm_mode(d, ncq_disk_pm_mode_name(d->pm.mode),
                               ncq_disk_pm_mode_name(mode));
        d->pm.mode = mode;
    }
}

/* The spindle starts (@ready_ns >= 0) or stops: both traces record it */
static void ncq_disk_pm_trace(NcqDisk *d, int64_t now, int64_t ready_ns,
                              const char *why)
{
    if (ready_ns >= 0) {
        trace_ncq_disk_spin_up(d, now, ready_ns);
    } else {
        trace_ncq_disk_spin_down(d, why, now);
    }
    if (d->trace) {
        ncq_trace_spin(d->trace, now, ready_ns, why);
    }
}

static bool ncq_disk_pm_at_rest(NcqDisk *d)
{
    return d->pm.mode == NCQ_DISK_PM_STANDBY ||
           d->pm.mode == NCQ_DISK_PM_SLEEP;
}

/* The spindle starts: it counts a start in SMART (Start_Stop_Count) */
static void ncq_disk_pm_spin_up(NcqDisk *d, int64_t now)
{
    ncq_disk_pm_trace(d, now, now + d->params->spinup_ns, NULL);
    ncq_disk_smart_spindle(d, true);
    if (d->prop.timing) {
        ncq_model_spin_up(d->model, now);
    }
}

/* The spindle stops: STANDBY, SLEEP or the standby timer */
static void ncq_disk_pm_spin_down(NcqDisk *d, uint8_t mode, const char *why)
{
    int64_t now = ncq_disk_pm_now();

    timer_del(d->pm.timer);
    if (!ncq_disk_pm_at_rest(d)) {
        ncq_disk_pm_trace(d, now, -1, why);
        if (d->prop.timing && ncq_model_spin_down(d->model, now) < 0) {
            /* a held FLUSH wrote the cache first; nothing else is in */
            qemu_log_mask(LOG_UNIMP, "ncq-disk: spin-down with work in "
                          "the drive\n");
        }
        ncq_disk_smart_spindle(d, false);
        ncq_disk_smart_activity(d);
    }
    ncq_disk_pm_set(d, mode);
}

/*
 * The drive did some work (a command arrived or ended, a destage ended):
 * the standby timer counts again from now.
 */
void ncq_disk_pm_rearm(NcqDisk *d)
{
    int64_t period = ncq_disk_pm_timer_ns(d->pm.timer_count);

    if (period <= 0 || ncq_disk_pm_at_rest(d)) {
        timer_del(d->pm.timer);
        return;
    }
    timer_mod_ns(d->pm.timer, ncq_disk_pm_now() + period);
}

/* A media command arrives (queued or not): a drive at rest spins up. */
void ncq_disk_pm_media(NcqDisk *d)
{
    int64_t now = ncq_disk_pm_now();

    if (d->pm.mode == NCQ_DISK_PM_STANDBY) {
        ncq_disk_pm_trace(d, now, now + d->params->spinup_ns, NULL);
        ncq_disk_smart_spindle(d, true);
    }
    ncq_disk_pm_set(d, NCQ_DISK_PM_ACTIVE);
    ncq_disk_pm_rearm(d);
}

/* The standby timer ran out with nothing in the drive: spin down. */
static void ncq_disk_pm_timer_cb(void *opaque)
{
    NcqDisk *d = opaque;
    int64_t next;

    if (ncq_disk_pm_at_rest(d) || d->power.off) {
        return;
    }
    if (ncq_disk_outstanding(d) || d->held.active) {
        return;                 /* their completion arms it again */
    }
    next = d->prop.timing ? ncq_model_next_event(d->model) : INT64_MAX;
    if (next != INT64_MAX && next > ncq_disk_pm_now()) {
        timer_mod_ns(d->pm.timer, next);    /* a destage first */
        return;
    }
    ncq_disk_pm_spin_down(d, NCQ_DISK_PM_STANDBY, "standby-timer");
}

/* In SLEEP only a reset is answered: any command is aborted. */
bool ncq_disk_pm_refuse(NcqDisk *d, IDEState *s)
{
    if (d->pm.mode != NCQ_DISK_PM_SLEEP) {
        return false;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "ncq-disk: a command in SLEEP; only a "
                  "reset wakes the drive\n");
    ide_abort_command(s);
    return true;
}

/* IDLE and STANDBY's count: false (ABRT) for the reserved one */
static bool ncq_disk_pm_take_count(NcqDisk *d, IDEState *s)
{
    uint8_t count = s->nsector;

    if (ncq_disk_pm_timer_ns(count) < 0) {
        return false;
    }
    d->pm.timer_count = count;
    trace_ncq_disk_pm_timer(d, count, ncq_disk_pm_timer_ns(count));
    return true;
}

/*
 * Before a power command runs: true if the model must time it first, held
 * as a FLUSH (ncq-disk-cmd.c): the commands that stop the spindle write
 * the cache first; IDLE from standby waits for the spin-up it starts.
 */
bool ncq_disk_pm_prepare(NcqDisk *d, IDEState *s, uint8_t cmd)
{
    switch (ncq_disk_pm_code(cmd)) {
    case ATA_CMD_STANDBY:
        if (ncq_disk_pm_timer_ns(s->nsector) < 0) {
            return false;
        }
        /* fall through */
    case ATA_CMD_STANDBY_IMMEDIATE:
    case ATA_CMD_SLEEP:
        return !ncq_disk_pm_at_rest(d);
    case ATA_CMD_IDLE:
        if (ncq_disk_pm_timer_ns(s->nsector) < 0) {
            return false;
        }
        /* fall through */
    case ATA_CMD_IDLE_IMMEDIATE:
        if (d->pm.mode != NCQ_DISK_PM_STANDBY) {
            return false;
        }
        ncq_disk_pm_spin_up(d, ncq_disk_pm_now());
        d->pm.spinning_up = true;
        return true;
    default:
        return false;
    }
}

/* A power command, now or at its deadline: true when it has completed */
bool ncq_disk_pm_cmd(NcqDisk *d, IDEState *s, uint8_t cmd)
{
    uint8_t code = ncq_disk_pm_code(cmd);

    switch (code) {
    case ATA_CMD_CHECK_POWER_MODE:
        s->nsector = d->pm.mode == NCQ_DISK_PM_STANDBY ? PM_COUNT_STANDBY :
                     d->pm.mode == NCQ_DISK_PM_IDLE ? PM_COUNT_IDLE :
                     PM_COUNT_ACTIVE;
        return true;
    case ATA_CMD_STANDBY:
    case ATA_CMD_IDLE:
        if (!ncq_disk_pm_take_count(d, s)) {
            ide_abort_command(s);
            return true;
        }
        break;
    }
    switch (code) {
    case ATA_CMD_STANDBY:
    case ATA_CMD_STANDBY_IMMEDIATE:
        ncq_disk_pm_spin_down(d, NCQ_DISK_PM_STANDBY, "STANDBY");
        break;
    case ATA_CMD_SLEEP:
        ncq_disk_pm_spin_down(d, NCQ_DISK_PM_SLEEP, "SLEEP");
        break;
    case ATA_CMD_IDLE:
    case ATA_CMD_IDLE_IMMEDIATE:
        if (d->pm.mode == NCQ_DISK_PM_STANDBY && !d->pm.spinning_up) {
            ncq_disk_pm_spin_up(d, ncq_disk_pm_now());  /* timing off */
        }
        d->pm.spinning_up = false;
        ncq_disk_pm_set(d, NCQ_DISK_PM_IDLE);
        ncq_disk_pm_rearm(d);
        break;
    }
    s->status = READY_STAT | SEEK_STAT;
    return true;
}

/* A bus reset (COMRESET, SRST): a sleeping drive wakes into standby. */
void ncq_disk_pm_reset(NcqDisk *d)
{
    d->pm.spinning_up = false;
    if (d->pm.mode == NCQ_DISK_PM_SLEEP) {
        ncq_disk_pm_set(d, NCQ_DISK_PM_STANDBY);
    }
}

/*
 * Power on (a system reset): the drive spins up by itself and the standby
 * timer is off until the host sets it again.
 */
void ncq_disk_pm_power_on(NcqDisk *d)
{
    d->pm.timer_count = 0;
    timer_del(d->pm.timer);
    if (ncq_disk_pm_at_rest(d)) {
        ncq_disk_pm_trace(d, ncq_disk_pm_now(),
                          ncq_disk_pm_now() + d->params->spinup_ns, NULL);
        if (d->prop.timing) {
            ncq_model_spin_up(d->model, ncq_disk_pm_now());
        }
    }
    d->pm.spinning_up = false;
    ncq_disk_pm_set(d, NCQ_DISK_PM_ACTIVE);
}

/*
 * IDENTIFY: the Power Management feature set, supported and enabled (words
 * 82 and 85 bit 3; ACS says it is always enabled), and standby timer values
 * as the standard gives them (word 49 bit 13), which hdparm -I prints as
 * "Standby timer values: spec'd by Standard".
 */
void ncq_disk_pm_identify(uint16_t *words)
{
    stw_le_p(&words[49], lduw_le_p(&words[49]) | (1 << 13));
    stw_le_p(&words[82], lduw_le_p(&words[82]) | (1 << 3));
    stw_le_p(&words[85], lduw_le_p(&words[85]) | (1 << 3));
}

void ncq_disk_pm_init(NcqDisk *d)
{
    d->pm.mode = NCQ_DISK_PM_ACTIVE;
    d->pm.timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ncq_disk_pm_timer_cb, d);
}

void ncq_disk_pm_cleanup(NcqDisk *d)
{
    if (d->pm.timer) {
        timer_free(d->pm.timer);
        d->pm.timer = NULL;
    }
}

static bool ncq_disk_pm_needed(void *opaque)
{
    NcqDisk *d = opaque;

    return d->pm.mode != NCQ_DISK_PM_ACTIVE || d->pm.timer_count ||
           d->pm.spinning_up;
}

static int ncq_disk_pm_post_load(void *opaque, int version_id)
{
    NcqDisk *d = opaque;

    return d->pm.mode <= NCQ_DISK_PM_SLEEP ? 0 : -EINVAL;
}

const VMStateDescription vmstate_ncq_disk_pm = {
    .name = "ncq-disk/pm",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ncq_disk_pm_needed,
    .post_load = ncq_disk_pm_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(pm.mode, NcqDisk),
        VMSTATE_UINT8(pm.timer_count, NcqDisk),
        VMSTATE_BOOL(pm.spinning_up, NcqDisk),
        VMSTATE_TIMER_PTR(pm.timer, NcqDisk),
        VMSTATE_END_OF_LIST()
    },
};
