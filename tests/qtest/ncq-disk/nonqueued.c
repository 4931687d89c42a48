/*
 * ncq-disk qtests: non-queued commands and TRIM (DATA SET
 * MANAGEMENT)
 *
 * Copyright (c) 2026 ncq-disk developers
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ncq-disk/harness.h"

/*
 * DATA SET MANAGEMENT with TRIM of one range (ACS-2: 6-byte LBA and a
 * 2-byte count per 8-byte entry); libqos knows no such command, so a
 * one-block WRITE DMA is patched into it.
 */
static AHCICommand *ncq_trim_prepare(AHCIQState *ahci, uint8_t port,
                                     uint64_t gbuf, uint64_t lba,
                                     uint16_t count)
{
    QTestState *qts = ahci->parent->qts;
    uint8_t range[512] = { 0 };
    AHCICommand *cmd = ahci_command_create(CMD_WRITE_DMA);
    AHCICommandHeader hdr;

    stq_le_p(range, lba | ((uint64_t)count << 48));
    qtest_memwrite(qts, gbuf, range, sizeof(range));
    ahci_command_adjust(cmd, 0, gbuf, sizeof(range), 0);
    ahci_command_commit(ahci, cmd, port);
    ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, command), ATA_DSM);
    qtest_writeb(qts, hdr.ctba + offsetof(RegH2DFIS, feature_low),
                 ATA_DSM_TRIM);
    return cmd;
}

/* A hard disk of the NCQ era has no TRIM: not in IDENTIFY, DSM aborts. */
static void test_trim_hdd_aborts(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 512);
    AHCICommand *cmd;

    g_assert_cmphex(identify_word(ahci, port, ID_TRIM) & 1, ==, 0);
    cmd = ncq_trim_prepare(ahci, port, gbuf, 2048, 8);
    ahci_command_issue_async(ahci, cmd);
    g_assert_cmphex(ncq_wait_error(ahci, port), ==, ATA_ERR_ABRT);
    ncq_recover(ahci, port);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    /* as libata's error handler does: IDENTIFY again (clears TFD.ERR) */
    g_assert_cmphex(identify_word(ahci, port, ID_TRIM) & 1, ==, 0);
    check_still_serving(ahci, port);
    ncq_shutdown(ahci);
}

/*
 * An SSD model has TRIM.  The command is held until the model's deadline
 * (its completion must not depend on when the host's discard finishes),
 * and then the range reads back as zeros.
 */
static void test_trim_ssd_held_then_done(void)
{
    g_autofree char *path = g_strdup("/tmp/qtest.ncq-disk-trim.XXXXXX");
    int fd = g_mkstemp(path);
    AHCIQState *ahci;
    AHCICommand *cmd;
    uint64_t gbuf;
    uint8_t port;

    g_assert(fd >= 0);
    g_assert(ftruncate(fd, 16 * 1024 * 1024) == 0);
    close(fd);
    ahci = ncq_boot_ready(path, "model=intel-530", &port);
    g_assert_cmphex(identify_word(ahci, port, ID_TRIM) & 1, ==, 1);

    ncq_write_fill(ahci, port, 2048, 0x77, true);
    check_image(path, 2048, 0x77);
    gbuf = ahci_alloc(ahci, 512);
    cmd = ncq_trim_prepare(ahci, port, gbuf, 2048, 8);
    ahci_command_issue_async(ahci, cmd);
    /* the virtual clock has not moved: the drive is still busy with it */
    g_assert(ncq_busy(ahci, port, ahci_command_slot(cmd)));
    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    ahci_free(ahci, gbuf);
    check_image(path, 2048, 0x00);
    ncq_shutdown(ahci);
    unlink(path);
}

/*
 * Non-queued media commands reach the model decoded from their registers
 * as the IDE core reads them: held busy in the drive's queue (tag 32)
 * with that LBA and count until the model's deadline.
 */
static void test_nonqueued_decoded(void)
{
    static const struct {
        uint8_t cmd;
        uint64_t lba;           /* LBA28 commands: bits 24-27 too */
        size_t sectors;         /* a count register of 0: 256 for LBA28 */
        const char *op;
        uint8_t code;           /* sent instead of cmd (a retired form) */
    } c[] = {
        { CMD_READ_DMA, 0x5000123, 256, "R" },
        { CMD_READ_DMA_EXT, 0x6000456, 8, "R" },
        { CMD_WRITE_DMA, 0x7000789, 16, "W" },
        { CMD_WRITE_DMA_EXT, 0x8000abc, 1, "W" },
        { CMD_READ_PIO, 0x9000def, 4, "R" },
        { CMD_FLUSH_CACHE, 0, 0, "F" },
        /* the "without retries" forms and WRITE VERIFY (retired) */
        { CMD_READ_DMA, 0x5000200, 2, "R", 0xc9 },
        { CMD_WRITE_DMA, 0x7000300, 3, "W", 0xcb },
        { CMD_READ_PIO, 0x9000400, 1, "R", 0x21 },
        { CMD_WRITE_PIO, 0x9000500, 1, "W", 0x31 },
        { CMD_WRITE_PIO, 0x9000600, 2, "W", 0x3c },
    };
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(big_img_path, NULL, &port);
    uint64_t gbuf = ahci_alloc(ahci, 256 * 512);
    int i;

    for (i = 0; i < ARRAY_SIZE(c); i++) {
        AHCICommand *cmd = ahci_command_create(c[i].cmd);
        QDict *info, *e;
        QList *queue;

        if (c[i].sectors) {
            ahci_command_adjust(cmd, c[i].lba, gbuf, c[i].sectors * 512, 0);
        }
        ahci_command_commit(ahci, cmd, port);
        if (c[i].code) {
            AHCICommandHeader hdr;

            ahci_get_command_header(ahci, port, ahci_command_slot(cmd), &hdr);
            qtest_writeb(ahci->parent->qts,
                         hdr.ctba + offsetof(RegH2DFIS, command), c[i].code);
        }
        ahci_command_issue_async(ahci, cmd);
        info = query_disk(ahci);
        queue = qdict_get_qlist(info, "queue");
        g_assert_cmpint(qlist_size(queue), ==, 1);
        e = qobject_to(QDict, qlist_peek(queue));
        g_assert_cmpint(qdict_get_int(e, "tag"), ==, NCQ_ID_NONQUEUED);
        g_assert_cmpstr(qdict_get_str(e, "op"), ==, c[i].op);
        g_assert_cmphex(qdict_get_int(e, "lba"), ==, c[i].lba);
        g_assert_cmpint(qdict_get_int(e, "sectors"), ==, c[i].sectors);
        qobject_unref(info);
        ncq_wait(ahci, port, cmd);
        ahci_command_verify(ahci, cmd);
        ahci_command_free(cmd);
    }
    ahci_free(ahci, gbuf);
    ncq_shutdown(ahci);
}

/*
 * SET FEATURES 82h (write cache off) writes the cache back first: the
 * drive holds it as a FLUSH (tag 32, op F) until the model's deadline,
 * however soon the host's flush returns, so the guest sees it complete at
 * a virtual time the host does not choose.  Before, QEMU's generic handler
 * completed it when the host's flush did: two identical guest runs on a
 * loaded host drifted apart from an `hdparm -W0` on.
 */
static void test_nonqueued_wc_off_held(void)
{
    uint8_t port;
    AHCIQState *ahci = ncq_boot_ready(img_path, NULL, &port);
    AHCICommand *cmd = ncq_set_features_async(ahci, port, ATA_SF_WCACHE_OFF);
    uint8_t slot = ahci_command_slot(cmd);
    QDict *info = query_disk(ahci), *e;
    QList *queue = qdict_get_qlist(info, "queue");

    g_assert_cmpint(qlist_size(queue), ==, 1);
    e = qobject_to(QDict, qlist_peek(queue));
    g_assert_cmpint(qdict_get_int(e, "tag"), ==, NCQ_ID_NONQUEUED);
    g_assert_cmpstr(qdict_get_str(e, "op"), ==, "F");
    qobject_unref(info);
    g_usleep(100 * 1000);       /* the host's flush has long returned */
    g_assert_cmphex(ahci_px_rreg(ahci, port, AHCI_PX_CI) & (1u << slot), !=,
                    0);
    ncq_wait(ahci, port, cmd);
    ahci_command_verify(ahci, cmd);
    ahci_command_free(cmd);
    g_assert_cmphex(identify_word(ahci, port, 85) & (1 << 5), ==, 0);
    ncq_shutdown(ahci);
}

void add_nonqueued_tests(void)
{
    qtest_add_func("/ncq-disk/trim/hdd-aborts", test_trim_hdd_aborts);
    qtest_add_func("/ncq-disk/trim/ssd-held-then-done",
                   test_trim_ssd_held_then_done);
    qtest_add_func("/ncq-disk/nonqueued/decoded", test_nonqueued_decoded);
    qtest_add_func("/ncq-disk/nonqueued/wc-off-held",
                   test_nonqueued_wc_off_held);
}
