/*
 * ncq-disk qtests: command duration limits (CDL)
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * CDL on a non-queued READ DMA EXT (the index in FEATURE bits 2:0, as
 * Linux puts it with NCQ off): the same policies as over NCQ.  Read
 * descriptor 1's active time limit of 10 us is missed by any access.
 * Abort (Fh): ERR, ABRT and status bit 1, the sense (ABORTED COMMAND,
 * 2Eh/02h) from REQUEST SENSE DATA EXT.  Data currently unavailable
 * (Dh): no error, status bit 1, the data read, sense COMPLETED 55h/0Ah.
 * Index 0: no limit, no sense.  Read descriptor 3's total time limit
 * (the command duration guideline) of 10 us with abort does not apply:
 * it is for NCQ commands only (cdl-tools commit 40b0b10; its tests 0503
 * and 0504 expect no error with NCQ off).
 */
static void test_cdl_non_queued(void)
{
    uint8_t port, page[512], status, data[4096], want[4096];
    AHCIQState *ahci = ncq_boot_ready(img_path, CDL_PROPS, &port);
    QTestState *qts = ahci->parent->qts;
    uint64_t gbuf = ahci_alloc(ahci, sizeof(data));
    const uint64_t lba = 100000;

    memset(want, 0x5c, sizeof(want));
    ncq_io(ahci, port, CMD_WRITE_DMA_EXT, want, sizeof(want), lba);
    memset(page, 0, sizeof(page));
    page[64] = 0xf0;                        /* read 1: active: abort */
    stl_le_p(page + 64 + 4, 10);            /* max active time 10 us */
    page[96] = 0xd0;                        /* read 2: active: unavail. */
    stl_le_p(page + 96 + 4, 10);
    page[128] = 0x0f;                       /* read 3: total: abort */
    stl_le_p(page + 128 + 16, 10);          /* total time limit 10 us */
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 1,
                              page, 512), ==, 0);
    /* SET FEATURES: sense data reporting (C3h), then CDL (0Dh) on */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0xc3, 0, 1, 0, 0, &status), ==, 0);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0x0d, 0, 1, 0, 0, &status), ==, 0);

    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            1, lba, 8, gbuf, sizeof(data), &status), ==,
                    ATA_ERR_ABRT);
    g_assert_cmphex(status & 0x03, ==, 0x03);
    g_assert_cmphex(request_sense(ahci, port, &status), ==, 0);
    g_assert_cmphex(status & 0x02, ==, 0x02);
    g_assert_cmphex(sense_lba(ahci, port), ==, 0x0b2e02);
    /* read once: the next REQUEST SENSE DATA EXT has none */
    g_assert_cmphex(request_sense(ahci, port, &status), ==, 0);
    g_assert_cmphex(status & 0x02, ==, 0);

    qtest_memset(qts, gbuf, 0, sizeof(data));
    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            2, lba, 8, gbuf, sizeof(data), &status), ==, 0);
    g_assert_cmphex(status & 0x03, ==, 0x02);
    /* libata reads the status from the received D2H Register FIS */
    g_assert_cmphex(d2h_status(ahci, port) & 0x03, ==, 0x02);
    qtest_memread(qts, gbuf, data, sizeof(data));
    g_assert_cmpmem(data, sizeof(data), want, sizeof(want));
    g_assert_cmphex(request_sense(ahci, port, &status), ==, 0);
    g_assert_cmphex(sense_lba(ahci, port), ==, 0x0f550a);

    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            0, lba, 8, gbuf, sizeof(data), &status), ==, 0);
    g_assert_cmphex(status & 0x03, ==, 0);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            3, lba + 20000, 8, gbuf, sizeof(data), &status),
                    ==, 0);
    g_assert_cmphex(status & 0x03, ==, 0);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * CDL statistics (Device Statistics log 04h, page 09h, as cdladm reads
 * it): descriptor selectors in log 18h bytes 12/13 (A, B), counted per
 * descriptor, read then initialize (READ LOG EXT FEATURES bit 0).  A
 * limit counts where the drive carries out its policy: read descriptor
 * 1's active time limit (10 us, missed by any access) with policy 0h
 * leaves "active time limit met" at 0 (cdl-tools tests 0720 and 0730
 * expect no count with policy 0h), descriptor 2's with Dh counts.
 */
static void test_cdl_statistics(void)
{
    uint8_t port, page[512], back[512], stats[512], status;
    AHCIQState *ahci = ncq_boot_ready(img_path, CDL_PROPS, &port);
    uint64_t gbuf = ahci_alloc(ahci, 4096), a, b;
    int i;

    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x04, 0, 1,
                             stats), ==, 0);
    g_assert_nonnull(memchr(stats + 9, 0x09, stats[8]));
    memset(page, 0, sizeof(page));
    stl_le_p(page + 64 + 4, 10);            /* read 1: active 10 us, 0h */
    page[64 + 12] = 5;                      /* selector 5h: reserved */
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    page[64 + 12] = 2;                      /* A: active time limit met */
    page[64 + 13] = 4;                      /* B: commands */
    page[96] = 0xd0;                        /* read 2: active 10 us, Dh */
    stl_le_p(page + 96 + 4, 10);
    page[96 + 12] = 2;
    page[96 + 13] = 4;
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 1,
                              page, 512), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x18, 0, 1, back),
                    ==, 0);
    g_assert_cmpmem(back, 512, page, 512);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0x0d, 0, 1, 0, 0, &status), ==, 0);
    for (i = 0; i < 4; i++) {               /* indexes 1, 1, 2, 0 */
        g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT,
                                CMD_READ_DMA_EXT, (i < 2) + (i == 2) * 2,
                                50000 + 1000 * i, 8, gbuf, 4096, &status),
                        ==, 0);
    }
    /* read then initialize: the counts, then zero */
    g_assert_cmphex(log_cmd(ahci, port, ATA_READ_LOG_EXT, 1, 0x04, 9, 1,
                            gbuf, 512), ==, 0);
    qtest_memread(ahci->parent->qts, gbuf, stats, 512);
    g_assert_cmphex(ldq_le_p(stats), ==, 0x090001);
    a = ldq_le_p(stats + 16);               /* A, read descriptor 1 */
    b = ldq_le_p(stats + 16 + 8 * 14);      /* B, read descriptor 1 */
    g_assert_cmphex(a, ==, 0xc400000000000000ULL);  /* policy 0h */
    g_assert_cmphex(b, ==, 0xc400000000000002ULL);
    g_assert_cmphex(ldq_le_p(stats + 24), ==, 0xc400000000000001ULL);
    g_assert_cmphex(ldq_le_p(stats + 24 + 8 * 14), ==,
                    0xc400000000000001ULL);
    g_assert_cmphex(ldq_le_p(stats + 32), ==, 0);   /* descriptor 3: off */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x04, 9, 1,
                             stats), ==, 0);
    g_assert_cmphex(ldq_le_p(stats + 16), ==, 0xc400000000000000ULL);
    g_assert_cmphex(ldq_le_p(stats + 16 + 8 * 14), ==,
                    0xc400000000000000ULL);
    /*
     * Disabling CDL keeps the counts, enabling it again starts them
     * afresh (cdl-tools test 0707 resets them so)
     */
    g_assert_cmphex(raw_cmd(ahci, port, CMD_READ_DMA_EXT, CMD_READ_DMA_EXT,
                            1, 60000, 8, gbuf, 4096, &status), ==, 0);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0x0d, 0, 0, 0, 0, &status), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x04, 9, 1,
                             stats), ==, 0);
    g_assert_cmphex(ldq_le_p(stats + 16 + 8 * 14), ==,
                    0xc400000000000001ULL);
    g_assert_cmphex(raw_cmd(ahci, port, CMD_FLUSH_CACHE, ATA_SET_FEATURES,
                            0x0d, 0, 1, 0, 0, &status), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x04, 9, 1,
                             stats), ==, 0);
    g_assert_cmphex(ldq_le_p(stats + 16 + 8 * 14), ==,
                    0xc400000000000000ULL);
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

void add_cdl_tests(void)
{
    qtest_add_func("/ncq-disk/cdl/non-queued", test_cdl_non_queued);
    qtest_add_func("/ncq-disk/cdl/statistics", test_cdl_statistics);
}
