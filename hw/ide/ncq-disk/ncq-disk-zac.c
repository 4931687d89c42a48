/*
 * ncq-disk: host-managed zones over ATA (ZAC), what the host sees of them
 *
 * The zones themselves are the model's (hw/ide/ncq-model/zone.c): their
 * conditions, write pointers, the open-zone limit and every check of a
 * read, write or zone action.  This file is the drive's ZAC face: the
 * device signature (LBA mid/high CDh/ABh, which Linux's
 * ata_dev_classify() reads as ATA_DEV_ZAC), the IDENTIFY words a host
 * needs to read the sense data of a zone error, the IDENTIFY DEVICE data
 * log's Zoned Device Information page (09h), ZAC MANAGEMENT IN (4Ah,
 * REPORT ZONES EXT) and ZAC MANAGEMENT OUT (9Fh: CLOSE, FINISH, OPEN,
 * RESET WRITE POINTER), non-queued, and the ATA error and sense data of a
 * command the zones refuse.  docs/smr.md.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/bswap.h"
#include "qemu/timer.h"
#include "system/dma.h"
#include "../ide-internal.h"
#include "ncq-disk.h"
#include "trace.h"

/* ACS-4 table 206: the signature of a host-managed zoned device */
#define ZAC_SIG_LBA_MID         0xcd
#define ZAC_SIG_LBA_HIGH        0xab

/* Command codes (ZAC-2 / ACS-4) */
#define ATA_CMD_ZAC_MGMT_IN     0x4a
#define ATA_CMD_ZAC_MGMT_OUT    0x9f
/* ZAC MANAGEMENT IN's action (FEATURE 7:0): REPORT ZONES EXT */
#define ZAC_IN_REPORT_ZONES     0x00
/* ZAC MANAGEMENT OUT's ALL bit: FEATURE 15:8 bit 0 */
#define ZAC_OUT_ALL             0x01

/* IDENTIFY DEVICE words (ACS-4 7.12.7) */
#define ID_SATA_FEATURES        78
#define ID_SATA_NCQ_AUTOSENSE   (1 << 7)
#define ID_CMDSET_VALID         86
#define ID_CMDSET_WORDS_119_120 (1 << 15)
#define ID_CMDSET_SUP3          119         /* and 120: enabled */
#define ID_CMDSET_SIGNATURE     (1 << 14)   /* words 119/120 are valid */
#define ID_CMDSET_SENSE_DATA    (1 << 6)

/* Status bit 1: sense data available (ACS-4) */
#define SENSE_AVAIL_STAT        0x02

/* IDENTIFY DEVICE data log page 09h (ACS-4 9.11.10) */
#define ID_LOG_ZONED            0x09
#define ID_QWORD_VALID          (1ULL << 63)
/*
 * Its version qword (byte 48): ZAC MINOR VERSION in bits 15:0.  05CFh is
 * ZAC revision 05, a code the clients that decode the field know:
 * Seagate's openSeaChest (opensea-transport's ata_helper.h,
 * eZACMinorVersionNumber, which also lists ZAC revisions 01 and 04 and
 * ZAC-2 revisions 12, 15 and 1b) and a Microsoft storage test tool's SMR
 * checks (revisions 01, 04 and 05).  0000h and FFFFh mean "not
 * reported".  libzbc reads qwords 24 to 40 of the page, not this one;
 * sg_sat_read_gplog prints the page in hex.
 */
#define ID_ZAC_MINOR_ZAC_R05    0x05cf

/* The most REPORT ZONES pages one command returns (its 16-bit count) */
#define ZAC_REPORT_MAX_PAGES    65536

/*
 * The queued forms (ACS-4 13.6.3, ZAC-2; as Linux's
 * ata_scsi_zbc_in_xlat()/ata_scsi_zbc_out_xlat() build them): NCQ
 * NON-DATA with subcommand 07h in FEATURE 3:0 and the action in
 * AUXILIARY 7:0, the ALL bit in AUXILIARY bit 8; RECEIVE FPDMA QUEUED
 * with subcommand 02h in COUNT 12:8, the page count in FEATURE 15:0,
 * the action (00h REPORT ZONES) in AUXILIARY 7:0 and the reporting
 * options in AUXILIARY 15:8.
 */
#define NCQ_ND_SUBCMD(feature)  ((feature) & 0x0f)
#define NCQ_ND_ZAC_MGMT_OUT     0x07
#define RECV_SUBCMD(count)      (((count) >> 8) & 0x1f)
#define RECV_ZAC_MGMT_IN        0x02

/*
 * NCQ Non-Data log (12h) and NCQ Send and Receive log (13h), one page
 * each (ACS-4 9.13, 9.14; the offsets Linux reads them at,
 * include/linux/ata.h): log 12h byte 28 bit 0, ZAC MANAGEMENT OUT
 * through NCQ NON-DATA; log 13h byte 16 bit 1, ZAC MANAGEMENT IN
 * through RECEIVE FPDMA QUEUED.  IDENTIFY word 77 bit 5 (NCQ NON-DATA)
 * and bit 6 (SEND and RECEIVE FPDMA QUEUED) say they are there.
 */
#define LOG_NCQ_ND_ZAC_OFFSET   28
#define LOG_NCQ_ND_ZAC_OUT      (1 << 0)
#define LOG_NCQ_SR_ZAC_OFFSET   16
#define LOG_NCQ_SR_ZAC_IN       (1 << 1)
#define ID_SATA_CAP2            77
#define ID_SATA_NCQ_NON_DATA    (1 << 5)
#define ID_SATA_NCQ_SEND_RECV   (1 << 6)

bool ncq_disk_zoned(NcqDisk *d)
{
    return d->params && d->params->zone_sectors;
}

/*
 * A zoned model needs the model to see every read and write (timing=on)
 * and an image of its capacity exactly: the zones cover the capacity,
 * and IDENTIFY's capacity is the image's.
 */
bool ncq_disk_zac_check(NcqDisk *d, int64_t image_sectors, Error **errp)
{
    const NcqParams *p = d->params;

    if (!ncq_disk_zoned(d)) {
        return true;
    }
    if (!d->prop.timing) {
        error_setg(errp, "model '%s' is host-managed (zoned): its zones "
                   "check every write through the model, which timing=off "
                   "bypasses; drop timing=off", p->name);
        return false;
    }
    if (image_sectors != (int64_t)p->capacity) {
        error_setg(errp, "image has %" PRId64 " sectors, but host-managed "
                   "model %s's %" PRIu64 " zones of %" PRIu64 " sectors "
                   "need exactly %" PRIu64 "; make the image that size "
                   "(qemu-img create -f qcow2 FILE %" PRIu64 ")",
                   image_sectors, p->name, p->capacity / p->zone_sectors,
                   p->zone_sectors, p->capacity,
                   (uint64_t)(p->capacity * BDRV_SECTOR_SIZE));
        return false;
    }
    return true;
}

void ncq_disk_zac_signature(IDEDevice *dev, uint8_t *lba_mid,
                            uint8_t *lba_high)
{
    if (ncq_disk_zoned(NCQ_DISK(dev))) {
        *lba_mid = ZAC_SIG_LBA_MID;
        *lba_high = ZAC_SIG_LBA_HIGH;
    }
}

static void ncq_disk_zac_set_word(uint16_t *words, int w, uint16_t bits)
{
    stw_le_p(&words[w], lduw_le_p(&words[w]) | bits);
}

/*
 * IDENTIFY: the sense data reporting feature set (words 119/120 bit 6;
 * Linux enables it with SET FEATURES C3h and reads a failed command's
 * sense with REQUEST SENSE DATA EXT) and NCQ autosense (word 78 bit 7:
 * the sense in log 10h), word 77 bits 5 and 6 (NCQ NON-DATA, SEND/RECEIVE
 * FPDMA QUEUED: the queued ZAC forms, listed in logs 12h and 13h).  Word
 * 69 bits 1:0 (zoned capabilities) stay 00b:
 * a host-managed device says what it is by its signature (ACS-4).
 */
void ncq_disk_zac_identify(NcqDisk *d, uint16_t *words)
{
    if (!ncq_disk_zoned(d)) {
        return;
    }
    ncq_disk_zac_set_word(words, ID_SATA_FEATURES, ID_SATA_NCQ_AUTOSENSE);
    ncq_disk_zac_set_word(words, ID_SATA_CAP2, ID_SATA_NCQ_NON_DATA |
                          ID_SATA_NCQ_SEND_RECV);
    ncq_disk_zac_set_word(words, ID_CMDSET_VALID, ID_CMDSET_WORDS_119_120);
    ncq_disk_zac_set_word(words, ID_CMDSET_SUP3,
                          ID_CMDSET_SIGNATURE | ID_CMDSET_SENSE_DATA);
    ncq_disk_zac_set_word(words, ID_CMDSET_SUP3 + 1, ID_CMDSET_SIGNATURE |
                          (d->cdl.sense_reporting ? ID_CMDSET_SENSE_DATA :
                           0));
}

/*
 * IDENTIFY DEVICE data log page 09h, Zoned Device Information (ACS-4
 * 9.11.10; Linux's ata_dev_config_zac() reads qwords 8, 24, 32, 40):
 * zoned device capabilities (bit 0: URSWRZ), zoned settings, optimal
 * number of open and of non-sequentially written sequential write
 * preferred zones, maximum number of open sequential write required
 * zones (the model's limit; all ones: none), the ZAC minor version,
 * each valid by bit 63.
 */
void ncq_disk_zac_id_page(NcqDisk *d, IDEState *s, uint8_t *buf)
{
    const NcqParams *p = ncq_model_params(d->model);

    stq_le_p(buf, ID_QWORD_VALID | ((uint64_t)ID_LOG_ZONED << 16) | 0x0001);
    stq_le_p(buf + 8, ID_QWORD_VALID | (p->zone_urswrz ? 1 : 0));
    stq_le_p(buf + 16, ID_QWORD_VALID);
    stq_le_p(buf + 24, ID_QWORD_VALID | p->zone_opt_open);
    stq_le_p(buf + 32, ID_QWORD_VALID | p->zone_opt_nonseq);
    stq_le_p(buf + 40, ID_QWORD_VALID |
             (p->zone_max_open ? p->zone_max_open : 0xffffffffu));
    stq_le_p(buf + 48, ID_QWORD_VALID | ID_ZAC_MINOR_ZAC_R05);
}

/*
 * The sense of a command the zones refused (an NCQ_ERR_ZONE_* code, or
 * LBA OUT OF RANGE); false for any other code.
 */
bool ncq_disk_zac_sense(int err, uint8_t *sense)
{
    NcqSense sn;

    if (ncq_zone_sense(err, &sn) < 0) {
        return false;
    }
    sense[0] = sn.key;
    sense[1] = sn.asc;
    sense[2] = sn.ascq;
    return true;
}

/*
 * A non-queued command the zones refused (@err): ABRT with "sense data
 * available" (status bit 1), the sense kept for REQUEST SENSE DATA EXT,
 * as libata's ata_eh_request_sense() reads it.  False if @err is not a
 * zone error (the caller handles it).  Without sense data reporting
 * enabled (SET FEATURES C3h) the host gets the ABRT alone.
 */
bool ncq_disk_zac_fail(NcqDisk *d, IDEState *s, int err)
{
    uint8_t sense[3];

    if (!ncq_disk_zac_sense(err, sense)) {
        return false;
    }
    trace_ncq_disk_zac_error(d, err, sense[0], sense[1], sense[2]);
    d->count.guest_errors++;
    ide_abort_command(s);
    if (d->cdl.sense_reporting) {
        /* ACS-4: only with the sense data reporting feature set enabled */
        memcpy(d->cdl.nq_sense, sense, 3);
        d->cdl.nq_sense_valid = true;
        s->status |= SENSE_AVAIL_STAT;
    }
    return true;
}

/*
 * The same for a queued command: its sense goes to log 10h (NCQ
 * autosense), with status bit 1 there, as libata's
 * ata_eh_analyze_ncq_error() reads it for a ZAC device.
 */
void ncq_disk_zac_ncq_sense(NcqDisk *d, int err)
{
    uint8_t sense[3];

    if (d->cdl.sense_reporting && ncq_disk_zac_sense(err, sense)) {
        trace_ncq_disk_zac_error(d, err, sense[0], sense[1], sense[2]);
        memcpy(d->errlog.sense, sense, 3);
        d->errlog.status |= SENSE_AVAIL_STAT;
    }
}

/* The zone ID (LBA) of a ZAC command: always 48-bit */
static uint64_t ncq_disk_zac_lba(IDEState *s)
{
    uint8_t was_lba48 = s->lba48;
    uint64_t lba;

    s->lba48 = 1;
    lba = ide_get_sector(s);
    s->lba48 = was_lba48;
    return lba;
}

/*
 * The model's view of a ZAC command, for its timing and (OUT) its
 * checks: NCQ_OP_OTHER with the zone action; REPORT ZONES changes
 * nothing.  False: not a command the zones take (ABRT).
 */
bool ncq_disk_zac_decode(NcqDisk *d, IDEState *s, uint8_t cmd, NcqCmd *mc)
{
    *mc = (NcqCmd) {
        .op = NCQ_OP_OTHER,
        .id = NCQ_ID_NONQUEUED,
        .lba = ncq_disk_zac_lba(s),
    };
    if (!ncq_disk_zoned(d)) {
        return false;
    }
    if (cmd == ATA_CMD_ZAC_MGMT_IN) {
        mc->zone_action = NCQ_ZONE_REPORT;
        return s->feature == ZAC_IN_REPORT_ZONES;
    }
    switch (s->feature) {
    case NCQ_ZONE_CLOSE:
    case NCQ_ZONE_FINISH:
    case NCQ_ZONE_OPEN:
    case NCQ_ZONE_RESET:
        mc->zone_action = s->feature;
        mc->zone_all = s->hob_feature & ZAC_OUT_ALL;
        return true;
    default:
        return false;
    }
}

/*
 * REPORT ZONES EXT (ZAC MANAGEMENT IN 4Ah/00h, DMA): FEATURE 15:8 the
 * reporting options (bits 5:0) and the partial bit (7), LBA the zone
 * locator, a 16-bit count of 512-byte pages (0: 65536).  The report is
 * built whole and moved through the HBA's scatter list in pieces of the
 * IDE buffer.
 */
static bool ncq_disk_zac_report(NcqDisk *d, IDEState *s)
{
    const IDEDMAOps *ops = s->bus->dma ? s->bus->dma->ops : NULL;
    uint32_t count = (s->hob_nsector << 8) | s->nsector;
    uint64_t lba = ncq_disk_zac_lba(s);
    uint32_t bytes, off, chunk;
    int32_t have;
    uint8_t *buf;
    int rc;

    count = count ? count : ZAC_REPORT_MAX_PAGES;
    bytes = count * 512;
    buf = g_malloc(bytes);
    rc = ncq_model_report_zones(d->model, lba, s->hob_feature, buf, bytes);
    trace_ncq_disk_zac_report(d, lba, s->hob_feature, count, rc);
    if (rc < 0) {
        g_free(buf);
        return ncq_disk_zac_fail(d, s, rc);
    }
    if (!ops || !ops->prepare_buf || !ops->rw_buf) {
        g_free(buf);
        ide_abort_command(s);
        return true;
    }
    s->io_buffer_offset = 0;
    have = ops->prepare_buf(s->bus->dma, bytes);
    qemu_sglist_destroy(&s->sg);
    if (have < 0 || (uint32_t)have < bytes) {
        /* the host's buffer is shorter than the count says */
        g_free(buf);
        d->count.guest_errors++;
        ide_abort_command(s);
        return true;
    }
    s->io_buffer_offset = 0;
    for (off = 0; off < bytes; off += chunk) {
        chunk = MIN(bytes - off, IDE_DMA_BUF_SECTORS * 512);
        memcpy(s->io_buffer, buf + off, chunk);
        s->io_buffer_index = 0;
        s->io_buffer_size = chunk;
        if (!ops->rw_buf(s->bus->dma, true)) {
            g_free(buf);
            ide_abort_command(s);
            return true;
        }
    }
    g_free(buf);
    s->status = READY_STAT | SEEK_STAT;
    return true;
}

/*
 * ZAC MANAGEMENT IN or OUT, its turn: OUT's action is applied already
 * (when the model accepted it, timed, or here, untimed: @applied false),
 * IN's report is made now.  Returns what a command table handler
 * returns (true: completed).
 */
bool ncq_disk_zac_run(NcqDisk *d, IDEState *s, uint8_t cmd, bool applied)
{
    NcqCmd mc;
    int rc;

    if (!ncq_disk_zac_decode(d, s, cmd, &mc)) {
        d->count.guest_errors++;
        ide_abort_command(s);
        return true;
    }
    if (cmd == ATA_CMD_ZAC_MGMT_IN) {
        return ncq_disk_zac_report(d, s);
    }
    if (!applied) {
        rc = ncq_model_zone_action(d->model, mc.zone_action, mc.lba,
                                   mc.zone_all);
        trace_ncq_disk_zac_action(d, mc.zone_action, mc.lba, mc.zone_all,
                                  rc);
        if (rc < 0 && ncq_disk_zac_fail(d, s, rc)) {
            return true;
        }
        if (rc < 0) {
            ide_abort_command(s);
            return true;
        }
    }
    ncq_disk_zstate_action(d, mc.zone_action);
    s->status = READY_STAT | SEEK_STAT;
    return true;
}

/* Logs 12h and 13h: served by a host-managed drive only */
uint16_t ncq_disk_zac_ncq_log_pages(NcqDisk *d)
{
    return ncq_disk_zoned(d) ? 1 : 0;
}

void ncq_disk_zac_ncq_nd_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                             unsigned how)
{
    buf[LOG_NCQ_ND_ZAC_OFFSET] = LOG_NCQ_ND_ZAC_OUT;
}

void ncq_disk_zac_ncq_sr_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                             unsigned how)
{
    buf[LOG_NCQ_SR_ZAC_OFFSET] = LOG_NCQ_SR_ZAC_IN;
}

/*
 * A queued command other than READ/WRITE FPDMA QUEUED: the model's view
 * of it (@mc) if it is a queued ZAC command this drive takes.  Returns
 * 0; NCQ_ERR_INVAL for a command or subcommand it does not implement
 * (an NCQ error with ABRT); or the zone error of a REPORT ZONES the
 * model refuses (a reserved reporting option, a locator beyond the
 * capacity: ABRT with its sense in log 10h).
 */
int ncq_disk_zac_ncq_decode(NcqDisk *d, const IDENCQCmd *cmd,
                            NcqDiskKind kind, NcqCmd *mc)
{
    uint8_t action = cmd->aux & 0xff;
    uint8_t hdr[NCQ_ZONE_DESC_BYTES];

    *mc = (NcqCmd) {
        .op = NCQ_OP_OTHER,
        .id = cmd->tag,
        .lba = cmd->lba,
        .queued = true,
        .prio = cmd->prio,
    };
    if (!ncq_disk_zoned(d)) {
        return NCQ_ERR_INVAL;
    }
    if (kind == NCQ_DISK_NON_DATA &&
        NCQ_ND_SUBCMD(cmd->feature) == NCQ_ND_ZAC_MGMT_OUT) {
        switch (action) {
        case NCQ_ZONE_CLOSE:
        case NCQ_ZONE_FINISH:
        case NCQ_ZONE_OPEN:
        case NCQ_ZONE_RESET:
            mc->zone_action = action;
            mc->zone_all = (cmd->aux >> 8) & ZAC_OUT_ALL;
            return 0;
        default:
            return NCQ_ERR_INVAL;
        }
    }
    if (kind == NCQ_DISK_RECEIVE &&
        RECV_SUBCMD(cmd->count) == RECV_ZAC_MGMT_IN &&
        action == ZAC_IN_REPORT_ZONES) {
        mc->zone_action = NCQ_ZONE_REPORT;
        /* its options and locator, checked now; the data at its deadline */
        return ncq_model_report_zones(d->model, cmd->lba,
                                      (cmd->aux >> 8) & 0xff, hdr,
                                      sizeof(hdr));
    }
    return NCQ_ERR_INVAL;
}

/*
 * A queued ZAC command's deadline: REPORT ZONES's data, made now, to
 * the command's scatter list (its page count; the list is at least that
 * long, AHCI checked).  A zone action was applied when it was accepted;
 * a RESET or FINISH goes to the zone-state file now.
 */
void ncq_disk_zac_ncq_complete(NcqDisk *d, IDENCQCmd *cmd, NcqDiskKind kind)
{
    uint32_t bytes = cmd->sector_count * BDRV_SECTOR_SIZE;
    g_autofree uint8_t *buf = NULL;
    int rc;

    if (kind == NCQ_DISK_NON_DATA) {
        ncq_disk_zstate_action(d, cmd->aux & 0xff);
        return;
    }
    if (kind != NCQ_DISK_RECEIVE) {
        return;
    }
    buf = g_malloc(bytes);
    rc = ncq_model_report_zones(d->model, cmd->lba, (cmd->aux >> 8) & 0xff,
                                buf, bytes);
    trace_ncq_disk_zac_report(d, cmd->lba, (cmd->aux >> 8) & 0xff,
                              cmd->sector_count, rc);
    if (rc == 0) {
        /* dma_buf_read: from the buffer to guest memory */
        dma_buf_read(buf, bytes, NULL, cmd->sg, MEMTXATTRS_UNSPECIFIED);
    }
}
