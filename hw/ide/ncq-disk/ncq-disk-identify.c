/*
 * ncq-disk: IDENTIFY DEVICE data as the modelled drive gives it, the same
 * data as the IDENTIFY DEVICE data log (30h, a row of ncq-disk-log.c's
 * table), and the SATA generation its link negotiates.
 *
 * QEMU's core fills in the generic words (ide_identify); this file puts
 * the model's in their place
 * (docs/device.md#identify-device-and-the-sata-link), then ncq-disk.c
 * has every other part add its own.  The integrity word (255)
 * is computed last, over every other word, and again each time IDENTIFY
 * is served: SET FEATURES and a resize change words of the data the core
 * keeps.  This file calls no part that serves a log: the log table calls
 * it for page 30h.
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bitops.h"
#include "qemu/bswap.h"
#include "hw/ide/ide-dev.h"
#include "../ide-internal.h"
#include "ncq-disk.h"

/* IDENTIFY DEVICE words (ACS-3 7.12.7) */
#define ID_BUFFER_SIZE          21      /* retired; hdparm's "buffer size" */
#define ID_QUEUE_DEPTH          75
#define ID_SATA_CAP             76
#define ID_SATA_CAP_GENS        (7 << 1)    /* Gen1..Gen3 supported */
#define ID_SATA_CAP_NCQ         (1 << 8)
#define ID_SATA_CAP_NCQ_PRIO    (1 << 12)
#define ID_SATA_CAP2            77      /* bits 3:1: current speed */
#define ID_MAJOR_VERSION        80
#define ID_MINOR_VERSION        81
#define ID_CMDSET_EXT           84      /* and 87: enabled */
#define ID_SWDMA_MODES          62      /* single-word DMA: obsolete */
#define ID_UDMA_MODES           88      /* supported 7:0, selected 15:8 */
#define ID_UDMA_6               (1 << 6)
#define ID_CMDSET_EXT_GPL       (1 << 5)
#define ID_HW_RESET             93      /* PATA reset result; 0 on SATA */
#define ID_INTEGRITY            255
#define ID_INTEGRITY_SIGNATURE  0xa5

#define ID_OLDEST_MAJOR         4       /* ATA/ATAPI-4: word 80's bit 4 */

static const NcqParams *ncq_disk_identify_params(NcqDisk *d)
{
    return d->model ? ncq_model_params(d->model) : NULL;
}

/* Word 80: every standard from ATA/ATAPI-4 up to the drive's own. */
static uint16_t ncq_disk_major_version(uint32_t ata_major)
{
    return MAKE_64BIT_MASK(ID_OLDEST_MAJOR,
                           ata_major - ID_OLDEST_MAJOR + 1);
}

/*
 * The link: every generation up to the drive's, and the one it runs at
 * (the HBA never offers less: hw/ide/ahci.c's CAP.ISS is Gen3).
 */
static void ncq_disk_identify_link(const NcqParams *p, uint16_t *words)
{
    uint16_t cap = lduw_le_p(&words[ID_SATA_CAP]) & ~ID_SATA_CAP_GENS;
    uint16_t gens = MAKE_64BIT_MASK(1, p->sata_gen);

    stw_le_p(&words[ID_SATA_CAP], cap | gens);
    stw_le_p(&words[ID_SATA_CAP2],
             (lduw_le_p(&words[ID_SATA_CAP2]) & ~(7 << 1)) |
             (p->sata_gen << 1));
}

/*
 * Every SATA drive claims Ultra DMA modes 0-6 (a 7200.10 says UDMA/133)
 * and no single-word DMA (obsolete since ATA-3); the modes have no effect
 * on a serial link.  QEMU's generic words stop at UDMA mode 5 and offer
 * single-word DMA, and its SET FEATURES (set transfer mode) rewrites both
 * words, so this is applied again each time IDENTIFY is served.
 */
static void ncq_disk_identify_dma_modes(uint16_t *words)
{
    if (lduw_le_p(&words[ID_SATA_CAP]) & ID_SATA_CAP_NCQ) {
        stw_le_p(&words[ID_SWDMA_MODES], 0);
        stw_le_p(&words[ID_UDMA_MODES],
                 lduw_le_p(&words[ID_UDMA_MODES]) | ID_UDMA_6);
    }
}

/*
 * The drive's own words; NCQ ones only where AHCI sets up queues.  True
 * if it does (word 76 says NCQ).
 */
bool ncq_disk_identify_model(NcqDisk *d, uint16_t *words)
{
    const NcqParams *p = ncq_disk_identify_params(d);
    uint16_t cap = lduw_le_p(&words[ID_SATA_CAP]);

    if (p) {
        stw_le_p(&words[ID_BUFFER_SIZE], p->buffer_sectors);
        stw_le_p(&words[ID_MAJOR_VERSION],
                 ncq_disk_major_version(p->ata_major));
        stw_le_p(&words[ID_MINOR_VERSION], p->ata_minor);
    }

    /* General Purpose Logging: READ LOG EXT (ncq-disk-log.c) */
    stw_le_p(&words[ID_CMDSET_EXT],
             lduw_le_p(&words[ID_CMDSET_EXT]) | ID_CMDSET_EXT_GPL);
    stw_le_p(&words[ID_CMDSET_EXT + 3],
             lduw_le_p(&words[ID_CMDSET_EXT + 3]) | ID_CMDSET_EXT_GPL);

    /* Only AHCI sets up queues; legacy IDE buses get a non-NCQ disk. */
    if (cap & ID_SATA_CAP_NCQ) {
        /*
         * A native SATA drive: with word 93 set, Linux takes the disk for
         * a PATA drive behind a bridge (ata_dev_knobble) and limits it to
         * UDMA/100 and 128 KiB commands.
         */
        stw_le_p(&words[ID_HW_RESET], 0);
        stw_le_p(&words[ID_QUEUE_DEPTH], d->prop.queue_depth - 1);
        if (d->prop.ncq_prio) {
            stw_le_p(&words[ID_SATA_CAP], cap | ID_SATA_CAP_NCQ_PRIO);
        }
        if (p) {
            ncq_disk_identify_link(p, words);
        }
        ncq_disk_identify_dma_modes(words);
    }
    return cap & ID_SATA_CAP_NCQ;
}

/*
 * Word 255: the signature, and a checksum that makes the 512 bytes sum
 * to zero (ACS-3 7.12.7.91).
 */
void ncq_disk_identify_checksum(uint16_t *words)
{
    uint8_t sum = ID_INTEGRITY_SIGNATURE;
    int i;

    for (i = 0; i < ID_INTEGRITY; i++) {
        uint16_t w = lduw_le_p(&words[i]);

        sum += (w & 0xff) + (w >> 8);
    }
    stw_le_p(&words[ID_INTEGRITY],
             ((uint8_t)-sum << 8) | ID_INTEGRITY_SIGNATURE);
}

void ncq_disk_identify_refresh(IDEState *s)
{
    if (s->identify_set) {
        ncq_disk_identify_dma_modes((uint16_t *)s->identify_data);
        /* SET FEATURES (write cache) rewrites word 85 whole */
        ncq_disk_pm_identify((uint16_t *)s->identify_data);
        ncq_disk_identify_checksum((uint16_t *)s->identify_data);
    }
}

uint8_t ncq_disk_sata_gen(IDEDevice *dev)
{
    const NcqParams *p = ncq_disk_identify_params(NCQ_DISK(dev));

    return p ? p->sata_gen : 1;
}

/*
 * ---- the IDENTIFY DEVICE data log (30h), a row of ncq-disk-log.c's
 * table: IDENTIFY's words again, in pages of qwords ----
 */

/* The IDENTIFY DEVICE data log (30h): its pages (ACS-4 9.11) */
#define ID_LOG_LIST                 0x00
#define ID_LOG_COPY                 0x01
#define ID_LOG_CAPACITY             0x02
#define ID_LOG_CAPABILITIES         0x03
#define ID_LOG_SETTINGS             0x04
#define ID_LOG_STRINGS              0x05
#define ID_LOG_SECURITY             0x06
#define ID_LOG_SATA                 0x08
#define ID_LOG_ZONED                0x09        /* host-managed models */

/* A qword of the IDENTIFY DEVICE data log: bit 63 says it is valid */
#define ID_QWORD_VALID              (1ULL << 63)

/* Every IDENTIFY DEVICE data log page starts with this qword. */
static void ncq_disk_id_page_header(uint8_t *buf, uint8_t page)
{
    stq_le_p(buf, ID_QWORD_VALID | ((uint64_t)page << 16) | 0x0001);
}

static uint16_t ncq_disk_id_word(IDEState *s, int w)
{
    return s->identify_set ? lduw_le_p(s->identify_data + 2 * w) : 0;
}

/* Page 01h: a copy of IDENTIFY DEVICE data (cdladm reads word 80 here) */
static void ncq_disk_id_copy(NcqDisk *d, IDEState *s, uint8_t *buf)
{
    if (s->identify_set) {
        ncq_disk_identify_refresh(s);
        memcpy(buf, s->identify_data, 512);
    }
}

/* Page 02h: capacity; sector sizes as words 106, 117-118 and 209 say */
static void ncq_disk_id_capacity(NcqDisk *d, IDEState *s, uint8_t *buf)
{
    uint16_t w106 = ncq_disk_id_word(s, 106);
    uint64_t phys = 0;

    ncq_disk_id_page_header(buf, ID_LOG_CAPACITY);
    stq_le_p(buf + 8, ID_QWORD_VALID | (s->nb_sectors & 0xffffffffffffULL));
    if ((w106 & 0xc000) == 0x4000) {
        phys = (uint64_t)(w106 & 0x3000) << 49 |   /* bits 62, 61 */
               (uint64_t)(w106 & 0xf) << 16 |
               (ncq_disk_id_word(s, 209) & 0x3fff);
    }
    stq_le_p(buf + 16, ID_QWORD_VALID | phys);
    stq_le_p(buf + 24, ID_QWORD_VALID | ncq_disk_id_word(s, 117) |
             (uint32_t)ncq_disk_id_word(s, 118) << 16);
    /* nominal buffer size in bytes: the model's buffer */
    stq_le_p(buf + 32, ID_QWORD_VALID |
             (uint64_t)ncq_model_params(d->model)->buffer_sectors * 512);
}

/*
 * Page 03h: supported capabilities.  Qword 8's feature bits are left to
 * the features that own them (CDL adds bit 47 and qword 168); here the
 * IDENTIFY words the page copies: the nominal media rotation rate (word
 * 217), the form factor (168), the world wide name (108-111, valid bit
 * 127) and data set management (169).
 */
static void ncq_disk_id_caps(NcqDisk *d, IDEState *s, uint8_t *buf)
{
    int i;

    ncq_disk_id_page_header(buf, ID_LOG_CAPABILITIES);
    stq_le_p(buf + 8, ID_QWORD_VALID);
    stq_le_p(buf + 24, ID_QWORD_VALID | ncq_disk_id_word(s, 217));
    stq_le_p(buf + 32, ID_QWORD_VALID | (ncq_disk_id_word(s, 168) & 0xf));
    for (i = 0; i < 4; i++) {
        stw_le_p(buf + 56 + 2 * i, ncq_disk_id_word(s, 108 + i));
    }
    stq_le_p(buf + 64, ID_QWORD_VALID | ldq_le_p(buf + 64));
    stq_le_p(buf + 72, ID_QWORD_VALID | (ncq_disk_id_word(s, 169) & 1));
    ncq_disk_cdl_id_caps(d, buf);
}

/* Page 04h: current settings (CDL adds its enabled bits) */
static void ncq_disk_id_settings(NcqDisk *d, IDEState *s, uint8_t *buf)
{
    ncq_disk_id_page_header(buf, ID_LOG_SETTINGS);
    stq_le_p(buf + 8, ID_QWORD_VALID);
    ncq_disk_cdl_id_settings(d, buf);
}

/*
 * Page 05h: ATA strings as IDENTIFY holds them (bytes swapped in each
 * word): serial number (words 10-19), firmware revision (23-26), model
 * number (27-46), additional product identifier (170-173).
 */
static void ncq_disk_id_strings(NcqDisk *d, IDEState *s, uint8_t *buf)
{
    static const struct { int at, word, words; } str[] = {
        { 8, 10, 10 }, { 32, 23, 4 }, { 48, 27, 20 }, { 96, 170, 4 },
    };
    int i, k;

    ncq_disk_id_page_header(buf, ID_LOG_STRINGS);
    for (i = 0; i < ARRAY_SIZE(str); i++) {
        for (k = 0; k < str[i].words; k++) {
            stw_le_p(buf + str[i].at + 2 * k,
                     ncq_disk_id_word(s, str[i].word + k));
        }
    }
}

/*
 * Page 06h: security: master password identifier (word 92), security
 * status (128), erase times (89, 90), trusted computing.  No security
 * feature set here: the status and trusted computing qwords are valid and
 * say so.  The drive has no Trusted Computing feature set (no TRUSTED
 * SEND/RECEIVE): word 48 is QEMU's obsolete "dword I/O" word (bits 15:14
 * are not ACS's 01b), so its bit 0 must not be read as ACS's "trusted
 * computing supported".  Claiming it made Linux (sd, via SECURITY
 * PROTOCOL IN) send TRUSTED RECEIVE at probe, which the drive aborted.
 */
static void ncq_disk_id_security(NcqDisk *d, IDEState *s, uint8_t *buf)
{
    ncq_disk_id_page_header(buf, ID_LOG_SECURITY);
    stq_le_p(buf + 8, ID_QWORD_VALID | ncq_disk_id_word(s, 92));
    stq_le_p(buf + 16, ID_QWORD_VALID | (ncq_disk_id_word(s, 128) & 0xff));
    stq_le_p(buf + 24, ID_QWORD_VALID | ncq_disk_id_word(s, 89));
    stq_le_p(buf + 32, ID_QWORD_VALID | ncq_disk_id_word(s, 90));
    stq_le_p(buf + 40, ID_QWORD_VALID);
}

/*
 * Page 08h: SATA settings.  Linux reads NCQ priority support from byte 9
 * bit 3 (libata's ATA_LOG_NCQ_PRIO_OFFSET); the SATA capability words
 * 76-79 are copied to qwords 8 and 16.
 */
static void ncq_disk_id_sata(NcqDisk *d, IDEState *s, uint8_t *buf)
{
    ncq_disk_id_page_header(buf, ID_LOG_SATA);
    stq_le_p(buf + 8, ID_QWORD_VALID |
             (d->prop.ncq_prio ? 1ULL << 11 : 0));
    stq_le_p(buf + 16, ID_QWORD_VALID | ncq_disk_id_word(s, 78) |
             (uint64_t)ncq_disk_id_word(s, 79) << 16);
}

typedef struct NcqDiskIdPage {
    uint8_t page;
    void (*fill)(NcqDisk *d, IDEState *s, uint8_t *buf);
    bool (*present)(NcqDisk *d);    /* NULL: on every drive */
} NcqDiskIdPage;

/* The pages a SATA drive of ACS-3/ACS-4's generation has (07h is PATA's) */
static const NcqDiskIdPage ncq_disk_id_pages[] = {
    { ID_LOG_LIST,          NULL },     /* this table */
    { ID_LOG_COPY,          ncq_disk_id_copy },
    { ID_LOG_CAPACITY,      ncq_disk_id_capacity },
    { ID_LOG_CAPABILITIES,  ncq_disk_id_caps },
    { ID_LOG_SETTINGS,      ncq_disk_id_settings },
    { ID_LOG_STRINGS,       ncq_disk_id_strings },
    { ID_LOG_SECURITY,      ncq_disk_id_security },
    { ID_LOG_SATA,          ncq_disk_id_sata },
    { ID_LOG_ZONED,         ncq_disk_zac_id_page, ncq_disk_zoned },
};

/* Is page @i of the table there on this drive? */
static bool ncq_disk_id_page_present(NcqDisk *d, int i)
{
    return !ncq_disk_id_pages[i].present || ncq_disk_id_pages[i].present(d);
}

/* The log's length: up to its last page present */
uint16_t ncq_disk_id_npages(NcqDisk *d)
{
    uint16_t n = 0;
    int i;

    for (i = 0; i < ARRAY_SIZE(ncq_disk_id_pages); i++) {
        if (ncq_disk_id_page_present(d, i)) {
            n = MAX(n, ncq_disk_id_pages[i].page + 1);
        }
    }
    return n;
}

void ncq_disk_id_log(NcqDisk *d, uint16_t page, uint8_t *buf, unsigned how)
{
    IDEState *s = ncq_disk_state(d);
    int i;

    if (page == ID_LOG_LIST) {
        /* the number of pages, then their numbers in ascending order */
        ncq_disk_id_page_header(buf, page);
        for (i = 0; i < ARRAY_SIZE(ncq_disk_id_pages); i++) {
            if (ncq_disk_id_page_present(d, i)) {
                buf[9 + buf[8]++] = ncq_disk_id_pages[i].page;
            }
        }
        return;
    }
    for (i = 0; i < ARRAY_SIZE(ncq_disk_id_pages); i++) {
        if (ncq_disk_id_pages[i].page == page &&
            ncq_disk_id_page_present(d, i)) {
            ncq_disk_id_pages[i].fill(d, s, buf);
        }
    }
    /* a page not in the list (07h) reads as zeros, as on real drives */
}
