/*
 * ncq-disk: SMART (command B0h) and the logs it shares with General
 * Purpose Logging.
 *
 * The state lives in the model library (hw/ide/ncq-model/smart.c): this
 * file turns it into ACS's data structures and feeds it the drive's
 * commands, boots and idle periods.  docs/smart.md says what every
 * attribute and log holds.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/timer.h"
#include "migration/vmstate.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "system/system.h"
#include "../ide-internal.h"
#include "ncq-disk.h"

/* SMART subcommands (Features register), ACS-3 7.48 */
#define SMART_READ_DATA             0xd0
#define SMART_READ_THRESHOLDS       0xd1
#define SMART_AUTOSAVE              0xd2
#define SMART_EXECUTE_OFFLINE       0xd4
#define SMART_READ_LOG              0xd5
#define SMART_WRITE_LOG             0xd6
#define SMART_ENABLE                0xd8
#define SMART_DISABLE               0xd9
#define SMART_RETURN_STATUS         0xda
#define SMART_AUTO_OFFLINE          0xdb

/* The SMART key in LBA mid/high, and its "threshold exceeded" form */
#define SMART_KEY_MID               0x4f
#define SMART_KEY_HIGH              0xc2
#define SMART_FAIL_MID              0xf4
#define SMART_FAIL_HIGH             0x2c

/* The logs' addresses and pages are rows of ncq-disk-log.c's table */
#define ERRORS_PER_PAGE             5       /* SMART 01h/02h */
#define EXT_ERRORS_PER_PAGE         4       /* GP 03h */
#define EXT_TESTS_PER_PAGE          19      /* GP 07h */
QEMU_BUILD_BUG_ON(NCQ_DISK_ERROR_PAGES * ERRORS_PER_PAGE !=
                  NCQ_SMART_MAX_ERRORS);
QEMU_BUILD_BUG_ON(NCQ_DISK_EXT_ERROR_PAGES * EXT_ERRORS_PER_PAGE !=
                  NCQ_SMART_MAX_ERRORS);
#define STAT_PAGES                  8       /* device statistics 00h-07h */
#define STAT_PAGE_CDL               0x09    /* ... and 09h with CDL */

/* SMART data structure revision, as Seagate's drives report it */
#define SMART_REVISION              10
/* Error log entry state: active or idle (ACS-3 table A.5) */
#define ERROR_STATE_ACTIVE          0x03

#define NS_PER_MIN                  (60 * NANOSECONDS_PER_SECOND)

static NcqSmart *ncq_disk_sm(NcqDisk *d)
{
    return &d->smart.st;
}

static int64_t ncq_disk_smart_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void ncq_disk_put48(uint8_t *p, uint64_t v)
{
    int i;

    for (i = 0; i < 6; i++) {
        p[i] = v >> (8 * i);
    }
}

/* SMART READ DATA (ACS-3 table 131) */
static void ncq_disk_smart_data(NcqDisk *d, uint8_t *buf)
{
    NcqSmart *sm = ncq_disk_sm(d);
    NcqSmartAttr a[NCQ_SMART_MAX_ATTRS];
    int n = ncq_smart_attrs(sm, d->model, a, NCQ_SMART_MAX_ATTRS), i;
    int64_t shrt = ncq_smart_test_ns(d->model, sm, NCQ_SMART_SHORT);
    int64_t ext = ncq_smart_test_ns(d->model, sm, NCQ_SMART_EXTENDED);
    uint64_t ext_min = DIV_ROUND_UP(ext, NS_PER_MIN);

    ncq_smart_keep_worst(sm, a, n);
    stw_le_p(buf, SMART_REVISION);
    for (i = 0; i < n; i++) {
        uint8_t *p = buf + 2 + 12 * i;

        p[0] = a[i].id;
        stw_le_p(p + 1, a[i].flags);
        p[3] = a[i].value;
        p[4] = a[i].worst;
        ncq_disk_put48(p + 5, a[i].raw);
    }
    buf[362] = sm->offline_status | (sm->auto_offline ? 0x80 : 0);
    buf[363] = ncq_smart_exec_status(sm);
    /* Off-line data collection is immediate: 0 seconds */
    /*
     * Capabilities: EXECUTE OFF-LINE IMMEDIATE, automatic off-line, a
     * suspended off-line routine on a new command (bit 2 clear), short
     * and extended self-tests, selective self-test.
     */
    buf[367] = 0x01 | 0x02 | 0x10 | 0x40;
    stw_le_p(buf + 368, 0x0003);    /* saves data on standby, autosave */
    buf[370] = 0x01;                /* error logging */
    buf[372] = MIN(DIV_ROUND_UP(shrt, NS_PER_MIN), 0xfe);
    buf[373] = ext_min < 0xff ? ext_min : 0xff;
    stw_le_p(buf + 375, MIN(ext_min, 0xffff));
    ncq_disk_log_checksum(buf);
}

static void ncq_disk_smart_thresholds(NcqDisk *d, uint8_t *buf)
{
    NcqSmartAttr a[NCQ_SMART_MAX_ATTRS];
    int n = ncq_smart_attrs(ncq_disk_sm(d), d->model, a,
                            NCQ_SMART_MAX_ATTRS), i;

    stw_le_p(buf, SMART_REVISION);
    for (i = 0; i < n; i++) {
        buf[2 + 12 * i] = a[i].id;
        buf[3 + 12 * i] = a[i].threshold;
    }
    ncq_disk_log_checksum(buf);
}

/* 28-bit command structure of SMART 01h/02h: 12 bytes */
static void ncq_disk_put_cmd28(uint8_t *p, const NcqSmartCmdRec *c)
{
    if (!c->cmd) {
        return;                     /* unused: zero */
    }
    p[1] = c->feature;
    p[2] = c->count;
    p[3] = c->lba;
    p[4] = c->lba >> 8;
    p[5] = c->lba >> 16;
    p[6] = c->device | ((c->lba >> 24) & 0x0f);
    p[7] = c->cmd;
    stl_le_p(p + 8, c->at_ms);
}

/* One 90-byte entry of SMART 01h/02h */
static void ncq_disk_put_error28(uint8_t *p, const NcqSmartError *e)
{
    uint8_t *err = p + 60;
    int i;

    for (i = 0; i <= NCQ_SMART_HISTORY; i++) {
        ncq_disk_put_cmd28(p + 12 * i, &e->cmd[i]);
    }
    err[1] = e->error;
    err[2] = e->count;
    err[3] = e->lba;
    err[4] = e->lba >> 8;
    err[5] = e->lba >> 16;
    err[6] = 0x40 | ((e->lba >> 24) & 0x0f);
    err[7] = e->status;
    err[27] = ERROR_STATE_ACTIVE;
    stw_le_p(err + 28, e->poh);
}

/*
 * SMART 01h (one page, the last 5 errors) and 02h (the last 20, 5 to a
 * page): error number k sits in slot k % slots, the index names the
 * newest's slot, 1-based.
 */
static void ncq_disk_error_log(NcqDisk *d, uint16_t page, int slots,
                               uint8_t *buf)
{
    NcqSmart *sm = ncq_disk_sm(d);
    uint32_t k, first = sm->nerr > (uint32_t)slots ? sm->nerr - slots : 0;

    if (page == 0) {
        buf[0] = 1;
        buf[1] = sm->nerr ? (sm->nerr - 1) % slots + 1 : 0;
        stw_le_p(buf + 452, MIN(sm->nerr, 0xffff));
    }
    for (k = first; k < sm->nerr; k++) {
        int slot = k % slots;

        if (slot / ERRORS_PER_PAGE == page) {
            ncq_disk_put_error28(buf + 2 + 90 * (slot % ERRORS_PER_PAGE),
                                 ncq_smart_error_rec(sm, sm->nerr - 1 - k));
        }
    }
    ncq_disk_log_checksum(buf);
}

/* 48-bit register image: low/high byte pairs */
static void ncq_disk_put_lba48(uint8_t *p, uint64_t lba)
{
    p[0] = lba;
    p[1] = lba >> 24;
    p[2] = lba >> 8;
    p[3] = lba >> 32;
    p[4] = lba >> 16;
    p[5] = lba >> 40;
}

/* One 124-byte entry of GP 03h */
static void ncq_disk_put_error48(uint8_t *p, const NcqSmartError *e)
{
    uint8_t *err = p + 90;
    int i;

    for (i = 0; i <= NCQ_SMART_HISTORY; i++) {
        const NcqSmartCmdRec *c = &e->cmd[i];
        uint8_t *q = p + 18 * i;

        if (!c->cmd) {
            continue;
        }
        q[1] = c->feature;
        q[3] = c->count;
        q[4] = c->count >> 8;
        ncq_disk_put_lba48(q + 5, c->lba);
        q[11] = c->device;
        q[12] = c->cmd;
        stl_le_p(q + 14, c->at_ms);
    }
    err[1] = e->error;
    err[2] = e->count;
    err[3] = e->count >> 8;
    ncq_disk_put_lba48(err + 4, e->lba);
    err[10] = 0x40;
    err[11] = e->status;
    err[31] = ERROR_STATE_ACTIVE;
    stw_le_p(err + 32, e->poh);
}

/* GP 03h: the last 20 errors, 4 to a page */
void ncq_disk_smart_ext_error_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                                  unsigned how)
{
    NcqSmart *sm = ncq_disk_sm(d);
    uint32_t slots = NCQ_SMART_MAX_ERRORS, k;
    uint32_t first = sm->nerr > slots ? sm->nerr - slots : 0;

    buf[0] = 1;
    if (page == 0) {
        stw_le_p(buf + 2, sm->nerr ? (sm->nerr - 1) % slots + 1 : 0);
        stw_le_p(buf + 500, MIN(sm->nerr, 0xffff));
    }
    for (k = first; k < sm->nerr; k++) {
        uint32_t slot = k % slots;

        if (slot / EXT_ERRORS_PER_PAGE == page) {
            ncq_disk_put_error48(buf + 4 + 124 *
                                 (slot % EXT_ERRORS_PER_PAGE),
                                 ncq_smart_error_rec(sm, sm->nerr - 1 - k));
        }
    }
    ncq_disk_log_checksum(buf);
}

void ncq_disk_smart_summary_error_log(NcqDisk *d, uint16_t page,
                                      uint8_t *buf, unsigned how)
{
    ncq_disk_error_log(d, 0, ERRORS_PER_PAGE, buf);
}

void ncq_disk_smart_error_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                              unsigned how)
{
    ncq_disk_error_log(d, page, NCQ_SMART_MAX_ERRORS, buf);
}

/* SMART 06h (21 entries, 24 bytes) and GP 07h (19 entries, 26 bytes) */
static void ncq_disk_selftest_log(NcqDisk *d, bool ext, uint8_t *buf)
{
    NcqSmart *sm = ncq_disk_sm(d);
    uint32_t slots = ext ? EXT_TESTS_PER_PAGE : NCQ_SMART_MAX_TESTS, k;
    uint32_t first = sm->ntests > slots ? sm->ntests - slots : 0;
    uint32_t size = ext ? 26 : 24, base = ext ? 4 : 2;

    if (ext) {
        buf[0] = 1;
        stw_le_p(buf + 2, sm->ntests ? (sm->ntests - 1) % slots + 1 : 0);
    } else {
        stw_le_p(buf, 1);
        buf[508] = sm->ntests ? (sm->ntests - 1) % slots + 1 : 0;
    }
    for (k = first; k < sm->ntests; k++) {
        const NcqSmartTestRec *t = ncq_smart_test_rec(sm, sm->ntests - 1 - k);
        uint8_t *p = buf + base + size * (k % slots);
        uint64_t lba = t->fail_lba == UINT64_MAX ? ~0ULL : t->fail_lba;

        p[0] = t->type;
        p[1] = t->status;
        stw_le_p(p + 2, t->poh);
        if (ext) {
            ncq_disk_put48(p + 5, lba);
        } else {
            stl_le_p(p + 5, lba > UINT32_MAX ? UINT32_MAX : lba);
        }
    }
    ncq_disk_log_checksum(buf);
}

void ncq_disk_smart_selftest_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                                 unsigned how)
{
    ncq_disk_selftest_log(d, false, buf);
}

void ncq_disk_smart_ext_selftest_log(NcqDisk *d, uint16_t page,
                                     uint8_t *buf, unsigned how)
{
    ncq_disk_selftest_log(d, true, buf);
}

/* SMART 09h: the spans a selective self-test reads */
void ncq_disk_smart_selective_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                                  unsigned how)
{
    NcqSmart *sm = ncq_disk_sm(d);
    int i;

    stw_le_p(buf, 1);
    for (i = 0; i < NCQ_SMART_SPANS; i++) {
        stq_le_p(buf + 2 + 16 * i, sm->span[i].start);
        stq_le_p(buf + 10 + 16 * i, sm->span[i].end);
    }
    stw_le_p(buf + 502, sm->sel_flags);
    stw_le_p(buf + 508, sm->sel_pending_min);
    ncq_disk_log_checksum(buf);
}

/* One device statistic: supported, valid, the value in bits 47:0 */
static void ncq_disk_stat(uint8_t *buf, int off, uint64_t v)
{
    stq_le_p(buf + off, (3ULL << 62) | (v & 0xffffffffffffULL));
}

static void ncq_disk_stat_header(uint8_t *buf, uint8_t page)
{
    stq_le_p(buf, ((uint64_t)page << 16) | 0x0001);
}

/* GP/SMART 04h (ACS-3 9.5): the pages a drive of this kind has */
static void ncq_disk_device_stats(NcqDisk *d, uint16_t page, uint8_t *buf,
                                  unsigned how)
{
    NcqSmart *sm = ncq_disk_sm(d);
    bool hdd = d->params->kind != NCQ_KIND_SSD;
    uint64_t hours = ncq_smart_power_on_hours(sm);
    int32_t t = ncq_smart_temperature(sm);

    switch (page) {
    case 0x00:
        buf[0] = 1;
        buf[8] = hdd ? 6 : 5;
        buf[9] = 0x00;
        buf[10] = 0x01;
        if (hdd) {
            buf[11] = 0x03;
        }
        buf[11 + hdd] = 0x04;
        buf[12 + hdd] = 0x05;
        buf[13 + hdd] = 0x06;
        if (d->cdl.on) {
            buf[14 + hdd] = STAT_PAGE_CDL;
            buf[8]++;
        }
        return;
    case 0x01:                      /* general */
        ncq_disk_stat_header(buf, page);
        ncq_disk_stat(buf, 8, sm->power_cycles);
        ncq_disk_stat(buf, 16, hours);
        ncq_disk_stat(buf, 24, sm->sectors_written);
        ncq_disk_stat(buf, 32, sm->write_cmds);
        ncq_disk_stat(buf, 40, sm->sectors_read);
        ncq_disk_stat(buf, 48, sm->read_cmds);
        return;
    case 0x03:                      /* rotating media */
        if (!hdd) {
            return;
        }
        ncq_disk_stat_header(buf, page);
        /* the spindle's time, and the heads fly while it turns */
        ncq_disk_stat(buf, 8, ncq_smart_spindle_hours(sm));
        ncq_disk_stat(buf, 16, ncq_smart_spindle_hours(sm));
        ncq_disk_stat(buf, 24, sm->start_stops);    /* head loads */
        ncq_disk_stat(buf, 32, sm->realloc);
        ncq_disk_stat(buf, 40, 0);                  /* read recovery */
        ncq_disk_stat(buf, 48, 0);                  /* start failures */
        ncq_disk_stat(buf, 56, sm->npending);       /* candidates */
        return;
    case 0x04:                      /* general errors */
        ncq_disk_stat_header(buf, page);
        ncq_disk_stat(buf, 8, sm->reported_unc);
        ncq_disk_stat(buf, 16, 0);  /* resets mid-command: not counted */
        return;
    case 0x05:                      /* temperature */
        ncq_disk_stat_header(buf, page);
        ncq_disk_stat(buf, 8, (uint8_t)t);
        ncq_disk_stat(buf, 32, (uint8_t)sm->life_max);
        ncq_disk_stat(buf, 40, (uint8_t)sm->life_min);
        ncq_disk_stat(buf, 88, 60);     /* max operating: estimate */
        ncq_disk_stat(buf, 104, 0);     /* min operating: estimate */
        return;
    case 0x06:                      /* transport */
        ncq_disk_stat_header(buf, page);
        ncq_disk_stat(buf, 8, sm->resets);
        ncq_disk_stat(buf, 24, sm->crc_errors);
        return;
    case STAT_PAGE_CDL:             /* Command Duration Limits */
        ncq_disk_cdl_stats(d, buf, how & NCQ_LOG_INIT);
        return;
    case 0x02:                      /* free fall: none */
    case 0x07:                      /* solid state: none here */
        return;
    }
}

/* Pages of log 04h: 00h-07h, and 09h with CDL (08h reads as zeros) */
uint16_t ncq_disk_stat_pages(NcqDisk *d)
{
    return d->cdl.on ? STAT_PAGE_CDL + 1 : STAT_PAGES;
}

void ncq_disk_smart_stats_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                              unsigned how)
{
    ncq_disk_device_stats(d, page, buf, how);
}

/* The state up to now, before a log page is read */
void ncq_disk_smart_update(NcqDisk *d)
{
    ncq_smart_update(ncq_disk_sm(d), d->model, ncq_disk_smart_now());
}

/*
 * GP log 11h, SATA Phy Event Counters (SATA 3.x 13.7.5): after a reserved
 * dword, each counter is an ID word (bits 14:12 the value's size in 16-bit
 * words) and its value; ID 0 ends the list; byte 511 is a checksum.  The
 * link is modelled without errors: the resets (power-on and system
 * resets, each a COMRESET) and the interface CRC errors (none) have
 * sources, the others read 0.  Reading with the reset bit (FEATURES
 * bit 0) does not clear them: they follow the SMART state.
 */
#define PHY_EVENT_16BIT             (1 << 12)

void ncq_disk_smart_phy_events(NcqDisk *d, uint16_t page, uint8_t *buf,
                               unsigned how)
{
    static const uint16_t zero_ids[] = {
        0x002,  /* R_ERR response for data FIS */
        0x005,  /* R_ERR response for non-data FIS */
        0x008,  /* device-to-host non-data FIS retries */
        0x009,  /* transitions from PhyRdy to PhyNRdy */
        0x00b,  /* CRC errors within host-to-device FIS */
        0x00d,  /* non-CRC errors within host-to-device FIS */
    };
    NcqSmart *sm = ncq_disk_sm(d);
    int off = 4, i;

    stw_le_p(buf + off, PHY_EVENT_16BIT | 0x001);   /* ICRC failures */
    stw_le_p(buf + off + 2, MIN(sm->crc_errors, UINT16_MAX));
    off += 4;
    stw_le_p(buf + off, PHY_EVENT_16BIT | 0x00a);   /* COMRESETs */
    stw_le_p(buf + off + 2, MIN(sm->resets, UINT16_MAX));
    off += 4;
    for (i = 0; i < ARRAY_SIZE(zero_ids); i++, off += 4) {
        stw_le_p(buf + off, PHY_EVENT_16BIT | zero_ids[i]);
    }
    ncq_disk_log_checksum(buf);
}

/*
 * SMART WRITE LOG of the selective self-test log (09h): ACS: a bad
 * checksum or span, or a test running, aborts.
 */
bool ncq_disk_smart_selective_write(NcqDisk *d, uint16_t page,
                                    uint16_t count, const uint8_t *buf)
{
    NcqSmartSpan span[NCQ_SMART_SPANS];
    uint8_t sum = 0;
    int i;

    for (i = 0; i < 512; i++) {
        sum += buf[i];
    }
    for (i = 0; i < NCQ_SMART_SPANS; i++) {
        span[i].start = ldq_le_p(buf + 2 + 16 * i);
        span[i].end = ldq_le_p(buf + 10 + 16 * i);
    }
    return !sum && !d->smart.st.run.type &&
           ncq_smart_set_spans(ncq_disk_sm(d), d->model, span,
                               lduw_le_p(buf + 502),
                               lduw_le_p(buf + 508)) >= 0;
}

/* Give @count sectors of @buf (already in s->io_buffer) to the host. */
static NcqDiskSmartDone ncq_disk_smart_data_in(IDEState *s, uint32_t count)
{
    s->status = READY_STAT | SEEK_STAT;
    ide_transfer_start(s, s->io_buffer, 512 * count, ide_transfer_stop);
    ide_bus_set_irq(s->bus);
    return NCQ_DISK_SMART_DATA;
}

/* A captive self-test has ended: the command completes. */
static void ncq_disk_smart_captive_end(void *opaque)
{
    NcqDisk *d = opaque;
    NcqSmart *sm = ncq_disk_sm(d);
    IDEState *s = ncq_disk_state(d);

    ncq_smart_update(sm, d->model, ncq_disk_smart_now());
    if (sm->run.type) {
        /* not yet (a stop time moved): wait on */
        timer_mod(d->smart.captive, ncq_disk_smart_now() +
                  ncq_smart_test_left_ns(sm));
        return;
    }
    if (sm->exec_status >> 4) {
        /* ACS: a failed captive test reports ERR and the failing key */
        s->status = READY_STAT | ERR_STAT;
        s->error = ABRT_ERR;
        s->lcyl = SMART_FAIL_MID;
        s->hcyl = SMART_FAIL_HIGH;
    } else {
        s->status = READY_STAT | SEEK_STAT;
    }
    ide_transfer_stop(s);
    ide_bus_set_irq(s->bus);
}

static bool ncq_disk_smart_offline(NcqDisk *d, IDEState *s)
{
    NcqSmart *sm = ncq_disk_sm(d);
    int64_t now = ncq_disk_smart_now();
    uint8_t sub = s->sector;

    switch (sub) {
    case NCQ_SMART_OFFLINE:
        /* Off-line data collection: nothing to gather beyond the state */
        sm->offline_status = 0x02;      /* completed without error */
        return true;
    case NCQ_SMART_ABORT:
        ncq_smart_test_abort(sm, d->model, NCQ_SMART_ST_ABORTED, now);
        return true;
    }
    if (ncq_smart_test_start(sm, d->model, sub, now) < 0) {
        ide_abort_command(s);
        return true;
    }
    if (!(sub & NCQ_SMART_CAPTIVE)) {
        return true;                    /* off-line mode: runs when idle */
    }
    /* Captive mode: BSY until the test ends */
    timer_mod(d->smart.captive, now + ncq_smart_test_left_ns(sm));
    return false;
}

/*
 * The SMART command (B0h): what it did, or left to its caller (the log
 * subcommands, served from the log table).
 */
NcqDiskSmartDone ncq_disk_smart_cmd(NcqDisk *d, IDEState *s)
{
    NcqSmart *sm = ncq_disk_sm(d);

    ncq_smart_update(sm, d->model, ncq_disk_smart_now());
    if (s->lcyl != SMART_KEY_MID || s->hcyl != SMART_KEY_HIGH ||
        (!sm->enabled && s->feature != SMART_ENABLE)) {
        ide_abort_command(s);
        return NCQ_DISK_SMART_COMPLETE;
    }
    switch (s->feature) {
    case SMART_ENABLE:
    case SMART_DISABLE:
        sm->enabled = s->feature == SMART_ENABLE;
        break;
    case SMART_AUTOSAVE:
        sm->autosave = s->sector == 0xf1;
        break;
    case SMART_AUTO_OFFLINE:
        sm->auto_offline = s->sector == 0xf8;
        break;
    case SMART_RETURN_STATUS:
        if (ncq_smart_failing(sm, d->model)) {
            s->lcyl = SMART_FAIL_MID;
            s->hcyl = SMART_FAIL_HIGH;
        }
        break;
    case SMART_READ_DATA:
        memset(s->io_buffer, 0, 512);
        ncq_disk_smart_data(d, s->io_buffer);
        return ncq_disk_smart_data_in(s, 1);
    case SMART_READ_THRESHOLDS:
        memset(s->io_buffer, 0, 512);
        ncq_disk_smart_thresholds(d, s->io_buffer);
        return ncq_disk_smart_data_in(s, 1);
    case SMART_READ_LOG:
        return NCQ_DISK_SMART_READ_LOG;
    case SMART_WRITE_LOG:
        return NCQ_DISK_SMART_WRITE_LOG;
    case SMART_EXECUTE_OFFLINE:
        return ncq_disk_smart_offline(d, s) ? NCQ_DISK_SMART_COMPLETE :
                                              NCQ_DISK_SMART_DATA;
    default:
        ide_abort_command(s);
        return NCQ_DISK_SMART_COMPLETE;
    }
    s->status = READY_STAT | SEEK_STAT;
    return NCQ_DISK_SMART_COMPLETE;
}

/* IDENTIFY: SMART supported and enabled, error logging, self-test */
void ncq_disk_smart_identify(NcqDisk *d, uint16_t *words)
{
    uint16_t w85 = lduw_le_p(&words[85]) & ~1;

    stw_le_p(&words[82], lduw_le_p(&words[82]) | 1);
    stw_le_p(&words[84], lduw_le_p(&words[84]) | 0x3);
    stw_le_p(&words[85], w85 | d->smart.st.enabled);
    stw_le_p(&words[87], lduw_le_p(&words[87]) | 0x3);
}

/* A command the model timed has completed (ncq-disk-queue.c). */
void ncq_disk_smart_done(NcqDisk *d, const NcqCompletion *c)
{
    NcqSmartCmdRec rec = {
        .lba = c->lba,
        .count = c->sectors,
        .device = 0x40,
    };

    if (c->queued) {
        /* FPDMA: the count in Features, the tag in Count */
        rec.cmd = c->op == NCQ_OP_WRITE ? 0x61 : 0x60;
        rec.feature = c->sectors;
        rec.count = c->id << 3;
    } else {
        rec.cmd = d->held.cmd;
    }
    ncq_smart_command_done(ncq_disk_sm(d), d->model, &rec, c->op, c->lba,
                           c->sectors, c->fault, c->fault_lba,
                           ncq_disk_smart_now());
}

/* The drive's queue changed: an off-line test runs only while it is idle */
void ncq_disk_smart_activity(NcqDisk *d)
{
    ncq_smart_activity(ncq_disk_sm(d), d->model, ncq_disk_smart_now(),
                       ncq_model_outstanding(d->model) > 0 ||
                       d->held.active);
}

/* A port reset: a captive test is interrupted (its command is gone). */
void ncq_disk_smart_cancel(NcqDisk *d)
{
    NcqSmart *sm = ncq_disk_sm(d);

    if (sm->run.type && sm->run.captive) {
        timer_del(d->smart.captive);
        ncq_smart_test_abort(sm, d->model, NCQ_SMART_ST_RESET,
                             ncq_disk_smart_now());
    }
}

/* Power on: QEMU starting, or a system reset (ncq_disk_reset()) */
void ncq_disk_smart_reset(NcqDisk *d)
{
    timer_del(d->smart.captive);
    d->smart.st.resets++;
    ncq_disk_sct_reset(d);
    ncq_smart_power_cycle(ncq_disk_sm(d), d->model, ncq_disk_smart_now());
}

/*
 * The spindle starts from rest (Start_Stop_Count) or stops
 * (ncq-disk-pm.c): the spindle hours follow
 */
void ncq_disk_smart_spindle(NcqDisk *d, bool on)
{
    ncq_smart_spindle(ncq_disk_sm(d), d->model, ncq_disk_smart_now(), on);
}

/* smart-file: the drive's SMART state as ncq_smart_state_save() writes it */
void ncq_disk_smart_save_file(NcqDisk *d)
{
    NcqSmart *sm = ncq_disk_sm(d);
    g_autoptr(GError) err = NULL;
    g_autofree uint8_t *buf = NULL;
    size_t len;

    if (!d->prop.smart_file) {
        return;
    }
    ncq_smart_update(sm, d->model, ncq_disk_smart_now());
    len = ncq_smart_state_size(sm);
    buf = g_malloc(len);
    ncq_smart_state_save(sm, buf);
    /* g_file_set_contents() replaces the file whole, or not at all */
    if (!g_file_set_contents(d->prop.smart_file, (const char *)buf, len,
                             &err)) {
        warn_report("ncq-disk: smart-file=%s not written: %s",
                    d->prop.smart_file, err->message);
    }
}

static void ncq_disk_smart_exit(Notifier *n, void *data)
{
    ncq_disk_smart_save_file(container_of(n, NcqDisk, smart.exit));
}

static bool ncq_disk_smart_load_file(NcqDisk *d, Error **errp)
{
    const char *path = d->prop.smart_file;
    g_autoptr(GError) err = NULL;
    g_autofree char *buf = NULL;
    gsize len;

    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        return true;                /* a new drive: written at exit */
    }
    if (!g_file_get_contents(path, &buf, &len, &err)) {
        error_setg(errp, "smart-file=%s cannot be read: %s", path,
                   err->message);
        return false;
    }
    if (ncq_smart_state_load(ncq_disk_sm(d), (uint8_t *)buf, len) < 0) {
        error_setg(errp, "smart-file=%s is not an ncq-disk SMART state or "
                   "is damaged; give another path, or remove the file to "
                   "start a new drive", path);
        return false;
    }
    ncq_smart_resume(ncq_disk_sm(d), d->model, ncq_disk_smart_now());
    return true;
}

bool ncq_disk_smart_init(NcqDisk *d, Error **errp)
{
    ncq_smart_init(ncq_disk_sm(d), ncq_disk_smart_now());
    ncq_model_attach_smart(d->model, ncq_disk_sm(d));
    d->smart.captive = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                    ncq_disk_smart_captive_end, d);
    ncq_disk_sct_init(d);
    if (!d->prop.smart_file) {
        return true;
    }
    if (!ncq_disk_smart_load_file(d, errp)) {
        return false;
    }
    d->smart.exit.notify = ncq_disk_smart_exit;
    qemu_add_exit_notifier(&d->smart.exit);
    d->smart.has_exit = true;
    return true;
}

void ncq_disk_smart_cleanup(NcqDisk *d)
{
    if (d->smart.has_exit) {
        qemu_remove_exit_notifier(&d->smart.exit);
        d->smart.has_exit = false;
    }
    if (d->smart.captive) {
        timer_free(d->smart.captive);
        d->smart.captive = NULL;
    }
    ncq_disk_sct_cleanup(d);
    g_free(d->smart.mig);
    d->smart.mig = NULL;
}

/* Migration: the state as ncq_smart_state_save() writes it */

static int ncq_disk_smart_pre_save(void *opaque)
{
    NcqDisk *d = opaque;
    NcqSmart *sm = ncq_disk_sm(d);

    ncq_smart_update(sm, d->model, ncq_disk_smart_now());
    d->smart.mig_len = ncq_smart_state_size(sm);
    d->smart.mig = g_malloc(d->smart.mig_len);
    ncq_smart_state_save(sm, d->smart.mig);
    return 0;
}

static int ncq_disk_smart_post_save(void *opaque)
{
    NcqDisk *d = opaque;

    g_free(d->smart.mig);
    d->smart.mig = NULL;
    return 0;
}

static int ncq_disk_smart_post_load(void *opaque, int version_id)
{
    NcqDisk *d = opaque;
    NcqSmart *sm = ncq_disk_sm(d);
    int ret = 0;

    if (ncq_smart_state_load(sm, d->smart.mig, d->smart.mig_len) < 0) {
        error_report("ncq-disk: the SMART state in the stream is damaged");
        ret = -EINVAL;
    } else if (sm->run.type && sm->run.captive) {
        timer_mod(d->smart.captive, ncq_disk_smart_now() +
                  ncq_smart_test_left_ns(sm));
    }
    g_free(d->smart.mig);
    d->smart.mig = NULL;
    return ret;
}

static bool ncq_disk_smart_needed(void *opaque)
{
    return true;
}

const VMStateDescription vmstate_ncq_disk_smart = {
    .name = "ncq-disk/smart",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ncq_disk_smart_needed,
    .pre_save = ncq_disk_smart_pre_save,
    .post_save = ncq_disk_smart_post_save,
    .post_load = ncq_disk_smart_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(smart.mig_len, NcqDisk),
        VMSTATE_VBUFFER_ALLOC_UINT32(smart.mig, NcqDisk, 1, NULL,
                                     smart.mig_len),
        VMSTATE_END_OF_LIST()
    },
};
