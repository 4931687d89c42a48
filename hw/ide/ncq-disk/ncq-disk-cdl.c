/*
 * ncq-disk: Command Duration Limits (ACS-5), what the host sees of them
 *
 * The limits themselves are the model's (hw/ide/ncq-model/cdl.c); this
 * file is the drive's ATA face: the IDENTIFY bits and the IDENTIFY DEVICE
 * data log pages that tell a host the feature is there, SET FEATURES to
 * enable it and the sense data reporting it needs, the Command Duration
 * Limits log (18h) read and written, and the sense data a missed limit
 * leaves: in the NCQ Command Error log (10h) for an abort, in the Sense
 * Data for Successful NCQ Commands log (0Fh) for a command completed
 * without error.  docs/cdl.md.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/bswap.h"
#include "migration/vmstate.h"
#include "qemu/timer.h"
#include "../ide-internal.h"
#include "ncq-disk.h"
#include "trace.h"

/* IDENTIFY DEVICE words */
#define ID_SATA_FEATURES        78
#define ID_SATA_NCQ_AUTOSENSE   (1 << 7)
#define ID_MAJOR_VERSION        80
#define ID_MAJOR_ATA8_TO_ACS5   0x1f00      /* bits 8-12 */
#define ID_CMDSET_VALID         86
#define ID_CMDSET_WORDS_119_120 (1 << 15)
#define ID_CMDSET_SUP3          119         /* and 120: enabled */
#define ID_CMDSET_SIGNATURE     (1 << 14)   /* words 119/120 are valid */
#define ID_CMDSET_SENSE_DATA    (1 << 6)

/* SET FEATURES subcommands */
#define SETFEATURES_CDL             0x0d
#define SETFEATURES_SENSE_DATA      0xc3
#define SETFEATURES_SUCCESS_SENSE   0xc4

/* Log 0Fh (its rows and 18h's are in ncq-disk-log.c's table) */
#define LOG_SUCCESS_SENSE           0x0f
/* Log 18h: read descriptors from byte 64, write from 288, 32 bytes each */
#define CDL_LOG_RD                  64
#define CDL_LOG_WR                  288
#define CDL_DESC_BYTES              32
#define CDL_DESC_STAT_A             12      /* statistics selectors */
#define CDL_DESC_STAT_B             13
/* Device Statistics log page 09h */
#define CDL_STATS_PAGE              0x09
#define CDL_STATS_FIRST             16      /* A reads, A writes, B ... */
/* a statistic: supported, valid, supports read then initialize */
#define STAT_FLAGS                  ((1ULL << 63) | (1ULL << 62) | \
                                     (1ULL << 58))

/* Sense keys and codes a missed limit reports (SPC-6) */
#define SENSE_ABORTED_COMMAND       0x0b
#define SENSE_COMPLETED             0x0f
#define ASC_COMMAND_TIMEOUT         0x2e
#define ASC_DATA_UNAVAILABLE        0x55
#define ASCQ_DATA_UNAVAILABLE       0x0a

bool ncq_disk_cdl_realize(NcqDisk *d, Error **errp)
{
    NcqParams *p = d->params;

    switch (d->prop.cdl) {
    case ON_OFF_AUTO_ON:
        if (p->kind == NCQ_KIND_SSD) {
            error_setg(errp, "cdl=on: model %s is an SSD; Command Duration "
                       "Limits are modelled for hard disks only, drop "
                       "cdl=on", p->name);
            return false;
        }
        p->cdl = true;
        break;
    case ON_OFF_AUTO_OFF:
        p->cdl = false;
        break;
    default:
        break;
    }
    d->cdl.on = p->cdl;
    return true;
}

static void ncq_disk_set_word(uint16_t *words, int w, uint16_t bits)
{
    stw_le_p(&words[w], lduw_le_p(&words[w]) | bits);
}

void ncq_disk_cdl_identify(NcqDisk *d, uint16_t *words)
{
    if (!d->cdl.on) {
        return;
    }
    /* libata looks for CDL on ACS-4 drives and later */
    if (lduw_le_p(&words[ID_MAJOR_VERSION]) != 0xffff) {
        ncq_disk_set_word(words, ID_MAJOR_VERSION, ID_MAJOR_ATA8_TO_ACS5);
    }
    ncq_disk_set_word(words, ID_SATA_FEATURES, ID_SATA_NCQ_AUTOSENSE);
    ncq_disk_set_word(words, ID_CMDSET_VALID, ID_CMDSET_WORDS_119_120);
    ncq_disk_set_word(words, ID_CMDSET_SUP3,
                      ID_CMDSET_SIGNATURE | ID_CMDSET_SENSE_DATA);
    ncq_disk_set_word(words, ID_CMDSET_SUP3 + 1, ID_CMDSET_SIGNATURE |
                      (d->cdl.sense_reporting ? ID_CMDSET_SENSE_DATA : 0));
}

/*
 * IDENTIFY DEVICE data built already (the core keeps it): word 120 says
 * whether sense data reporting is enabled.
 */
static void ncq_disk_cdl_identify_update(NcqDisk *d, IDEState *s)
{
    uint16_t *words = (uint16_t *)s->identify_data;
    uint16_t w;

    if (!s->identify_set) {
        return;
    }
    w = lduw_le_p(&words[ID_CMDSET_SUP3 + 1]) & ~ID_CMDSET_SENSE_DATA;
    stw_le_p(&words[ID_CMDSET_SUP3 + 1],
             w | (d->cdl.sense_reporting ? ID_CMDSET_SENSE_DATA : 0));
}

/* SET FEATURES: true if it was ours (the command has then completed). */
bool ncq_disk_cdl_set_features(NcqDisk *d, IDEState *s)
{
    bool on = s->nsector & 1;
    NcqCdl t;
    char err[160];

    /* a host-managed drive reports its zone errors' sense (-zac.c) */
    if (!d->cdl.on &&
        !(ncq_disk_zoned(d) && s->feature == SETFEATURES_SENSE_DATA)) {
        return false;
    }
    switch (s->feature) {
    case SETFEATURES_CDL:
        ncq_model_cdl_get(d->model, &t);
        /*
         * Enabling CDL (from disabled) starts the statistics afresh:
         * Western Digital's suite resets them with a disable and an
         * enable (cdl-tools test 0707, "reset stat. with CDL
         * disable+enable"); the counts stay readable while disabled.
         */
        if (on && !t.enabled) {
            memset(d->cdl.stat, 0, sizeof(d->cdl.stat));
        }
        t.enabled = on;
        if (ncq_model_cdl_set_at(d->model, &t,
                                 qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
                                 err, sizeof(err)) < 0) {
            ide_abort_command(s);
            return true;
        }
        break;
    case SETFEATURES_SENSE_DATA:
        d->cdl.sense_reporting = on;
        ncq_disk_cdl_identify_update(d, s);
        break;
    case SETFEATURES_SUCCESS_SENSE:
        d->cdl.success_sense = on;
        break;
    default:
        return false;
    }
    trace_ncq_disk_cdl_set_feature(d, s->feature, on);
    s->status = READY_STAT | SEEK_STAT;
    return true;
}

/* Byte @k of descriptor @i (0-13: read 1-7, write 1-7) of log 18h */
static int ncq_disk_cdl_desc_at(int i, int k)
{
    return (i < NCQ_CDL_DESCS ? CDL_LOG_RD + i * CDL_DESC_BYTES :
            CDL_LOG_WR + (i - NCQ_CDL_DESCS) * CDL_DESC_BYTES) + k;
}

/*
 * Log 18h written: stored if valid, false (ABRT) if not.  The statistics
 * selectors (bytes 12 and 13 of each descriptor, 0h-4h) are the drive's;
 * the rest is the model's table.
 */
bool ncq_disk_cdl_log_write(NcqDisk *d, uint16_t page, uint16_t count,
                            const uint8_t *buf)
{
    uint8_t copy[NCQ_CDL_LOG_BYTES], sel[sizeof(d->cdl.stat_sel)];
    NcqCdl t;
    char err[160];
    int i, k;

    memcpy(copy, buf, sizeof(copy));
    for (i = 0; i < 2 * NCQ_CDL_DESCS; i++) {
        for (k = 0; k < 2; k++) {
            uint8_t *p = &copy[ncq_disk_cdl_desc_at(i, CDL_DESC_STAT_A + k)];

            sel[2 * i + k] = *p;
            *p = 0;
            if (sel[2 * i + k] > NCQ_DISK_CDL_STATS) {
                trace_ncq_disk_cdl_log_refused(d, "a statistics selector "
                                               "is reserved (5h-FFh)");
                return false;
            }
        }
    }
    ncq_model_cdl_get(d->model, &t);
    if (ncq_cdl_log_decode(copy, &t, err, sizeof(err)) < 0 ||
        ncq_model_cdl_set_at(d->model, &t,
                             qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
                             err, sizeof(err)) < 0) {
        trace_ncq_disk_cdl_log_refused(d, err);
        return false;
    }
    memcpy(d->cdl.stat_sel, sel, sizeof(sel));
    trace_ncq_disk_cdl_log_written(d);
    return true;
}

/* Log 18h read */
void ncq_disk_cdl_log_read(NcqDisk *d, uint16_t page, uint8_t *buf,
                           unsigned how)
{
    NcqCdl t;
    int i, k;

    ncq_model_cdl_get(d->model, &t);
    ncq_cdl_log_encode(&t, buf);
    for (i = 0; i < 2 * NCQ_CDL_DESCS; i++) {
        for (k = 0; k < 2; k++) {
            buf[ncq_disk_cdl_desc_at(i, CDL_DESC_STAT_A + k)] =
                d->cdl.stat_sel[2 * i + k];
        }
    }
}

/*
 * The counts a selector chooses (cdladm's names): 1h commands that met
 * (ran out) their inactive time limit, 2h their active time limit, 3h
 * either, 4h every command with the descriptor.  A limit counts where
 * the drive processed its policy: one with policy 0h (go on) does not
 * (the model's NCQ_CDL_MET_*).  Counted by the descriptor the command
 * came with, with CDL enabled.
 */
void ncq_disk_cdl_count(NcqDisk *d, const NcqCompletion *c)
{
    uint32_t *n;

    if (!d->cdl.on || !c->cdl || c->cdl > NCQ_CDL_DESCS ||
        c->cdl_outcome == NCQ_CDL_NONE) {
        return;
    }
    n = &d->cdl.stat[((c->op == NCQ_OP_WRITE) * NCQ_CDL_DESCS + c->cdl - 1) *
                     NCQ_DISK_CDL_STATS];
    n[0] += !!(c->cdl_met & NCQ_CDL_MET_INACTIVE);
    n[1] += !!(c->cdl_met & NCQ_CDL_MET_ACTIVE);
    n[2] += !!(c->cdl_met & (NCQ_CDL_MET_INACTIVE | NCQ_CDL_MET_ACTIVE));
    n[3]++;
}

/*
 * Device Statistics page 09h (ACS-5; the layout cdladm reads): from byte
 * 16, statistic A of the 7 read descriptors, of the 7 write ones, then
 * statistic B likewise; each the count its selector chooses (a disabled
 * one, selector 0, reads 0).  Read then initialize zeroes the counts.
 */
void ncq_disk_cdl_stats(NcqDisk *d, uint8_t *buf, bool init)
{
    int ab, i;

    stq_le_p(buf, ((uint64_t)CDL_STATS_PAGE << 16) | 0x0001);
    for (ab = 0; ab < 2; ab++) {
        for (i = 0; i < 2 * NCQ_CDL_DESCS; i++) {
            uint8_t sel = d->cdl.stat_sel[2 * i + ab];

            if (sel) {
                stq_le_p(buf + CDL_STATS_FIRST +
                         8 * (ab * 2 * NCQ_CDL_DESCS + i),
                         STAT_FLAGS |
                         d->cdl.stat[i * NCQ_DISK_CDL_STATS + sel - 1]);
            }
        }
    }
    if (init) {
        memset(d->cdl.stat, 0, sizeof(d->cdl.stat));
    }
}

static void ncq_disk_id_qword(uint8_t *buf, int off, uint64_t bits)
{
    stq_le_p(buf + off, ldq_le_p(buf + off) | (1ULL << 63) | bits);
}

/*
 * Sense Data for Successful NCQ Commands, page @page of 2: a header, the
 * tags holding sense data, then 24 bytes per tag (sense key, ASC, ASCQ
 * first) from byte 32.  An entry stays until its tag completes again.
 */
void ncq_disk_cdl_success_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                              unsigned how)
{
    uint32_t from = 512 * page;
    int tag, i;

    if (page == 0) {
        stq_le_p(buf, (1ULL << 63) |
                 ((uint64_t)LOG_SUCCESS_SENSE << 16) | 1);
        stl_le_p(buf + 8, d->cdl.sense_valid);
        trace_ncq_disk_cdl_success_sense_read(d, d->cdl.sense_valid);
    }
    for (tag = 0; tag < NCQ_DISK_MAX_DEPTH; tag++) {
        if (!(d->cdl.sense_valid & (1u << tag))) {
            continue;
        }
        for (i = 0; i < 3; i++) {
            uint32_t at = 32 + 24 * tag + i;

            if (at >= from && at < from + 512) {
                buf[at - from] = d->cdl.sense[3 * tag + i];
            }
        }
    }
}

/* IDENTIFY DEVICE data log page 03h: success sense; CDL and guideline */
void ncq_disk_cdl_id_caps(NcqDisk *d, uint8_t *buf)
{
    if (d->cdl.on) {
        ncq_disk_id_qword(buf, 8, 1ULL << 47);
        ncq_disk_id_qword(buf, 168, 3);
        /* the longest limit, microseconds (cdladm reads it here) */
        ncq_disk_id_qword(buf, 184, NCQ_CDL_MAX_LIMIT_US);
    }
}

/* Page 04h: CDL enabled, success sense enabled */
void ncq_disk_cdl_id_settings(NcqDisk *d, uint8_t *buf)
{
    NcqCdl t;

    if (!d->cdl.on) {
        return;
    }
    ncq_model_cdl_get(d->model, &t);
    ncq_disk_id_qword(buf, 8, (t.enabled ? 1ULL << 21 : 0) |
                      (d->cdl.success_sense ? 1ULL << 18 : 0));
}

/* The sense a missed limit leaves (SPC-6 codes, as libata reads them) */
static bool ncq_disk_cdl_sense(uint8_t outcome, uint8_t *sense)
{
    switch (outcome) {
    case NCQ_CDL_ABORT_INACTIVE:
    case NCQ_CDL_ABORT_ACTIVE:
    case NCQ_CDL_ABORT_ERP:
        sense[0] = SENSE_ABORTED_COMMAND;
        sense[1] = ASC_COMMAND_TIMEOUT;
        /* 01h before processing, 02h during, 03h during error recovery */
        sense[2] = outcome - NCQ_CDL_ABORT_INACTIVE + 1;
        return true;
    case NCQ_CDL_DATA_UNAVAILABLE:
        sense[0] = SENSE_COMPLETED;
        sense[1] = ASC_DATA_UNAVAILABLE;
        sense[2] = ASCQ_DATA_UNAVAILABLE;
        return true;
    }
    return false;
}

/*
 * A non-queued READ/WRITE DMA EXT with a CDL index (FEATURE bits 2:0, as
 * Linux's ata_set_tf_cdl() puts it when NCQ is off) at its deadline: the
 * same policies as over NCQ.  An abort ends it with ERR, ABRT and
 * "sense data available" (status bit 1); "data currently unavailable"
 * completes it (its data moved) with bit 1 alone.  Either way the host
 * reads the sense with REQUEST SENSE DATA EXT, as libata's
 * ata_eh_request_sense() does.
 */
uint8_t ncq_disk_cdl_held(NcqDisk *d, IDEState *s)
{
    uint8_t outcome = d->held.cdl_outcome;
    uint8_t sense[3];

    d->held.cdl_outcome = NCQ_CDL_NONE;
    if (!ncq_disk_cdl_sense(outcome, sense)) {
        return 0;
    }
    trace_ncq_disk_cdl_outcome(d, NCQ_DISK_TAG_NONQUEUED, 0,
                               ncq_cdl_outcome_name(outcome));
    memcpy(d->cdl.nq_sense, sense, 3);
    d->cdl.nq_sense_valid = true;
    if (outcome == NCQ_CDL_DATA_UNAVAILABLE) {
        return SENSE_AVAIL_STAT;
    }
    s->status = READY_STAT | ERR_STAT | SENSE_AVAIL_STAT;
    s->error = ABRT_ERR;
    return SENSE_AVAIL_STAT | ERR_STAT;
}

/*
 * REQUEST SENSE DATA EXT (0Bh, ACS-4 7.37): the sense key in LBA bits
 * 19:16, ASC in 15:8, ASCQ in 7:0, status bit 1 set; none pending: all
 * zero.  Reading it clears it.  The LBA field is the command's normal
 * output whatever the DEVICE register's LBA bit says: libata sends the
 * command with DEVICE A0h (ata_tf_init(), no LBA bit), and
 * ide_set_sector() would turn the sense into a cylinder, head and sector
 * then (the key in the head bits, 0Fh/55h/0Ah read back as 03h/E4h/18h).
 */
bool ncq_disk_cdl_request_sense(NcqDisk *d, IDEState *s)
{
    uint8_t sense[3] = { 0 };

    if (!d->cdl.on && !ncq_disk_zoned(d)) {
        d->count.guest_errors++;
        ide_abort_command(s);
        return true;
    }
    s->lba48 = 1;
    s->status = READY_STAT | SEEK_STAT;
    if (d->cdl.nq_sense_valid) {
        memcpy(sense, d->cdl.nq_sense, sizeof(sense));
        s->status |= SENSE_AVAIL_STAT;
        d->cdl.nq_sense_valid = false;
    }
    s->hcyl = sense[0] & 0xf;           /* LBA 23:16, key in 19:16 */
    s->lcyl = sense[1];                 /* LBA 15:8 */
    s->sector = sense[2];               /* LBA 7:0 */
    s->hob_sector = s->hob_lcyl = s->hob_hcyl = 0;     /* LBA 47:24 */
    return true;
}

/*
 * A queued command's completion with its CDL outcome.  True: the drive
 * aborts it; the caller (ncq-disk-queue.c) ends it with an NCQ error
 * whose sense data, @sense, goes to log 10h.  False: it completes; one
 * completed without error keeps its sense in log 0Fh and says so in the
 * Set Device Bits FIS's status.
 */
bool ncq_disk_cdl_complete(NcqDisk *d, IDENCQCmd *cmd, const NcqCompletion *c,
                           uint8_t sense[3])
{
    uint32_t bit = 1u << c->id;

    d->cdl.sense_valid &= ~bit;
    cmd->sense = false;
    if (!c->cdl_outcome) {
        return false;
    }
    trace_ncq_disk_cdl_outcome(d, c->id, c->cdl,
                               ncq_cdl_outcome_name(c->cdl_outcome));
    if (!ncq_disk_cdl_sense(c->cdl_outcome, sense)) {
        return false;
    }
    if (c->cdl_outcome == NCQ_CDL_DATA_UNAVAILABLE) {
        memcpy(&d->cdl.sense[3 * c->id], sense, 3);
        d->cdl.sense_valid |= bit;
        cmd->sense = true;
        return false;
    }
    return true;
}

static bool ncq_disk_cdl_needed(void *opaque)
{
    NcqDisk *d = opaque;

    /* a host-managed drive's sense reporting state too (-zac.c) */
    return d->cdl.on || ncq_disk_zoned(d);
}

const VMStateDescription vmstate_ncq_disk_cdl = {
    .name = "ncq-disk/cdl",
    .version_id = 2,
    .minimum_version_id = 1,
    .needed = ncq_disk_cdl_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(cdl.sense_reporting, NcqDisk),
        VMSTATE_BOOL(cdl.success_sense, NcqDisk),
        VMSTATE_UINT32(cdl.sense_valid, NcqDisk),
        VMSTATE_BUFFER(cdl.sense, NcqDisk),
        VMSTATE_BUFFER(errlog.sense, NcqDisk),
        VMSTATE_BOOL_V(cdl.nq_sense_valid, NcqDisk, 2),
        VMSTATE_BUFFER_V(cdl.nq_sense, NcqDisk, 2),
        VMSTATE_BUFFER_V(cdl.stat_sel, NcqDisk, 2),
        VMSTATE_UINT32_ARRAY_V(cdl.stat, NcqDisk,
                               2 * NCQ_CDL_DESCS * NCQ_DISK_CDL_STATS, 2),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- QMP (ncq-disk-qmp.c calls these) ---- */

static NcqDiskCdlDescriptorList *ncq_disk_cdl_list(const NcqCdlDesc *t)
{
    NcqDiskCdlDescriptorList *head = NULL, **tail = &head;
    int i;

    for (i = 0; i < NCQ_CDL_DESCS; i++) {
        NcqDiskCdlDescriptor *e = g_new0(NcqDiskCdlDescriptor, 1);

        *e = (NcqDiskCdlDescriptor) {
            .index = i + 1,
            .total_us = t[i].total_us,
            .total_policy = t[i].total_policy,
            .active_us = t[i].active_us,
            .active_policy = t[i].active_policy,
            .inactive_us = t[i].inactive_us,
            .inactive_policy = t[i].inactive_policy,
        };
        QAPI_LIST_APPEND(tail, e);
    }
    return head;
}

NcqDiskCdlInfo *ncq_disk_cdl_query(NcqDisk *d)
{
    NcqDiskCdlInfo *info = g_new0(NcqDiskCdlInfo, 1);
    NcqCdl t;

    ncq_model_cdl_get(d->model, &t);
    info->supported = d->cdl.on;
    info->enabled = t.enabled;
    info->read = ncq_disk_cdl_list(t.rd);
    info->write = ncq_disk_cdl_list(t.wr);
    return info;
}

/* Descriptors given by index into @t; false with @errp if one is bad. */
static bool ncq_disk_cdl_take(NcqDiskCdlDescriptorList *l, NcqCdlDesc *t,
                              const char *dir, Error **errp)
{
    for (; l; l = l->next) {
        NcqDiskCdlDescriptor *e = l->value;

        if (e->index < 1 || e->index > NCQ_CDL_DESCS) {
            error_setg(errp, "%s descriptor index %u: give 1 to %d", dir,
                       e->index, NCQ_CDL_DESCS);
            return false;
        }
        if (e->total_policy > 15 || e->active_policy > 15 ||
            e->inactive_policy > 15) {
            error_setg(errp, "%s descriptor %u: a policy is 0 to 15", dir,
                       e->index);
            return false;
        }
        t[e->index - 1] = (NcqCdlDesc) {
            .total_policy = e->total_policy,
            .active_policy = e->active_policy,
            .inactive_policy = e->inactive_policy,
            .total_us = e->total_us,
            .active_us = e->active_us,
            .inactive_us = e->inactive_us,
        };
    }
    return true;
}

bool ncq_disk_cdl_set(NcqDisk *d, bool has_enabled, bool enabled,
                      NcqDiskCdlDescriptorList *rd,
                      NcqDiskCdlDescriptorList *wr, Error **errp)
{
    NcqCdl t;
    char err[160];

    if (!d->cdl.on) {
        error_setg(errp, "ncq-disk '%s' has no Command Duration Limits; "
                   "give it cdl=on", d->dev.qdev.id ? d->dev.qdev.id : "");
        return false;
    }
    ncq_model_cdl_get(d->model, &t);
    if (has_enabled) {
        t.enabled = enabled;
    }
    if (!ncq_disk_cdl_take(rd, t.rd, "read", errp) ||
        !ncq_disk_cdl_take(wr, t.wr, "write", errp)) {
        return false;
    }
    if (ncq_model_cdl_set_at(d->model, &t,
                             qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL),
                             err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return false;
    }
    return true;
}
