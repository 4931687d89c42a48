/*
 * ncq-disk: General Purpose Logging, as far as NCQ needs it
 *
 * READ LOG EXT answers the log directory (00h), the NCQ Command Error
 * log (10h), which a host reads after an NCQ error to learn the failed
 * tag, and the IDENTIFY DEVICE data log (30h) pages 00h and 08h, where
 * Linux looks for NCQ priority support.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "../ide-internal.h"
#include "hw/ide/ncq-disk.h"
#include "trace.h"

#define LOG_DIRECTORY               0x00
#define LOG_NCQ_ERROR               0x10
#define LOG_IDENTIFY_DEVICE         0x30
#define ID_LOG_SUPPORTED_PAGES      0x00
#define ID_LOG_SATA_SETTINGS        0x08
#define ID_LOG_PAGES                (ID_LOG_SATA_SETTINGS + 1)

/* A log's data structure ends with a checksum: all 512 bytes sum to 0. */
void ncq_disk_log_checksum(uint8_t *buf)
{
    uint8_t sum = 0;
    int i;

    for (i = 0; i < 511; i++) {
        sum += buf[i];
    }
    buf[511] = -sum;
}

/* Every IDENTIFY DEVICE data log page starts with this qword. */
static void ncq_disk_id_page_header(uint8_t *buf, uint8_t page)
{
    stq_le_p(buf, (1ULL << 63) | ((uint64_t)page << 16) | 0x0001);
}

/* Fill @buf with one 512-byte page; false if there is no such page. */
static bool ncq_disk_log_page(NcqDisk *d, uint8_t log, uint16_t page,
                              uint8_t *buf)
{
    NcqDiskErrorLog *e = &d->errlog;
    int n;

    memset(buf, 0, 512);
    switch (log) {
    case LOG_DIRECTORY:
        if (page) {
            return false;
        }
        stw_le_p(buf, 0x0001);                          /* GPL version */
        stw_le_p(buf + 2 * LOG_NCQ_ERROR, 1);
        stw_le_p(buf + 2 * LOG_IDENTIFY_DEVICE, ID_LOG_PAGES);
        ncq_disk_cdl_log_directory(d, buf);
        ncq_disk_smart_gpl_directory(d, buf);
        return true;
    case LOG_NCQ_ERROR:
        if (page) {
            return false;
        }
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
        return true;
    case LOG_IDENTIFY_DEVICE:
        if (page == ID_LOG_SUPPORTED_PAGES) {
            /* the number of pages, then their numbers in ascending order */
            ncq_disk_id_page_header(buf, page);
            n = 0;
            buf[9 + n++] = ID_LOG_SUPPORTED_PAGES;
            n += ncq_disk_cdl_id_pages(d, buf + 9 + n);
            buf[9 + n++] = ID_LOG_SATA_SETTINGS;
            buf[8] = n;
            return true;
        }
        if (page != ID_LOG_SATA_SETTINGS &&
            ncq_disk_cdl_log_page(d, log, page, buf)) {
            ncq_disk_id_page_header(buf, page);
            return true;
        }
        if (page == ID_LOG_SATA_SETTINGS) {
            ncq_disk_id_page_header(buf, page);
            /* Current SATA settings: valid, NCQ priority information */
            if (d->prop.ncq_prio) {
                stq_le_p(buf + 8, (1ULL << 63) | (1 << 11));
            }
            return true;
        }
        return false;
    }
    /*
     * Command Duration Limits' logs (0Fh, 18h; ncq-disk-cdl.c), then the
     * SMART logs GPL shares: 03h, 04h, 07h (ncq-disk-smart.c)
     */
    return ncq_disk_cdl_log_page(d, log, page, buf) ||
           ncq_disk_smart_log_page(d, log, page, buf, true);
}

bool ncq_disk_read_log(NcqDisk *d, IDEState *s)
{
    uint8_t log = s->sector;
    uint16_t page = s->lcyl | (s->hob_lcyl << 8);
    /* READ LOG EXT is a 48-bit command: a 16-bit count, 0 means 65,536 */
    uint32_t count = (s->hob_nsector << 8) | s->nsector;
    uint32_t i;

    if (!count) {
        count = 0x10000;
    }
    trace_ncq_disk_read_log(d, log, page, count);
    if (count > IDE_DMA_BUF_SECTORS) {
        ide_abort_command(s);
        return true;
    }
    for (i = 0; i < count; i++) {
        if (!ncq_disk_log_page(d, log, page + i, s->io_buffer + 512 * i)) {
            ide_abort_command(s);
            return true;
        }
    }
    s->status = READY_STAT | SEEK_STAT;
    ide_transfer_start(s, s->io_buffer, 512 * count, ide_transfer_stop);
    ide_bus_set_irq(s->bus);
    return false;
}
