/*
 * ncq-disk qtests: the ATA logs (one table, both directories, PIO and
 * DMA forms) and REQUEST SENSE
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * Every address 00h-FFh through GPL (READ LOG EXT, page by page) and
 * SMART (SMART READ LOG): a log the directory lists with N pages reads
 * pages 0..N-1 and aborts at N; an unlisted one aborts.  A served log
 * missing from its directory fails here.
 */
static void check_directory(AHCIQState *ahci, uint8_t port, uint8_t code)
{
    uint8_t dir[512], page[512];
    uint16_t ret;
    int addr, p;

    /*
     * Log E1h (SCT data transfer) has data once an SCT command chose it
     * (a Data Table command here; before one it aborts, 000Bh, which
     * /ncq-disk/sct/status checks)
     */
    g_assert_cmphex(sct_command(ahci, port, 5, 1, 2, 0, &ret), ==, 0);
    g_assert_cmphex(log_read(ahci, port, code, 0, 0, 1, dir), ==, 0);
    g_assert_cmphex(lduw_le_p(dir), ==, 1);
    for (addr = 0; addr < 256; addr++) {
        int n = addr ? lduw_le_p(dir + 2 * addr) : 1;

        if (code == ATA_SMART) {
            if (n) {
                g_assert_cmphex(log_read(ahci, port, code, addr, 0, n, NULL),
                                ==, 0);
            }
            g_assert_cmphex(log_read(ahci, port, code, addr, 0, n + 1, NULL),
                            ==, ATA_ERR_ABRT);
            continue;
        }
        for (p = 0; p < n; p++) {
            g_assert_cmphex(log_read(ahci, port, code, addr, p, 1, page), ==,
                            0);
        }
        g_assert_cmphex(log_read(ahci, port, code, addr, n, 1, page), ==,
                        ATA_ERR_ABRT);
    }
}

static void test_log_directories(gconstpointer data)
{
    uint8_t port, dir[512];
    AHCIQState *ahci = ncq_boot_ready(img_path, data, &port);

    check_directory(ahci, port, ATA_READ_LOG_EXT);
    check_directory(ahci, port, ATA_SMART);
    /* SATA Phy Event Counters are listed (smartctl -l sataphy) */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0, 0, 1, dir), ==,
                    0);
    g_assert_cmpint(lduw_le_p(dir + 2 * 0x11), ==, 1);
    /* ... and in IDENTIFY word 76 bit 10, where smartctl -l sataphy looks */
    g_assert_cmphex(identify_word(ahci, port, 76) & 0x0401, ==, 0x0400);
    ncq_shutdown(ahci);
}

/*
 * The IDENTIFY DEVICE data log: page 00h lists exactly the pages that
 * read with a valid header of their own number; page 01h is IDENTIFY.
 */
static void test_log_identify_pages(void)
{
    uint8_t port, list[512], page[512];
    uint16_t id[256];
    AHCIQState *ahci = ncq_boot_ready(img_path, CDL_PROPS, &port);
    int n, p, i;

    ahci_io(ahci, port, CMD_IDENTIFY, id, sizeof(id), 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 0, 1, list),
                    ==, 0);
    n = list[8];
    for (p = 1; p < 9; p++) {
        bool listed = memchr(list + 9, p, n) != NULL;
        uint64_t head;

        g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, p, 1,
                                 page), ==, 0);
        head = ldq_le_p(page);
        if (p == 1) {
            g_assert_true(listed);
            g_assert_cmpmem(page, 512, id, 512);
            continue;
        }
        g_assert_cmpint(listed, ==, !!(head >> 63));
        if (listed) {
            g_assert_cmphex((head >> 16) & 0xff, ==, p);
            g_assert_cmphex(head & 0xffff, ==, 1);
        }
    }
    for (i = 0; i < n - 1; i++) {
        g_assert_cmphex(list[9 + i], <, list[10 + i]);
    }
    /* 02h: capacity as IDENTIFY words 100-103 say */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 2, 1, page),
                    ==, 0);
    g_assert_cmphex(ldq_le_p(page + 8) & 0xffffffffffffULL, ==,
                    ldq_le_p((uint8_t *)id + 200));
    /* 05h: the model number as in IDENTIFY words 27-46 */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 5, 1, page),
                    ==, 0);
    g_assert_cmpmem(page + 48, 40, (uint8_t *)id + 54, 40);
    /*
     * 06h: the trusted computing qword (byte 40) valid, bit 0 clear: the
     * drive has no TRUSTED SEND/RECEIVE (claiming it made Linux send
     * TRUSTED RECEIVE at probe, which the drive aborted)
     */
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x30, 6, 1, page),
                    ==, 0);
    g_assert_cmphex(ldq_le_p(page + 40), ==, 1ULL << 63);
    ncq_shutdown(ahci);
}

/*
 * READ LOG DMA EXT reads what READ LOG EXT reads, advertised as Linux
 * checks it (ata_id_has_read_log_dma_ext: word 86 bit 15, word 119 or
 * 120 with bits 15:14 = 01b and bit 3).  An ATA-7 drive has neither.
 */
static void test_log_dma(gconstpointer data)
{
    static const uint8_t logs[][2] = {
        { 0x00, 1 }, { 0x04, 2 }, { 0x11, 1 }, { 0x30, 2 },
    };
    bool has = data != NULL;
    uint8_t port, pio[512 * 2], dma[512 * 2];
    AHCIQState *ahci = ncq_boot_ready(img_path, data, &port);
    uint16_t w86 = identify_word(ahci, port, 86);
    uint16_t w119 = identify_word(ahci, port, 119);
    uint16_t w120 = identify_word(ahci, port, 120);
    int i;

    g_assert_cmpint(!!(w86 & 0x8000) && (w119 & 0xc008) == 0x4008 &&
                    (w120 & 0xc008) == 0x4008, ==, has);
    for (i = 0; i < ARRAY_SIZE(logs); i++) {
        g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, logs[i][0], 0,
                                 logs[i][1], pio), ==, 0);
        g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_DMA_EXT,
                                 logs[i][0], 0, logs[i][1], dma), ==,
                        has ? 0 : ATA_ERR_ABRT);
        if (has) {
            g_assert_cmpmem(pio, 512 * logs[i][1], dma, 512 * logs[i][1]);
        }
    }
    ncq_shutdown(ahci);
}

/*
 * WRITE LOG (DMA) EXT: the CDL log (18h) takes a valid page through
 * either form; bad input aborts and stores nothing: a read-only log or
 * page, a page beyond the log, a count of 0 or too many, a PRDT shorter
 * than the count; SMART WRITE LOG of a GPL-only log; a reserved
 * guideline or policy.
 */
static void test_log_write(void)
{
    uint8_t port, before[512], page[512], after[512];
    uint8_t pages2[1024];
    AHCIQState *ahci = ncq_boot_ready(img_path, CDL_PROPS, &port);
    uint64_t gbuf;

    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x18, 0, 1,
                             before), ==, 0);
    memcpy(page, before, 512);
    stl_le_p(page + 64 + 16, 30000);        /* read desc 1: total 30 ms */
    page[64] = 0x0f;                        /* ... policy abort */
    memset(pages2, 0, sizeof(pages2));
    memcpy(pages2, page, 512);

    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x10, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x30, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 1, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 0,
                              page, 512), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 2,
                              pages2, 1024), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_write(ahci, port, ATA_SMART, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    /* a DMA whose PRDT holds 256 bytes for a 512-byte page */
    gbuf = ahci_alloc(ahci, 512);
    qtest_memwrite(ahci->parent->qts, gbuf, page, 512);
    g_assert_cmphex(log_cmd(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0, 0x18, 0, 1,
                            gbuf, 256), ==, ATA_ERR_ABRT);
    g_assert_cmphex(log_cmd(ahci, port, ATA_READ_LOG_DMA_EXT, 0, 0x18, 0, 1,
                            gbuf, 256), ==, ATA_ERR_ABRT);
    ahci_free(ahci, gbuf);
    /* a reserved field: refused by the CDL table's own check */
    page[1] = 1;
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    page[1] = 0;
    /* the guideline field, bits 3:0: Dh-Fh reserved, Ch (20 %) taken */
    page[0] = 0x0d;
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    page[0] = 0x0c;
    /* the max active time policy Eh: SCSI's, reserved for ATA */
    page[64] = 0xef;
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 1,
                              page, 512), ==, ATA_ERR_ABRT);
    page[64] = 0x0f;
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_DMA_EXT, 0x18, 0, 1,
                             after), ==, 0);
    g_assert_cmpmem(after, 512, before, 512);

    /* the valid page through DMA, then through PIO */
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_DMA_EXT, 0x18, 0, 1,
                              page, 512), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_DMA_EXT, 0x18, 0, 1,
                             after), ==, 0);
    g_assert_cmpmem(after, 512, page, 512);
    g_assert_cmphex(log_write(ahci, port, ATA_WRITE_LOG_EXT, 0x18, 0, 1,
                              before, 512), ==, 0);
    g_assert_cmphex(log_read(ahci, port, ATA_READ_LOG_EXT, 0x18, 0, 1,
                             after), ==, 0);
    g_assert_cmpmem(after, 512, before, 512);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

void add_logs_tests(void)
{
    qtest_add_data_func("/ncq-disk/log/directories-list-every-log", NULL,
                        test_log_directories);
    qtest_add_data_func("/ncq-disk/log/directories-list-every-log/cdl",
                        CDL_PROPS, test_log_directories);
    qtest_add_func("/ncq-disk/log/identify-pages", test_log_identify_pages);
    qtest_add_data_func("/ncq-disk/log/dma/ata7-has-none", NULL,
                        test_log_dma);
    qtest_add_data_func("/ncq-disk/log/dma/acs4", "model=seagate-exos-x18",
                        test_log_dma);
    qtest_add_func("/ncq-disk/log/write-bad-input", test_log_write);
}
