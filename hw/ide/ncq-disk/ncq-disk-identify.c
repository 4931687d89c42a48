/*
 * ncq-disk: IDENTIFY DEVICE data as the modelled drive gives it, and the
 * SATA generation its link negotiates.
 *
 * QEMU's core fills in the generic words (ide_identify); this file puts
 * the model's in their place (docs/device.md#identify-device).  The
 * integrity word (255) is computed last, over every other word, and again
 * each time IDENTIFY is served: SET FEATURES and a resize change words of
 * the data the core keeps.
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
#include "hw/ide/ncq-disk.h"

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

/* The drive's own words; NCQ ones only where AHCI sets up queues. */
static void ncq_disk_identify_model(NcqDisk *d, uint16_t *words)
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
}

/*
 * Word 255: the signature, and a checksum that makes the 512 bytes sum
 * to zero (ACS-3 7.12.7.91).
 */
static void ncq_disk_identify_checksum(uint16_t *words)
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

void ncq_disk_identify(IDEDevice *dev, uint16_t *words)
{
    NcqDisk *d = NCQ_DISK(dev);

    ncq_disk_identify_model(d, words);
    /*
     * Other parts of the drive add their words here, each in its own
     * file, before the checksum.  Command Duration Limits ride on NCQ
     * commands: only where AHCI sets up queues.
     */
    if (lduw_le_p(&words[ID_SATA_CAP]) & ID_SATA_CAP_NCQ) {
        ncq_disk_cdl_identify(d, words);
    }
    ncq_disk_smart_identify(d, words);
    ncq_disk_log_identify(d, words);
    ncq_disk_pm_identify(words);
    ncq_disk_sct_identify(d, words);
    ncq_disk_zac_identify(d, words);
    ncq_disk_identify_checksum(words);
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
