/*
 * ncq-disk: the drive's logs, one table
 *
 * Every log the drive serves is one row of ncq_disk_logs[] below: its
 * address, its name, which command sets reach it (General Purpose Logging:
 * READ/WRITE LOG EXT and READ/WRITE LOG DMA EXT; SMART: SMART READ/WRITE
 * LOG), how many pages it has on this drive (0: not served, e.g. the CDL
 * logs without cdl=on), and the functions that fill a page and take
 * written data.  Both log directories (00h read through GPL and through
 * SMART) come from the table here; nothing else lists logs (the IDENTIFY
 * DEVICE data log's pages are a table of ncq-disk-identify.c, the file of
 * the data they hold).  The PIO and the DMA forms of the GPL commands
 * share everything but the transfer; SMART READ/WRITE LOG come here from
 * ncq-disk-cmd.c, which ncq_disk_smart_cmd() hands them to.  The
 * functions filling a page live with the feature that owns the data and
 * call no function here.  docs/device.md lists the logs.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "system/dma.h"
#include "../ide-internal.h"
#include "ncq-disk.h"
#include "trace.h"

/* Command codes (ACS-3 7.22, 7.23, 7.58, 7.59) */
#define ATA_CMD_READ_LOG_EXT        0x2f
#define ATA_CMD_WRITE_LOG_EXT       0x3f
#define ATA_CMD_READ_LOG_DMA_EXT    0x47
#define ATA_CMD_WRITE_LOG_DMA_EXT   0x57

/* IDENTIFY DEVICE words (ACS-3 7.12.7) */
#define ID_CMDSET_VALID             86
#define ID_CMDSET_WORDS_119_120     (1 << 15)
#define ID_CMDSET_SUP3              119         /* and 120: enabled */
#define ID_CMDSET_SIGNATURE         (1 << 14)   /* words 119/120 valid */
#define ID_CMDSET_LOG_DMA_EXT       (1 << 3)    /* 47h and 57h */
#define ID_SATA_CAP                 76
#define ID_SATA_CAP_PHY_EVENTS      (1 << 10)
#define LOG_PHY_EVENTS              0x11
/* ATA8-ACS (word 80 bit 8) brought READ/WRITE LOG DMA EXT */
#define ATA_MAJOR_LOG_DMA           8

/* READ LOG EXT FEATURES bit 0 on log 04h: read then initialize (ACS-4) */
#define LOG_FEATURE_INIT            0x01

/* ---- NCQ Command Error log (10h) ---- */

static void ncq_disk_ncq_error_log(NcqDisk *d, uint16_t page, uint8_t *buf,
                                   unsigned how)
{
    NcqDiskErrorLog *e = &d->errlog;

    if (e->valid) {
        buf[0] = (e->nq ? 0x80 : 0) | (e->tag & 0x1f);
        buf[2] = e->status;
        buf[3] = e->error;
        buf[4] = e->lba;
        buf[5] = e->lba >> 8;
        buf[6] = e->lba >> 16;
        buf[7] = 0x40;                              /* device: LBA */
        buf[8] = e->lba >> 24;
        buf[9] = e->lba >> 32;
        buf[10] = e->lba >> 40;
        buf[12] = e->count;
        buf[13] = e->count >> 8;
        /* NCQ autosense: sense key, ASC, ASCQ */
        memcpy(buf + 14, e->sense, sizeof(e->sense));
    }
    ncq_disk_log_checksum(buf);
    /* Reading the log ends the NCQ error condition. */
    e->valid = false;
    d->ncq_halted = false;
}

static void ncq_disk_log_directory(NcqDisk *d, uint16_t page, uint8_t *buf,
                                   unsigned how);

static uint16_t ncq_disk_cdl_pages_2(NcqDisk *d)
{
    return d->cdl.on ? 2 : 0;
}

static uint16_t ncq_disk_cdl_pages_1(NcqDisk *d)
{
    return d->cdl.on ? 1 : 0;
}

/*
 * THE table.  .pages: a fixed count, or .npages() for a count that
 * depends on the drive (0: not served).  .readable: whether a page can be
 * read now (NULL: always; false: ABRT).  .write: NULL for a read-only
 * log; .writable: which pages take data (NULL: every page).  .returns:
 * called as a write command to the log ends, its data stored or the
 * command refused, to set the registers the completion returns (SCT's
 * value or extended status code in Count and LBA Low).  A log with
 * NCQ_LOG_GPL is in the GPL directory and reached by READ/WRITE LOG
 * (DMA) EXT; with NCQ_LOG_SMART, in the SMART directory and reached by
 * SMART READ/WRITE LOG.  Ascending addresses (a test checks).
 */
typedef struct NcqDiskLog {
    uint8_t addr;
    const char *name;
    unsigned where;
    uint16_t pages;
    uint16_t (*npages)(NcqDisk *d);
    NcqDiskLogRead *read;
    NcqDiskLogWrite *write;
    bool (*writable)(NcqDisk *d, uint16_t page);
    bool (*readable)(NcqDisk *d, uint16_t page);
    NcqDiskLogReturns *returns;
} NcqDiskLog;

#define GPL     NCQ_LOG_GPL
#define SMART   NCQ_LOG_SMART

static const NcqDiskLog ncq_disk_logs[] = {
    { 0x00, "Log directory", GPL | SMART, 1, NULL,
      ncq_disk_log_directory },
    { 0x01, "Summary SMART error", SMART, 1, NULL,
      ncq_disk_smart_summary_error_log },
    { 0x02, "Comprehensive SMART error", SMART, NCQ_DISK_ERROR_PAGES, NULL,
      ncq_disk_smart_error_log },
    { 0x03, "Ext. Comprehensive SMART error", GPL,
      NCQ_DISK_EXT_ERROR_PAGES, NULL, ncq_disk_smart_ext_error_log },
    { 0x04, "Device Statistics", GPL | SMART, 0, ncq_disk_stat_pages,
      ncq_disk_smart_stats_log },
    { 0x06, "SMART self-test", SMART, 1, NULL,
      ncq_disk_smart_selftest_log },
    { 0x07, "Extended self-test", GPL, 1, NULL,
      ncq_disk_smart_ext_selftest_log },
    { 0x09, "Selective self-test", SMART, 1, NULL,
      ncq_disk_smart_selective_log, ncq_disk_smart_selective_write },
    { 0x0f, "Sense Data for Successful NCQ Commands", GPL, 0,
      ncq_disk_cdl_pages_2, ncq_disk_cdl_success_log },
    { 0x10, "NCQ Command Error", GPL, 1, NULL, ncq_disk_ncq_error_log },
    { LOG_PHY_EVENTS, "SATA Phy Event Counters", GPL, 1, NULL,
      ncq_disk_smart_phy_events },
    { 0x12, "NCQ Non-Data", GPL, 0, ncq_disk_zac_ncq_log_pages,
      ncq_disk_zac_ncq_nd_log },
    { 0x13, "NCQ Send and Receive", GPL, 0, ncq_disk_zac_ncq_log_pages,
      ncq_disk_zac_ncq_sr_log },
    { 0x18, "Command Duration Limits", GPL, 0, ncq_disk_cdl_pages_1,
      ncq_disk_cdl_log_read, ncq_disk_cdl_log_write },
    { 0x30, "IDENTIFY DEVICE data", GPL | SMART, 0, ncq_disk_id_npages,
      ncq_disk_id_log },
    { 0xe0, "SCT Command/Status", GPL | SMART, 1, NULL,
      ncq_disk_sct_status_log, ncq_disk_sct_command,
      .returns = ncq_disk_sct_returns },
    { 0xe1, "SCT Data Transfer", GPL | SMART, 1, NULL,
      ncq_disk_sct_data_log, .readable = ncq_disk_sct_data_ready,
      .returns = ncq_disk_sct_returns },
};

#undef GPL
#undef SMART

static uint16_t ncq_disk_log_npages(NcqDisk *d, const NcqDiskLog *l)
{
    return l->npages ? l->npages(d) : l->pages;
}

/* The row of log @addr reached through @where, if this drive serves it */
static const NcqDiskLog *ncq_disk_log_find(NcqDisk *d, uint8_t addr,
                                           unsigned where)
{
    int i;

    for (i = 0; i < ARRAY_SIZE(ncq_disk_logs); i++) {
        const NcqDiskLog *l = &ncq_disk_logs[i];

        if (l->addr == addr && (l->where & where) &&
            ncq_disk_log_npages(d, l)) {
            return l;
        }
    }
    return NULL;
}

/* Log 00h: GPL's and SMART's directories, each from the table */
static void ncq_disk_log_directory(NcqDisk *d, uint16_t page, uint8_t *buf,
                                   unsigned how)
{
    unsigned where = how & (NCQ_LOG_GPL | NCQ_LOG_SMART);
    int i;

    for (i = 0; i < ARRAY_SIZE(ncq_disk_logs); i++) {
        const NcqDiskLog *l = &ncq_disk_logs[i];

        if (l->addr && (l->where & where)) {
            stw_le_p(buf + 2 * l->addr, ncq_disk_log_npages(d, l));
        }
    }
    stw_le_p(buf, 0x0001);          /* GPL/SMART logging version */
}

/*
 * The most pages one command moves: what s->io_buffer holds (256).  No
 * log here is that long, so a larger count is beyond the log anyway.
 */
static uint32_t ncq_disk_log_max_pages(void)
{
    return IDE_DMA_BUF_SECTORS;
}

/*
 * Fill s->io_buffer with @count pages of @l from @page; false if the
 * range is beyond the log (ABRT).
 */
static bool ncq_disk_log_fill(NcqDisk *d, IDEState *s, const NcqDiskLog *l,
                              uint16_t page, uint32_t count, unsigned how)
{
    uint32_t i;

    if (!count || count > ncq_disk_log_max_pages() ||
        page + count > ncq_disk_log_npages(d, l)) {
        return false;
    }
    for (i = 0; l->readable && i < count; i++) {
        if (!l->readable(d, page + i)) {
            return false;
        }
    }
    ncq_disk_smart_update(d);
    for (i = 0; i < count; i++) {
        memset(s->io_buffer + 512 * i, 0, 512);
        l->read(d, page + i, s->io_buffer + 512 * i, how);
    }
    return true;
}

/* May @count pages from @page of @l be written? */
static bool ncq_disk_log_may_write(NcqDisk *d, const NcqDiskLog *l,
                                   uint16_t page, uint32_t count)
{
    uint32_t i;

    if (!l->write || !count || count > ncq_disk_log_max_pages() ||
        page + count > ncq_disk_log_npages(d, l)) {
        return false;
    }
    for (i = 0; l->writable && i < count; i++) {
        if (!l->writable(d, page + i)) {
            return false;
        }
    }
    return true;
}

/* ---- the commands ---- */

/* Does this drive have READ/WRITE LOG DMA EXT (ATA8-ACS on)? */
bool ncq_disk_log_dma_supported(NcqDisk *d)
{
    return ncq_model_params(d->model)->ata_major >= ATA_MAJOR_LOG_DMA ||
           d->cdl.on;
}

/*
 * IDENTIFY: the SATA Phy Event Counters log (word 76 bit 10: smartctl -l
 * sataphy looks there, not at the directory); READ/WRITE LOG DMA EXT in
 * words 119/120 bit 3, valid as word 86 bit 15 and bits 15:14 say.
 */
void ncq_disk_log_identify(NcqDisk *d, uint16_t *words)
{
    uint16_t w76 = lduw_le_p(&words[ID_SATA_CAP]);
    int w;

    if (w76 && w76 != 0xffff && ncq_disk_log_find(d, LOG_PHY_EVENTS,
                                                  NCQ_LOG_GPL)) {
        stw_le_p(&words[ID_SATA_CAP], w76 | ID_SATA_CAP_PHY_EVENTS);
    }
    if (!ncq_disk_log_dma_supported(d)) {
        return;
    }
    stw_le_p(&words[ID_CMDSET_VALID],
             lduw_le_p(&words[ID_CMDSET_VALID]) | ID_CMDSET_WORDS_119_120);
    for (w = ID_CMDSET_SUP3; w <= ID_CMDSET_SUP3 + 1; w++) {
        stw_le_p(&words[w], (lduw_le_p(&words[w]) & ~(1 << 15)) |
                 ID_CMDSET_SIGNATURE | ID_CMDSET_LOG_DMA_EXT);
    }
}

static bool ncq_disk_log_refuse(NcqDisk *d, IDEState *s)
{
    d->count.guest_errors++;
    ide_abort_command(s);
    return true;
}

/*
 * Move @bytes of s->io_buffer to (@to_guest) or from guest memory
 * through the HBA's scatter list, as AHCI's buffered DMA does for ATAPI
 * (IDEDMAOps.rw_buf).  False if the list holds fewer bytes: the host
 * gave a buffer too short for the count, the command aborts.  A longer
 * list is fine: the drive moves what the count says (PRDBC tells).
 */
static bool ncq_disk_log_dma(IDEState *s, uint32_t bytes, bool to_guest)
{
    const IDEDMAOps *ops = s->bus->dma ? s->bus->dma->ops : NULL;
    int32_t have;

    if (!ops || !ops->prepare_buf || !ops->rw_buf) {
        return false;
    }
    s->io_buffer_offset = 0;
    have = ops->prepare_buf(s->bus->dma, bytes);
    qemu_sglist_destroy(&s->sg);
    if (have < 0 || (uint32_t)have < bytes) {
        return false;
    }
    s->io_buffer_index = 0;
    s->io_buffer_size = bytes;
    return ops->rw_buf(s->bus->dma, to_guest);
}

/*
 * A write command to @l (NULL: no such log here) ends, @stored or
 * refused: the row sets the registers it returns, then the status.
 * Returns what a command table handler returns (true: completed).
 */
static bool ncq_disk_log_write_end(NcqDisk *d, IDEState *s,
                                   const NcqDiskLog *l, uint32_t count,
                                   bool stored)
{
    if (l && l->returns) {
        l->returns(d, s, count, stored);
    }
    if (!stored) {
        return ncq_disk_log_refuse(d, s);
    }
    s->status = READY_STAT | SEEK_STAT;
    return true;
}

/*
 * Written data has arrived: stored whole by the row, or not at all (then
 * refused); the command's registers and status are set.  True if stored.
 */
static bool ncq_disk_log_store(NcqDisk *d, IDEState *s, unsigned where)
{
    uint8_t addr = s->sector;
    uint16_t page = where == NCQ_LOG_SMART ? 0 :
                    s->lcyl | (s->hob_lcyl << 8);
    uint32_t count = where == NCQ_LOG_SMART ? (uint8_t)s->nsector :
                     (s->hob_nsector << 8) | s->nsector;
    const NcqDiskLog *l = ncq_disk_log_find(d, addr, where);
    bool stored;

    trace_ncq_disk_write_log(d, where == NCQ_LOG_SMART ? "SMART WRITE LOG" :
                             "WRITE LOG (DMA) EXT", addr, page, count);
    stored = l && ncq_disk_log_may_write(d, l, page, count) &&
             l->write(d, page, count, s->io_buffer);
    ncq_disk_log_write_end(d, s, l, count, stored);
    return stored;
}

static void ncq_disk_log_pio_written(IDEState *s, unsigned where)
{
    NcqDisk *d = NCQ_DISK(s->unit ? s->bus->slave : s->bus->master);

    if (ncq_disk_log_store(d, s, where)) {
        ide_transfer_stop(s);
    }
    ide_bus_set_irq(s->bus);
}

static void ncq_disk_log_gpl_written(IDEState *s)
{
    ncq_disk_log_pio_written(s, NCQ_LOG_GPL);
}

static void ncq_disk_log_smart_written(IDEState *s)
{
    ncq_disk_log_pio_written(s, NCQ_LOG_SMART);
}

/*
 * READ LOG (DMA) EXT and WRITE LOG (DMA) EXT: LBA low the log, LBA mid
 * and its HOB the page, a 16-bit count of pages (0: ABRT).  Returns what
 * a command table handler returns (true: completed).
 */
bool ncq_disk_log_cmd(NcqDisk *d, IDEState *s, uint8_t cmd)
{
    uint8_t addr = s->sector;
    uint16_t page = s->lcyl | (s->hob_lcyl << 8);
    uint32_t count = (s->hob_nsector << 8) | s->nsector;
    bool dma = cmd == ATA_CMD_READ_LOG_DMA_EXT ||
               cmd == ATA_CMD_WRITE_LOG_DMA_EXT;
    bool write = cmd == ATA_CMD_WRITE_LOG_EXT ||
                 cmd == ATA_CMD_WRITE_LOG_DMA_EXT;
    const NcqDiskLog *l = ncq_disk_log_find(d, addr, NCQ_LOG_GPL);
    unsigned how = NCQ_LOG_GPL;
    const char *name = write ? (dma ? "WRITE LOG DMA EXT" : "WRITE LOG EXT") :
                       (dma ? "READ LOG DMA EXT" : "READ LOG EXT");

    if (dma && !ncq_disk_log_dma_supported(d)) {
        return ncq_disk_log_refuse(d, s);
    }
    if (s->feature & LOG_FEATURE_INIT) {
        how |= NCQ_LOG_INIT;
    }
    if (write) {
        if (!l || !ncq_disk_log_may_write(d, l, page, count)) {
            trace_ncq_disk_write_log(d, name, addr, page, count);
            return ncq_disk_log_write_end(d, s, l, count, false);
        }
        if (!dma) {
            s->status = READY_STAT | SEEK_STAT;
            ide_transfer_start(s, s->io_buffer, 512 * count,
                               ncq_disk_log_gpl_written);
            return false;
        }
        if (!ncq_disk_log_dma(s, 512 * count, false)) {
            return ncq_disk_log_write_end(d, s, l, count, false);
        }
        ncq_disk_log_store(d, s, NCQ_LOG_GPL);
        return true;
    }
    trace_ncq_disk_read_log(d, name, addr, page, count);
    if (!l || !ncq_disk_log_fill(d, s, l, page, count, how)) {
        return ncq_disk_log_refuse(d, s);
    }
    if (dma) {
        if (!ncq_disk_log_dma(s, 512 * count, true)) {
            return ncq_disk_log_refuse(d, s);
        }
        s->status = READY_STAT | SEEK_STAT;
        return true;
    }
    s->status = READY_STAT | SEEK_STAT;
    ide_transfer_start(s, s->io_buffer, 512 * count, ide_transfer_stop);
    ide_bus_set_irq(s->bus);
    return false;
}

/* SMART READ LOG: log in LBA low, 8-bit count of pages from page 0 */
bool ncq_disk_log_smart_read(NcqDisk *d, IDEState *s)
{
    uint32_t count = (uint8_t)s->nsector;
    const NcqDiskLog *l = ncq_disk_log_find(d, s->sector, NCQ_LOG_SMART);

    trace_ncq_disk_read_log(d, "SMART READ LOG", s->sector, 0, count);
    if (!l || !ncq_disk_log_fill(d, s, l, 0, count, NCQ_LOG_SMART)) {
        return ncq_disk_log_refuse(d, s);
    }
    s->status = READY_STAT | SEEK_STAT;
    ide_transfer_start(s, s->io_buffer, 512 * count, ide_transfer_stop);
    ide_bus_set_irq(s->bus);
    return false;
}

/* SMART WRITE LOG: the data, then the row's write function */
bool ncq_disk_log_smart_write(NcqDisk *d, IDEState *s)
{
    uint32_t count = (uint8_t)s->nsector;
    const NcqDiskLog *l = ncq_disk_log_find(d, s->sector, NCQ_LOG_SMART);

    if (!l || !ncq_disk_log_may_write(d, l, 0, count)) {
        trace_ncq_disk_write_log(d, "SMART WRITE LOG", s->sector, 0, count);
        return ncq_disk_log_write_end(d, s, l, count, false);
    }
    s->status = READY_STAT | SEEK_STAT;
    ide_transfer_start(s, s->io_buffer, 512 * count,
                       ncq_disk_log_smart_written);
    return false;
}
